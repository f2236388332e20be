// Per-tenant gateway key pairs (ECDH-ES for JWE, ES256 for tokens): created, sealed at rest, loaded and cached.
import { randomUUID } from 'node:crypto';
import type { webcrypto } from 'node:crypto';
import { exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';

type CryptoKey = webcrypto.CryptoKey;
import { LRUCache } from 'lru-cache';
import type { Db, Queryable } from '../store/db.js';
import type { MasterKey } from './master-key.js';

export type KeyUse = 'enc' | 'sig';
export const ENC_ALG = 'ECDH-ES+A256KW';
export const SIG_ALG = 'ES256';

export interface PublicJwk {
  kty: string;
  crv: string;
  x: string;
  y: string;
  kid: string;
  use: KeyUse;
  alg: string;
}

export interface TenantKey {
  kid: string;
  use: KeyUse;
  alg: string;
  status: 'active' | 'retiring';
  publicJwk: PublicJwk;
  privateKey: CryptoKey;
  publicKey: CryptoKey;
}

export interface TenantKeys {
  /** Active first, newest first. */
  enc: TenantKey[];
  sig: TenantKey[];
}

interface KeyRow {
  kid: string;
  use: KeyUse;
  alg: string;
  status: 'active' | 'retiring';
  public_jwk: PublicJwk;
  private_jwk_enc: string;
}

const aad = (tenantId: string, kid: string) => `cardline-key:${tenantId}:${kid}`;

export class KeyRing {
  private readonly cache: LRUCache<string, TenantKeys>;

  constructor(
    private readonly db: Db,
    private readonly masterKey: MasterKey,
    cacheTtlMs = 60_000,
  ) {
    this.cache = new LRUCache({ max: 10_000, ttl: Math.max(cacheTtlMs, 1) });
  }

  /** Generates a key pair, seals its private half and stores it as the tenant's newest active key. */
  async create(tenantId: string, use: KeyUse, db: Queryable = this.db): Promise<PublicJwk> {
    const alg = use === 'enc' ? ENC_ALG : SIG_ALG;
    const { publicKey, privateKey } = await generateKeyPair(alg, { crv: 'P-256', extractable: true });
    const kid = randomUUID();
    const pub = await exportJWK(publicKey);
    const publicJwk: PublicJwk = { kty: 'EC', crv: 'P-256', x: pub.x!, y: pub.y!, kid, use, alg };
    const sealed = this.masterKey.seal(JSON.stringify(await exportJWK(privateKey)), aad(tenantId, kid));
    await db.query(
      'INSERT INTO keys (tenant_id, kid, use, alg, public_jwk, private_jwk_enc) VALUES ($1, $2, $3, $4, $5, $6)',
      [tenantId, kid, use, alg, JSON.stringify(publicJwk), sealed],
    );
    this.cache.delete(tenantId);
    return publicJwk;
  }

  async forTenant(tenantId: string): Promise<TenantKeys> {
    const hit = this.cache.get(tenantId);
    if (hit) return hit;
    const r = await this.db.query<KeyRow>(
      `SELECT kid, use, alg, status, public_jwk, private_jwk_enc FROM keys
        WHERE tenant_id = $1 AND status <> 'retired'
        ORDER BY (status = 'active') DESC, created_at DESC`,
      [tenantId],
    );
    const keys: TenantKeys = { enc: [], sig: [] };
    for (const row of r.rows) {
      const privateJwk = JSON.parse(this.masterKey.open(row.private_jwk_enc, aad(tenantId, row.kid))) as JWK;
      const publicJwk = typeof row.public_jwk === 'string' ? (JSON.parse(row.public_jwk) as PublicJwk) : row.public_jwk;
      keys[row.use].push({
        kid: row.kid,
        use: row.use,
        alg: row.alg,
        status: row.status,
        publicJwk,
        privateKey: (await importJWK(privateJwk, row.alg)) as CryptoKey,
        publicKey: (await importJWK(publicJwk, row.alg)) as CryptoKey,
      });
    }
    this.cache.set(tenantId, keys);
    return keys;
  }

  /** Public signing keys of every tenant, for /.well-known/jwks.json. Kids are random: no tenant names leak. */
  async allSigningJwks(): Promise<PublicJwk[]> {
    const r = await this.db.query<{ public_jwk: PublicJwk | string }>(
      "SELECT public_jwk FROM keys WHERE use = 'sig' AND status <> 'retired' ORDER BY created_at",
    );
    return r.rows.map((row) => (typeof row.public_jwk === 'string' ? (JSON.parse(row.public_jwk) as PublicJwk) : row.public_jwk));
  }

  invalidate(tenantId: string): void {
    this.cache.delete(tenantId);
  }
}
