// Spans handed their parent (decision 0456), in the default context mode (AsyncLocalStorage): work that serves
// several requests at once (the idempotency claim's grouped insert, the audit's group commit) is traced under
// one of them, never under the context a drain loop happened to start in; a step's context is put back however
// the step ends.
import type { FastifyRequest } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AuditWriter, type WriterEntry } from '../../src/audit/writer.js';
import { inStep } from '../../src/plugins/tracing.js';
import { IdempotencyStore } from '../../src/services/infrastructure/idempotency.js';
import type { Db } from '../../src/store/db.js';
import { TracedDb } from '../../src/store/traced.js';
import { startTracing, stopTracing, type RequestTrace, type Tracing } from '../../src/telemetry/index.js';
import { LIMIT_URL, createTestDb, type TestDb } from '../helpers/app.js';
import { startOtlpReceiver, type OtlpReceiver } from '../helpers/otlp.js';

let otlp: OtlpReceiver;
let t: Tracing;

beforeAll(async () => {
  otlp = await startOtlpReceiver();
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = otlp.endpoint;
  t = (await startTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint, OTEL_TRACES_SAMPLER: 'parentbased_always_on' }))!;
});
afterAll(async () => {
  await stopTracing();
  delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  await otlp.close();
});
afterEach(() => void (otlp.spans.length = 0));

/** A request's server span and its context, sampled or not. */
const request = (name: string, sampled: boolean) => {
  const span = sampled ? t.tracer.startSpan(name, {}, t.root) : t.api.trace.wrapSpanContext({ traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), traceFlags: 0 });
  return { span, context: t.api.trace.setSpan(t.root, span) };
};

describe("the idempotency claim's grouped insert", () => {
  it("is traced under a sampled claimer's step when the batch's first claimer is not sampled", async () => {
    const store: Db = {
      kind: 'postgres',
      query: async <T>(_sql: string, params?: unknown[]) => {
        const rows = (JSON.parse(String(params![0])) as { lock_token: string }[]).map((k) => ({ lock_token: k.lock_token }));
        return { rows: rows as T[], rowCount: rows.length };
      },
      exec: async () => undefined,
      transaction: (fn) => fn(store),
      exclusive: (_id, fn) => fn(store),
      close: async () => undefined,
    };
    const keys = new IdempotencyStore(new TracedDb(store, t), { ttlHours: 1, leaseSeconds: 60, sweep: false });
    const unsampled = request('POST /a', false);
    const sampled = request('POST /b', true);
    const claims = await Promise.all([
      keys.claim('t1', 'scope-a', 'fp', unsampled.context),
      t.inSpan('idempotency', {}, (_span, ctx) => keys.claim('t1', 'scope-b', 'fp', ctx), { parent: sampled.context }),
    ]);
    sampled.span.end();
    await t.flush();
    expect(claims.map((c) => c.kind)).toEqual(['owner', 'owner']);
    const step = otlp.spans.find((s) => s.name === 'idempotency')!;
    expect(otlp.spans.filter((s) => s.name === 'cardline_idempotency_claim').map((s) => s.parentSpanId)).toEqual([step.spanId]);
  });
});

describe("the audit's group commit", () => {
  let testDb: TestDb;
  beforeAll(async () => {
    testDb = await createTestDb();
  });
  afterAll(() => testDb.drop());

  const entry = (tenantId: string, i: number): WriterEntry => ({
    tenantId, at: new Date(), actor: 'integration', role: 'API Integration', action: 'credit-limit.upgrade', method: 'POST', route: LIMIT_URL,
    target: { entityId: `ENT-${i}` }, outcome: 'succeeded', status: 200, requestId: `req-${tenantId}-${i}`, origin: '127.0.0.1',
  });

  it("of records written outside any request is not traced under the request whose record started the writer's drain", async () => {
    // The first append waits until the second record is queued: the two commit in two batches, one drain.
    let appending!: () => void;
    const appended = new Promise<void>((resolve) => (appending = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    // The test's store is traced already when tracing is on: its own statements are not this test's.
    const inner = testDb.db instanceof TracedDb ? testDb.db.inner : testDb.db;
    const gated: Db = {
      kind: inner.kind,
      query: async (sql, params, opts) => {
        if (opts?.name?.startsWith('cardline_audit_append')) {
          appending();
          await released;
        }
        return inner.query(sql, params, opts);
      },
      exec: (sql) => inner.exec(sql),
      transaction: (fn) => inner.transaction(fn),
      exclusive: (id, fn) => inner.exclusive(id, fn),
      close: () => inner.close(),
    };
    const writer = new AuditWriter(new TracedDb(gated, t));
    const tenant = `traced-${Date.now()}`;
    const req = request('POST /a', true);
    const first = t.inSpan('audit', {}, (_span, ctx) => writer.record(entry(tenant, 1), ctx), { parent: req.context });
    await appended;
    // A background job's record (no request, no span): written from outside any context.
    const background = t.withContext(t.root, () => writer.record(entry(tenant, 2)));
    release();
    await Promise.all([first, background]);
    await writer.close();
    req.span.end();
    await t.flush();
    const commit = otlp.spans.find((s) => s.name === 'audit group commit')!;
    const appends = otlp.spans.filter((s) => String(s.attributes['db.query.summary']).startsWith('cardline_audit_append'));
    expect(appends.map((s) => s.parentSpanId)).toEqual([commit.spanId]);
  });
});

describe('RequestTrace.step', () => {
  it("is the request's own context again after a step that throws before it returns a promise", async () => {
    const req = request('POST /a', true);
    const trace: RequestTrace = { span: req.span, context: req.context, sampled: true, step: req.context };
    const fastifyRequest = { ctx: { trace } } as unknown as FastifyRequest;
    const boom = (): Promise<void> => {
      throw new Error('boom');
    };
    expect(() => inStep(fastifyRequest, 'validate', boom)).toThrow('boom');
    expect(trace.step).toBe(trace.context);
    await expect(inStep(fastifyRequest, 'operation', () => Promise.reject(new Error('later')))).rejects.toThrow('later');
    expect(trace.step).toBe(trace.context);
    req.span.end();
  });
});
