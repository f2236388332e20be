// What the tracing handle offers (src/telemetry/sdk.ts makes it), shared by the switch and the SDK.
import type { Attributes, Context, Link, Span, SpanContext, SpanKind, Tracer } from '@opentelemetry/api';
import type * as Api from '@opentelemetry/api';
import { CardlineError } from '../errors.js';

export interface SpanOptions {
  kind?: SpanKind;
  /** The span's parent; by default the active context's span. */
  parent?: Context | undefined;
  links?: Link[];
  /** Made only under a span already (a statement outside any traced work is not a trace of its own). */
  requireParent?: boolean;
  startTime?: number;
}

export interface Tracing {
  readonly api: typeof Api;
  readonly tracer: Tracer;
  /** The root of the contexts tracing makes (src/telemetry/context.ts), in place of the API's ROOT_CONTEXT. */
  readonly root: Context;
  /**
   * Runs fn in a new span made current, ended when fn settles; an error marks it (never with its message).
   * Attributes given as a function are built only when a span is made.
   */
  inSpan<T>(name: string, attributes: Attributes | (() => Attributes), fn: (span: Span, ctx: Context) => Promise<T>, opts?: SpanOptions): Promise<T>;
  /** A request's server span; `attributes` is called only when the sampler keeps it. */
  serverSpan(name: string, parent: Context, opts: { links: Link[]; startTime: number }, attributes: () => Attributes): Span;
  /** The active context's span; fn run in ctx (as api.context, without its global look-up per call). */
  activeSpan(): Span | undefined;
  withContext<T>(ctx: Context, fn: () => T): T;
  /** The W3C `traceparent` of a context's span (the active one by default); undefined when it has none. */
  traceparent(ctx?: Context): string | undefined;
  /** The same for a span's context (no look-up of the active context). */
  traceparentOf(span: SpanContext): string | undefined;
  /** The context a `traceparent` (and its `tracestate`) header carries; undefined when malformed. */
  extract(traceparent: string | undefined, tracestate?: string | undefined): Context | undefined;
  /** Exports what is buffered (the test and a graceful shutdown wait for it). */
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

/** What an error says on a span: its catalogue code or its type, never its message (it may quote input). */
export function errorType(err: unknown): { type: string; fault: boolean } {
  if (err instanceof CardlineError) return { type: err.code, fault: err.init.status >= 500 };
  return { type: err instanceof Error ? err.name : typeof err, fault: true };
}
