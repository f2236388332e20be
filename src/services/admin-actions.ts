// The CLI's actions on a tenant's keys that the management API does not offer (decision 0198): rotating the
// keys and registering the client key are the tenant Admin's operations of the public API (a tenant token, not
// an operator's principal), and retiring a key at once has no route. Each is audited as its API operation is,
// with the actor `cli:<os-user>` (decision 0195). Everything else the CLI changes on the store — tenants, a
// tenant's users, operator keys — runs the management operations themselves in process (src/cli/in-process.ts).
//
// A refused or failed action is recorded too (its status and outcome as the API would answer them), then
// thrown again for the caller to report.
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { outcomeOf } from '../audit/outcome.js';
import type { AuditWriter } from '../audit/writer.js';
import { CardlineError, Errors } from '../errors.js';
import { domainEvent, type DomainEvent } from '../events/outbox.js';
import type { ClientKeyStore, RegisteredClientKey } from './identity/client-keys.js';
import type { KeyUse } from '../crypto/keys.js';
import type { KeyInfo, RotationResult } from './identity/key-ring.js';
import type { TenantAdminDeps } from './tenancy/tenant-admin.js';
import { PLATFORM_TENANT, isTenantId } from './tenancy/tenants.js';

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

export interface AdminActionDeps extends Pick<TenantAdminDeps, 'tenants' | 'keys'> {
  audit: Pick<AuditWriter, 'record'>;
}

/**
 * The CLI's key actions: the audit action name, method and route of the public operation each one is (the
 * retirement, which no API offers, names its command), and the status a success answers;
 * test/cli/admin-actions-one-table.test.ts holds them to the operation table. A trail reads the same
 * whichever way the change was made; the actor and the empty origin tell them apart.
 */
export const ADMIN_ACTIONS = {
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

async function tenantOr404(deps: Pick<AdminActionDeps, 'tenants'>, tenantId: string) {
  const tenant = await deps.tenants.get(tenantId);
  if (!tenant) throw Errors.tenantNotFound(tenantId);
  return tenant;
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
