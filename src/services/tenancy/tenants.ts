// Tenants: onboarding records and their configuration, read through a cache that a change refreshes
// (src/services/infrastructure/changes.ts). Secrets in a connector's options are stored sealed and opened here, in memory.
import type { TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { LRUCache } from 'lru-cache';
import { cacheTtl, entryBound, TENANT_CACHE_MAX, UNKNOWN_TENANT_CACHE_MAX } from '../infrastructure/cache-ttl.js';
import { routingProblems } from '../connectors/routing.js';
import { DEFAULT_TENANT_CONFIG, TENANT_ID_PATTERN, TenantConfig } from '../../../schemas/tenant.js';
import { approvalPolicyProblems } from '../../../schemas/approvals.js';
import type { ConfigSecrets } from '../../crypto/config-secrets.js';
import type { Db, Queryable } from '../../store/db.js';
import { keyPage, type KeyPage } from '../../paging/key-cursor.js';

export interface Tenant {
  id: string;
  name: string;
  status: 'active' | 'disabled';
  config: TenantConfig;
  /** Grows with every change; a request keeps the configuration it started with (decision 0034). */
  version?: number;
}

/** A tenant row as stored: its configuration with secrets still sealed. */
export interface StoredTenant {
  id: string;
  name: string;
  status: 'active' | 'disabled';
  config: Record<string, unknown>;
  version: number;
  createdAt: string;
  updatedAt: string;
}

interface TenantRow {
  tenant_id: string;
  name: string;
  status: 'active' | 'disabled';
  config: Record<string, unknown> | string;
  version: string | number;
  created_at: Date | string;
  updated_at: Date | string;
}

const COLUMNS = 'tenant_id, name, status, config, version, created_at, updated_at';

/** The platform's pseudo-tenant for operator keys and actions concerning no tenant; no tenant id starts with `_`. */
export const PLATFORM_TENANT = '_platform';

const TENANT_ID = new RegExp(TENANT_ID_PATTERN);
export const isTenantId = (value: string): boolean => TENANT_ID.test(value);

export class TenantConfigError extends Error {
  constructor(
    tenantId: string,
    readonly problems: string[],
  ) {
    super(`Tenant '${tenantId}' has an invalid configuration: ${problems.join('; ')}`);
    this.name = 'TenantConfigError';
  }
}

/** Zones already checked: building an Intl.DateTimeFormat costs about 100 µs, and tenants share a few zones. */
const checkedZones = new Map<string, boolean>();

/** Whether Intl knows the zone (the same IANA names PostgreSQL knows). */
function isTimeZone(zone: string): boolean {
  let known = checkedZones.get(zone);
  if (known === undefined) {
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: zone });
      known = true;
    } catch {
      known = false;
    }
    // Bounded: a name sent to the management API that is not a zone is not kept.
    if (known || checkedZones.size < 1_000) checkedZones.set(zone, known);
  }
  return known;
}

const tenantConfigCheck = TypeCompiler.Compile(TenantConfig);

/** Fills defaults and validates; errors name the field (`/creditLimit/maximum: ...`). */
/** The connector choices of a raw configuration (`connector` and each of `connectors`), for sealing and opening their options. */
export function connectorChoices(raw: Record<string, unknown>): { id?: unknown; module?: unknown; options?: unknown }[] {
  const one = raw.connector as { options?: unknown } | undefined;
  const named = raw.connectors && typeof raw.connectors === 'object' ? Object.values(raw.connectors as Record<string, { options?: unknown }>) : [];
  return [...(one && typeof one === 'object' ? [one] : []), ...named.filter((c) => c && typeof c === 'object')];
}

/** A choice among named values (an approver role) says which, where TypeBox would say only "Expected union value". */
function choicesOf(schema: TSchema): string | undefined {
  const values = (schema.anyOf as { const?: unknown }[] | undefined)?.map((s) => s.const);
  return values?.length && values.every((v) => typeof v === 'string') ? `must be one of ${values.join(', ')}` : undefined;
}

export function parseTenantConfig(tenantId: string, raw: unknown): TenantConfig {
  const merged = Value.Default(TenantConfig, structuredClone(raw ?? {})) as Record<string, unknown>;
  for (const key of Object.keys(DEFAULT_TENANT_CONFIG) as (keyof TenantConfig)[]) {
    // A tenant with named connectors has no single one: the default connector is not filled in beside them.
    if (key === 'connector' && merged.connectors !== undefined) continue;
    if (merged[key] === undefined) merged[key] = structuredClone(DEFAULT_TENANT_CONFIG[key]);
  }
  // The compiled check first: the error list is built only for a configuration that fails it.
  const errors = tenantConfigCheck.Check(merged) ? [] : [...tenantConfigCheck.Errors(merged)].map((e) => `${e.path || '/'}: ${choicesOf(e.schema) ?? e.message}`);
  if (typeof merged.timeZone === 'string' && !isTimeZone(merged.timeZone)) errors.push(`/timeZone: '${merged.timeZone}' is not an IANA time zone (such as UTC or Europe/Lisbon)`);
  if (errors.length === 0) errors.push(...routingProblems(merged as Partial<TenantConfig>), ...approvalPolicyProblems((merged as Partial<TenantConfig>).approvals));
  if (errors.length) throw new TenantConfigError(tenantId, errors);
  return merged as TenantConfig;
}

const asJson = (v: Record<string, unknown> | string): Record<string, unknown> => (typeof v === 'string' ? (JSON.parse(v) as Record<string, unknown>) : v);

function storedOf(row: TenantRow): StoredTenant {
  return {
    id: row.tenant_id,
    name: row.name,
    status: row.status,
    config: asJson(row.config),
    version: Number(row.version),
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}

export class TenantService {
  private readonly cache: LRUCache<string, Tenant>;
  /** Ids looked up and not found, bounded apart from the tenants (decision 0071). */
  private readonly unknown: LRUCache<string, true>;

  /** Without `secrets` (tools that only list), sealed options stay sealed: such a tenant cannot call its core. */
  constructor(
    private readonly db: Db,
    cacheTtlMs: number | null,
    private readonly secrets?: ConfigSecrets,
    /** How many unknown ids are remembered (tests use a small bound). */
    unknownMax = UNKNOWN_TENANT_CACHE_MAX,
  ) {
    this.cache = new LRUCache({ ...entryBound(TENANT_CACHE_MAX), ...cacheTtl(cacheTtlMs) });
    this.unknown = new LRUCache({ ...entryBound(unknownMax), ...cacheTtl(cacheTtlMs) });
  }

  /** The tenant or null; unknown ids are cached apart, so a flood of them costs no queries and evicts no tenant. */
  async get(tenantId: string): Promise<Tenant | null> {
    if (!isTenantId(tenantId)) return null;
    const hit = this.cache.get(tenantId);
    if (hit) return hit;
    if (this.unknown.get(tenantId)) return null;
    const seen = this.invalidations;
    const r = await this.db.query<TenantRow>(`SELECT ${COLUMNS} FROM tenants WHERE tenant_id = $1`, [tenantId]);
    const row = r.rows[0];
    const tenant = row ? this.fromStored(storedOf(row)) : null;
    // A change told while the row was read may be newer than it: the next lookup reads again.
    if (seen === this.invalidations) {
      if (tenant) this.cache.set(tenantId, tenant);
      else this.unknown.set(tenantId, true);
    }
    return tenant;
  }

  /** Tenants and unknown ids cached (tests, diagnostics). */
  cached(): { tenants: number; unknown: number } {
    return { tenants: this.cache.size, unknown: this.unknown.size };
  }

  /** The row as stored (secrets sealed); `lock` takes it FOR UPDATE in the transaction `db`. */
  async stored(tenantId: string, db: Queryable = this.db, lock = false): Promise<StoredTenant | null> {
    if (!isTenantId(tenantId)) return null;
    const r = await db.query<TenantRow>(`SELECT ${COLUMNS} FROM tenants WHERE tenant_id = $1${lock ? ' FOR UPDATE' : ''}`, [tenantId]);
    return r.rows[0] ? storedOf(r.rows[0]) : null;
  }

  async listStored(): Promise<StoredTenant[]> {
    const r = await this.db.query<TenantRow>(`SELECT ${COLUMNS} FROM tenants ORDER BY tenant_id`);
    return r.rows.map(storedOf);
  }

  /** One page of tenants in id order after `after`; `search` matches id or name as a plain substring, any case. */
  async pageStored({ limit, after, search = null }: { limit: number; after: string | null; search?: string | null }): Promise<KeyPage<StoredTenant>> {
    const r = await this.db.query<TenantRow>(
      `SELECT ${COLUMNS} FROM tenants WHERE ($1::text IS NULL OR tenant_id > $1)
         AND ($3::text IS NULL OR strpos(lower(tenant_id), lower($3)) > 0 OR strpos(lower(name), lower($3)) > 0)
       ORDER BY tenant_id LIMIT $2`,
      [after, limit + 1, search],
    );
    return keyPage(r.rows, limit, (row) => row.tenant_id, storedOf);
  }

  async list(): Promise<Tenant[]> {
    return (await this.listChecked()).tenants;
  }

  /** Every tenant with a valid configuration and those without (with the reason); `primeSince` caches the valid ones. */
  async listChecked(opts: { stored?: StoredTenant[]; primeSince?: number } = {}): Promise<{ tenants: Tenant[]; invalid: { tenant: string; reason: string }[] }> {
    const prime = opts.primeSince !== undefined && opts.primeSince === this.invalidations;
    const tenants: Tenant[] = [];
    const invalid: { tenant: string; reason: string }[] = [];
    for (const stored of opts.stored ?? (await this.listStored())) {
      try {
        const tenant = this.fromStored(stored);
        tenants.push(tenant);
        if (prime) this.cache.set(tenant.id, tenant);
      } catch (err) {
        if (!(err instanceof TenantConfigError)) throw err;
        if (stored.status === 'active') invalid.push({ tenant: stored.id, reason: err.message });
      }
    }
    return { tenants, invalid };
  }

  /**
   * listChecked() from the cache where it holds the stored version: only tenants changed since are read in
   * full (readiness asks on every probe; checking ten thousand configurations took ~450 ms each time).
   */
  async listCurrent(): Promise<{ tenants: Tenant[]; invalid: { tenant: string; reason: string }[] }> {
    const mark = this.mark();
    const r = await this.db.query<{ tenant_id: string; version: string | number }>('SELECT tenant_id, version FROM tenants ORDER BY tenant_id');
    const tenants: Tenant[] = [];
    const stale: string[] = [];
    for (const row of r.rows) {
      const hit = this.cache.get(row.tenant_id);
      if (hit && hit.version === Number(row.version)) tenants.push(hit);
      else stale.push(row.tenant_id);
    }
    if (stale.length === 0) return { tenants, invalid: [] };
    const rows = await this.db.query<TenantRow>(`SELECT ${COLUMNS} FROM tenants WHERE tenant_id = ANY($1::text[]) ORDER BY tenant_id`, [stale]);
    const checked = await this.listChecked({ stored: rows.rows.map(storedOf), primeSince: mark });
    tenants.push(...checked.tenants);
    return { tenants: tenants.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)), invalid: checked.invalid };
  }

  /** Inserts a tenant whose configuration was validated (and its secrets sealed) by the caller. */
  async insert(input: { id: string; name: string; config: Record<string, unknown> }, db: Queryable = this.db): Promise<void> {
    await db.query('INSERT INTO tenants (tenant_id, name, status, config) VALUES ($1, $2, $3, $4)', [
      input.id,
      input.name,
      'active',
      JSON.stringify(input.config),
    ]);
  }

  /** Replaces name and configuration; the version grows. */
  async update(tenantId: string, input: { name: string; config: Record<string, unknown> }, db: Queryable = this.db): Promise<void> {
    await db.query('UPDATE tenants SET name = $2, config = $3, version = version + 1, updated_at = now() WHERE tenant_id = $1', [
      tenantId,
      input.name,
      JSON.stringify(input.config),
    ]);
    this.invalidate(tenantId);
  }

  /** Enables or disables; the version grows. The caller tells other processes (src/services/tenancy/tenant-admin.ts). */
  async setStatus(tenantId: string, status: Tenant['status'], db: Queryable = this.db): Promise<void> {
    await db.query('UPDATE tenants SET status = $2, version = version + 1, updated_at = now() WHERE tenant_id = $1', [tenantId, status]);
    this.invalidate(tenantId);
  }

  async count(): Promise<number> {
    const r = await this.db.query<{ n: number }>('SELECT count(*)::int AS n FROM tenants');
    return r.rows[0]?.n ?? 0;
  }

  /** The tenant as the gateway uses it: secrets opened, defaults filled, validated. */
  fromStored(stored: StoredTenant): Tenant {
    const raw = structuredClone(stored.config);
    if (this.secrets) for (const c of connectorChoices(raw)) if (c.options !== undefined) c.options = this.secrets.open(stored.id, c.options);
    return { id: stored.id, name: stored.name, status: stored.status, config: parseTenantConfig(stored.id, raw), version: stored.version };
  }

  /** Changes told so far: a list read after a mark may be cached only if no change came since. */
  mark(): number {
    return this.invalidations;
  }

  private invalidations = 0;

  invalidate(tenantId: string): void {
    this.invalidations += 1;
    this.cache.delete(tenantId);
    this.unknown.delete(tenantId);
  }

  clear(): void {
    this.invalidations += 1;
    this.cache.clear();
    this.unknown.clear();
  }
}
