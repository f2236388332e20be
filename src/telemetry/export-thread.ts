// The span export on a thread of its own (decision 0413, opt-in): sampled spans posted as flat JSON records in
// batches to export-worker.ts, which runs the SDK's batch processor and OTLP exporter on them.
import { Worker } from 'node:worker_threads';
import type { Context, Link, SpanContext } from '@opentelemetry/api';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace';

/** Values per span in a posted batch (see encodeSpan; export-worker.ts decodes them in the same order). */
export const SPAN_FIELDS = 21;

/** What the worker is started with: the exporter's protocol, the batch processor's settings, the resource and scope. */
export interface ExportWorkerData {
  protocol: 'http/json' | 'http/protobuf';
  batch: { maxQueueSize: number; maxExportBatchSize: number; scheduledDelayMillis: number; exportTimeoutMillis: number };
  resource: { attributes: Record<string, unknown> };
  scope: { name: string; version?: string | undefined; schemaUrl?: string | undefined };
}

/** Main thread → worker: spans (a JSON array, SPAN_FIELDS values each), or a flush or shutdown to answer once exported. */
export type ToWorker = string | { flush: number } | { shutdown: number };
/** Worker → main thread. */
export type FromWorker = { ready: true } | { done: number };

const POST_EVERY = 128;
const POST_AFTER_MS = 50;

const linkOf = (l: Link): unknown[] => [l.context.traceId, l.context.spanId, l.context.traceFlags, l.context.traceState?.serialize(), l.context.isRemote, l.attributes, l.droppedAttributesCount];

/** Appends a span's fields to `out`, SPAN_FIELDS of them; JSON holds them (undefined comes back as null). */
export function encodeSpan(span: ReadableSpan, out: unknown[]): void {
  const sc: SpanContext = span.spanContext();
  const parent = span.parentSpanContext;
  out.push(
    sc.traceId,
    sc.spanId,
    sc.traceFlags,
    sc.traceState?.serialize(),
    parent?.spanId,
    parent?.isRemote,
    span.name,
    span.kind,
    span.startTime[0],
    span.startTime[1],
    span.endTime[0],
    span.endTime[1],
    span.attributes,
    span.status.code,
    span.status.message,
    span.links.length ? span.links.map(linkOf) : 0,
    span.events.length ? span.events.map((e) => [e.name, e.time, e.attributes, e.droppedAttributesCount]) : 0,
    span.droppedAttributesCount,
    span.droppedEventsCount,
    span.droppedLinksCount,
    parent?.traceFlags,
  );
}

/** The worker's module: the TypeScript source through tsx's loader under tsx/vitest, else the compiled file. */
function spawnWorker(data: ExportWorkerData): Worker {
  const self = import.meta.url;
  if (self.endsWith('.ts')) {
    const url = new URL('./export-worker.ts', self).href;
    const code = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(url)}); })`;
    return new Worker(code, { eval: true, workerData: data });
  }
  return new Worker(new URL('./export-worker.js', self), { workerData: data });
}

/** The span processor of the main thread: sampled spans to the export thread, in batches. */
export class ThreadSpanProcessor implements SpanProcessor {
  private readonly worker: Worker;
  private buffer: unknown[] = [];
  private count = 0;
  private timer: NodeJS.Timeout | undefined;
  private nextId = 1;
  private readonly waiting = new Map<number, () => void>();
  private stopped: Promise<void> | undefined;
  private failed = false;

  constructor(data: ExportWorkerData) {
    this.worker = spawnWorker(data);
    this.worker.unref();
    this.worker.on('message', (m: FromWorker) => {
      if ('done' in m) {
        this.waiting.get(m.done)?.();
        this.waiting.delete(m.done);
      }
    });
    // Tracing never takes the gateway down: a failed export thread drops spans from then on.
    const fail = () => {
      this.failed = true;
      for (const done of this.waiting.values()) done();
      this.waiting.clear();
    };
    this.worker.on('error', fail);
    this.worker.on('exit', fail);
  }

  onStart(_span: Span, _parentContext: Context): void {}

  onEnd(span: ReadableSpan): void {
    if (!(span.spanContext().traceFlags & 1) || this.stopped || this.failed) return;
    encodeSpan(span, this.buffer);
    if (++this.count >= POST_EVERY) this.post();
    else this.timer ??= setTimeout(() => this.post(), POST_AFTER_MS).unref();
  }

  private post(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.count || this.failed) return;
    const spans = this.buffer;
    this.buffer = [];
    this.count = 0;
    this.worker.postMessage(JSON.stringify(spans) satisfies ToWorker);
  }

  /** Posts what is buffered and a request; resolves when the worker has answered it (or has failed). */
  private ask(kind: 'flush' | 'shutdown'): Promise<void> {
    this.post();
    if (this.failed) return Promise.resolve();
    const id = this.nextId++;
    return new Promise<void>((resolve) => {
      this.waiting.set(id, resolve);
      this.worker.postMessage((kind === 'flush' ? { flush: id } : { shutdown: id }) satisfies ToWorker);
    });
  }

  forceFlush(): Promise<void> {
    return this.stopped ?? this.ask('flush');
  }

  shutdown(): Promise<void> {
    this.stopped ??= this.ask('shutdown').then(async () => {
      await this.worker.terminate();
    });
    return this.stopped;
  }
}
