// The platform operators' API keys (the management listener): random keys shown once, of which the store
// keeps only a SHA-256 hash (a key has 256 random bits: a fast hash is enough, no password hashing needed).
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { entryBound } from '../infrastructure/cache-ttl.js';
import type { Db } from '../../store/db.js';
import { keyPage, type KeyPage } from '../../paging/key-cursor.js';
import type { ChangeFeed } from '../infrastructure/changes.js';
import { PLATFORM_TENANT as PLATFORM } from '../tenancy/tenants.js';

const OPERATOR_KEY_PREFIX = 'clop_';
const OPERATOR_NAME_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$';
const NAME = new RegExp(OPERATOR_NAME_PATTERN);
/** A key an operator chooses (the demo's CARDLINE_DEMO_OPERATOR_KEY) must be at least this long. */
const CHOSEN_KEY_MIN = 24;
/** last_used_at is written at most this often per key, not on every request. */
const LAST_USED_EVERY_MS = 60_000;

export interface OperatorKeyView {
  name: string;
  /** The key's first characters, to tell keys apart in a listing. */
  prefix: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

export interface Operator {
  name: string;
}

export class OperatorKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OperatorKeyError';
  }
}

interface Row {
  name: string;
  prefix: string;
  created_at: Date | string;
  last_used_at: Date | string | null;
  revoked_at: Date | string | null;
}

const iso = (v: Date | string | null) => (v === null ? null : new Date(v).toISOString());
const toView = (r: Row): OperatorKeyView => ({
  name: r.name,
  prefix: r.prefix,
  createdAt: iso(r.created_at)!,
  lastUsedAt: iso(r.last_used_at),
  revokedAt: iso(r.revoked_at),
});
/** A revoked key's row is renamed `<name>~revoked-<row id>`, a name no key can have, freeing the name. */
const REVOKED_MARK = '~revoked-';
const REVOKED_SUFFIX = /~revoked-[\w-]+$/;
const hashOf = (key: string) => createHash('sha256').update(key, 'utf8').digest('hex');

export class OperatorKeys {
  /** Verified keys by hash (and unknown ones, as null), until a key changes anywhere. */
  private readonly verified = new LRUCache<string, { operator: Operator | null; usedAt: number }>(entryBound(10_000));

  constructor(
    private readonly db: Db,
    private readonly changes?: ChangeFeed,
  ) {}

  static generate(): string {
    return `${OPERATOR_KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
  }

  /** Creates a key for `name`; returns it — the only time it is shown. `key` lets the demo choose its own. */
  async create(name: string, key: string = OperatorKeys.generate()): Promise<{ key: string; view: OperatorKeyView }> {
    if (!NAME.test(name)) throw new OperatorKeyError(`'${name}' is not an operator key name: 1-64 letters, digits, '.', '_' or '-'.`);
    if (key.length < CHOSEN_KEY_MIN) throw new OperatorKeyError(`An operator key needs at least ${CHOSEN_KEY_MIN} characters.`);
    const r = await this.db.query<Row>(
      `INSERT INTO operator_keys (id, name, key_hash, prefix) VALUES ($1, $2, $3, $4)
       ON CONFLICT (tenant_id, name) DO NOTHING
       RETURNING name, prefix, created_at, last_used_at, revoked_at`,
      [randomUUID(), name, hashOf(key), key.slice(0, 9)],
    );
    if (!r.rows[0]) throw new OperatorKeyError(`An operator key named '${name}' exists; revoke it first or choose another name.`);
    await this.changes?.changed({ kind: 'operator-keys' });
    return { key, view: toView(r.rows[0]) };
  }

  async list(): Promise<OperatorKeyView[]> {
    const r = await this.db.query<Row>('SELECT name, prefix, created_at, last_used_at, revoked_at FROM operator_keys WHERE tenant_id = $1 ORDER BY name', [PLATFORM]);
    return r.rows.map(toView);
  }

  /** One page of the keys in name order: `limit` after the name `after` (key-cursor.ts). */
  async page({ limit, after }: { limit: number; after: string | null }): Promise<KeyPage<OperatorKeyView>> {
    const r = await this.db.query<Row>(
      'SELECT name, prefix, created_at, last_used_at, revoked_at FROM operator_keys WHERE tenant_id = $1 AND ($2::text IS NULL OR name > $2) ORDER BY name LIMIT $3',
      [PLATFORM, after, limit + 1],
    );
    return keyPage(r.rows, limit, (row) => row.name, toView);
  }

  async get(name: string): Promise<OperatorKeyView | null> {
    const r = await this.db.query<Row>('SELECT name, prefix, created_at, last_used_at, revoked_at FROM operator_keys WHERE tenant_id = $1 AND name = $2', [
      PLATFORM,
      name,
    ]);
    return r.rows[0] ? toView(r.rows[0]) : null;
  }

  /** Revokes a key at once on every process (false if unknown); the row is kept, renamed, for the record. */
  async revoke(name: string): Promise<boolean> {
    const r = await this.db.query(
      `UPDATE operator_keys SET revoked_at = now(), name = name || '~revoked-' || id
        WHERE tenant_id = $1 AND name = $2 AND revoked_at IS NULL`,
      [PLATFORM, name],
    );
    if (r.rowCount !== 1) return false;
    await this.changes?.changed({ kind: 'operator-keys' });
    return true;
  }

  /** What the store knows of a key without using it: its original name and whether it is revoked; null if never created. */
  async lookup(key: string): Promise<{ name: string; revoked: boolean } | null> {
    const r = await this.db.query<{ name: string; revoked_at: Date | string | null }>(
      'SELECT name, revoked_at FROM operator_keys WHERE tenant_id = $1 AND key_hash = $2',
      [PLATFORM, hashOf(key)],
    );
    const row = r.rows[0];
    if (!row) return null;
    return { name: row.revoked_at === null ? row.name : row.name.replace(REVOKED_SUFFIX, ''), revoked: row.revoked_at !== null };
  }

  /** Whether a key of that name was ever revoked (revoke() keeps the row under a renamed name). */
  async wasRevoked(name: string): Promise<boolean> {
    const r = await this.db.query<{ n: number }>(
      `SELECT 1 AS n FROM operator_keys WHERE tenant_id = $1 AND revoked_at IS NOT NULL AND starts_with(name, $2) LIMIT 1`,
      [PLATFORM, `${name}${REVOKED_MARK}`],
    );
    return r.rows.length > 0;
  }

  /** The operator a presented key belongs to, or null (unknown or revoked). */
  async verify(key: string): Promise<Operator | null> {
    const hash = hashOf(key);
    const hit = this.verified.get(hash);
    const now = Date.now();
    if (hit && (!hit.operator || now - hit.usedAt < LAST_USED_EVERY_MS)) return hit.operator;
    const r = await this.db.query<{ name: string }>(
      'UPDATE operator_keys SET last_used_at = now() WHERE tenant_id = $1 AND key_hash = $2 AND revoked_at IS NULL RETURNING name',
      [PLATFORM, hash],
    );
    const operator = r.rows[0] ? { name: r.rows[0].name } : null;
    this.verified.set(hash, { operator, usedAt: now });
    return operator;
  }

  clear(): void {
    this.verified.clear();
  }
}
