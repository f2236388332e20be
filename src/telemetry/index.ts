// OpenTelemetry traces, off unless the standard OTEL_* variables ask for an exporter. Off, nothing of the SDK is
// loaded and every instrumented place costs one null check: the SDK (src/telemetry/sdk.ts) is imported only by
// startTracing(), and the spans are made by hand at the places that do work (decision 0310).
import type { Attributes, Context, Span, SpanContext } from '@opentelemetry/api';
import type { SpanOptions, Tracing } from './types.js';

export type { SpanOptions, Tracing } from './types.js';
export { errorType } from './types.js';

let current: Tracing | null = null;

/** The process's tracing, or null when it is off (the default). */
export const tracing = (): Tracing | null => current;

/**
 * Whether the environment asks for traces: an OTLP endpoint is named (OTEL_EXPORTER_OTLP_ENDPOINT or
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), and neither OTEL_SDK_DISABLED=true nor OTEL_TRACES_EXPORTER=none.
 */
export function tracingRequested(env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  if (env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() === 'none') return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
}

/** Starts tracing when the environment asks for it (once per process); null otherwise. */
export async function startTracing(env: NodeJS.ProcessEnv = process.env): Promise<Tracing | null> {
  if (current || !tracingRequested(env)) return current;
  const { createTracing } = await import('./sdk.js');
  current = createTracing(env);
  return current;
}

/** Flushes and stops the exporter; tracing is off afterwards. */
export async function stopTracing(): Promise<void> {
  const t = current;
  current = null;
  await t?.shutdown();
}

/** Runs fn in a span when tracing is on; otherwise runs it as it is. */
export function traced<T>(name: string, attributes: Attributes, fn: (span: Span | undefined) => Promise<T>, opts?: SpanOptions): Promise<T> {
  const t = current;
  return t ? t.inSpan(name, attributes, fn, opts) : fn(undefined);
}

export const isSampled = (sc: SpanContext | undefined): boolean => sc !== undefined && (sc.traceFlags & 1) === 1;

/** The item a batch's shared work is traced under: one of a sampled trace (a batch mixes them), else the first traced one. */
export function batchParent<T>(batch: readonly T[], contextOf: (item: T) => SpanContext | undefined): T | undefined {
  return batch.find((p) => isSampled(contextOf(p))) ?? batch.find((p) => contextOf(p) !== undefined);
}

/** Where a request logger keeps its request's trace (src/logging.ts binds it; the tracing step sets it). */
export const REQUEST_TRACE = Symbol.for('cardline.requestTrace');

/** The trace of one request, on its raw request object (the log lines of request.log read it). */
export interface RequestTrace {
  span: Span;
  context: Context;
  /** Whether the sampler kept the request's trace; an unsampled one makes no span below the server span. */
  sampled: boolean;
  /** The context of the pipeline step under way (src/plugins/tracing.ts inStep), `context` between steps. */
  step: Context;
}

/**
 * pino's mixin while tracing is on: a line logged inside a span names it; a request's line outside one names
 * the span of its step under way, or its server span.
 */
export function traceLogFields(_obj: object, _level: number, logger?: unknown): Record<string, string> {
  const t = current;
  if (!t) return {};
  const trace = (logger as { [REQUEST_TRACE]?: { [REQUEST_TRACE]?: RequestTrace } } | undefined)?.[REQUEST_TRACE]?.[REQUEST_TRACE];
  const span = t.activeSpan() ?? (trace && t.api.trace.getSpan(trace.step));
  if (!span) return {};
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}
