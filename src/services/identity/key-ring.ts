// Per-tenant gateway key pairs (ECDH-ES for JWE, ES256 for tokens): created, sealed at rest, loaded and
// cached, rotated (active → retiring for a grace period → retired, decision 0021).
import { createPrivateKey, randomUUID, type JsonWebKey, type KeyObject, type webcrypto } from 'node:crypto';
import type { Context } from '@opentelemetry/api';
import { exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';
import { LRUCache } from 'lru-cache';
import { DEFAULT_KEY_CACHE_MAX } from '../../config.js';
import { cacheTtl, entryBound, TENANT_CACHE_MAX } from '../infrastructure/cache-ttl.js';
import type { Db, Queryable } from '../../store/db.js';
import { tracedUnder } from '../../store/traced.js';
import type { MasterKey } from '../../crypto/master-key.js';
import { ENC_ALG, MAX_GRACE_SECONDS, SIG_ALG, type KeySource, type KeyUse, type PublicJwk, type TenantKey, type TenantKeys } from '../../crypto/keys.js';
import type { ChangeFeed } from '../infrastructure/changes.js';

type CryptoKey = webcrypto.CryptoKey;
type KeyStatus = 'active' | 'retiring' | 'retired';

/** A lifecycle request the key set cannot honour (unknown kid, retiring the last active key). */
export class KeyLifecycleError extends Error {
  constructor(
    message: string,
    /** What the API answers for it: no such key (404), the active key (409), or a request it refuses (400). */
    readonly reason: 'unknown-key' | 'active-key' | 'invalid' = 'invalid',
  ) {
    super(message);
    this.name = 'KeyLifecycleError';
  }
}

/** One key's imported halves, made on first use; kept across reloads of the tenant's set (a kid's material never changes). */
interface Imported {
  privateKey?: Promise<CryptoKey>;
  publicKey?: Promise<CryptoKey>;
}

/** A key as listings show it: public half and lifecycle, never the private half. */
export interface KeyInfo {
  kid: string;
  use: KeyUse;
  alg: string;
  status: KeyStatus;
  createdAt: string;
  /** When a retiring key stops being accepted (or a retired one stopped); null for active keys. */
  retireAt: string | null;
  publicJwk: PublicJwk;
}

export interface RotationResult {
  active: PublicJwk;
  /** The keys it replaced, now retiring (or retired at once when the grace was 0). */
  replaced: { kid: string; status: 'retiring' | 'retired'; retireAt: string }[];
}


interface KeyRow {
  kid: string;
  use: KeyUse;
  alg: string;
  status: KeyStatus;
  public_jwk: PublicJwk | string;
  private_jwk_enc: string;
  retire_at: Date | string | null;
  created_at: Date | string;
}

const asJwk = (v: PublicJwk | string): PublicJwk => (typeof v === 'string' ? (JSON.parse(v) as PublicJwk) : v);
const asDate = (v: Date | string | null): Date | null => (v === null ? null : v instanceof Date ? v : new Date(v));
/** Whether a key still counts at `now`: active, or retiring and not yet past its end. */
const live = (k: { status: KeyStatus; retireAt?: Date | null }, now: number): boolean =>
  k.status === 'active' || (k.status === 'retiring' && (!k.retireAt || k.retireAt.getTime() > now));

const aad = (tenantId: string, kid: string) => `cardline-key:${tenantId}:${kid}`;

/** The master key given is not the one the store's keys were sealed with. */
export class MasterKeyMismatchError extends Error {
  constructor(tenantId: string, kid: string) {
    super(
      `The master key does not open the keys in this store (tenant '${tenantId}', key ${kid}): it is not the key the ` +
        'store was created with. Set CARDLINE_MASTER_KEY to that key (for the demo store, leave it unset: the demo ' +
        "keeps its key in <data dir>/master.key). Nothing was changed.",
    );
    this.name = 'MasterKeyMismatchError';
  }
}

/**
 * Checks the master key against the store (the newest sealed key opens) before anything is written with it:
 * the wrong one would seal new tenants wrongly and fail the old ones. An empty store accepts any.
 */
export async function checkMasterKey(db: Queryable, masterKey: MasterKey): Promise<void> {
  const r = await db.query<{ tenant_id: string; kid: string; private_jwk_enc: string }>(
    'SELECT tenant_id, kid, private_jwk_enc FROM keys ORDER BY created_at DESC LIMIT 1',
  );
  const row = r.rows[0];
  if (!row) return;
  try {
    masterKey.open(row.private_jwk_enc, aad(row.tenant_id, row.kid));
  } catch {
    throw new MasterKeyMismatchError(row.tenant_id, row.kid);
  }
}

interface Importer {
  /** The key's entry among the imported ones, made when a half is first asked for (and again after an eviction). */
  objects(slot: string): Imported;
  load(jwk: () => JWK, alg: string): Promise<CryptoKey>;
  open(sealed: string, tenantId: string, kid: string): string;
}

/** A usable key, imported on first use through the ring's LRU; a class so 20 000 keys hold no closures (0214). */
class LoadedKey implements TenantKey {
  readonly kid: string;
  readonly use: KeyUse;
  readonly alg: string;
  readonly status: TenantKey['status'];
  readonly publicJwk: PublicJwk;
  private readonly sealed: string;

  constructor(
    private readonly importer: Importer,
    private readonly tenantId: string,
    row: KeyRow,
    readonly retireAt: Date | null,
  ) {
    this.kid = row.kid;
    this.use = row.use;
    this.alg = row.alg;
    this.status = row.status as TenantKey['status'];
    this.publicJwk = asJwk(row.public_jwk);
    this.sealed = row.private_jwk_enc;
  }

  privateKey(): Promise<CryptoKey> {
    return this.half('privateKey', () => JSON.parse(this.importer.open(this.sealed, this.tenantId, this.kid)) as JWK);
  }

  publicKey(): Promise<CryptoKey> {
    return this.half('publicKey', () => this.publicJwk as JWK);
  }

  /** Not through the LRU: 10 000 tenants' checkpoints would evict the keys tokens are verified with (0435). */
  signingKey(): KeyObject {
    const jwk = JSON.parse(this.importer.open(this.sealed, this.tenantId, this.kid)) as JsonWebKey;
    return createPrivateKey({ key: jwk, format: 'jwk' });
  }

  /** One half, imported on its first use and kept among the ring's imported objects. */
  private half(which: keyof Imported, jwk: () => JWK): Promise<CryptoKey> {
    const o = this.importer.objects(`${this.tenantId}\u0000${this.kid}`);
    let made = o[which];
    if (!made) {
      const importing = (made = o[which] = this.importer.load(jwk, this.alg));
      // A failed import (a wrong master key) is tried again next time, not kept broken.
      importing.catch(() => {
        if (o[which] === importing) o[which] = undefined;
      });
    }
    return made;
  }
}

export class KeyRing implements KeySource {
  /** Each tenant's usable keys (about 1 KB of heap each), bounded like the tenants (decision 0214). */
  private readonly cache: LRUCache<string, TenantKeys>;
  /** Imported key objects by tenant and kid, LRU-bounded apart from the sets so a set holds no native memory (0214). */
  private readonly imported: LRUCache<string, Imported>;
  /** Key imports done (tests). */
  imports = 0;

  /** What a loaded key imports its halves through: the ring's LRU of imported objects, its count, its master key. */
  private readonly importer: Importer = {
    objects: (slot) => {
      let o = this.imported.get(slot);
      if (!o) this.imported.set(slot, (o = {}));
      return o;
    },
    load: async (jwk, alg) => {
      this.imports += 1;
      return (await importJWK(jwk(), alg)) as CryptoKey;
    },
    open: (sealed, tenantId, kid) => this.masterKey.open(sealed, aad(tenantId, kid)),
  };

  constructor(
    private readonly db: Db,
    private readonly masterKey: MasterKey,
    cacheTtlMs: number | null = null,
    private readonly changes?: ChangeFeed,
    /** Keys kept imported (decision 0214): past it the least recently used one's objects are dropped. */
    readonly maxImported: number = DEFAULT_KEY_CACHE_MAX,
    /** Tenants whose key sets stay cached (tests use a small bound). */
    maxSets: number = TENANT_CACHE_MAX,
  ) {
    this.cache = new LRUCache({ ...entryBound(maxSets), ...cacheTtl(cacheTtlMs) });
    // Kept apart from `cache` (which a change or an expiry empties): no TTL, a kid never changes.
    this.imported = new LRUCache(entryBound(maxImported));
  }

  /** Tenants whose key sets are cached, and keys whose imported objects are kept (tests, diagnostics). */
  cached(): { sets: number; imported: number } {
    return { sets: this.cache.size, imported: this.imported.size };
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
    this.invalidate(tenantId);
    return publicJwk;
  }

  /** The tenant's usable keys, active (newest first) then retiring within grace; expired ones are dropped. */
  async forTenant(tenantId: string, trace?: Context): Promise<TenantKeys> {
    const now = Date.now();
    const hit = this.cache.get(tenantId);
    if (hit) return hit.enc.every((k) => live(k, now)) && hit.sig.every((k) => live(k, now)) ? hit : this.usable(hit, now);
    const seen = this.invalidations;
    const r = await tracedUnder(this.db, trace).query<KeyRow>(
      `SELECT kid, use, alg, status, public_jwk, private_jwk_enc, retire_at, created_at FROM keys
        WHERE tenant_id = $1 AND status <> 'retired'
        ORDER BY (status = 'active') DESC, created_at DESC`,
      [tenantId],
    );
    const loaded: TenantKeys = { enc: [], sig: [] };
    const expired: string[] = [];
    for (const row of r.rows) {
      const retireAt = asDate(row.retire_at);
      if (row.status === 'retired' || !live({ status: row.status, retireAt }, now)) {
        expired.push(row.kid);
        continue;
      }
      loaded[row.use].push(new LoadedKey(this.importer, tenantId, row, retireAt));
    }
    // Cached for long: copies of their length (an array pushed to keeps 17 slots, 0390).
    const keys: TenantKeys = { enc: loaded.enc.slice(), sig: loaded.sig.slice() };
    // Lazy retirement (decision 0021): whoever loads the set first after a grace ends records it.
    if (expired.length) {
      await this.db.query(
        "UPDATE keys SET status = 'retired' WHERE tenant_id = $1 AND kid = ANY($2::text[]) AND status = 'retiring'",
        [tenantId, expired],
      );
    }
    // A change told while the rows were read may be newer than them: cached, they would stay (no expiry).
    if (seen === this.invalidations) this.cache.set(tenantId, keys);
    return keys;
  }

  private usable(keys: TenantKeys, now: number): TenantKeys {
    return { enc: keys.enc.filter((k) => live(k, now)), sig: keys.sig.filter((k) => live(k, now)) };
  }

  /** Public signing keys of every tenant, for /.well-known/jwks.json. Kids are random: no tenant names leak. */
  async allSigningJwks(): Promise<PublicJwk[]> {
    const r = await this.db.query<{ public_jwk: PublicJwk | string }>(
      `SELECT public_jwk FROM keys
        WHERE use = 'sig' AND (status = 'active' OR (status = 'retiring' AND (retire_at IS NULL OR retire_at > $1)))
        ORDER BY created_at`,
      [new Date().toISOString()],
    );
    return r.rows.map((row) => asJwk(row.public_jwk));
  }

  /** A new active key of `use`; the old active ones retire after `grace`. Serialised by the tenant's row lock. */
  async rotate(tenantId: string, use: KeyUse, graceSeconds: number): Promise<RotationResult> {
    if (!Number.isInteger(graceSeconds) || graceSeconds < 0 || graceSeconds > MAX_GRACE_SECONDS) {
      throw new KeyLifecycleError(`The grace must be a whole number of seconds from 0 to ${MAX_GRACE_SECONDS}.`);
    }
    const retireAt = new Date(Date.now() + graceSeconds * 1000);
    const status = graceSeconds === 0 ? 'retired' : 'retiring';
    const result = await this.db.transaction(async (tx) => {
      const tenant = await tx.query('SELECT tenant_id FROM tenants WHERE tenant_id = $1 FOR UPDATE', [tenantId]);
      if (tenant.rows.length === 0) throw new KeyLifecycleError(`Unknown tenant '${tenantId}'.`);
      const replaced = await tx.query<{ kid: string }>(
        `UPDATE keys SET status = $3, retire_at = $4 WHERE tenant_id = $1 AND use = $2 AND status = 'active' RETURNING kid`,
        [tenantId, use, status, retireAt.toISOString()],
      );
      const active = await this.create(tenantId, use, tx);
      await this.changes?.publish({ kind: 'keys', tenantId }, tx);
      return {
        active,
        replaced: replaced.rows.map((row) => ({ kid: row.kid, status, retireAt: retireAt.toISOString() }) as const),
      };
    });
    // This process sees the rotation now; every other process when it hears of it (decision 0034).
    this.told(tenantId);
    return result;
  }

  /** Retires a key at once (a suspected compromise): refused for the tenant's only active key of its use. */
  async retire(tenantId: string, kid: string): Promise<KeyInfo> {
    await this.db.transaction(async (tx) => {
      await tx.query('SELECT tenant_id FROM tenants WHERE tenant_id = $1 FOR UPDATE', [tenantId]);
      const r = await tx.query<{ use: KeyUse; status: KeyStatus }>('SELECT use, status FROM keys WHERE tenant_id = $1 AND kid = $2', [
        tenantId,
        kid,
      ]);
      const key = r.rows[0];
      if (!key) throw new KeyLifecycleError(`Tenant '${tenantId}' has no key '${kid}'.`, 'unknown-key');
      if (key.status === 'active') {
        throw new KeyLifecycleError(`Key '${kid}' is the tenant's active ${key.use} key; rotate the ${key.use} keys first, then retire the key the rotation replaced.`, 'active-key');
      }
      await tx.query(
        "UPDATE keys SET status = 'retired', retire_at = LEAST(COALESCE(retire_at, $3::timestamptz), $3::timestamptz) WHERE tenant_id = $1 AND kid = $2",
        [tenantId, kid, new Date().toISOString()],
      );
      await this.changes?.publish({ kind: 'keys', tenantId }, tx);
    });
    this.told(tenantId);
    const info = (await this.list(tenantId)).find((k) => k.kid === kid);
    return info!;
  }

  /** Every key of the tenant, retired ones included, newest first: public halves and lifecycle only. */
  async list(tenantId: string): Promise<KeyInfo[]> {
    const now = Date.now();
    const r = await this.db.query<Omit<KeyRow, 'private_jwk_enc'>>(
      'SELECT kid, use, alg, status, public_jwk, retire_at, created_at FROM keys WHERE tenant_id = $1 ORDER BY created_at DESC, kid',
      [tenantId],
    );
    return r.rows.map((row) => {
      const retireAt = asDate(row.retire_at);
      const status: KeyStatus = row.status === 'retiring' && !live({ status: row.status, retireAt }, now) ? 'retired' : row.status;
      return {
        kid: row.kid,
        use: row.use,
        alg: row.alg,
        status,
        createdAt: asDate(row.created_at)!.toISOString(),
        retireAt: retireAt?.toISOString() ?? null,
        publicJwk: asJwk(row.public_jwk),
      };
    });
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

  private told(tenantId: string): void {
    this.invalidate(tenantId);
    this.changes?.told({ kind: 'keys', tenantId });
  }
}
