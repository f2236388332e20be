// Tenants: onboarding records and their configuration, read through a short-lived cache.
import { Value } from '@sinclair/typebox/value';
import { LRUCache } from 'lru-cache';
import { DEFAULT_TENANT_CONFIG, TENANT_ID_PATTERN, TenantConfig } from '../../schemas/tenant.js';
import type { Db, Queryable } from '../store/db.js';

export interface Tenant {
  id: string;
  name: string;
  status: 'active' | 'disabled';
  config: TenantConfig;
}

interface TenantRow {
  tenant_id: string;
  name: string;
  status: 'active' | 'disabled';
  config: TenantConfig | string;
}

const TENANT_ID = new RegExp(TENANT_ID_PATTERN);
export const isTenantId = (value: string): boolean => TENANT_ID.test(value);

export class TenantConfigError extends Error {
  constructor(tenantId: string, problems: string[]) {
    super(`Tenant '${tenantId}' has an invalid configuration: ${problems.join('; ')}`);
    this.name = 'TenantConfigError';
  }
}

/** Whether Intl knows the zone (the same IANA names PostgreSQL knows). */
export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** Fills defaults and validates; errors name the field (`/creditLimit/maximum: ...`). */
export function parseTenantConfig(tenantId: string, raw: unknown): TenantConfig {
  const merged = Value.Default(TenantConfig, structuredClone(raw ?? {})) as Record<string, unknown>;
  for (const key of Object.keys(DEFAULT_TENANT_CONFIG) as (keyof TenantConfig)[]) {
    if (merged[key] === undefined) merged[key] = structuredClone(DEFAULT_TENANT_CONFIG[key]);
  }
  const errors = [...Value.Errors(TenantConfig, merged)].map((e) => `${e.path || '/'}: ${e.message}`);
  if (typeof merged.timeZone === 'string' && !isTimeZone(merged.timeZone)) errors.push(`/timeZone: '${merged.timeZone}' is not an IANA time zone (such as UTC or Europe/Lisbon)`);
  if (errors.length) throw new TenantConfigError(tenantId, errors);
  return merged as TenantConfig;
}

export class TenantService {
  private readonly cache: LRUCache<string, { tenant: Tenant | null }>;

  constructor(
    private readonly db: Db,
    cacheTtlMs: number,
  ) {
    this.cache = new LRUCache({ max: 10_000, ttl: Math.max(cacheTtlMs, 1) });
  }

  /** The tenant, or null when unknown. Unknown ids are cached too, so a flood of them costs no queries. */
  async get(tenantId: string): Promise<Tenant | null> {
    if (!isTenantId(tenantId)) return null;
    const hit = this.cache.get(tenantId);
    if (hit) return hit.tenant;
    const r = await this.db.query<TenantRow>('SELECT tenant_id, name, status, config FROM tenants WHERE tenant_id = $1', [tenantId]);
    const row = r.rows[0];
    const tenant = row ? fromRow(row) : null;
    this.cache.set(tenantId, { tenant });
    return tenant;
  }

  async list(): Promise<Tenant[]> {
    return (await this.listChecked()).tenants;
  }

  /** Every tenant whose stored configuration is valid, and the ones whose is not (with the reason). */
  async listChecked(): Promise<{ tenants: Tenant[]; invalid: { tenant: string; reason: string }[] }> {
    const r = await this.db.query<TenantRow>('SELECT tenant_id, name, status, config FROM tenants ORDER BY tenant_id');
    const tenants: Tenant[] = [];
    const invalid: { tenant: string; reason: string }[] = [];
    for (const row of r.rows) {
      try {
        tenants.push(fromRow(row));
      } catch (err) {
        if (!(err instanceof TenantConfigError)) throw err;
        if (row.status === 'active') invalid.push({ tenant: row.tenant_id, reason: err.message });
      }
    }
    return { tenants, invalid };
  }

  async create(input: { id: string; name?: string; config?: unknown }, db: Queryable = this.db): Promise<Tenant> {
    if (!isTenantId(input.id)) {
      throw new TenantConfigError(input.id, [`id must match ${TENANT_ID_PATTERN} (lower-case letters, digits, dashes)`]);
    }
    const config = parseTenantConfig(input.id, input.config);
    const tenant: Tenant = { id: input.id, name: input.name ?? input.id, status: 'active', config };
    await db.query('INSERT INTO tenants (tenant_id, name, status, config) VALUES ($1, $2, $3, $4)', [
      tenant.id,
      tenant.name,
      tenant.status,
      JSON.stringify(config),
    ]);
    this.cache.delete(tenant.id);
    return tenant;
  }

  async setStatus(tenantId: string, status: Tenant['status']): Promise<void> {
    await this.db.query('UPDATE tenants SET status = $2, updated_at = now() WHERE tenant_id = $1', [tenantId, status]);
    this.cache.delete(tenantId);
  }

  async count(): Promise<number> {
    const r = await this.db.query<{ n: number }>('SELECT count(*)::int AS n FROM tenants');
    return r.rows[0]?.n ?? 0;
  }
}

function fromRow(row: TenantRow): Tenant {
  const raw = typeof row.config === 'string' ? JSON.parse(row.config) : row.config;
  return { id: row.tenant_id, name: row.name, status: row.status, config: parseTenantConfig(row.tenant_id, raw) };
}
