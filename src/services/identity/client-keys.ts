// The tenants' registered client public keys (EC P-256, use enc), stored and cached: response fields are encrypted to them.
import { Value } from '@sinclair/typebox/value';
import { LRUCache } from 'lru-cache';
import { cacheTtl, entryBound, TENANT_CACHE_MAX } from '../infrastructure/cache-ttl.js';
import { ClientJwk, type RegisteredClientJwk } from '../../../schemas/keys.js';
import type { Db } from '../../store/db.js';
import type { ChangeFeed } from '../infrastructure/changes.js';
import { ecThumbprint, isOnCurve } from '../../crypto/client-keys.js';
import { ENC_ALG } from '../../crypto/keys.js';

export interface RegisteredClientKey {
  jwk: RegisteredClientJwk;
  registeredAt: string;
}

/** A client JWK that cannot be registered; the message names the member. */
class ClientKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ClientKeyError';
  }
}

/** Why a value is not a registrable client key (the route schema's checks), or [] when it is. */
function clientJwkProblems(value: unknown): string[] {
  if (value && typeof value === 'object' && 'd' in value) {
    return ['/d: a private key was given; register the public key only (drop "d") and keep the private key with the client'];
  }
  const problems = [...Value.Errors(ClientJwk, value)].map((e) => `${e.path || '/'}: ${e.message}`);
  if (problems.length) return problems;
  if (!isOnCurve(value as ClientJwk)) return ['/x, /y: the coordinates are not a point on P-256'];
  return [];
}

/** The stored form: kid (thumbprint when absent), use and alg made explicit; members in conventional order. */
function normaliseClientJwk(jwk: ClientJwk): RegisteredClientJwk {
  return { kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y, kid: jwk.kid ?? ecThumbprint(jwk), use: 'enc', alg: ENC_ALG as 'ECDH-ES+A256KW' };
}

interface Row {
  public_jwk: RegisteredClientJwk | string;
  updated_at: Date | string;
}

export class ClientKeyStore {
  private readonly cache: LRUCache<string, { key: RegisteredClientKey | null }>;

  constructor(
    private readonly db: Db,
    cacheTtlMs: number | null = null,
    private readonly changes?: ChangeFeed,
  ) {
    this.cache = new LRUCache({ ...entryBound(TENANT_CACHE_MAX), ...cacheTtl(cacheTtlMs) });
  }

  /** The tenant's client key, or null when none is registered (response fields are then omitted). */
  async get(tenantId: string): Promise<RegisteredClientKey | null> {
    const hit = this.cache.get(tenantId);
    if (hit) return hit.key;
    const seen = this.invalidations;
    const r = await this.db.query<Row>('SELECT public_jwk, updated_at FROM client_keys WHERE tenant_id = $1', [tenantId]);
    const row = r.rows[0];
    const key = row
      ? {
          jwk: typeof row.public_jwk === 'string' ? (JSON.parse(row.public_jwk) as RegisteredClientJwk) : row.public_jwk,
          registeredAt: new Date(row.updated_at).toISOString(),
        }
      : null;
    // A change told while the row was read may be newer than it: cached, it would stay (no expiry).
    if (seen === this.invalidations) this.cache.set(tenantId, { key });
    return key;
  }

  /** Registers (or replaces) the tenant's client key; throws ClientKeyError naming what is wrong. */
  async register(tenantId: string, value: unknown): Promise<RegisteredClientKey> {
    const problems = clientJwkProblems(value);
    if (problems.length) throw new ClientKeyError(`The client key is not an EC P-256 public JWK for encryption: ${problems.join('; ')}`);
    const jwk = normaliseClientJwk(value as ClientJwk);
    const r = await this.db.query<{ updated_at: Date | string }>(
      `INSERT INTO client_keys (tenant_id, kid, public_jwk) VALUES ($1, $2, $3)
       ON CONFLICT (tenant_id) DO UPDATE SET kid = EXCLUDED.kid, public_jwk = EXCLUDED.public_jwk, updated_at = now()
       RETURNING updated_at`,
      [tenantId, jwk.kid, JSON.stringify(jwk)],
    );
    this.invalidate(tenantId);
    await this.changes?.changed({ kind: 'client-key', tenantId });
    return { jwk, registeredAt: new Date(r.rows[0]!.updated_at).toISOString() };
  }

  /** Changes told so far: a load that saw one arrive while it read does not cache what it read. */
  private invalidations = 0;

  invalidate(tenantId: string): void {
    this.invalidations += 1;
    this.cache.delete(tenantId);
  }

  clear(): void {
    this.invalidations += 1;
    this.cache.clear();
  }
}
