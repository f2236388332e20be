// Shadow mode (decision 0112): after the primary answered, the same read (or a dry-run write) goes to a
// candidate core and the masked, normalised answers are compared. Bounded per tenant, so the caller never waits.
import { uuidv7 } from 'uuidv7';
import type { FastifyBaseLogger } from 'fastify';
import type { TSchema } from '@sinclair/typebox';
import { CONTRACT, isContractOperation, isWriteOperation, type ConnectorContext, type ContractOperation, type OperationInput, type OperationResult } from '../../../connectors/contract.js';
import { isSensitive } from '../../../schemas/common.js';
import { Errors } from '../../errors.js';
import { scrub } from '../../logging.js';
import type { Db } from '../../store/db.js';
import { decodeSeqCursor, encodeSeqCursor } from '../../paging/seq-cursor.js';
import type { ConnectorInstances } from './connector-instances.js';
import type { ShadowObserver, ShadowOutcome } from '../infrastructure/metrics.js';
import { routesOf } from './routing.js';
import type { Tenant } from '../tenancy/tenants.js';

/** One field the two cores answered differently; a sensitive one shows as "***" on both sides. */
export interface Difference {
  path: string;
  primary: unknown;
  shadow: unknown;
}

export interface Divergence {
  id: string;
  at: string;
  operation: string;
  connector: string;
  requestId: string;
  differences: Difference[];
}

export interface ShadowSummary {
  operation: string;
  calls: number;
  match: number;
  diverged: number;
  error: number;
  dropped: number;
  /** match / (match + diverged): the share of compared calls that agreed; null before the first comparison. */
  matchRate: number | null;
}

export interface ShadowOptions {
  concurrency?: number;
  /** Shadow calls waiting per tenant; more are dropped. */
  queue?: number;
  /** Deadline of one shadow call. */
  deadlineMs?: number;
  /** How often the counts kept in memory are added to the store (shadow_calls). */
  flushMs?: number;
}

/** What the primary answered, as the comparison sees it. */
export type PrimaryAnswer = { status: 'succeeded'; value: unknown } | { status: 'rejected'; code: string };

interface Job {
  tenant: Tenant;
  operation: ContractOperation;
  input: unknown;
  primary: PrimaryAnswer;
  requestId: string;
}

export const MASK = '***';
const PAGE_DEFAULT = 50;
const WARN_EVERY_MS = 10_000;

/** Paths (`a.b`, `a.*` for array items) of the fields a schema marks sensitive. */
function sensitivePaths(schema: TSchema, prefix = '', out = new Set<string>()): Set<string> {
  if (isSensitive(schema)) out.add(prefix);
  const s = schema as { properties?: Record<string, TSchema>; items?: TSchema; anyOf?: TSchema[] };
  for (const [k, v] of Object.entries(s.properties ?? {})) sensitivePaths(v, prefix ? `${prefix}.${k}` : k, out);
  if (s.items) sensitivePaths(s.items, prefix ? `${prefix}.*` : '*', out);
  for (const v of s.anyOf ?? []) sensitivePaths(v, prefix, out);
  return out;
}
const SENSITIVE = new Map(Object.entries(CONTRACT).map(([op, e]) => [op, sensitivePaths(e.result)]));

/** Every leaf where the two values differ, with sensitive fields (by the contract's schema) masked. */
export function differences(operation: ContractOperation, primary: unknown, shadow: unknown): Difference[] {
  const sensitive = SENSITIVE.get(operation) ?? new Set<string>();
  const out: Difference[] = [];
  const shown = (pattern: string, v: unknown): unknown =>
    v === undefined ? null : sensitive.has(pattern) ? MASK : typeof v === 'string' ? scrub(v) : v;
  const walk = (a: unknown, b: unknown, path: string, pattern: string) => {
    if (a !== null && b !== null && typeof a === 'object' && typeof b === 'object' && Array.isArray(a) === Array.isArray(b)) {
      const keys = Array.isArray(a) ? [...Array(Math.max(a.length, (b as unknown[]).length)).keys()].map(String) : [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
      for (const k of keys) {
        const next = Array.isArray(a) ? '*' : k;
        walk((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], path ? `${path}.${k}` : k, pattern ? `${pattern}.${next}` : next);
      }
      return;
    }
    if (JSON.stringify(a) === JSON.stringify(b)) return;
    // A whole object on one side only: shown masked when anything under it is sensitive.
    const under = [...sensitive].some((p) => p === pattern || p.startsWith(`${pattern}.`));
    out.push({ path: path || '(answer)', primary: under && a !== undefined ? MASK : shown(pattern, a), shadow: under && b !== undefined ? MASK : shown(pattern, b) });
  };
  walk(primary, shadow, '', '');
  return out;
}

/** A write compared as accepted or refused, and by the refusal's code. */
function verdictOf(answer: PrimaryAnswer): { accepted: boolean; code: string | null } {
  return answer.status === 'succeeded' ? { accepted: true, code: null } : { accepted: false, code: answer.code };
}

export class ShadowService {
  private readonly lanes = new Map<string, { running: number; waiting: Job[] }>();
  private readonly concurrency: number;
  private readonly queue: number;
  private readonly deadlineMs: number;
  /** Comparisons under way (tests and shutdown wait for them). */
  private readonly pending = new Set<Promise<void>>();
  /** Counts not yet stored, summed here and written every few seconds rather than a statement per request. */
  private unflushed = new Map<string, { tenantId: string; operation: string; outcome: ShadowOutcome; calls: number }>();
  private flushing: Promise<void> = Promise.resolve();
  private readonly timer: NodeJS.Timeout;
  /** Failure warnings by tenant and connector: one line per interval, with how many it stands for. */
  private readonly warned = new Map<string, { at: number; suppressed: number }>();

  constructor(
    private readonly db: Db,
    private readonly instances: ConnectorInstances,
    private readonly log: FastifyBaseLogger,
    private readonly observer: ShadowObserver | undefined,
    opts: ShadowOptions = {},
  ) {
    this.concurrency = opts.concurrency ?? 4;
    this.queue = opts.queue ?? 64;
    this.deadlineMs = opts.deadlineMs ?? 2_000;
    this.timer = setInterval(() => void this.flush(), opts.flushMs ?? 2_000);
    this.timer.unref();
  }

  /** Hands the shadow an answered call if the tenant shadows it (sampled); never waits, never throws. */
  offer(tenant: Tenant, operation: ContractOperation, input: unknown, primary: PrimaryAnswer, requestId: string): void {
    const shadow = routesOf(tenant.config).shadow;
    if (!shadow || !shadow.operations.has(operation)) return;
    if (isWriteOperation(operation) && shadow.writes !== 'dry-run') return;
    if (shadow.sampleRate < 1 && Math.random() >= shadow.sampleRate) return;
    let lane = this.lanes.get(tenant.id);
    if (!lane) this.lanes.set(tenant.id, (lane = { running: 0, waiting: [] }));
    const job: Job = { tenant, operation, input: structuredClone(input), primary, requestId };
    if (lane.running < this.concurrency) this.start(lane, job);
    else if (lane.waiting.length < this.queue) lane.waiting.push(job);
    else this.count(tenant.id, operation, 'dropped');
  }

  /** Resolves when every comparison started so far has been recorded, its count in the store. */
  async settled(): Promise<void> {
    while (this.pending.size) await Promise.allSettled([...this.pending]);
    await this.flush();
  }

  /** Waits for the comparisons under way, writes the last counts and stops the flush timer. */
  async close(): Promise<void> {
    await this.settled();
    clearInterval(this.timer);
  }

  /** Adds the counts kept in memory to the store, in one statement; one flush at a time. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      if (!this.unflushed.size) return;
      const rows = [...this.unflushed.values()];
      this.unflushed = new Map();
      try {
        await this.db.query(
          `INSERT INTO shadow_calls (tenant_id, operation, outcome, calls)
           SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[])
           ON CONFLICT (tenant_id, operation, outcome) DO UPDATE SET calls = shadow_calls.calls + EXCLUDED.calls`,
          [rows.map((r) => r.tenantId), rows.map((r) => r.operation), rows.map((r) => r.outcome), rows.map((r) => r.calls)],
        );
      } catch (err) {
        // Kept for the next flush rather than lost; the metric has counted them already.
        for (const r of rows) this.add(r.tenantId, r.operation, r.outcome, r.calls);
        this.log.warn({ reason: String((err as Error)?.message ?? err) }, 'shadow counts not stored; kept for the next flush');
      }
    });
    return this.flushing;
  }

  private start(lane: { running: number; waiting: Job[] }, job: Job): void {
    lane.running++;
    const run = this.compare(job).finally(() => {
      this.pending.delete(run);
      lane.running--;
      const next = lane.waiting.shift();
      if (next) this.start(lane, next);
    });
    this.pending.add(run);
  }

  private async compare(job: Job): Promise<void> {
    const { tenant, operation, requestId } = job;
    const name = routesOf(tenant.config).shadow?.name;
    if (!name) return;
    let outcome: ShadowOutcome = 'error';
    try {
      const answer = await this.call(job, name);
      if (answer === null) return;
      const found = isWriteOperation(operation)
        ? differences(operation, verdictOf(job.primary), verdictOf(answer))
        : differences(operation, job.primary.status === 'succeeded' ? job.primary.value : { refused: job.primary.code }, answer.status === 'succeeded' ? answer.value : { refused: answer.code });
      outcome = found.length ? 'diverged' : 'match';
      if (found.length) {
        await this.db.query('INSERT INTO shadow_divergences (tenant_id, id, operation, connector, request_id, differences) VALUES ($1, $2, $3, $4, $5, $6)', [
          tenant.id,
          uuidv7(),
          operation,
          name,
          requestId,
          JSON.stringify(found),
        ]);
      }
    } catch (err) {
      outcome = 'error';
      this.warn(tenant.id, name, operation, err);
    }
    this.count(tenant.id, operation, outcome);
  }

  /** The shadow's answer, or null when it cannot take this call (it does not offer it, or cannot dry-run a write). */
  private async call(job: Job, name: string): Promise<PrimaryAnswer | null> {
    const lease = await this.instances.acquire(job.tenant, name);
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(new DOMException('shadow deadline passed', 'TimeoutError')), this.deadlineMs);
    try {
      const write = isWriteOperation(job.operation);
      const method = lease.connector[job.operation] as ((i: OperationInput<typeof job.operation>, c: ConnectorContext) => Promise<OperationResult<unknown>>) | undefined;
      if (!method || (write && lease.connector.dryRun !== true)) return null;
      const ctx: ConnectorContext = { tenantId: job.tenant.id, requestId: job.requestId, logger: this.log, signal: deadline.signal, ...(write ? { dryRun: true } : {}) };
      const result = await Promise.race([
        method.call(lease.connector, job.input as never, ctx),
        new Promise<never>((_, reject) => deadline.signal.addEventListener('abort', () => reject(new Error('the shadow did not answer within its deadline')), { once: true })),
      ]);
      if (result.status === 'pending') throw new Error('the shadow answered pending');
      return result.status === 'succeeded' ? { status: 'succeeded', value: result.value } : { status: 'rejected', code: result.code };
    } finally {
      clearTimeout(timer);
      lease.release();
    }
  }

  /** Counted at once on the metric, and in memory for the store's next flush. */
  private count(tenantId: string, operation: string, outcome: ShadowOutcome): void {
    this.observer?.shadowCall(tenantId, operation, outcome);
    this.add(tenantId, operation, outcome, 1);
  }

  private add(tenantId: string, operation: string, outcome: ShadowOutcome, calls: number): void {
    const key = `${tenantId}\u0000${operation}\u0000${outcome}`;
    const row = this.unflushed.get(key);
    if (row) row.calls += calls;
    else this.unflushed.set(key, { tenantId, operation, outcome, calls });
  }

  /** A failed shadow call, logged at most once per tenant and connector every ten seconds (with how many it stands for). */
  private warn(tenantId: string, connector: string, operation: string, err: unknown): void {
    const key = `${tenantId}\u0000${connector}`;
    const now = Date.now();
    const last = this.warned.get(key);
    if (last && now - last.at < WARN_EVERY_MS) {
      last.suppressed++;
      return;
    }
    this.warned.set(key, { at: now, suppressed: 0 });
    const reason = scrub(String((err as Error)?.message ?? err));
    this.log.warn({ tenant: tenantId, operation, connector, reason, ...(last?.suppressed ? { alsoFailedSinceLastWarning: last.suppressed } : {}) }, 'shadow call failed');
  }

  async divergences(tenantId: string, q: { limit?: string | number | undefined; cursor?: string | undefined }): Promise<{ divergences: Divergence[]; nextCursor: string | null }> {
    const limit = q.limit === undefined ? PAGE_DEFAULT : Number(q.limit);
    const params: unknown[] = [tenantId, limit + 1];
    let filter = '';
    if (q.cursor) {
      const before = decodeSeqCursor(q.cursor);
      if (before === null) throw Errors.badRequest('cursor is not a cursor this list issued.');
      filter = ` AND seq < $${params.push(before)}::bigint`;
    }
    const r = await this.db.query<{ seq: string | number; id: string; at: Date | string; operation: string; connector: string; request_id: string; differences: Difference[] | string }>(
      `SELECT seq, id, at, operation, connector, request_id, differences FROM shadow_divergences WHERE tenant_id = $1${filter} ORDER BY seq DESC LIMIT $2`,
      params,
    );
    const rows = r.rows.slice(0, limit);
    const last = rows[rows.length - 1];
    return {
      divergences: rows.map((row) => ({
        id: row.id,
        at: new Date(row.at).toISOString(),
        operation: row.operation,
        connector: row.connector,
        requestId: row.request_id,
        differences: typeof row.differences === 'string' ? (JSON.parse(row.differences) as Difference[]) : row.differences,
      })),
      nextCursor: r.rows.length > limit && last ? encodeSeqCursor(String(last.seq)) : null,
    };
  }

  /** Per shadowed operation: calls by outcome and the match rate (this process's unflushed counts written first). */
  async summary(tenantId: string): Promise<ShadowSummary[]> {
    await this.flush();
    const r = await this.db.query<{ operation: string; outcome: ShadowOutcome; calls: string | number }>(
      'SELECT operation, outcome, calls FROM shadow_calls WHERE tenant_id = $1 ORDER BY operation',
      [tenantId],
    );
    const by = new Map<string, ShadowSummary>();
    for (const row of r.rows) {
      if (!isContractOperation(row.operation)) continue;
      let s = by.get(row.operation);
      if (!s) by.set(row.operation, (s = { operation: row.operation, calls: 0, match: 0, diverged: 0, error: 0, dropped: 0, matchRate: null }));
      s[row.outcome] = Number(row.calls);
      s.calls += Number(row.calls);
    }
    for (const s of by.values()) s.matchRate = s.match + s.diverged ? Math.round((s.match / (s.match + s.diverged)) * 10_000) / 10_000 : null;
    return [...by.values()];
  }
}
