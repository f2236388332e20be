// The transactional outbox: events of record are written by the audit writer in the audit record's own
// transaction (src/audit/writer.ts); workers claim them here with FOR UPDATE SKIP LOCKED and a lease.
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { EVENT_AGGREGATE, EVENT_PAYLOADS, EVENT_TYPES, type EventType } from '../../schemas/events.js';
import type { Queryable } from '../store/db.js';

/** An event as the audit writer takes it: the id, sequence and time come from the batch. */
export interface DomainEvent {
  type: EventType;
  aggregateId: string;
  payload: Record<string, unknown>;
}

const checkers = new Map(EVENT_TYPES.map((t) => [t, TypeCompiler.Compile(EVENT_PAYLOADS[t])]));

/** A route's event could not be built: a programming error, never the caller's. */
export class EventPayloadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EventPayloadError';
  }
}

/**
 * Checks a payload against its type's closed schema, so that nothing but the declared ids, states and
 * amounts can enter the outbox (no PAN, CVV, PIN block or address line), and names its aggregate.
 */
export function domainEvent(type: EventType, payload: unknown): DomainEvent {
  const checker = checkers.get(type);
  if (!checker) throw new EventPayloadError(`unknown event type '${type}'`);
  if (!checker.Check(payload)) {
    const first = checker.Errors(payload).First();
    throw new EventPayloadError(`event '${type}': ${first ? `${first.path || '/'} ${first.message}` : 'invalid payload'}`);
  }
  const p = payload as Record<string, unknown>;
  return { type, aggregateId: String(p[EVENT_AGGREGATE[type]]), payload: p };
}

/** A claimed event: the worker holds it until `claimedUntil`, then anyone may claim it again. */
export interface OutboxEvent {
  tenantId: string;
  id: string;
  /** The audit record (per-tenant seq) this event was committed with. */
  auditSeq: number;
  type: EventType;
  aggregateId: string;
  payload: Record<string, unknown>;
  requestId: string;
  createdAt: Date;
  /** Claims so far, this one included. */
  attempts: number;
  claimedUntil: Date;
}

export interface ClaimOptions {
  /** Who claims (a process or worker id); only it may settle what it claimed. */
  worker: string;
  limit?: number;
  /** How long the claim holds before another worker may take the event again. */
  leaseMs?: number;
  /** Claim one tenant's events only (sharded stores route such a query to one node). */
  tenantId?: string;
}

interface Row {
  tenant_id: string;
  id: string;
  audit_seq: string | number;
  type: EventType;
  aggregate_id: string;
  payload: Record<string, unknown>;
  request_id: string;
  created_at: Date;
  attempts: number;
  claimed_until: Date;
}

const toEvent = (r: Row): OutboxEvent => ({
  tenantId: r.tenant_id,
  id: r.id,
  auditSeq: Number(r.audit_seq),
  type: r.type,
  aggregateId: r.aggregate_id,
  payload: r.payload,
  requestId: r.request_id,
  createdAt: new Date(r.created_at),
  attempts: Number(r.attempts),
  claimedUntil: new Date(r.claimed_until),
});

export type EventRef = Pick<OutboxEvent, 'tenantId' | 'id'>;

export class Outbox {
  constructor(private readonly db: Queryable) {}

  /**
   * Claims up to `limit` due events, oldest first. Rows another transaction is claiming are skipped
   * (SKIP LOCKED), and a claimed row stays out of reach until its lease ends, so two workers never
   * hold the same event; a worker that dies only delays its events by the lease.
   */
  async claim(opts: ClaimOptions): Promise<OutboxEvent[]> {
    const limit = opts.limit ?? 10;
    const leaseMs = opts.leaseMs ?? 30_000;
    const params: unknown[] = [limit, opts.worker, leaseMs];
    let tenantFilter = '';
    if (opts.tenantId !== undefined) {
      params.push(opts.tenantId);
      tenantFilter = `AND tenant_id = $${params.length}`;
    }
    const r = await this.db.query<Row>(
      `WITH due AS (
         SELECT tenant_id, id FROM outbox
          WHERE status = 'pending' AND available_at <= now()
            AND (claimed_until IS NULL OR claimed_until <= now()) ${tenantFilter}
          ORDER BY available_at, id
          LIMIT $1
          FOR UPDATE SKIP LOCKED
       )
       UPDATE outbox o
          SET claimed_by = $2, claimed_until = now() + $3::integer * interval '1 millisecond', attempts = o.attempts + 1
         FROM due
        WHERE o.tenant_id = due.tenant_id AND o.id = due.id
       RETURNING o.tenant_id, o.id, o.audit_seq, o.type, o.aggregate_id, o.payload, o.request_id, o.created_at,
                 o.attempts, o.claimed_until`,
      params,
    );
    return r.rows.map(toEvent).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  /** The event was delivered. False when the claim was lost (lease over and claimed by another worker). */
  async markDone(event: EventRef, worker: string): Promise<boolean> {
    const r = await this.db.query(
      `UPDATE outbox SET status = 'done', done_at = now(), claimed_by = NULL, claimed_until = NULL, last_error = NULL
        WHERE tenant_id = $1 AND id = $2 AND claimed_by = $3 AND status = 'pending'`,
      [event.tenantId, event.id, worker],
    );
    return r.rowCount === 1;
  }

  /**
   * Delivery failed: the event is due again after `delayMs`, or is set aside as 'dead' once it has been
   * claimed `maxAttempts` times. False when the claim was lost.
   */
  async retryLater(event: EventRef, worker: string, opts: { delayMs: number; error: string; maxAttempts?: number }): Promise<boolean> {
    const r = await this.db.query(
      `UPDATE outbox
          SET status = CASE WHEN attempts >= $5 THEN 'dead' ELSE 'pending' END,
              available_at = now() + $4::integer * interval '1 millisecond',
              claimed_by = NULL, claimed_until = NULL, last_error = $6
        WHERE tenant_id = $1 AND id = $2 AND claimed_by = $3 AND status = 'pending'`,
      [event.tenantId, event.id, worker, opts.delayMs, opts.maxAttempts ?? 2_147_483_647, opts.error.slice(0, 500)],
    );
    return r.rowCount === 1;
  }
}
