// Idempotency-Key state in the store: who holds a key, the request it was first used for, and the
// response a duplicate gets back. Safe across replicas: every claim is one conditional statement.
import { createHash, randomUUID } from 'node:crypto';
import canonicalize from 'canonicalize';
import type { MasterKey } from '../../crypto/master-key.js';
import type { Context } from '@opentelemetry/api';
import type { Db } from '../../store/db.js';
import { tracedUnder } from '../../store/traced.js';
import { batchParent, tracing } from '../../telemetry/index.js';

const SWEEP_INTERVAL_MS = 5 * 60_000;
/** How many times a claim is retried when another request changes the row between two statements. */
const CLAIM_ATTEMPTS = 5;

/** Binds a sealed answer to its row: it opens for that tenant and scope only. */
const sealAad = (tenantId: string, scope: string): string => `idempotency:${tenantId}:${scope}`;

/** What the client sent as Idempotency-Key: 1–255 printable ASCII characters. */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x20-\x7E]{1,255}$/;

export interface IdempotencyScope {
  tenantId: string;
  /** The caller (token `sub`). */
  caller: string;
  method: string;
  /** The route pattern, e.g. `/v1/cards/:cardId/lock`, not the concrete URL. */
  route: string;
  params: unknown;
  key: string;
}

const sha256 = (value: unknown): string => createHash('sha256').update(canonicalize(value) ?? 'null').digest('hex');

/** The row's key: one per tenant, caller, route (with its path parameters) and Idempotency-Key. */
export const scopeHash = (s: IdempotencyScope): string => sha256([s.tenantId, s.caller, s.method, s.route, s.params ?? {}, s.key]);

/** SHA-256 of the RFC 8785 canonical JSON of the validated body and the path parameters. */
export const fingerprintOf = (body: unknown, params: unknown): string => sha256({ body: body ?? null, params: params ?? {} });

export interface StoredResponse {
  status: number;
  contentType: string | null;
  body: string;
  /** The body as stored is sealed (`IdempotencyStore.seal`); a claim answers it opened. */
  sealed?: boolean;
  /** The answer's Location header (a write held for approval names its approval). */
  location?: string | null;
}

/** What a request holding a key may do next. */
export type Claim =
  /** It holds the key: carry the request out, then `complete` or `release`. */
  | { kind: 'owner'; token: string; connectorKey: string }
  /** The key's request completed: answer its response again. */
  | { kind: 'replay'; response: StoredResponse }
  /** The key was first used for another request (different fingerprint). */
  | { kind: 'mismatch' }
  /** The key's first request is still being carried out. */
  | { kind: 'in_flight' };

interface Row {
  fingerprint: string;
  state: 'in_flight' | 'completed' | 'released';
  connector_key: string;
  lock_token: string | null;
  status: number | null;
  content_type: string | null;
  body: string | null;
  location: string | null;
  sealed: boolean;
  expired: boolean;
  stale: boolean;
}

export interface IdempotencyStoreOptions {
  /** Retention of a key, from its first use. */
  ttlHours: number;
  /** An in-flight claim older than this is taken to be abandoned (crash) and may be taken over. */
  leaseSeconds: number;
  /** Run the sweep periodically (off in short-lived tools). Default true. */
  sweep?: boolean;
  /** The key sealing secret-holding answers and fingerprints (decision 0175); without it both refuse. */
  key?: MasterKey;
}

interface PendingInsert {
  tenantId: string;
  scope: string;
  fingerprint: string;
  connectorKey: string;
  token: string;
  resolve: (inserted: boolean) => void;
  reject: (err: unknown) => void;
  trace: Context | undefined;
}

/** The grouped insert's parent: a sampled claimer's step (a batch mixes them with unsampled ones), else the first's. */
function claimParent(batch: PendingInsert[]): Context | undefined {
  const t = tracing();
  return t ? batchParent(batch, (p) => p.trace && t.api.trace.getSpanContext(p.trace))?.trace : undefined;
}

/** New keys taken in one statement at most. */
const MAX_INSERT_BATCH = 500;

export class IdempotencyStore {
  private timer: NodeJS.Timeout | undefined;
  /** First claims of new keys, taken together in one statement (most keys are new). */
  private inserts: PendingInsert[] = [];
  private inserting: Promise<void> | null = null;
  readonly ttlSeconds: number;
  readonly leaseSeconds: number;
  private readonly key: MasterKey | undefined;

  constructor(
    private readonly db: Db,
    opts: IdempotencyStoreOptions,
  ) {
    this.ttlSeconds = opts.ttlHours * 3600;
    this.leaseSeconds = opts.leaseSeconds;
    this.key = opts.key;
    if (opts.sweep !== false) {
      this.timer = setInterval(() => void this.sweep().catch(() => undefined), SWEEP_INTERVAL_MS);
      this.timer.unref();
    }
  }

  private sealingKey(): MasterKey {
    if (!this.key) throw new Error('This idempotency store has no sealing key');
    return this.key;
  }

  /** A secret-holding body's fingerprint: an HMAC, so a copy of the store cannot test guesses of the secret. */
  secretFingerprint(body: unknown, params: unknown): string {
    return this.sealingKey().mac(canonicalize({ body: body ?? null, params: params ?? {} }) ?? 'null');
  }

  /** An answer holding a secret shown once, sealed for its row (AES-256-GCM, bound to tenant and scope). */
  seal(tenantId: string, scope: string, body: string): string {
    return this.sealingKey().seal(body, sealAad(tenantId, scope));
  }

  /**
   * Claims the key: a new or expired one is taken, a completed one answers its response, a released or
   * abandoned one is taken over with the same connector key so the core recognises the retry. `trace`: the
   * statements' parent while tracing is on.
   */
  async claim(tenantId: string, scope: string, fingerprint: string, trace?: Context): Promise<Claim> {
    const db = tracedUnder(this.db, trace);
    for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
      const token = randomUUID();
      const connectorKey = randomUUID();
      if (await this.insert(tenantId, scope, fingerprint, connectorKey, token, trace)) return { kind: 'owner', token, connectorKey };

      const found = await db.query<Row>(
        `SELECT fingerprint, state, connector_key, lock_token, status, content_type, body, sealed, location,
                created_at <= now() - $3::integer * interval '1 second' AS expired,
                (state = 'in_flight' AND locked_at <= now() - $4::integer * interval '1 second') AS stale
           FROM idempotency_keys WHERE tenant_id = $1 AND scope_hash = $2`,
        [tenantId, scope, this.ttlSeconds, this.leaseSeconds],
      );
      const row = found.rows[0];
      if (!row) continue; // swept between the two statements

      if (row.expired) {
        // Past its retention the key is free again: a new request with a new connector key.
        const renewed = await db.query(
          `UPDATE idempotency_keys
              SET fingerprint = $3, state = 'in_flight', connector_key = $4, lock_token = $5, locked_at = now(),
                  status = NULL, content_type = NULL, body = NULL, sealed = false, location = NULL, created_at = now()
            WHERE tenant_id = $1 AND scope_hash = $2 AND created_at <= now() - $6::integer * interval '1 second'`,
          [tenantId, scope, fingerprint, connectorKey, token, this.ttlSeconds],
        );
        if (renewed.rowCount === 1) return { kind: 'owner', token, connectorKey };
        continue;
      }
      if (row.fingerprint !== fingerprint) return { kind: 'mismatch' };
      if (row.state === 'completed') {
        const body = row.sealed ? this.sealingKey().open(row.body ?? '', sealAad(tenantId, scope)) : (row.body ?? '');
        return { kind: 'replay', response: { status: Number(row.status), contentType: row.content_type, body, location: row.location } };
      }
      if (row.state === 'released' || row.stale) {
        // Compare-and-set on the previous holder: of two requests taking over at once, one wins.
        const taken = await db.query(
          `UPDATE idempotency_keys SET state = 'in_flight', lock_token = $3, locked_at = now()
            WHERE tenant_id = $1 AND scope_hash = $2 AND state = $4 AND lock_token IS NOT DISTINCT FROM $5::uuid`,
          [tenantId, scope, token, row.state, row.lock_token],
        );
        if (taken.rowCount === 1) return { kind: 'owner', token, connectorKey: row.connector_key };
        continue;
      }
      return { kind: 'in_flight' };
    }
    return { kind: 'in_flight' };
  }

  /** Takes a new key (true) or finds it taken (false); claims arriving together share one statement. */
  private insert(tenantId: string, scope: string, fingerprint: string, connectorKey: string, token: string, trace: Context | undefined): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.inserts.push({ tenantId, scope, fingerprint, connectorKey, token, resolve, reject, trace });
      this.inserting ??= this.drainInserts();
    });
  }

  private async drainInserts(): Promise<void> {
    while (this.inserts.length) {
      // Let the requests already under way reach insert() before the batch is cut.
      await new Promise<void>((resolve) => setImmediate(resolve));
      const batch = this.inserts.splice(0, MAX_INSERT_BATCH);
      try {
        const r = await tracedUnder(this.db, claimParent(batch)).query<{ lock_token: string }>(
          `INSERT INTO idempotency_keys (tenant_id, scope_hash, fingerprint, state, connector_key, lock_token, locked_at, created_at)
           SELECT tenant_id, scope_hash, fingerprint, 'in_flight', connector_key, lock_token, now(), now()
             FROM jsonb_to_recordset($1::jsonb) AS k(tenant_id text, scope_hash text, fingerprint text, connector_key uuid, lock_token uuid)
           ON CONFLICT (tenant_id, scope_hash) DO NOTHING
           RETURNING lock_token`,
          [JSON.stringify(batch.map((p) => ({ tenant_id: p.tenantId, scope_hash: p.scope, fingerprint: p.fingerprint, connector_key: p.connectorKey, lock_token: p.token })))],
          // A request with a key runs it: prepared once per connection (decision 0228).
          { name: 'cardline_idempotency_claim' },
        );
        const taken = new Set(r.rows.map((row) => row.lock_token));
        for (const p of batch) p.resolve(taken.has(p.token));
      } catch (err) {
        for (const p of batch) p.reject(err);
      }
    }
    this.inserting = null;
  }

  /** Stores the response of the holder's request; duplicates replay it until the key expires. */
  async complete(tenantId: string, scope: string, token: string, response: StoredResponse): Promise<boolean> {
    const r = await this.db.query(
      `UPDATE idempotency_keys SET state = 'completed', status = $4, content_type = $5, body = $6, sealed = $7, lock_token = NULL, locked_at = NULL
        WHERE tenant_id = $1 AND scope_hash = $2 AND lock_token = $3::uuid`,
      [tenantId, scope, token, response.status, response.contentType, response.body, response.sealed === true],
    );
    return r.rowCount === 1;
  }

  /** Gives the key back without a response (5xx, pending): the next duplicate carries the request out again. */
  async release(tenantId: string, scope: string, token: string): Promise<boolean> {
    const r = await this.db.query(
      `UPDATE idempotency_keys SET state = 'released', lock_token = NULL, locked_at = NULL
        WHERE tenant_id = $1 AND scope_hash = $2 AND lock_token = $3::uuid`,
      [tenantId, scope, token],
    );
    return r.rowCount === 1;
  }

  /** Deletes keys past their retention; returns how many. */
  async sweep(): Promise<number> {
    const r = await this.db.query(`DELETE FROM idempotency_keys WHERE created_at <= now() - $1::integer * interval '1 second'`, [this.ttlSeconds]);
    return r.rowCount;
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
