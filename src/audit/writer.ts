// Durable audit with group commit: records queue while a batch commits; a write is acknowledged only after
// its batch committed. Each writer appends to a hash chain of its own per tenant (decision 0200), so writers
// never contend for a chain head; it leases a chain no live writer holds before opening one (0286), so chains
// do not pile up with restarts. `seq` comes in blocks from audit_heads. A batch is one statement across all
// its tenants (heads, records, events, settlements): atomic without a transaction, one round trip.
import { hostname } from 'node:os';
import { uuidv7 } from 'uuidv7';
import { uuidv7Text } from './uuid-text.js';
import type { Context, Span } from '@opentelemetry/api';
import { batchParent, isSampled, tracing } from '../telemetry/index.js';
import type { Db } from '../store/db.js';
import type { Queryable } from '../store/queryable.js';
import { tracedUnder } from '../store/traced.js';
import { insertAuthorizationsFrom } from '../store/authorization-rows.js';
import type { DomainEvent } from '../events/outbox.js';
import { GENESIS_HASH, recordHashAt, type AuditEntry } from './chain.js';
import { subscribesSql } from '../events/subscription.js';

const MAX_BATCH = 500;
const MAX_CONFLICT_RETRIES = 20;
/** A batch waits for more records only when the previous one held this many or more (the gateway is under load). */
const LINGER_FROM = 4;
/** How long, at most, a batch waits for more records under load (PostgreSQL; decision 0228). */
const LINGER_MS = 2;
/** Seqs a writer takes at once per tenant: the trail's order is each writer's, not a clock's (`at` is). */
export const SEQ_BLOCK = 128;
/** How long a chain stays its writer's after its last append; then another writer may take it over (0286). */
export const CHAIN_LEASE_MS = 60_000;

/** The request's Idempotency-Key, settled with its record: the stored response, or null to release the key. */
export interface Settlement {
  /** The key's tenant, when it is not the record's (the management listener keeps operators' keys on the platform). */
  tenantId?: string;
  scope: string;
  /** The holder's lock token: a key taken over by another request since is left alone. */
  token: string;
  /** `sealed`: the body is sealed (an answer holding a secret shown once, decision 0175). */
  response: { status: number; contentType: string | null; body: string; sealed?: boolean; location?: string | null } | null;
}

/** A record to append; a successful write also carries its event of record, committed with it. */
export interface WriterEntry extends AuditEntry {
  event?: DomainEvent | undefined;
  /** Further events of the same record, after `event` (an approved request's execution: its event, then approval.executed). */
  events?: readonly DomainEvent[] | undefined;
  settlement?: Settlement | undefined;
  /** The W3C trace context of the request that caused the event: its deliveries continue that trace. Not hashed. */
  traceparent?: string | undefined;
  /** An authorization's row (authorizationRow()), inserted by the statement that appends its record (decision 0380). Not hashed. */
  authorization?: Readonly<Record<string, unknown>> | undefined;
  /** Records of the same tenant appended by the same statement just before this one, each with its seq and events (decision 0381). */
  before?: readonly WriterEntry[] | undefined;
}

/**
 * The transactional outbox: events are inserted by the statement that appends their records, so both commit
 * or neither. An event no enabled channel hears is written done; a later channel gets earlier ones by replay.
 */
const outboxCte = (param: string) => `,
         evented AS (
           INSERT INTO outbox (tenant_id, id, audit_seq, type, aggregate_id, payload, request_id, traceparent, created_at, status, done_at)
           SELECT e.tenant_id, e.id, e.audit_seq, e.type, e.aggregate_id, e.payload, e.request_id, e.traceparent, e.created_at, s.status,
                  CASE WHEN s.status = 'done' THEN now() END
             FROM jsonb_populate_recordset(NULL::outbox, ${param}::jsonb) e
             CROSS JOIN LATERAL (
               SELECT CASE WHEN EXISTS (
                 SELECT 1 FROM channels c WHERE c.tenant_id = e.tenant_id AND c.enabled
                    AND ${subscribesSql('c', 'e.type')}
               ) THEN 'pending' ELSE 'done' END AS status
             ) s
            WHERE (SELECT ok FROM verdict)
           RETURNING status
         )`;

/** Authorizations the pipeline decided, committed with their records: one round trip and one commit less each. */
const authorizationCte = (param: string) => `,
         authorized AS (${insertAuthorizationsFrom(`jsonb_to_recordset(${param}::jsonb)`, ' WHERE (SELECT ok FROM verdict)')})`;

/** With events: each record carries how many a channel subscribes to, so only those wake the worker (0219). */
const PENDING_RETURNING = ` RETURNING (SELECT count(*) FROM evented WHERE status = 'pending')::int AS pending`;

/**
 * Idempotency keys settle in the same statement: a process dying between two statements would let a retry run
 * an acknowledged write again.
 */
const settleCte = (param: string) => `,
         settled AS (
           UPDATE idempotency_keys k
              SET state = CASE WHEN s.status IS NULL THEN 'released' ELSE 'completed' END,
                  status = s.status, content_type = s.content_type, body = s.body, sealed = s.sealed, location = s.location, lock_token = NULL, locked_at = NULL
             FROM jsonb_to_recordset(${param}::jsonb) AS s(tenant_id text, scope_hash text, lock_token uuid, status integer, content_type text, body text, sealed boolean, location text)
            WHERE k.tenant_id = s.tenant_id AND k.scope_hash = s.scope_hash AND k.lock_token = s.lock_token
              AND (SELECT ok FROM verdict)
         )`;

/**
 * One statement appends a whole batch, all or nothing: this writer's chains advance only if still where it
 * left them, and nobody else locks their rows. Chains are looked up one by one through the key, in tenant order
 * (two writers lock in the same order): a join let the planner scan every tenant's chain per batch (decision 0412).
 */
const APPEND = (ctes: string, returning = '') => `
  WITH input AS (
         SELECT * FROM jsonb_to_recordset($1::jsonb)
           AS i(tenant_id text, chain text, old_size bigint, old_head text, new_size bigint, new_head text, last_seq bigint,
                holder text, lease_ms bigint)
          ORDER BY tenant_id
       ),
       locked AS (
         SELECT c.tenant_id FROM input i
          CROSS JOIN LATERAL (
            SELECT c.tenant_id FROM audit_chains c
             WHERE c.tenant_id = i.tenant_id AND c.chain = i.chain AND c.size = i.old_size AND c.head = i.old_head AND c.holder = i.holder
               FOR UPDATE
          ) c
       ),
       verdict AS (
         SELECT (SELECT count(*) FROM locked) = (SELECT count(*) FROM input WHERE old_size > 0)
            AND NOT EXISTS (
              SELECT 1 FROM input i
               CROSS JOIN LATERAL (SELECT 1 FROM audit_chains c WHERE c.tenant_id = i.tenant_id AND c.chain = i.chain OFFSET 0) c
               WHERE i.old_size = 0
            ) AS ok
       ),
       moved AS (
         INSERT INTO audit_chains (tenant_id, chain, size, head, last_seq, holder, lease_until)
         SELECT tenant_id, chain, new_size, new_head, last_seq, holder, now() + lease_ms * interval '1 millisecond'
           FROM input WHERE (SELECT ok FROM verdict)
         ON CONFLICT (tenant_id, chain) DO UPDATE
           SET size = EXCLUDED.size, head = EXCLUDED.head, last_seq = EXCLUDED.last_seq, lease_until = EXCLUDED.lease_until
       )${ctes}
  INSERT INTO audit_log (tenant_id, seq, chain, position, id, at, actor, role, action, method, route, target, outcome, status,
                         request_id, origin, prev_hash, hash)
  SELECT tenant_id, seq, chain, position, id, at, actor, role, action, method, route, target, outcome, status,
         request_id, origin, prev_hash, hash
    FROM jsonb_populate_recordset(NULL::audit_log, $2::jsonb)
   WHERE (SELECT ok FROM verdict)${returning}`;

/** Takes a block of seqs per tenant, tenants in order so that two writers lock rows in the same order. */
const RESERVE = `
  INSERT INTO audit_heads (tenant_id, seq)
  SELECT t.tenant_id, t.n FROM jsonb_to_recordset($1::jsonb) AS t(tenant_id text, n bigint) ORDER BY t.tenant_id
  ON CONFLICT (tenant_id) DO UPDATE SET seq = audit_heads.seq + EXCLUDED.seq
  RETURNING tenant_id, seq`;

/**
 * Takes, per tenant, a chain no live writer holds: never held or given back first, else the one unwritten for
 * longest past its lease (its writer died or went idle). Rows locked by an append under way are skipped, so two
 * writers never share one.
 */
const CLAIM = `
  WITH free AS (
    SELECT f.tenant_id, f.chain
      FROM unnest($1::text[]) AS w(tenant_id)
      CROSS JOIN LATERAL (
        SELECT c.tenant_id, c.chain FROM audit_chains c
         WHERE c.tenant_id = w.tenant_id AND (c.holder IS NULL OR c.holder = $2 OR c.lease_until < now())
         ORDER BY c.holder IS NOT NULL AND c.holder <> $2, c.lease_until NULLS FIRST, c.chain LIMIT 1 FOR UPDATE SKIP LOCKED
      ) f
  )
  UPDATE audit_chains c SET holder = $2, lease_until = now() + $3 * interval '1 millisecond'
    FROM free WHERE c.tenant_id = free.tenant_id AND c.chain = free.chain
  RETURNING c.tenant_id, c.chain, c.size, c.head, c.last_seq`;

/** Gives this writer's chains back on close: the next writer to start continues them at once. */
const RELEASE = `
  UPDATE audit_chains c SET holder = NULL, lease_until = NULL
    FROM jsonb_to_recordset($1::jsonb) AS r(tenant_id text, chain text)
   WHERE c.tenant_id = r.tenant_id AND c.chain = r.chain AND c.holder = $2`;

/**
 * Only one process opens an embedded store, so a holder found there when the first writer of this process claims
 * is a process that died without giving its chains back: they are free at once, not after their lease.
 */
const leftOver = new WeakMap<Db, Promise<unknown>>();
function freeLeftOver(db: Db): Promise<unknown> {
  let done = leftOver.get(db);
  if (!done) {
    done = db.query('UPDATE audit_chains SET holder = NULL, lease_until = NULL WHERE holder IS NOT NULL').catch((err: unknown) => {
      leftOver.delete(db);
      throw err;
    });
    leftOver.set(db, done);
  }
  return done;
}

/**
 * Text the store accepts whatever a client sent (a lone surrogate or U+0000 becomes U+FFFD): a record must never
 * fail on its content. No byte on the wire changes: Node sends the same, and JSON escapes U+0000.
 */
const storable = (text: string): string =>
  // Nearly every string is storable already: checked without copying it (two scans, no allocation).
  text.isWellFormed() && !text.includes('\u0000') ? text : text.toWellFormed().replaceAll('\u0000', '\ufffd');

/** Whether every string of a JSON value, keys included, is storable already (nearly always: then nothing is copied). */
function storableAll(value: unknown): boolean {
  if (typeof value === 'string') return value.isWellFormed() && !value.includes('\u0000');
  if (value === null || typeof value !== 'object') return true;
  if (Array.isArray(value)) return value.every(storableAll);
  for (const k in value) if (!storableAll(k) || !storableAll((value as Record<string, unknown>)[k])) return false;
  return true;
}

/** storable() applied to every string of a JSON value, keys included (event payloads); the value itself when all are. */
function storableDeep(value: unknown): unknown {
  return storableAll(value) ? value : storableCopy(value);
}

function storableCopy(value: unknown): unknown {
  if (typeof value === 'string') return storable(value);
  if (Array.isArray(value)) return value.map(storableCopy);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [storable(k), storableCopy(v)]));
}

const orNull = (text: string | null): string | null => (text === null ? null : storable(text));

const storableEvent = (e: DomainEvent): DomainEvent => ({ type: e.type, aggregateId: storable(e.aggregateId), payload: storableDeep(e.payload) as Record<string, unknown> });

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
    event: e.event && storableEvent(e.event),
    ...(e.events ? { events: e.events.map(storableEvent) } : {}),
    traceparent: e.traceparent,
    authorization: e.authorization,
    ...(e.before?.length ? { before: e.before.map((b) => storableEntry({ ...b, tenantId: e.tenantId })) } : {}),
    settlement: e.settlement && {
      ...(e.settlement.tenantId !== undefined ? { tenantId: e.settlement.tenantId } : {}),
      scope: e.settlement.scope,
      token: e.settlement.token,
      response: e.settlement.response && {
        status: e.settlement.response.status,
        contentType: orNull(e.settlement.response.contentType),
        body: storable(e.settlement.response.body),
        sealed: e.settlement.response.sealed === true,
        location: orNull(e.settlement.response.location ?? null),
      },
    },
  };
}

interface Pending {
  entry: WriterEntry;
  resolve: () => void;
  reject: (err: unknown) => void;
  /** The span the record was written from, while tracing is on: its batch's commit is traced under it. */
  span?: Span | undefined;
}

/** This writer's chain of one tenant: which, its size and head, and the seqs it may still use. */
interface Head {
  chain: string;
  size: number;
  hash: string;
  /** The last seq this chain used (0 before its first record). */
  lastSeq: number;
  /** The next free seq of the block taken, and the block's last. */
  next: number;
  end: number;
}

/** What the writer reports: committed batches, and (never expected) chain conflicts it retried. */
export interface AuditObserver {
  auditBatch(records: number, seconds: number): void;
  auditConflict?(): void;
  /** Another writer took over a chain this writer had left unwritten past its lease; it moved to another. */
  auditChainTaken?(): void;
  /** A record could not be committed. */
  auditFailed?(): void;
}

export class AuditWriter {
  private queue: Pending[] = [];
  private draining: Promise<void> | null = null;
  private closed = false;
  /** This writer's chain of each tenant it wrote to: where its head is, and its block of seqs. */
  private readonly heads = new Map<string, Head>();
  /** The chain this writer opens in a tenant where it finds none free to continue. */
  readonly chain: string = uuidv7();
  /** Who holds the chains this writer appends to: no other writer appends to them meanwhile (decision 0286). */
  readonly holder: string = `${hostname()}:${process.pid}:${uuidv7()}`;
  /** Tenants where this writer opened `chain`: after losing it there, it opens another. */
  private readonly opened = new Set<string>();
  /** Batches that found a chain head moved and were computed again: 0 unless two writers share a chain. */
  conflictRetries = 0;
  /** Chains taken over by another writer after this one left them unwritten past their lease. */
  chainsTaken = 0;
  /** Tenants with a batch under way: their next records wait, so that one tenant's batches never race. */
  private readonly busy = new Set<string>();
  private readonly inFlight = new Set<Promise<void>>();
  /** Wakes the drain when a record arrives while it waits for a batch (a free slot may take it). */
  private arrived: (() => void) | null = null;
  /** Batches under way at once: one per connection on a server, one on the embedded store. */
  private readonly maxInFlight: number;
  private lastBatch = 0;

  constructor(
    private readonly db: Db,
    /** Told of every committed batch (the metrics). */
    private readonly observer?: AuditObserver,
    /** Told when a batch committed events of record (the delivery worker looks at once). */
    private readonly onEvents?: () => void,
    /** Told which tenants a committed batch wrote to (the checkpoint publisher). */
    private readonly onCommitted?: (tenants: string[]) => void,
    /** Under load, how long a batch may wait for more records (gather()); none on the embedded store. */
    private readonly lingerMs: number = db.kind === 'postgres' ? LINGER_MS : 0,
    /** How long a chain stays this writer's after its last append (CARDLINE_AUDIT_CHAIN_LEASE_MS). */
    private readonly leaseMs: number = CHAIN_LEASE_MS,
  ) {
    this.maxInFlight = db.kind === 'postgres' ? 4 : 1;
  }

  /** The chain this writer appends to in a tenant, from its first record there until it closes. */
  chainOf(tenantId: string): string | undefined {
    return this.heads.get(tenantId)?.chain;
  }

  /** `trace`: the context the record is written from, while tracing is on (the active one by default). */
  record(entry: WriterEntry, trace?: Context): Promise<void> {
    if (this.closed) return Promise.reject(new Error('audit writer closed'));
    return new Promise((resolve, reject) => {
      const t = tracing();
      this.queue.push({ entry: storableEntry(entry), resolve, reject, span: t ? (trace ? t.api.trace.getSpan(trace) : t.activeSpan()) : undefined });
      this.arrived?.();
      this.draining ??= this.drain();
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length || this.inFlight.size) {
      if (this.queue.length && this.inFlight.size < this.maxInFlight) {
        await this.gather();
        const batch = this.cut();
        if (batch.length) this.lastBatch = batch.length;
        if (batch.length) {
          const run = this.commit(batch).finally(() => {
            this.inFlight.delete(run);
            for (const p of batch) this.busy.delete(p.entry.tenantId);
          });
          this.inFlight.add(run);
          continue;
        }
      }
      // Wait for a batch to finish (it frees a slot, or the tenants whose records wait) or a record to arrive.
      if (this.inFlight.size) {
        await new Promise<void>((resolve) => {
          this.arrived = this.inFlight.size < this.maxInFlight ? resolve : null;
          for (const run of this.inFlight) void run.then(resolve);
        });
        this.arrived = null;
      }
    }
    this.draining = null;
  }

  /**
   * Waits for the records about to arrive: one turn of the event loop (in-process PGlite never yields), and
   * under load up to lingerMs more so a statement's fixed cost is shared (decision 0228).
   */
  private async gather(): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    const target = Math.min(MAX_BATCH, this.lastBatch * 2);
    if (this.lingerMs <= 0 || this.lastBatch < LINGER_FROM || this.queue.length >= target) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.arrived = null;
        resolve();
      };
      const timer = setTimeout(done, this.lingerMs);
      this.arrived = () => {
        if (this.queue.length >= target) done();
      };
    });
  }

  /** The next batch: queued records, in order, of tenants without a batch under way. */
  private cut(): Pending[] {
    const batch: Pending[] = [];
    const rest: Pending[] = [];
    const taken = new Set<string>();
    for (const p of this.queue) {
      const tenant = p.entry.tenantId;
      if (batch.length < MAX_BATCH && (taken.has(tenant) || !this.busy.has(tenant))) {
        batch.push(p);
        taken.add(tenant);
      } else {
        rest.push(p);
      }
    }
    for (const t of taken) this.busy.add(t);
    this.queue = rest;
    return batch;
  }

  /**
   * Commits a batch; while tracing is on, in a span under the first record's request, linked to the others' (one
   * statement serves them all, decision 0313).
   */
  private commit(batch: Pending[]): Promise<void> {
    const t = tracing();
    if (!t) return this.commitBatch(batch);
    // Under a sampled record's request, linked to the other sampled ones'.
    const spanContext = (p: Pending) => p.span?.spanContext();
    const first = batchParent(batch, spanContext)?.span;
    // No record's span: not under the context the drain started in (another request's), untraced.
    if (!first) return t.withContext(t.root, () => this.commitBatch(batch));
    const links = batch.flatMap((p) => (p.span && p.span !== first && isSampled(spanContext(p)) ? [{ context: p.span.spanContext() }] : []));
    return t.inSpan('audit group commit', { 'cardline.audit.records': batch.length, 'db.system.name': this.db.kind === 'postgres' ? 'postgresql' : 'pglite' }, (_span, ctx) => this.commitBatch(batch, tracedUnder(this.db, ctx)), {
      parent: t.api.trace.setSpan(t.root, first),
      links,
    });
  }

  private async commitBatch(batch: Pending[], q: Queryable = this.db): Promise<void> {
    try {
      await this.append(batch.map((p) => p.entry), q);
      for (const p of batch) p.resolve();
      return;
    } catch {
      // One bad record must not fail the others that happened to share its batch: each is tried alone.
    }
    const failed = (p: Pending) => (err: unknown) => {
      this.observer?.auditFailed?.();
      p.reject(err);
    };
    if (batch.length === 1) {
      await this.append([batch[0]!.entry], q).then(batch[0]!.resolve, failed(batch[0]!));
      return;
    }
    for (const p of batch) await this.append([p.entry], q).then(p.resolve, failed(p));
  }

  private async append(batch: WriterEntry[], q: Queryable): Promise<void> {
    const started = performance.now();
    const entries = batch.flatMap((e) => (e.before ? [...e.before, e] : [e]));
    const tenants = [...new Set(entries.map((e) => e.tenantId))];
    for (let attempt = 0; attempt <= MAX_CONFLICT_RETRIES; attempt++) {
      await this.claim(tenants.filter((t) => !this.heads.has(t)), q);
      await this.reserve(entries, q);
      const next = new Map<string, Head>();
      const events: Record<string, unknown>[] = [];
      const settlements: Record<string, unknown>[] = [];
      const authorizations = entries.flatMap((e) => (e.authorization ? [e.authorization] : []));
      const rows = entries.map((e) => {
        const from = next.get(e.tenantId) ?? this.heads.get(e.tenantId)!;
        const seq = from.next;
        const position = from.size + 1;
        const prev = from.hash;
        const id = uuidv7Text();
        // `at` as text once per record (hash, row, events), and no copy of the entry to hash it.
        const at = e.at.toISOString();
        const hash = recordHashAt(prev, {
          tenantId: e.tenantId, seq, id, actor: e.actor, role: e.role, action: e.action, method: e.method, route: e.route,
          target: e.target, outcome: e.outcome, status: e.status, requestId: e.requestId, origin: e.origin,
        }, at);
        // Field by field: a spread of `from` with four more fields cost 0.6 µs a record (decision 0422).
        next.set(e.tenantId, { chain: from.chain, size: position, hash, lastSeq: seq, next: seq + 1, end: from.end });
        if (e.settlement) {
          const { scope, token, response } = e.settlement;
          settlements.push({
            tenant_id: e.settlement.tenantId ?? e.tenantId, scope_hash: scope, lock_token: token,
            status: response?.status ?? null, content_type: response?.contentType ?? null, body: response?.body ?? null,
            sealed: response?.sealed === true, location: response?.location ?? null,
          });
        }
        for (const event of e.event ? [e.event, ...(e.events ?? [])] : (e.events ?? [])) {
          events.push({
            tenant_id: e.tenantId, id: uuidv7Text(), audit_seq: seq, type: event.type, aggregate_id: event.aggregateId,
            payload: event.payload, request_id: e.requestId, traceparent: e.traceparent ?? null, created_at: at,
          });
        }
        return {
          tenant_id: e.tenantId, seq, chain: from.chain, position, id, at, actor: e.actor, role: e.role,
          action: e.action, method: e.method, route: e.route, target: e.target, outcome: e.outcome, status: e.status,
          request_id: e.requestId, origin: e.origin, prev_hash: prev, hash,
        };
      });
      const heads = tenants.map((t) => {
        const from = this.heads.get(t)!;
        const to = next.get(t)!;
        return {
          tenant_id: t, chain: from.chain, old_size: from.size, old_head: from.hash, new_size: to.size, new_head: to.hash, last_seq: to.lastSeq,
          holder: this.holder, lease_ms: this.leaseMs,
        };
      });
      const params: unknown[] = [JSON.stringify(heads), JSON.stringify(rows)];
      const param = (value: unknown) => `$${params.push(value)}`;
      const ctes =
        (events.length ? outboxCte(param(JSON.stringify(events))) : '') +
        (settlements.length ? settleCte(param(JSON.stringify(settlements))) : '') +
        (authorizations.length ? authorizationCte(param(JSON.stringify(authorizations))) : '');
      let r: { rowCount: number; rows: { pending: number }[] };
      try {
        // Prepared once per connection (PostgreSQL): eight texts at most, by whether the batch holds events, settlements, authorizations.
        r = await q.query<{ pending: number }>(APPEND(ctes, events.length ? PENDING_RETURNING : ''), params, {
          name: `cardline_audit_append_${events.length ? 'e' : ''}${settlements.length ? 's' : ''}${authorizations.length ? 'a' : ''}`,
        });
      } catch (err) {
        // The statement may have committed with its answer lost: writing it again would audit its requests twice.
        if (!(await this.landed(next))) throw err;
        // Whether a channel subscribes to its events is not known: the delivery worker looks (a wake costs a poll).
        r = { rowCount: rows.length, rows: [{ pending: events.length }] };
      }
      if (r.rowCount === rows.length) {
        for (const [t, h] of next) this.heads.set(t, h);
        this.observer?.auditBatch(rows.length, (performance.now() - started) / 1000);
        if (events.length && (r.rows[0]?.pending ?? 0) > 0) this.onEvents?.();
        this.onCommitted?.(tenants);
        return;
      }
      // A chain taken over by another writer is left to it; otherwise only a statement whose outcome this writer
      // never learnt can have moved its own chain: recompute, counted.
      const taken = await this.reload(tenants);
      if (taken > 0) {
        this.chainsTaken += taken;
        for (let i = 0; i < taken; i++) this.observer?.auditChainTaken?.();
      } else {
        this.conflictRetries += 1;
        this.observer?.auditConflict?.();
      }
    }
    throw new Error(`audit chain of tenant${tenants.length > 1 ? 's' : ''} '${tenants.join("', '")}' moved under its writer; gave up after ${MAX_CONFLICT_RETRIES} retries`);
  }

  /** Gives each tenant a chain to append to: one no live writer holds, else a new one of this writer's. */
  private async claim(tenants: string[], q: Queryable): Promise<void> {
    if (!tenants.length) return;
    if (this.db.kind === 'pglite') await freeLeftOver(this.db);
    const r = await q.query<{ tenant_id: string; chain: string; size: string | number; head: string; last_seq: string | number }>(
      CLAIM,
      [tenants, this.holder, this.leaseMs],
      { name: 'cardline_audit_claim' },
    );
    const claimed = new Map(r.rows.map((row) => [row.tenant_id, row]));
    for (const t of tenants) {
      const row = claimed.get(t);
      // No seqs yet (next > end): the first batch takes a block, above every seq the chain holds.
      const head = row
        ? { chain: row.chain, size: Number(row.size), hash: row.head, lastSeq: Number(row.last_seq) }
        : { chain: this.open(t), size: 0, hash: GENESIS_HASH, lastSeq: 0 };
      this.heads.set(t, { ...head, next: 1, end: 0 });
    }
  }

  /** A new chain's id: this writer's own, unless it opened that one here before and lost it. */
  private open(tenantId: string): string {
    if (this.opened.has(tenantId)) return uuidv7();
    this.opened.add(tenantId);
    return this.chain;
  }

  /** Makes sure each tenant of the batch has enough seqs left in its block, taking new blocks when not. */
  private async reserve(entries: WriterEntry[], q: Queryable): Promise<void> {
    const needed = new Map<string, number>();
    for (const e of entries) needed.set(e.tenantId, (needed.get(e.tenantId) ?? 0) + 1);
    const short: { tenant_id: string; n: number }[] = [];
    for (const [t, n] of needed) {
      const h = this.heads.get(t);
      if (!h || h.end - h.next + 1 < n) short.push({ tenant_id: t, n: Math.max(n, SEQ_BLOCK) });
    }
    if (!short.length) return;
    const r = await q.query<{ tenant_id: string; seq: string | number }>(RESERVE, [JSON.stringify(short)], { name: 'cardline_audit_reserve' });
    for (const row of r.rows) {
      const end = Number(row.seq);
      const n = short.find((s) => s.tenant_id === row.tenant_id)!.n;
      const h = this.heads.get(row.tenant_id)!;
      // The seqs left in the old block are given up: seqs are unique per tenant, not contiguous.
      this.heads.set(row.tenant_id, { ...h, next: end - n + 1, end });
    }
  }

  /** Whether a failed batch committed all the same: each chain ends at the head it computed (fresh ids). */
  private async landed(next: Map<string, Head>): Promise<boolean> {
    const stored = await this.stored([...next.keys()]).catch(() => null);
    return stored !== null && [...next].every(([t, h]) => stored.get(t)?.head === h.hash);
  }

  /** Reads this writer's chains of these tenants as stored (after a refused batch); how many another writer took. */
  private async reload(tenants: string[]): Promise<number> {
    const stored = await this.stored(tenants);
    let taken = 0;
    for (const t of tenants) {
      const row = stored.get(t);
      const h = this.heads.get(t)!;
      if (row && row.holder !== this.holder) {
        // Another writer continues it now: this one claims a chain again on its next attempt.
        this.heads.delete(t);
        taken += 1;
        continue;
      }
      const lastSeq = row?.lastSeq ?? 0;
      // Seqs the stored chain used are gone from the block: a new block is taken when too few remain.
      this.heads.set(t, { ...h, size: row?.size ?? 0, hash: row?.head ?? GENESIS_HASH, lastSeq, next: Math.max(h.next, lastSeq + 1) });
    }
    return taken;
  }

  /** This writer's chains of these tenants, as committed, with who holds each now. */
  private async stored(tenants: string[]): Promise<Map<string, { size: number; head: string; lastSeq: number; holder: string | null }>> {
    const chains = tenants.map((t) => ({ tenant_id: t, chain: this.heads.get(t)!.chain }));
    const r = await this.db.query<{ tenant_id: string; size: string | number; head: string; last_seq: string | number; holder: string | null }>(
      `SELECT c.tenant_id, c.size, c.head, c.last_seq, c.holder
         FROM audit_chains c JOIN jsonb_to_recordset($1::jsonb) AS r(tenant_id text, chain text) ON c.tenant_id = r.tenant_id AND c.chain = r.chain`,
      [JSON.stringify(chains)],
    );
    return new Map(r.rows.map((row) => [row.tenant_id, { size: Number(row.size), head: row.head, lastSeq: Number(row.last_seq), holder: row.holder }]));
  }

  /** Waits for queued records to commit, then gives this writer's chains back; later records are refused. */
  async close(): Promise<void> {
    this.closed = true;
    while (this.draining) await this.draining;
    if (!this.heads.size) return;
    const chains = [...this.heads].map(([t, h]) => ({ tenant_id: t, chain: h.chain }));
    this.heads.clear();
    // Not given back (the store is gone): the leases run out, and the chains are free after that.
    await this.db.query(RELEASE, [JSON.stringify(chains), this.holder]).catch(() => undefined);
  }
}
