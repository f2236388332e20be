// The OpenTelemetry SDK, loaded only when the environment asks for traces (src/telemetry/index.ts): a tracer
// provider with the OTLP/HTTP exporter behind a batch processor, the sampler OTEL_TRACES_SAMPLER names, the
// AsyncLocalStorage context manager and the W3C trace-context propagator.
import * as api from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
  type Sampler,
} from '@opentelemetry/sdk-trace';
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

/** A positive integer from the environment, or the default. */
function intFrom(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const n = Number(env[name]);
  return Number.isInteger(n) && n > 0 ? n : fallback;
}

export function createTracing(env: NodeJS.ProcessEnv): Tracing {
  const contextManager = new AsyncLocalStorageContextManager().enable();
  api.context.setGlobalContextManager(contextManager);
  const propagator = new W3CTraceContextPropagator();
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES are read by the resource's environment detector.
  const resource = defaultResource().merge(resourceFromAttributes({ 'service.name': env.OTEL_SERVICE_NAME?.trim() || SERVICE_NAME }));
  const provider = new TracerProvider({
    resource,
    sampler: samplerFromEnv(env),
    spanProcessors: [
      // The exporter reads OTEL_EXPORTER_OTLP_* itself (endpoint, headers, timeout).
      new BatchSpanProcessor({
        exporter: new OTLPTraceExporter(),
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

  const inSpan = <T>(name: string, attributes: api.Attributes, fn: (span: api.Span) => Promise<T>, opts: SpanOptions = {}): Promise<T> => {
    const parent = opts.parent ?? api.context.active();
    const parentSpan = api.trace.getSpan(parent);
    if (opts.requireParent && !parentSpan) return fn(api.trace.wrapSpanContext(api.INVALID_SPAN_CONTEXT));
    // Under a trace that is not sampled, nothing: every sampler OTEL_TRACES_SAMPLER names leaves the children
    // of an unsampled local parent unsampled (the parent-based ones by rule, traceidratio by the same trace
    // id, always_off always; always_on samples every server span), so no span object, id or context switch
    // is made for them. fn runs in the unsampled parent's context (switched to only when it is not already the
    // active one), so that the work beneath knows it too.
    if (parentSpan && !(parentSpan.spanContext().traceFlags & api.TraceFlags.SAMPLED)) {
      return opts.parent ? api.context.with(parent, fn, undefined, parentSpan) : fn(parentSpan);
    }
    const span = tracer.startSpan(
      name,
      { kind: opts.kind ?? api.SpanKind.INTERNAL, attributes, ...(opts.links ? { links: opts.links } : {}), ...(opts.startTime ? { startTime: opts.startTime } : {}) },
      parent,
    );
    let result: Promise<T>;
    try {
      result = api.context.with(api.trace.setSpan(parent, span), fn, undefined, span);
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

  return {
    api,
    tracer,
    inSpan,
    traceparent(ctx = api.context.active()) {
      const span = api.trace.getSpan(ctx);
      if (!span || !api.isSpanContextValid(span.spanContext())) return undefined;
      const carrier: Record<string, string> = {};
      propagator.inject(ctx, carrier, api.defaultTextMapSetter);
      return carrier.traceparent;
    },
    extract(traceparent, tracestate) {
      if (!traceparent) return undefined;
      const ctx = propagator.extract(api.ROOT_CONTEXT, { traceparent, ...(tracestate ? { tracestate } : {}) }, api.defaultTextMapGetter);
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

/** Marks a span with what ended it: a client's error (4xx) leaves its status unset, as the conventions say. */
function fail(span: api.Span, err: unknown): void {
  const { type, fault } = errorType(err);
  span.setAttribute('error.type', type);
  if (fault) span.setStatus({ code: api.SpanStatusCode.ERROR });
}
