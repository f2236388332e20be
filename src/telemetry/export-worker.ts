// The export thread (decision 0413; started by export-thread.ts): spans the main thread posts, decoded into the
// SDK's ReadableSpan shape, go through the SDK's batch processor and OTLP/HTTP exporter as they did on the main
// thread. It answers a flush or a shutdown once what it holds is exported.
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

const stateOf = (s: string | undefined) => (s === undefined ? undefined : new TraceState(s));
const NO_TIME: HrTime = [0, 0];

/** The spans of one posted batch, SPAN_FIELDS values each, in encodeSpan's order. */
function decodeSpans(flat: unknown[]): ReadableSpan[] {
  const spans: ReadableSpan[] = [];
  for (let i = 0; i + SPAN_FIELDS <= flat.length; i += SPAN_FIELDS) {
    const f = flat.slice(i, i + SPAN_FIELDS);
    const context: SpanContext = { traceId: f[0] as string, spanId: f[1] as string, traceFlags: f[2] as number, ...(f[3] === undefined ? {} : { traceState: stateOf(f[3] as string)! }) };
    const parentSpanContext: SpanContext | undefined =
      f[4] === undefined ? undefined : { traceId: context.traceId, spanId: f[4] as string, traceFlags: (f[18] as number | undefined) ?? 0, isRemote: f[5] as boolean | undefined };
    const links: Link[] = f[13]
      ? (f[13] as unknown[][]).map((l) => ({
          context: { traceId: l[0] as string, spanId: l[1] as string, traceFlags: l[2] as number, isRemote: l[4] as boolean | undefined, ...(l[3] === undefined ? {} : { traceState: stateOf(l[3] as string)! }) },
          attributes: l[5] as Attributes | undefined,
          droppedAttributesCount: l[6] as number | undefined,
        }))
      : [];
    const events = f[14] ? (f[14] as unknown[][]).map((e) => ({ name: e[0] as string, time: e[1] as HrTime, attributes: e[2] as Attributes | undefined, droppedAttributesCount: e[3] as number | undefined })) : [];
    spans.push({
      spanContext: () => context,
      parentSpanContext,
      name: f[6] as string,
      kind: f[7] as number,
      startTime: f[8] as HrTime,
      endTime: f[9] as HrTime,
      duration: NO_TIME,
      ended: true,
      attributes: f[10] as Attributes,
      status: { code: f[11] as number, ...(f[12] === undefined ? {} : { message: f[12] as string }) },
      links,
      events,
      droppedAttributesCount: f[15] as number,
      droppedEventsCount: f[16] as number,
      droppedLinksCount: f[17] as number,
      resource,
      instrumentationScope: data.scope,
    });
  }
  return spans;
}

const port = parentPort!;
port.on('message', (m: ToWorker) => {
  if ('spans' in m) {
    for (const span of decodeSpans(m.spans)) processor.onEnd(span);
    return;
  }
  const id = 'flush' in m ? m.flush : m.shutdown;
  const done = () => port.postMessage({ done: id } satisfies FromWorker);
  if ('flush' in m) void processor.forceFlush().then(done, done);
  else void processor.shutdown().then(done, done);
});
port.postMessage({ ready: true } satisfies FromWorker);
