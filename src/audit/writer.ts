// Durable audit with group commit: records queue up while a batch commits, and the next batch takes
// them all. A write is acknowledged only after its batch has committed.
//
// Each tenant's part of a batch is ONE statement: it advances the chain head only if the head is still
// where this process last saw it (optimistic), and inserts the records only if it did. A statement is
// atomic, so no explicit transaction is needed, and the cost per batch is one round trip. When another
// replica moved the head, the head is re-read and the chain recomputed.
import { uuidv7 } from 'uuidv7';
import type { Db } from '../store/db.js';
import type { Observer } from '../services/metrics.js';
import type { DomainEvent } from '../events/outbox.js';
import { GENESIS_HASH, recordHash, type AuditEntry } from './chain.js';

const MAX_BATCH = 500;
const MAX_CONFLICT_RETRIES = 20;

/**
 * The Idempotency-Key a request holds, settled with its record: the response stored for duplicates to
 * replay (`response`), or, for an outcome that is not final (5xx, pending), the key released (null).
 */
export interface Settlement {
  scope: string;
  /** The holder's lock token: a key taken over by another request since is left alone. */
  token: string;
  response: { status: number; contentType: string | null; body: string } | null;
}

/** A record to append; a successful write also carries its event of record, committed with it. */
export interface WriterEntry extends AuditEntry {
  event?: DomainEvent | undefined;
  settlement?: Settlement | undefined;
}

/**
 * The transactional outbox: the events of record are inserted by the same statement that appends their
 * audit records, so both commit or neither does (and neither when the head moved under us).
 */
const outboxCte = (param: string) => `,
         evented AS (
           INSERT INTO outbox (tenant_id, id, audit_seq, type, aggregate_id, payload, request_id, created_at)
           SELECT tenant_id, id, audit_seq, type, aggregate_id, payload, request_id, created_at
             FROM jsonb_populate_recordset(NULL::outbox, ${param}::jsonb)
            WHERE EXISTS (SELECT 1 FROM moved)
         )`;

/**
 * Idempotency keys settle in the same statement (issue: an acknowledged write ran again on retry when the
 * key was settled separately and the process died in between): a retry then finds the stored answer, or —
 * when nothing committed — a key still in flight whose lease it may take over.
 */
const settleCte = (param: string) => `,
         settled AS (
           UPDATE idempotency_keys k
              SET state = CASE WHEN s.status IS NULL THEN 'released' ELSE 'completed' END,
                  status = s.status, content_type = s.content_type, body = s.body, lock_token = NULL, locked_at = NULL
             FROM jsonb_to_recordset(${param}::jsonb) AS s(scope_hash text, lock_token uuid, status integer, content_type text, body text)
            WHERE k.tenant_id = $1 AND k.scope_hash = s.scope_hash AND k.lock_token = s.lock_token
              AND EXISTS (SELECT 1 FROM moved)
         )`;

/**
 * Text the store accepts, whatever a client sent: well-formed UTF-16 (a lone surrogate becomes U+FFFD) without
 * U+0000 (also U+FFFD). A record must never fail on its content, or the write it records could not be
 * acknowledged. For a stored response body this changes no byte on the wire: Node already sends a lone
 * surrogate as U+FFFD, and JSON escapes U+0000.
 */
export const storable = (text: string): string => text.toWellFormed().replaceAll('\u0000', '\ufffd');

/** storable() applied to every string of a JSON value, keys included (event payloads). */
function storableDeep(value: unknown): unknown {
  if (typeof value === 'string') return storable(value);
  if (Array.isArray(value)) return value.map(storableDeep);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [storable(k), storableDeep(v)]));
}

const orNull = (text: string | null): string | null => (text === null ? null : storable(text));

/** The entry as it will be stored and hashed: every string storable (see storable()). */
function storableEntry(e: WriterEntry): WriterEntry {
  return {
    tenantId: storable(e.tenantId),
    at: e.at,
    actor: orNull(e.actor),
    role: orNull(e.role),
    action: storable(e.action),
    method: storable(e.method),
    route: storable(e.route),
    target: storableDeep(e.target) as Record<string, string>,
    outcome: storable(e.outcome),
    status: e.status,
    requestId: storable(e.requestId),
    origin: orNull(e.origin),
    event: e.event && { type: e.event.type, aggregateId: storable(e.event.aggregateId), payload: storableDeep(e.event.payload) as Record<string, unknown> },
    settlement: e.settlement && {
      scope: e.settlement.scope,
      token: e.settlement.token,
      response: e.settlement.response && {
        status: e.settlement.response.status,
        contentType: orNull(e.settlement.response.contentType),
        body: storable(e.settlement.response.body),
      },
    },
  };
}

interface Pending {
  entry: WriterEntry;
  resolve: () => void;
  reject: (err: unknown) => void;
}

interface Head {
  seq: number;
  hash: string;
}

export class AuditWriter {
  private queue: Pending[] = [];
  private draining: Promise<void> | null = null;
  private closed = false;
  /** Where each tenant's chain head was after this process's last write (or read). */
  private readonly heads = new Map<string, Head>();

  constructor(
    private readonly db: Db,
    /** Told of every committed batch (the metrics). */
    private readonly observer?: Pick<Observer, 'auditBatch'>,
    /** Told when a batch committed events of record (the delivery worker looks at once). */
    private readonly onEvents?: () => void,
  ) {}

  /** Resolves once the record is committed. */
  record(entry: WriterEntry): Promise<void> {
    if (this.closed) return Promise.reject(new Error('audit writer closed'));
    return new Promise((resolve, reject) => {
      this.queue.push({ entry: storableEntry(entry), resolve, reject });
      this.draining ??= this.drain();
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length) {
      // Let the requests already under way reach record() before the batch is cut: PGlite answers
      // without yielding to the event loop, so without this every batch would hold a single record.
      await new Promise<void>((resolve) => setImmediate(resolve));
      const batch = this.queue.splice(0, MAX_BATCH);
      const byTenant = new Map<string, Pending[]>();
      for (const p of batch) {
        const list = byTenant.get(p.entry.tenantId);
        if (list) list.push(p);
        else byTenant.set(p.entry.tenantId, [p]);
      }
      await Promise.all(
        [...byTenant].map(async ([tenantId, pending]) => {
          try {
            await this.append(tenantId, pending.map((p) => p.entry));
            for (const p of pending) p.resolve();
          } catch (err) {
            if (pending.length === 1) return pending[0]!.reject(err);
            // One bad record must not fail the others that happened to share its batch: retry singly.
            for (const p of pending) {
              await this.append(tenantId, [p.entry]).then(p.resolve, p.reject);
            }
          }
        }),
      );
    }
    this.draining = null;
  }

  private async append(tenantId: string, entries: WriterEntry[]): Promise<void> {
    const started = performance.now();
    for (let attempt = 0; attempt <= MAX_CONFLICT_RETRIES; attempt++) {
      const head = this.heads.get(tenantId) ?? (await this.readHead(tenantId));
      let seq = head.seq;
      let prev = head.hash;
      const events: Record<string, unknown>[] = [];
      const settlements: Record<string, unknown>[] = [];
      const rows = entries.map((e) => {
        seq += 1;
        const id = uuidv7();
        const hash = recordHash(prev, { ...e, seq, id });
        const row = {
          tenant_id: e.tenantId, seq, id, at: e.at.toISOString(), actor: e.actor, role: e.role, action: e.action,
          method: e.method, route: e.route, target: e.target, outcome: e.outcome, status: e.status,
          request_id: e.requestId, origin: e.origin, prev_hash: prev, hash,
        };
        prev = hash;
        if (e.settlement) {
          const { scope, token, response } = e.settlement;
          settlements.push({ scope_hash: scope, lock_token: token, status: response?.status ?? null, content_type: response?.contentType ?? null, body: response?.body ?? null });
        }
        if (e.event) {
          events.push({
            tenant_id: e.tenantId, id: uuidv7(), audit_seq: seq, type: e.event.type, aggregate_id: e.event.aggregateId,
            payload: e.event.payload, request_id: e.requestId, created_at: e.at.toISOString(),
          });
        }
        return row;
      });
      const params: unknown[] = [tenantId, seq, prev, head.seq, head.hash, JSON.stringify(rows)];
      const param = (value: unknown) => `$${params.push(value)}`;
      const ctes = (events.length ? outboxCte(param(JSON.stringify(events))) : '') + (settlements.length ? settleCte(param(JSON.stringify(settlements))) : '');
      const r = await this.db.query(
        `WITH moved AS (
           UPDATE audit_heads SET seq = $2, hash = $3 WHERE tenant_id = $1 AND seq = $4 AND hash = $5 RETURNING 1
         )${ctes}
         INSERT INTO audit_log (tenant_id, seq, id, at, actor, role, action, method, route, target, outcome, status,
                                request_id, origin, prev_hash, hash)
         SELECT tenant_id, seq, id, at, actor, role, action, method, route, target, outcome, status,
                request_id, origin, prev_hash, hash
           FROM jsonb_populate_recordset(NULL::audit_log, $6::jsonb)
          WHERE EXISTS (SELECT 1 FROM moved)`,
        params,
      );
      if (r.rowCount === rows.length) {
        this.heads.set(tenantId, { seq, hash: prev });
        this.observer?.auditBatch(rows.length, (performance.now() - started) / 1000);
        if (events.length) this.onEvents?.();
        return;
      }
      // Another writer advanced the chain: forget our view of the head, back off a little (jittered, so
      // that replicas contending for one tenant's chain spread out) and compute again.
      this.heads.delete(tenantId);
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 5 * (attempt + 1)));
    }
    throw new Error(`audit chain of tenant '${tenantId}' is contended; gave up after ${MAX_CONFLICT_RETRIES} retries`);
  }

  private async readHead(tenantId: string): Promise<Head> {
    await this.db.query('INSERT INTO audit_heads (tenant_id, seq, hash) VALUES ($1, 0, $2) ON CONFLICT DO NOTHING', [tenantId, GENESIS_HASH]);
    const r = await this.db.query<{ seq: string | number; hash: string }>('SELECT seq, hash FROM audit_heads WHERE tenant_id = $1', [tenantId]);
    return { seq: Number(r.rows[0]!.seq), hash: r.rows[0]!.hash };
  }

  /** Waits for queued records to commit; later records are refused. */
  async close(): Promise<void> {
    this.closed = true;
    while (this.draining) await this.draining;
  }
}
