// The span export on a thread of its own (CARDLINE_TRACE_EXPORT_THREAD=1, decision 0413): what the OTLP receiver gets from the worker is each
// span as the main thread's SDK made it (ids, parent, kind, times, attributes, status, links, trace state), and
// a shutdown without a flush loses nothing that was buffered on either thread.
import { SpanKind, SpanStatusCode, type Span } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { afterEach, describe, expect, it } from 'vitest';
import { createTracing } from '../../src/telemetry/sdk.js';
import { CardlineError } from '../../src/errors.js';
import { startOtlpReceiver, type OtlpReceiver } from '../helpers/otlp.js';

let otlp: OtlpReceiver | undefined;
afterEach(async () => {
  delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  await otlp?.close();
  otlp = undefined;
});

/** Tracing exporting to a fresh receiver; the exporter (on its thread) reads the endpoint from the environment. */
async function tracingTo(env: Record<string, string> = {}) {
  otlp = await startOtlpReceiver();
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = otlp.endpoint;
  return { otlp, t: createTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint, OTEL_TRACES_SAMPLER: 'parentbased_always_on', CARDLINE_TRACE_EXPORT_THREAD: '1', ...env }) };
}

const nanos = (s: Span) => {
  const { startTime, endTime } = s as unknown as ReadableSpan;
  const n = (t: [number, number]) => (BigInt(t[0]) * 1_000_000_000n + BigInt(t[1])).toString();
  return { start: n(startTime), end: n(endTime) };
};

describe('spans exported from the export thread', () => {
  it('keep their parents, kinds, times, attributes, status, links and trace state', async () => {
    const { otlp, t } = await tracingTo();
    const callerTrace = 'a'.repeat(32);
    const caller = t.extract(`00-${callerTrace}-${'b'.repeat(16)}-01`, 'vendor=x1')!;
    const linked = { context: { traceId: 'c'.repeat(32), spanId: 'd'.repeat(16), traceFlags: 1 }, attributes: { 'cardline.audit.record': 7 } };
    const server = t.serverSpan('POST /limits', caller, { links: [linked], startTime: Date.now() }, () => ({ 'http.route': '/limits', 'cardline.tenant': 'demo', 'http.response.status_code': 200 }));
    const ctx = t.api.trace.setSpan(caller, server);
    let core: Span | undefined;
    let statement: Span | undefined;
    await t.inSpan('operation', {}, async () => {
      await t.inSpan('core upgradeLimit', { 'cardline.connector': 'mock', 'cardline.core.breaker': false, 'cardline.ratio': 0.5, 'cardline.roles': ['a', 'b'] }, async (s) => {
        core = s;
      }, { kind: SpanKind.CLIENT });
      await t
        .inSpan('cardline_audit_append', () => ({ 'db.system.name': 'postgresql' }), async (s) => {
          statement = s;
          throw new CardlineError('core.unavailable', { status: 503 });
        }, { kind: SpanKind.CLIENT, requireParent: true })
        .catch(() => undefined);
    }, { parent: ctx });
    server.end();
    await t.shutdown();

    const byName = Object.fromEntries(otlp.spans.map((s) => [s.name, s]));
    expect(Object.keys(byName).sort()).toEqual(['POST /limits', 'cardline_audit_append', 'core upgradeLimit', 'operation']);
    const root = byName['POST /limits']!;
    expect(root).toMatchObject({ traceId: callerTrace, parentSpanId: 'b'.repeat(16), kind: 2, service: 'cardline', attributes: { 'http.route': '/limits', 'cardline.tenant': 'demo', 'http.response.status_code': 200 } });
    expect(root.links).toEqual([{ traceId: 'c'.repeat(32), spanId: 'd'.repeat(16) }]);
    expect(byName.operation).toMatchObject({ traceId: callerTrace, parentSpanId: root.spanId, kind: 1, attributes: {} });
    expect(byName['core upgradeLimit']).toMatchObject({
      parentSpanId: byName.operation!.spanId,
      kind: 3,
      attributes: { 'cardline.connector': 'mock', 'cardline.core.breaker': false, 'cardline.ratio': 0.5, 'cardline.roles': ['a', 'b'] },
      status: {},
    });
    expect(byName.cardline_audit_append).toMatchObject({ parentSpanId: byName.operation!.spanId, attributes: { 'db.system.name': 'postgresql', 'error.type': 'core.unavailable' }, status: { code: SpanStatusCode.ERROR } });

    // The raw OTLP: the times the main thread's spans had, the caller's trace state, the link's attributes.
    const raw = otlp.bodies.flatMap((b) => (JSON.parse(b) as { resourceSpans: { scopeSpans: { scope: { name: string }; spans: Record<string, unknown>[] }[] }[] }).resourceSpans.flatMap((r) => r.scopeSpans));
    expect(raw.map((s) => s.scope.name)).toEqual(raw.map(() => 'cardline'));
    const rawByName = Object.fromEntries(raw.flatMap((s) => s.spans).map((s) => [s.name, s]));
    for (const [name, span] of [['core upgradeLimit', core!], ['cardline_audit_append', statement!]] as const) {
      expect(rawByName[name]).toMatchObject({ startTimeUnixNano: nanos(span).start, endTimeUnixNano: nanos(span).end });
    }
    expect(rawByName['POST /limits']).toMatchObject({ traceState: 'vendor=x1', links: [{ attributes: [{ key: 'cardline.audit.record', value: { intValue: 7 } }] }] });
  });

  it('a shutdown without a flush exports every span buffered on either thread', async () => {
    // A schedule and batch far beyond the test: only the shutdown sends them.
    const { otlp, t } = await tracingTo({ OTEL_BSP_SCHEDULE_DELAY: '600000', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '2048' });
    const requests = 150;
    for (let i = 0; i < requests; i++) {
      const server = t.serverSpan('POST /x', t.api.ROOT_CONTEXT, { links: [], startTime: Date.now() }, () => ({ 'cardline.request_id': `r${i}` }));
      await t.inSpan('auth', {}, async () => undefined, { parent: t.api.trace.setSpan(t.api.ROOT_CONTEXT, server) });
      server.end();
    }
    expect(otlp.spans).toEqual([]);
    await t.shutdown();
    expect(otlp.spans).toHaveLength(2 * requests);
    const servers = otlp.spans.filter((s) => s.name === 'POST /x');
    expect(servers.map((s) => s.attributes['cardline.request_id']).sort()).toEqual(Array.from({ length: requests }, (_, i) => `r${i}`).sort());
    const serverIds = new Set(servers.map((s) => s.spanId));
    expect(otlp.spans.filter((s) => s.name === 'auth').every((s) => serverIds.has(s.parentSpanId))).toBe(true);
  });

  it('a flush exports what was buffered and tracing goes on after it', async () => {
    const { otlp, t } = await tracingTo({ OTEL_BSP_SCHEDULE_DELAY: '600000' });
    try {
      await t.inSpan('first', {}, async () => undefined);
      await t.flush();
      expect(otlp.spans.map((s) => s.name)).toEqual(['first']);
      await t.inSpan('second', {}, async () => undefined);
      await t.flush();
      expect(otlp.spans.map((s) => s.name)).toEqual(['first', 'second']);
    } finally {
      await t.shutdown();
    }
  });
});
