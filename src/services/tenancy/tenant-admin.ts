// Tenant administration for operators (the management API and the CLI): create, change by JSON merge patch,
// enable and disable — each validated as at creation (structure, connector module, options), with the
// connector's secrets sealed, and told to every gateway process in the transaction that makes it.
import jsonMergePatch from 'json-merge-patch';
import { hasPlainSecrets, keepSealed, redactSecrets, type ConfigSecrets } from '../../crypto/config-secrets.js';
import type { PublicJwk } from '../../crypto/keys.js';
import type { KeyRing } from '../identity/key-ring.js';
import { Errors } from '../../errors.js';
import type { Db } from '../../store/db.js';
import type { ChangeFeed } from '../infrastructure/changes.js';
import type { UserService } from '../identity/users.js';
import type { ConnectorRegistry } from '../connectors/index.js';
import type { ConnectorDefinition, ContractOperation } from '../../../connectors/contract.js';
import { TenantConfig, type ConnectorChoice } from '../../../schemas/tenant.js';
import type { DecisionService } from '../transactions/decisions.js';
import { TargetRefused } from '../../notify/addresses.js';
import { DISPLAY_NAME_PATTERN } from '../../../schemas/common.js';
import { offeringProblems, routesOf } from '../connectors/routing.js';
import { TenantConfigError, connectorChoices, isTenantId, withAuthorizationSecrets, parseTenantConfig, type StoredTenant, type Tenant, type TenantService } from './tenants.js';

/** What a definition says it offers with these options; undefined when it declares nothing. */
function offersOf(definition: ConnectorDefinition, options: unknown): readonly ContractOperation[] | undefined {
  return typeof definition.offers === 'function' ? definition.offers(options) : definition.offers;
}

export interface TenantAdminDeps {
  db: Db;
  tenants: TenantService;
  keys: KeyRing;
  users: UserService;
  /** Loads and checks the connector a configuration names; without it only the structure is checked. */
  connectorRegistry?: ConnectorRegistry | undefined;
  /** Seals the connector's secrets; without it they are stored as given (tests, tools without the master key). */
  secrets?: ConfigSecrets | undefined;
  changes?: ChangeFeed | undefined;
  /** Checks a decision endpoint's URL under the webhooks' address policy as it is saved; without it, only when it is called. */
  decisions?: Pick<DecisionService, 'checkUrl'> | undefined;
}

/** A tenant as operators see it: configuration with every secret shown as "***". */
export interface TenantView {
  id: string;
  name: string;
  status: 'active' | 'disabled';
  version: number;
  config: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
}

export const tenantView = (t: StoredTenant): TenantView => ({
  id: t.id,
  name: t.name,
  status: t.status,
  version: t.version,
  config: redactSecrets(t.config),
  createdAt: t.createdAt,
  updatedAt: t.updatedAt,
});

const NAME_MAX = 128;
const DISPLAY_NAME = new RegExp(DISPLAY_NAME_PATTERN, 'u');

function checkName(tenantId: string, name: unknown): string {
  if (typeof name !== 'string' || name.trim().length === 0 || name.length > NAME_MAX) {
    throw new TenantConfigError(tenantId, [`/name: must be 1 to ${NAME_MAX} characters`]);
  }
  if (!DISPLAY_NAME.test(name)) {
    throw new TenantConfigError(tenantId, ['/name: must hold no control, bidirectional control or zero-width character']);
  }
  return name;
}

/** Refuses a decision endpoint the address policy refuses, when it is new or the sandbox flag changed (400). */
async function checkDecisionEndpoint(deps: TenantAdminDeps, tenantId: string, config: TenantConfig, before: Record<string, unknown> | undefined): Promise<void> {
  const url = config.authorization?.decision?.url;
  if (url === undefined || !deps.decisions) return;
  const previous = before?.authorization as { decision?: { url?: unknown } } | undefined;
  if (previous?.decision?.url === url && (before?.sandbox === true) === (config.sandbox === true)) return;
  try {
    await deps.decisions.checkUrl(url, config.sandbox === true);
  } catch (err) {
    if (err instanceof TargetRefused) throw new TenantConfigError(tenantId, [`/authorization/decision/url: ${err.message}`]);
    throw err;
  }
}

/** A configuration as stored: defaults filled, validated with its connector's options (secrets opened), secrets sealed. */
async function storableConfig(deps: TenantAdminDeps, tenantId: string, raw: unknown, before?: Record<string, unknown>): Promise<Record<string, unknown>> {
  const clear = structuredClone(raw ?? {}) as Record<string, unknown>;
  if (deps.secrets) {
    for (const c of connectorChoices(clear)) if (c.options !== undefined) c.options = deps.secrets.open(tenantId, c.options);
    withAuthorizationSecrets(clear, (holder) => deps.secrets!.open(tenantId, holder));
  }
  const config = parseTenantConfig(tenantId, clear);
  await checkDecisionEndpoint(deps, tenantId, config, before);
  if (deps.secrets) withAuthorizationSecrets(config as unknown as Record<string, unknown>, (holder) => deps.secrets!.seal(tenantId, holder, TenantConfig));
  if (deps.connectorRegistry) {
    const { connectors } = routesOf(config);
    const offers = new Map<string, readonly ContractOperation[] | undefined>();
    for (const [name, choice] of Object.entries(connectors)) {
      const { definition, options } = await deps.connectorRegistry.prepare(tenantId, choice);
      offers.set(name, offersOf(definition, options));
      if (deps.secrets && choice.options !== undefined) {
        choice.options = deps.secrets.seal(tenantId, choice.options, definition.optionsSchema) as Record<string, unknown>;
      }
    }
    // Routing an operation to a connector that says it does not have it is refused now, not answered 501 later.
    const problems = offeringProblems(config, (name) => offers.get(name));
    if (problems.length) throw new TenantConfigError(tenantId, problems);
  }
  return config as unknown as Record<string, unknown>;
}

/** A tenant to create: its id, name, configuration and, when given, its first Admin. */
export interface NewTenant {
  id: string;
  name?: string;
  config?: unknown;
  admin?: { username: string; password: string };
}

/** Creates a tenant, its first key pairs and, when given, its first Admin in one transaction, every check first. */
export async function createTenant(deps: TenantAdminDeps, input: NewTenant): Promise<Tenant> {
  if (!isTenantId(input.id)) throw new TenantConfigError(input.id, [`id must match ^[a-z0-9][a-z0-9-]{0,62}$ (lower-case letters, digits, dashes)`]);
  const name = checkName(input.id, input.name ?? input.id);
  const admin = input.admin ? await deps.users.firstAdmin(input.admin.username, input.admin.password) : undefined;
  const config = await storableConfig(deps, input.id, input.config);
  const change = { kind: 'tenant', tenantId: input.id } as const;
  await deps.db.transaction(async (tx) => {
    await deps.tenants.insert({ id: input.id, name, config }, tx);
    await deps.keys.create(input.id, 'enc', tx);
    await deps.keys.create(input.id, 'sig', tx);
    if (admin) await deps.users.insertFirstAdmin(input.id, admin, tx);
    await deps.changes?.publish(change, tx);
  });
  deps.keys.invalidate(input.id);
  deps.tenants.invalidate(input.id);
  deps.changes?.told(change);
  if (admin) {
    deps.users.forget(input.id, admin.username);
    deps.changes?.told({ kind: 'user', tenantId: input.id, username: admin.username });
  }
  return (await deps.tenants.get(input.id))!;
}

/** Creates a tenant; an existing id is TENANT_EXISTS, also when two creations race to the primary key. */
export async function createNewTenant(deps: TenantAdminDeps, input: NewTenant): Promise<Tenant> {
  const exists = () => Errors.business('TENANT_EXISTS', `A tenant '${input.id}' exists already.`);
  if (await deps.tenants.stored(input.id)) throw exists();
  try {
    return await createTenant(deps, input);
  } catch (err) {
    if ((err as { code?: unknown }).code === UNIQUE_VIOLATION) throw exists();
    throw err;
  }
}

/** PostgreSQL's SQLSTATE for a unique or primary-key violation (PGlite answers the same). */
const UNIQUE_VIOLATION = '23505';

/** Keys json-merge-patch stops at, dropping the rest of the patch; no setting has these names. */
const RESERVED_KEYS = new Set(['constructor', 'prototype', '__proto__']);

/** The JSON pointer of the first reserved key at any depth of a value (own keys, in order), if any. */
function reservedKeyPointer(value: unknown, at = ''): { pointer: string; key: string } | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  for (const [key, inner] of Object.entries(value)) {
    const pointer = `${at}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`;
    if (RESERVED_KEYS.has(key)) return { pointer, key };
    const found = reservedKeyPointer(inner, pointer);
    if (found) return found;
  }
  return undefined;
}

/** Applies a JSON merge patch of `{ name, config }`, validated as at creation ("***" keeps a secret); null if unknown. */
export async function updateTenant(deps: TenantAdminDeps, tenantId: string, patch: Record<string, unknown>): Promise<Tenant | null> {
  const reserved = reservedKeyPointer(patch.config);
  if (reserved) {
    throw new TenantConfigError(tenantId, [`${reserved.pointer}: '${reserved.key}' is a reserved key (as are constructor, prototype and __proto__); no setting has that name`]);
  }
  const change = { kind: 'tenant', tenantId } as const;
  const found = await deps.db.transaction(async (tx) => {
    const stored = await deps.tenants.stored(tenantId, tx, true);
    if (!stored) return false;
    const current = { name: stored.name, config: stored.config };
    const next = jsonMergePatch.apply(structuredClone(current), keepSealed(patch, current)) as { name?: unknown; config?: unknown };
    const config = await storableConfig(deps, tenantId, next.config, stored.config);
    await deps.tenants.update(tenantId, { name: checkName(tenantId, next.name), config }, tx);
    await deps.changes?.publish(change, tx);
    return true;
  });
  if (!found) return null;
  deps.tenants.invalidate(tenantId);
  deps.changes?.told(change);
  return deps.tenants.get(tenantId);
}

/** Enables or disables a tenant; null when it does not exist. A disabled tenant answers as an unknown one. */
export async function setTenantStatus(deps: TenantAdminDeps, tenantId: string, status: Tenant['status']): Promise<Tenant | null> {
  const change = { kind: 'tenant', tenantId } as const;
  const found = await deps.db.transaction(async (tx) => {
    if (!(await deps.tenants.stored(tenantId, tx, true))) return false;
    await deps.tenants.setStatus(tenantId, status, tx);
    await deps.changes?.publish(change, tx);
    return true;
  });
  if (!found) return null;
  deps.tenants.invalidate(tenantId);
  deps.changes?.told(change);
  return deps.tenants.get(tenantId);
}

/** The tenant's public encryption keys: what its bank encrypts passwords, bodies and fields to. */
export async function encryptionKeys(deps: Pick<TenantAdminDeps, 'keys'>, tenantId: string): Promise<PublicJwk[]> {
  return (await deps.keys.forTenant(tenantId)).enc.map((k) => k.publicJwk);
}

/** Seals secrets a former version stored in clear (decision 0035); a tenant whose connector cannot load is left. */
export async function sealLegacySecrets(
  deps: TenantAdminDeps,
  log: { warn(obj: object, msg: string): void },
  /** The stored tenants, when the caller has read them already (the boot reads them once). */
  all?: StoredTenant[],
): Promise<StoredTenant[]> {
  const list = all ?? (await deps.tenants.listStored());
  if (!deps.connectorRegistry || !deps.secrets) return list;
  let changed = false;
  for (const stored of list) {
    const next = structuredClone(stored.config);
    let sealedAny = false;
    try {
      for (const choice of connectorChoices(next)) {
        if (choice.options === undefined) continue;
        const { definition } = await deps.connectorRegistry.prepare(stored.id, choice as ConnectorChoice);
        if (!hasPlainSecrets(choice.options, definition.optionsSchema)) continue;
        choice.options = deps.secrets.seal(stored.id, choice.options, definition.optionsSchema);
        sealedAny = true;
      }
    } catch {
      continue;
    }
    if (!sealedAny) continue;
    await deps.tenants.update(stored.id, { name: stored.name, config: next });
    await deps.changes?.changed({ kind: 'tenant', tenantId: stored.id });
    log.warn({ tenant: stored.id }, 'sealed connector secrets that were stored in clear');
    changed = true;
  }
  return changed ? deps.tenants.listStored() : list;
}
