// The OpenTelemetry SDK, loaded only when the environment asks for traces (src/telemetry/index.ts): a tracer
// provider with the OTLP/HTTP exporter behind a batch processor, the sampler OTEL_TRACES_SAMPLER names, the
// AsyncLocalStorage context manager and the W3C trace-context propagator.
import * as api from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { isTracingSuppressed, sanitizeAttributes, W3CTraceContextPropagator, type InstrumentationScope } from '@opentelemetry/core';
import { OTLPExporterBase } from '@opentelemetry/otlp-exporter-base';
import { convertLegacyHttpOptions, createOtlpHttpExportDelegate } from '@opentelemetry/otlp-exporter-base/node-http';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { defaultResource, detectResources, envDetector, resourceFromAttributes, type Resource } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  RandomIdGenerator,
  TraceIdRatioBasedSampler,
  TracerProvider,
  type ReadableSpan,
  type Sampler,
  type SamplingResult,
  type SpanExporter,
  type SpanLimits,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace';
import type { SpanImpl } from '@opentelemetry/sdk-trace/build/src/Span.js';
import { ExplicitContextManager, ROOT } from './context.js';
import { serializeSpans } from './otlp-json.js';
import { errorType, type SpanOptions, type Tracing } from './types.js';

const SERVICE_NAME = 'cardline';

/** The sampler the specification's OTEL_TRACES_SAMPLER / OTEL_TRACES_SAMPLER_ARG name (default parentbased_always_on). */
export function samplerFromEnv(env: NodeJS.ProcessEnv): Sampler {
  const name = env.OTEL_TRACES_SAMPLER?.trim().toLowerCase() || 'parentbased_always_on';
  const arg = Number(env.OTEL_TRACES_SAMPLER_ARG ?? '1');
  const ratio = Number.isFinite(arg) && arg >= 0 && arg <= 1 ? arg : 1;
  switch (name) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(ratio);
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) });
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    default:
      throw new Error(`OTEL_TRACES_SAMPLER='${env.OTEL_TRACES_SAMPLER}' is not one of always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off, parentbased_traceidratio`);
  }
}

/** The SDK's OTLP/HTTP JSON exporter (its transport, retries, headers, compression, timeout), our encoder its serializer. */
export function jsonExporter(config: { url?: string } = {}): OTLPExporterBase<ReadableSpan[]> {
  const serializer = {
    serializeRequest: serializeSpans,
    deserializeResponse: (data: Uint8Array) => (data.length ? (JSON.parse(Buffer.from(data).toString('utf8')) as object) : {}),
  };
  const options = convertLegacyHttpOptions(config, 'TRACES', 'v1/traces', { 'Content-Type': 'application/json' });
  return new OTLPExporterBase(createOtlpHttpExportDelegate(options, serializer, 'otlp_http_span_exporter', { name: 'span', countItems: (spans: ReadableSpan[]) => spans.length }, undefined));
}

/**
 * The exporter OTEL_EXPORTER_OTLP_TRACES_PROTOCOL (or OTEL_EXPORTER_OTLP_PROTOCOL) names: http/json by default
 * (it costs the main thread less than protobuf, decision 0382; written by src/telemetry/otlp-json.ts, decision
 * 0451), or http/protobuf.
 */
export function exporterFromEnv(env: NodeJS.ProcessEnv): SpanExporter {
  const raw = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL?.trim() || env.OTEL_EXPORTER_OTLP_PROTOCOL?.trim() || 'http/json';
  // The exporters read OTEL_EXPORTER_OTLP_* themselves (endpoint, headers, timeout).
  if (raw.toLowerCase() === 'http/json') return jsonExporter();
  if (raw.toLowerCase() === 'http/protobuf') return new ProtobufExporter();
  throw new Error(`OTEL_EXPORTER_OTLP_PROTOCOL='${raw}' is not one of http/protobuf, http/json`);
}

/** A positive integer from the environment, or the default. */
function intFrom(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const n = Number(env[name]);
  return Number.isInteger(n) && n > 0 ? n : fallback;
}

const SAMPLED: SamplingResult = Object.freeze({ decision: api.SamplingDecision.RECORD_AND_SAMPLED });

/** Every sampler samples a local sampled parent's child (see inSpan): asked only for the others. */
class ChildSampler implements Sampler {
  constructor(private readonly inner: Sampler) {}
  shouldSample(...args: Parameters<Sampler['shouldSample']>): SamplingResult {
    const parent = api.trace.getSpan(args[0])?.spanContext();
    return parent && !parent.isRemote && parent.traceFlags & api.TraceFlags.SAMPLED ? SAMPLED : this.inner.shouldSample(...args);
  }
  toString(): string {
    return this.inner.toString();
  }
}

/** CARDLINE_TRACING_CONTEXT: `async` (AsyncLocalStorage, the default) or `explicit` (decision 0456). */
export function contextManagerFromEnv(env: NodeJS.ProcessEnv): api.ContextManager {
  const name = env.CARDLINE_TRACING_CONTEXT?.trim().toLowerCase() || 'async';
  if (name === 'async') return new AsyncLocalStorageContextManager().enable();
  if (name === 'explicit') return new ExplicitContextManager();
  throw new Error(`CARDLINE_TRACING_CONTEXT='${env.CARDLINE_TRACING_CONTEXT}' is not one of async, explicit`);
}

export function createTracing(env: NodeJS.ProcessEnv): Tracing {
  // Used directly below: each call through api.context looks the global up and checks its version.
  const contextManager = contextManagerFromEnv(env);
  api.context.setGlobalContextManager(contextManager);
  const propagator = new W3CTraceContextPropagator();
  // OTEL_RESOURCE_ATTRIBUTES (and OTEL_SERVICE_NAME) are read by the environment detector; the name defaults to ours.
  const fromEnv = detectResources({ detectors: [envDetector] });
  const name = env.OTEL_SERVICE_NAME?.trim() || (fromEnv.attributes['service.name'] as string | undefined) || SERVICE_NAME;
  const resource = defaultResource().merge(fromEnv).merge(resourceFromAttributes({ 'service.name': name }));
  const sampler = samplerFromEnv(env);
  const ids = new RandomIdGenerator();
  const provider = new TracerProvider({
    resource,
    sampler: new ChildSampler(sampler),
    idGenerator: ids,
    spanProcessors: [
      new BatchSpanProcessor({
        exporter: exporterFromEnv(env),
        maxQueueSize: intFrom(env, 'OTEL_BSP_MAX_QUEUE_SIZE', 2048),
        maxExportBatchSize: intFrom(env, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE', 512),
        scheduledDelayMillis: intFrom(env, 'OTEL_BSP_SCHEDULE_DELAY', 5000),
        exportTimeoutMillis: intFrom(env, 'OTEL_BSP_EXPORT_TIMEOUT', 30_000),
      }),
    ],
  });
  api.trace.setGlobalTracerProvider(provider);
  api.propagation.setGlobalPropagator(propagator);
  const tracer = provider.getTracer(SERVICE_NAME);
  const spanOf = directSpans(tracer);

  const inSpan = <T>(name: string, attributes: api.Attributes | (() => api.Attributes), fn: (span: api.Span, ctx: api.Context) => Promise<T>, opts: SpanOptions = {}): Promise<T> => {
    const parent = opts.parent ?? contextManager.active();
    const parentSpan = api.trace.getSpan(parent);
    if (opts.requireParent && !parentSpan) return fn(api.trace.wrapSpanContext(api.INVALID_SPAN_CONTEXT), parent);
    // Under an unsampled trace, no span: every sampler OTEL_TRACES_SAMPLER names leaves an unsampled local
    // parent's children unsampled (parent-based ones by rule, traceidratio by the trace id; always_on samples
    // every server span). fn runs in that parent's context, switched to only when not active, for the work beneath.
    if (parentSpan && !(parentSpan.spanContext().traceFlags & api.TraceFlags.SAMPLED)) {
      return opts.parent ? contextManager.with(parent, fn, undefined, parentSpan, parent) : fn(parentSpan, parent);
    }
    // Set on the span: startSpan would copy and check them twice more, for samplers that never read them.
    const local = parentSpan && !parentSpan.spanContext().isRemote ? parentSpan.spanContext() : undefined;
    const span = local && spanOf
      ? spanOf(parent, { traceId: local.traceId, spanId: ids.generateSpanId(), traceFlags: api.TraceFlags.SAMPLED, traceState: local.traceState }, local, name, opts)
      : tracer.startSpan(name, { kind: opts.kind ?? api.SpanKind.INTERNAL, links: opts.links, startTime: opts.startTime }, parent);
    span.setAttributes(typeof attributes === 'function' ? attributes() : attributes);
    let result: Promise<T>;
    try {
      const ctx = api.trace.setSpan(parent, span);
      result = contextManager.with(ctx, fn, undefined, span, ctx);
    } catch (err) {
      fail(span, err);
      span.end();
      throw err;
    }
    return result.then(
      (value) => {
        span.end();
        return value;
      },
      (err: unknown) => {
        fail(span, err);
        span.end();
        throw err;
      },
    );
  };

  // The sampler decides before the SDK's span is made (its samplers read the parent and the trace id, never the
  // attributes): a request it does not keep gets a non-recording span with ids of its own, and no attributes.
  const serverSpan: Tracing['serverSpan'] = (name, parent, opts, attributes) => {
    if (!spanOf) {
      const span = tracer.startSpan(name, { kind: api.SpanKind.SERVER, links: opts.links, startTime: opts.startTime }, parent);
      if (span.isRecording()) span.setAttributes(attributes());
      return span;
    }
    const parentContext = api.trace.getSpanContext(parent);
    const remote = parentContext && api.isSpanContextValid(parentContext) ? parentContext : undefined;
    const traceId = remote?.traceId ?? ids.generateTraceId();
    const decision = sampler.shouldSample(parent, traceId, name, api.SpanKind.SERVER, {}, opts.links);
    if (decision.decision === api.SamplingDecision.NOT_RECORD) {
      const traceState = decision.traceState ?? remote?.traceState;
      return api.trace.wrapSpanContext({ traceId, spanId: ids.generateSpanId(), traceFlags: api.TraceFlags.NONE, ...(traceState ? { traceState } : {}) });
    }
    const flags = decision.decision === api.SamplingDecision.RECORD_AND_SAMPLED ? api.TraceFlags.SAMPLED : api.TraceFlags.NONE;
    const own = { traceId, spanId: ids.generateSpanId(), traceFlags: flags, traceState: decision.traceState ?? remote?.traceState };
    const span = spanOf(parent, own, remote, name, { kind: api.SpanKind.SERVER, links: opts.links, startTime: opts.startTime });
    if (decision.attributes) span.setAttributes(decision.attributes);
    span.setAttributes(attributes());
    return span;
  };

  return {
    api,
    tracer,
    root: ROOT,
    inSpan,
    serverSpan,
    activeSpan: () => api.trace.getSpan(contextManager.active()),
    withContext: (ctx, fn) => contextManager.with(ctx, fn),
    traceparent(ctx = contextManager.active()) {
      const sc = api.trace.getSpanContext(ctx);
      return sc && !isTracingSuppressed(ctx) ? traceparentOf(sc) : undefined;
    },
    traceparentOf,
    extract(traceparent, tracestate) {
      if (!traceparent) return undefined;
      const ctx = propagator.extract(ROOT, { traceparent, ...(tracestate ? { tracestate } : {}) }, api.defaultTextMapGetter);
      return api.trace.getSpan(ctx) ? ctx : undefined;
    },
    flush: () => provider.forceFlush(),
    shutdown: async () => {
      await provider.shutdown();
      api.trace.disable();
      api.propagation.disable();
      api.context.disable();
    },
  };
}

/**
 * The SDK's own span, made as Tracer.startSpan makes it once the sampler has decided: for a request's server span
 * (whose decision comes first) and for a local sampled parent's child (sampled by every sampler, see
 * ChildSampler), without asking the sampler again, checking the parent twice or counting the span in the SDK's
 * self-metrics, which no meter provider reads here (decision 0458). Undefined, with a process warning, when this
 * SDK's Tracer or span class no longer work as 2.12's do: every span is then made by Tracer.startSpan.
 */
function directSpans(tracer: api.Tracer): SpanMaker | undefined {
  try {
    const Impl = spanClass();
    const make = spanMaker(tracer, Impl);
    if (make && madeAsStartSpanMakes(Impl!)) return make;
  } catch {
    // A probe the changed SDK refused: as any other change, startSpan makes the spans.
  }
  process.emitWarning('@opentelemetry/sdk-trace: its Tracer or span class changed; spans are made by Tracer.startSpan', { code: 'CARDLINE_TRACING_SPANS' });
  return undefined;
}

type SpanMaker = (context: api.Context, own: api.SpanContext, parent: api.SpanContext | undefined, name: string, opts: SpanOptions) => api.Span;
type SpanClass = typeof SpanImpl;

const probeTracer = (processor?: SpanProcessor): api.Tracer =>
  new TracerProvider({ sampler: new AlwaysOnSampler(), spanProcessors: processor ? [processor] : [] }).getTracer('probe');

/** The class of the spans the SDK's Tracer makes, read from one it made (no import of a path the package does not export). */
function spanClass(): SpanClass | undefined {
  const Impl = (probeTracer().startSpan('probe') as object).constructor;
  return typeof Impl === 'function' && Impl !== Object ? (Impl as SpanClass) : undefined;
}

function spanMaker(tracer: api.Tracer, Impl: SpanClass | undefined): SpanMaker | undefined {
  const sdk = tracer as unknown as Partial<{ _resource: Resource; instrumentationScope: InstrumentationScope; _spanLimits: SpanLimits; _spanProcessor: SpanProcessor }>;
  const { _resource: resource, instrumentationScope: scope, _spanLimits: spanLimits, _spanProcessor: spanProcessor } = sdk;
  if (!Impl || !resource || !scope || !spanLimits || !spanProcessor) return undefined;
  return (context, own, parent, name, opts) => {
    if (isTracingSuppressed(context)) return api.trace.wrapSpanContext(api.INVALID_SPAN_CONTEXT);
    return new Impl({
      resource,
      scope,
      context,
      spanContext: own,
      name,
      kind: opts.kind ?? api.SpanKind.INTERNAL,
      links: opts.links?.map((link) => ({ context: link.context, attributes: sanitizeAttributes(link.attributes) })) ?? [],
      parentSpanContext: parent,
      startTime: opts.startTime,
      spanLimits,
      spanProcessor,
    });
  };
}

/** Whether spanMaker, given a probe tracer's parts, makes the span its startSpan makes and tells the processor of it. */
function madeAsStartSpanMakes(Impl: SpanClass): boolean {
  const started: [unknown, api.Context][] = [];
  const tracer = probeTracer({ onStart: (span, ctx) => void started.push([span, ctx]), onEnd: () => undefined, forceFlush: async () => undefined, shutdown: async () => undefined });
  const probe = spanMaker(tracer, Impl);
  const parent = { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: api.TraceFlags.SAMPLED, isRemote: true };
  const ctx = api.trace.setSpanContext(ROOT, parent);
  const opts = { kind: api.SpanKind.SERVER, links: [{ context: parent, attributes: { probe: 1 } }], startTime: 1_700_000_000_000 };
  const expected = tracer.startSpan('probe', opts, ctx) as unknown as ReadableSpan;
  const own = { ...parent, spanId: '00f067aa0ba902b7', isRemote: false };
  const made = probe?.(ctx, own, parent, 'probe', opts) as unknown as ReadableSpan | undefined;
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  return (
    !!made &&
    made.constructor === expected.constructor &&
    made.spanContext() === own &&
    made.parentSpanContext === parent &&
    [made.name, made.kind, made.resource, made.instrumentationScope].every((v, i) => v === [expected.name, expected.kind, expected.resource, expected.instrumentationScope][i]) &&
    same([made.startTime, made.links, made.attributes], [expected.startTime, expected.links, expected.attributes]) &&
    started.length === 2 &&
    started[1]![0] === made &&
    started[1]![1] === ctx
  );
}

/** The header W3CTraceContextPropagator.inject writes for a span context, without its carrier and tracestate. */
function traceparentOf(sc: api.SpanContext): string | undefined {
  if (!api.isSpanContextValid(sc)) return undefined;
  return `00-${sc.traceId}-${sc.spanId}-0${(sc.traceFlags & 0xff).toString(16)}`;
}

/** Marks a span with what ended it: a client's error (4xx) leaves its status unset, as the conventions say. */
function fail(span: api.Span, err: unknown): void {
  const { type, fault } = errorType(err);
  span.setAttribute('error.type', type);
  if (fault) span.setStatus({ code: api.SpanStatusCode.ERROR });
}
