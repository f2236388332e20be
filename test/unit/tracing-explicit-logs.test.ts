// CARDLINE_TRACING_CONTEXT=explicit (decision 0457): nothing is active, so a request's log line names the span of
// its step under way (RequestTrace.step), after an await too, and its server span between steps.
import type { FastifyRequest } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inStep } from '../../src/plugins/tracing.js';
import { REQUEST_TRACE, startTracing, stopTracing, traceLogFields, type RequestTrace, type Tracing } from '../../src/telemetry/index.js';
import { startOtlpReceiver, type OtlpReceiver } from '../helpers/otlp.js';

let otlp: OtlpReceiver;
let t: Tracing;

beforeAll(async () => {
  otlp = await startOtlpReceiver();
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = otlp.endpoint;
  t = (await startTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint, OTEL_TRACES_SAMPLER: 'always_on', CARDLINE_TRACING_CONTEXT: 'explicit' }))!;
});
afterAll(async () => {
  await stopTracing();
  delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  await otlp.close();
});

describe('a request log line without AsyncLocalStorage', () => {
  it('names its step while the step runs, its server span before and after', async () => {
    const span = t.tracer.startSpan('POST /x', {}, t.root);
    const context = t.api.trace.setSpan(t.root, span);
    const trace: RequestTrace = { span, context, sampled: true, step: context };
    // As src/logging.ts binds it: the request logger holds the raw request, which holds the trace.
    const logger = { [REQUEST_TRACE]: { [REQUEST_TRACE]: trace } };
    const line = () => traceLogFields({}, 30, logger);
    const lines = [line()];
    await inStep({ ctx: { trace } } as unknown as FastifyRequest, 'auth', async () => {
      await new Promise<void>((resolve) => setImmediate(resolve));
      lines.push(line());
    });
    lines.push(line());
    span.end();
    await t.flush();
    const auth = otlp.spans.find((s) => s.name === 'auth')!;
    const server = { trace_id: span.spanContext().traceId, span_id: span.spanContext().spanId };
    expect(t.activeSpan()).toBeUndefined();
    expect(lines).toEqual([server, { trace_id: server.trace_id, span_id: auth.spanId }, server]);
  });
});
