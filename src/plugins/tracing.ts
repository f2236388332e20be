// The request's server span, registered only while tracing is on (src/telemetry/): made once the tenant is
// known, because the tenant decides whether a caller's `traceparent` is continued or only linked to
// (`traceContext`, decision 0312); ended with the answer. The steps that do work run in child spans (inStep).
import fp from 'fastify-plugin';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Attributes, Context, Link } from '@opentelemetry/api';
import { REQUEST_TRACE, tracing, type RequestTrace, type Tracing } from '../telemetry/index.js';

const headerOf = (v: string | string[] | undefined): string | undefined => (typeof v === 'string' ? v : undefined);

// A step's span is named by the step: no attribute repeats it (decision 0408).
const NO_ATTRIBUTES: Attributes = Object.freeze({});

/** Runs a pipeline step's work in a span of its own under the request's; as it is when tracing is off. */
export function inStep<T>(request: FastifyRequest, step: string, fn: () => Promise<T>, attributes?: Attributes): Promise<T> {
  const trace = request.ctx.trace;
  if (!trace) return fn();
  // An unsampled request's steps make no span: they run in its context (once per step, so that the work
  // beneath, the core call and the statements, knows the request is not sampled and makes none either).
  if (!trace.sampled) return tracing()!.withContext(trace.context, fn);
  const inStepContext = (_span: unknown, ctx: Context) => {
    trace.step = ctx;
    const ended = () => {
      if (trace.step === ctx) trace.step = trace.context;
    };
    try {
      return fn().finally(ended);
    } catch (err) {
      ended();
      throw err;
    }
  };
  return tracing()!.inSpan(step, attributes ?? NO_ATTRIBUTES, inStepContext, { parent: trace.context });
}

/** The request's server span, made at most once: with the caller's context as parent, or linked to it. */
function serverSpan(t: Tracing, request: FastifyRequest, reply: FastifyReply): RequestTrace {
  const ctx = request.ctx;
  if (ctx.trace) return ctx.trace;
  const { api } = t;
  const remote = t.extract(headerOf(request.headers.traceparent), headerOf(request.headers.tracestate));
  const continued = remote && ctx.tenant?.config.traceContext !== 'link';
  const parent: Context = continued ? remote : t.root;
  const links: Link[] = remote && !continued ? [{ context: api.trace.getSpanContext(remote)!, attributes: { 'cardline.link': 'caller' } }] : [];
  const route = request.routeOptions.url;
  const attributes = (): Attributes => {
    const a: Attributes = { 'http.request.method': request.method };
    if (route) a['http.route'] = route;
    a['url.scheme'] = request.protocol;
    if (ctx.tenant) a['cardline.tenant'] = ctx.tenant.id;
    const operation = request.routeOptions.config.operation;
    if (operation) a['cardline.operation'] = operation.id;
    a['cardline.request_id'] = request.id;
    return a;
  };
  const startTime = performance.timeOrigin + performance.now() - reply.elapsedTime;
  const span = t.serverSpan(`${request.method} ${route ?? 'unmatched'}`, parent, { links, startTime }, attributes);
  const context = api.trace.setSpan(parent, span);
  const trace = { span, context, sampled: (span.spanContext().traceFlags & api.TraceFlags.SAMPLED) !== 0, step: context };
  ctx.trace = trace;
  (request.raw as unknown as Record<symbol, RequestTrace>)[REQUEST_TRACE] = trace;
  return trace;
}

const tracingPlugin: FastifyPluginAsync = async (app) => {
  const t = tracing();
  if (!t) return;
  app.addHook('onRequest', (request, reply, done) => {
    serverSpan(t, request, reply);
    done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    // A request refused before the tenant was known gets its span now, from its start.
    const { span } = serverSpan(t, request, reply);
    span.setAttribute('http.response.status_code', reply.statusCode);
    if (reply.statusCode >= 500) {
      span.setAttribute('error.type', request.ctx.errorCode ?? String(reply.statusCode));
      span.setStatus({ code: t.api.SpanStatusCode.ERROR });
    }
    span.end();
    done();
  });
};

export default fp(tracingPlugin, { name: 'tracing', dependencies: ['request-context'] });
