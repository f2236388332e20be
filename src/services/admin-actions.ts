// The platform operator's admin actions — tenants, a tenant's users, operator keys — each implemented once and
// always audited, whoever asks: the management API (an operator key) or the CLI working on the store
// (`cli:<os-user>`). Each action runs its service function, then appends its audit record with the same
// action name and target as the management route, and its security event (user.created, user.disabled,
// tenant.config-changed) in the same statement (src/audit/writer.ts), so the tenant's Admins read it in
// GET /v1/audit and its channels hear of it (decision 0195).
//
// A refused or failed action is recorded too (its status and outcome as the API would answer them), then
// thrown again for the caller to report.
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import type { Role } from '../../schemas/common.js';
import { isOperatorKeyName } from '../../schemas/management.js';
import { TenantConfig } from '../../schemas/tenant.js';
import { outcomeOf } from '../audit/outcome.js';
import type { AuditWriter } from '../audit/writer.js';
import { CardlineError, Errors } from '../errors.js';
import { domainEvent, type DomainEvent } from '../events/outbox.js';
import type { ClientKeyStore, RegisteredClientKey } from '../crypto/client-keys.js';
import type { KeyInfo, KeyUse, PublicJwk, RotationResult } from '../crypto/keys.js';
import { OperatorKeyError, type OperatorKeys, type OperatorKeyView } from './operator-keys.js';
import { createTenant, encryptionKeys, setTenantStatus, tenantView, updateTenant, type TenantAdminDeps, type TenantView } from './tenant-admin.js';
import { PLATFORM_TENANT, isTenantId } from './tenants.js';
import type { UserView } from './users.js';

/** Who acts: the name recorded as the audit actor (an operator key's name, or `cli:<os-user>`), and from where. */
export interface AdminActor {
  name: string;
  /** The audit record's role: 'Operator' for both the management API and the CLI. */
  role: string;
  /** The request's address; null for the CLI (it has none). */
  origin: string | null;
  /** Ties the records of one request (or one CLI command) together. */
  requestId: string;
}

export interface AdminActionDeps extends TenantAdminDeps {
  audit: Pick<AuditWriter, 'record'>;
  operatorKeys: OperatorKeys;
}

/**
 * Every admin action: its audit action name (as the management route names it), the route it is, and the
 * status a success answers. The CLI's records carry the same method and route, so a trail reads the same
 * whichever way the change was made; the actor and the empty origin tell them apart.
 */
const ADMIN_ACTIONS = {
  'tenant.create': { method: 'POST', route: '/v1/tenants', status: 201 },
  'tenant.update': { method: 'PATCH', route: '/v1/tenants/:tenantId', status: 200 },
  'tenant.disable': { method: 'POST', route: '/v1/tenants/:tenantId/disable', status: 200 },
  'tenant.enable': { method: 'POST', route: '/v1/tenants/:tenantId/enable', status: 200 },
  'user.create': { method: 'POST', route: '/v1/tenants/:tenantId/users', status: 201 },
  'user.update': { method: 'PATCH', route: '/v1/tenants/:tenantId/users/:username', status: 200 },
  'user.unlock': { method: 'POST', route: '/v1/tenants/:tenantId/users/:username/unlock', status: 200 },
  'user.password-reset': { method: 'PUT', route: '/v1/tenants/:tenantId/users/:username/password', status: 200 },
  'user.remove': { method: 'DELETE', route: '/v1/tenants/:tenantId/users/:username', status: 200 },
  'operator-key.create': { method: 'POST', route: '/v1/operator-keys', status: 201 },
  'operator-key.revoke': { method: 'DELETE', route: '/v1/operator-keys/:name', status: 200 },
  // A tenant's keys: the tenant Admin's operations of the public API (same action names, same event), and
  // the CLI's retirement, which no API offers.
  'keys.rotate': { method: 'POST', route: '/v1/admin/keys/rotate', status: 200 },
  'client-key.register': { method: 'PUT', route: '/v1/admin/client-key', status: 200 },
  'keys.retire': { method: 'CLI', route: 'cardline keys retire', status: 200 },
} as const satisfies Record<string, { method: string; route: string; status: number }>;

type AdminAction = keyof typeof ADMIN_ACTIONS;

const MAX_ACTOR = 128;

/**
 * The CLI's actor: `cli:<os-user>`. The OS account comes from the password database (os.userInfo), or, where
 * the process has no entry there (a container's arbitrary uid), from USER/LOGNAME, or the uid itself.
 */
export function cliActor(env: NodeJS.ProcessEnv = process.env): AdminActor {
  let user: string | undefined;
  try {
    user = os.userInfo().username || undefined;
  } catch {
    // no passwd entry for this uid
  }
  user ??= env.USER || env.LOGNAME || (typeof process.getuid === 'function' ? `uid-${process.getuid()}` : 'unknown');
  return { name: `cli:${user}`.slice(0, MAX_ACTOR), role: 'Operator', origin: null, requestId: randomUUID() };
}

/** An action's result and the security event it raises (only recorded when it succeeds). */
interface Done<T> {
  result: T;
  event?: DomainEvent | undefined;
}

/** What a thrown error answers on the management API: its status and error code (as src/plugins/errors.ts maps it). */
function answerOf(err: unknown): { status: number; code: string | null } {
  if (err instanceof CardlineError) return { status: err.init.status, code: err.code };
  if (err instanceof Error && (err.name === 'TenantConfigError' || err.name === 'ConnectorConfigError')) return { status: 400, code: 'CL_INVALID_CONFIGURATION' };
  // The key lifecycle's and the client key's refusals: what the operator asked cannot be done.
  if (err instanceof Error && (err.name === 'KeyLifecycleError' || err.name === 'ClientKeyError')) return { status: 400, code: 'CL_VALIDATION' };
  return { status: 500, code: 'CL_INTERNAL' };
}

/**
 * Runs one admin action and appends its audit record (with its event when it succeeded) to the trail of
 * `trail()` — the tenant it concerns, or the platform's — evaluated once the action has run, as the
 * management listener decides after answering. Resolves once the record is committed.
 */
async function audited<T>(
  deps: Pick<AdminActionDeps, 'audit'>,
  actor: AdminActor,
  action: AdminAction,
  target: Record<string, string>,
  trail: () => Promise<string>,
  run: () => Promise<Done<T>>,
): Promise<T> {
  const spec = ADMIN_ACTIONS[action];
  let done: Done<T> | undefined;
  let failure: unknown;
  try {
    done = await run();
  } catch (err) {
    failure = err;
  }
  const { status, code } = done ? { status: spec.status, code: null } : answerOf(failure);
  await deps.audit.record({
    tenantId: await trail(),
    at: new Date(),
    actor: actor.name.slice(0, MAX_ACTOR),
    role: actor.role,
    action,
    method: spec.method,
    route: spec.route,
    target: Object.fromEntries(Object.entries(target).map(([k, v]) => [k, v.slice(0, MAX_ACTOR)])),
    outcome: outcomeOf(status, code),
    status,
    requestId: actor.requestId,
    origin: actor.origin,
    event: done?.event,
  });
  if (!done) throw failure;
  return done.result;
}

/** The trail of a tenant that exists (a disabled one too), else the platform's: the management listener's rule. */
const trailOf = (deps: Pick<AdminActionDeps, 'tenants'>, tenantId: string) => async (): Promise<string> =>
  (isTenantId(tenantId) ? (await deps.tenants.get(tenantId))?.id : undefined) ?? PLATFORM_TENANT;

const platform = async (): Promise<string> => PLATFORM_TENANT;

async function tenantOr404(deps: Pick<AdminActionDeps, 'tenants'>, tenantId: string) {
  const tenant = await deps.tenants.get(tenantId);
  if (!tenant) throw Errors.tenantNotFound(tenantId);
  return tenant;
}

const viewOf = async (deps: Pick<AdminActionDeps, 'tenants'>, tenantId: string): Promise<TenantView> => tenantView((await deps.tenants.stored(tenantId))!);

/** The configuration's fields, as a change names them (a patch may only remove fields the schema knows). */
const CONFIG_FIELDS = new Set(Object.keys(TenantConfig.properties));

/** The top-level settings a tenant patch names: what `tenant.config-changed` reports. */
function changedSettings(patch: { name?: unknown; config?: Record<string, unknown> | undefined }): string[] {
  return [...(patch.name !== undefined ? ['name'] : []), ...Object.keys(patch.config ?? {}).filter((k) => CONFIG_FIELDS.has(k))].sort();
}

// ── Tenants ────────────────────────────────────────────────────────────────────────────────────────

export function adminCreateTenant(
  deps: AdminActionDeps,
  actor: AdminActor,
  input: { id: string; name?: string | undefined; config?: unknown },
): Promise<{ tenant: TenantView; encryptionKeys: PublicJwk[] }> {
  const { id } = input;
  return audited(deps, actor, 'tenant.create', { tenantId: id }, trailOf(deps, id), async () => {
    const exists = () => Errors.business('TENANT_EXISTS', `A tenant '${id}' exists already.`);
    if (await deps.tenants.stored(id)) throw exists();
    try {
      await createTenant(deps, { id, ...(input.name !== undefined ? { name: input.name } : {}), config: input.config });
    } catch (err) {
      // Two operators creating the same id at once: the second meets the primary key.
      if ((err as { code?: unknown }).code === '23505') throw exists();
      throw err;
    }
    return { result: { tenant: await viewOf(deps, id), encryptionKeys: await encryptionKeys(deps, id) } };
  });
}

/** A JSON merge patch of `{ name, config }`; the tenant's channels hear `tenant.config-changed` with the settings named. */
export function adminUpdateTenant(
  deps: AdminActionDeps,
  actor: AdminActor,
  tenantId: string,
  patch: { name?: string | undefined; config?: Record<string, unknown> | undefined },
): Promise<TenantView> {
  return audited(deps, actor, 'tenant.update', { tenantId }, trailOf(deps, tenantId), async () => {
    if (!(await updateTenant(deps, tenantId, patch))) throw Errors.tenantNotFound(tenantId);
    const changed = changedSettings(patch);
    return { result: await viewOf(deps, tenantId), event: changed.length ? domainEvent('tenant.config-changed', { tenantId, changed }) : undefined };
  });
}

export function adminSetTenantStatus(deps: AdminActionDeps, actor: AdminActor, tenantId: string, verb: 'disable' | 'enable'): Promise<TenantView> {
  return audited(deps, actor, `tenant.${verb}`, { tenantId }, trailOf(deps, tenantId), async () => {
    if (!(await setTenantStatus(deps, tenantId, verb === 'disable' ? 'disabled' : 'active'))) throw Errors.tenantNotFound(tenantId);
    return { result: await viewOf(deps, tenantId) };
  });
}

// ── A tenant's users ───────────────────────────────────────────────────────────────────────────────
// Passwords arrive here in clear: opening a JWE is the transport's business (the management API's decrypt step).

const userTarget = (tenantId: string, username: string) => ({ tenantId, username });

/** Creates a user (409 USER_EXISTS when the name is taken); the tenant's channels hear `user.created`. */
export function adminCreateUser(
  deps: AdminActionDeps,
  actor: AdminActor,
  tenantId: string,
  input: { username: string; role: Role; password: string },
): Promise<UserView> {
  return audited(deps, actor, 'user.create', userTarget(tenantId, input.username), trailOf(deps, tenantId), async () => {
    const tenant = await tenantOr404(deps, tenantId);
    const user = await deps.users.create(tenant.id, input.username, input.role, input.password);
    return { result: user, event: domainEvent('user.created', { username: user.username, role: user.role }) };
  });
}

/** Changes a user's role or disables/enables it; disabling raises `user.disabled` naming the actor. */
export function adminUpdateUser(
  deps: AdminActionDeps,
  actor: AdminActor,
  tenantId: string,
  username: string,
  change: { role?: Role | undefined; disabled?: boolean | undefined },
): Promise<UserView> {
  return audited(deps, actor, 'user.update', userTarget(tenantId, username), trailOf(deps, tenantId), async () => {
    const tenant = await tenantOr404(deps, tenantId);
    const user = await deps.users.update(tenant.id, username, change);
    const event = change.disabled === true ? domainEvent('user.disabled', { username: user.username, by: actor.name.slice(0, MAX_ACTOR) }) : undefined;
    return { result: user, event };
  });
}

export function adminUnlockUser(deps: AdminActionDeps, actor: AdminActor, tenantId: string, username: string): Promise<UserView> {
  return audited(deps, actor, 'user.unlock', userTarget(tenantId, username), trailOf(deps, tenantId), async () => {
    const tenant = await tenantOr404(deps, tenantId);
    return { result: await deps.users.unlock(tenant.id, username) };
  });
}

export function adminSetUserPassword(deps: AdminActionDeps, actor: AdminActor, tenantId: string, username: string, password: string): Promise<{ message: string }> {
  return audited(deps, actor, 'user.password-reset', userTarget(tenantId, username), trailOf(deps, tenantId), async () => {
    const tenant = await tenantOr404(deps, tenantId);
    await deps.users.setPassword(tenant.id, username, password);
    return { result: { message: `Password of '${username}' set; its tokens are revoked` } };
  });
}

export function adminRemoveUser(deps: AdminActionDeps, actor: AdminActor, tenantId: string, username: string): Promise<{ message: string }> {
  return audited(deps, actor, 'user.remove', userTarget(tenantId, username), trailOf(deps, tenantId), async () => {
    const tenant = await tenantOr404(deps, tenantId);
    await deps.users.remove(tenant.id, username);
    return { result: { message: `User '${username}' removed` } };
  });
}

// ── Operator keys (the platform's trail) ───────────────────────────────────────────────────────────

/** Creates an operator key; the key is in the result, the only time it is shown. */
export function adminCreateOperatorKey(deps: AdminActionDeps, actor: AdminActor, name: string): Promise<{ key: string; operatorKey: OperatorKeyView }> {
  return audited(deps, actor, 'operator-key.create', { name }, platform, async () => {
    try {
      const { key, view } = await deps.operatorKeys.create(name);
      return { result: { key, operatorKey: view } };
    } catch (err) {
      // A name the API's schema would have refused is invalid input, not a refusal.
      if (err instanceof OperatorKeyError) throw isOperatorKeyName(name) ? Errors.business('OPERATOR_KEY_EXISTS', err.message) : Errors.badRequest(err.message);
      throw err;
    }
  });
}

export function adminRevokeOperatorKey(deps: AdminActionDeps, actor: AdminActor, name: string): Promise<{ message: string }> {
  return audited(deps, actor, 'operator-key.revoke', { name }, platform, async () => {
    if (!(await deps.operatorKeys.revoke(name))) throw Errors.operatorKeyNotFound(name);
    return { result: { message: `Operator key '${name}' revoked` } };
  });
}

// ── A tenant's keys ────────────────────────────────────────────────────────────────────────────────

/** A new active key of `use`; the replaced ones retire after the grace. The tenant's channels hear `keys.rotated`. */
export function adminRotateKeys(deps: AdminActionDeps, actor: AdminActor, tenantId: string, use: KeyUse, graceSeconds: number): Promise<RotationResult> {
  return audited(deps, actor, 'keys.rotate', { use }, trailOf(deps, tenantId), async () => {
    const tenant = await tenantOr404(deps, tenantId);
    const r = await deps.keys.rotate(tenant.id, use, graceSeconds);
    return { result: r, event: domainEvent('keys.rotated', { use, kid: String(r.active.kid), replaced: r.replaced.map((k) => k.kid) }) };
  });
}

/** Retires a retiring key at once (a suspected compromise). */
export function adminRetireKey(deps: AdminActionDeps, actor: AdminActor, tenantId: string, kid: string): Promise<KeyInfo> {
  return audited(deps, actor, 'keys.retire', { kid }, trailOf(deps, tenantId), async () => {
    const tenant = await tenantOr404(deps, tenantId);
    return { result: await deps.keys.retire(tenant.id, kid) };
  });
}

/** Registers (or replaces) the tenant's client key for encrypted response fields. */
export function adminRegisterClientKey(
  deps: AdminActionDeps,
  clientKeys: Pick<ClientKeyStore, 'register'>,
  actor: AdminActor,
  tenantId: string,
  jwk: unknown,
): Promise<RegisteredClientKey> {
  const kid = (jwk as { kid?: unknown } | null)?.kid;
  return audited(deps, actor, 'client-key.register', typeof kid === 'string' && kid ? { kid } : {}, trailOf(deps, tenantId), async () => {
    const tenant = await tenantOr404(deps, tenantId);
    return { result: await clientKeys.register(tenant.id, jwk) };
  });
}
