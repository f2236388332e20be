// The export thread (decision 0413): posted spans, rebuilt as the SDK's ReadableSpan, through its batch processor
// and OTLP exporter; a flush or shutdown is answered once what it holds is exported.
import { parentPort, workerData } from 'node:worker_threads';
import type { Attributes, HrTime, Link, SpanContext } from '@opentelemetry/api';
import { TraceState } from '@opentelemetry/core';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { SPAN_FIELDS, type ExportWorkerData, type FromWorker, type ToWorker } from './export-thread.js';

const data = workerData as ExportWorkerData;
const resource = resourceFromAttributes(data.resource.attributes as Attributes);
const processor = new BatchSpanProcessor({ exporter: data.protocol === 'http/protobuf' ? new ProtobufExporter() : new JsonExporter(), ...data.batch });

const stateOf = (s: unknown) => (s == null ? undefined : new TraceState(s as string));
const NO_TIME: HrTime = [0, 0];
const opt = <T>(v: unknown): T | undefined => (v == null ? undefined : (v as T));

/** The spans of one posted batch, SPAN_FIELDS values each, in encodeSpan's order. */
function decodeSpans(f: unknown[]): ReadableSpan[] {
  const spans: ReadableSpan[] = [];
  for (let i = 0; i + SPAN_FIELDS <= f.length; i += SPAN_FIELDS) {
    const traceState = stateOf(f[i + 3]);
    const context: SpanContext = { traceId: f[i] as string, spanId: f[i + 1] as string, traceFlags: f[i + 2] as number, ...(traceState ? { traceState } : {}) };
    const parentSpanContext: SpanContext | undefined =
      f[i + 4] == null ? undefined : { traceId: context.traceId, spanId: f[i + 4] as string, traceFlags: opt<number>(f[i + 20]) ?? 0, isRemote: opt<boolean>(f[i + 5]) };
    const links: Link[] = f[i + 15]
      ? (f[i + 15] as unknown[][]).map((l) => {
          const state = stateOf(l[3]);
          return {
            context: { traceId: l[0] as string, spanId: l[1] as string, traceFlags: l[2] as number, isRemote: opt<boolean>(l[4]), ...(state ? { traceState: state } : {}) },
            attributes: opt<Attributes>(l[5]),
            droppedAttributesCount: opt<number>(l[6]),
          };
        })
      : [];
    const events = f[i + 16] ? (f[i + 16] as unknown[][]).map((e) => ({ name: e[0] as string, time: e[1] as HrTime, attributes: opt<Attributes>(e[2]), droppedAttributesCount: opt<number>(e[3]) })) : [];
    const message = opt<string>(f[i + 14]);
    spans.push({
      spanContext: () => context,
      parentSpanContext,
      name: f[i + 6] as string,
      kind: f[i + 7] as number,
      startTime: [f[i + 8] as number, f[i + 9] as number],
      endTime: [f[i + 10] as number, f[i + 11] as number],
      duration: NO_TIME,
      ended: true,
      attributes: f[i + 12] as Attributes,
      status: { code: f[i + 13] as number, ...(message === undefined ? {} : { message }) },
      links,
      events,
      droppedAttributesCount: f[i + 17] as number,
      droppedEventsCount: f[i + 18] as number,
      droppedLinksCount: f[i + 19] as number,
      resource,
      instrumentationScope: data.scope,
    });
  }
  return spans;
}

const port = parentPort!;
port.on('message', (m: ToWorker) => {
  if (typeof m === 'string') {
    for (const span of decodeSpans(JSON.parse(m) as unknown[])) processor.onEnd(span);
    return;
  }
  const id = 'flush' in m ? m.flush : m.shutdown;
  const done = () => port.postMessage({ done: id } satisfies FromWorker);
  if ('flush' in m) void processor.forceFlush().then(done, done);
  else void processor.shutdown().then(done, done);
});
port.postMessage({ ready: true } satisfies FromWorker);
