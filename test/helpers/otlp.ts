// An OTLP/HTTP receiver for the tests and the benchmark: a loopback server that takes what an OpenTelemetry
// exporter POSTs to /v1/traces (OTLP's JSON encoding, ids in hex) and keeps every span, flattened.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number; arrayValue?: { values: AnyValue[] } };
interface KeyValue {
  key: string;
  value: AnyValue;
}

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** OTLP's numbers: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, string | number | boolean | unknown[]>;
  links: { traceId: string; spanId: string }[];
  status: { code?: number };
  service: string;
}

const valueOf = (v: AnyValue): string | number | boolean | unknown[] => {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.doubleValue !== undefined) return v.doubleValue;
  return (v.arrayValue?.values ?? []).map(valueOf);
};
const attributesOf = (kvs: KeyValue[] | undefined) => Object.fromEntries((kvs ?? []).map((kv) => [kv.key, valueOf(kv.value)]));

export interface OtlpReceiver {
  /** The value for OTEL_EXPORTER_OTLP_ENDPOINT. */
  endpoint: string;
  spans: ReceivedSpan[];
  /** Every raw body received (the secrets check reads them whole). */
  bodies: string[];
  /** Resolves with the spans once `until` holds of them (or rejects after `ms`). */
  waitFor(until: (spans: ReceivedSpan[]) => boolean, ms?: number): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

/** `keep: false` only counts the spans (the benchmark), parsing nothing but their number. */
export async function startOtlpReceiver(opts: { keep?: boolean } = {}): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const bodies: string[] = [];
  const waiters = new Set<() => void>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      if (req.url !== '/v1/traces' || !String(req.headers['content-type']).startsWith('application/json')) {
        res.writeHead(415).end();
        return;
      }
      if (opts.keep === false) {
        spans.length += body.split('"spanId"').length - 1;
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        return;
      }
      bodies.push(body);
      const doc = JSON.parse(body) as {
        resourceSpans?: {
          resource?: { attributes?: KeyValue[] };
          scopeSpans?: { spans?: (Omit<ReceivedSpan, 'attributes' | 'links' | 'service' | 'status'> & { attributes?: KeyValue[]; links?: { traceId: string; spanId: string }[]; status?: { code?: number } })[] }[];
        }[];
      };
      for (const rs of doc.resourceSpans ?? []) {
        const service = String(attributesOf(rs.resource?.attributes)['service.name'] ?? '');
        for (const ss of rs.scopeSpans ?? []) {
          for (const s of ss.spans ?? []) {
            spans.push({
              traceId: s.traceId,
              spanId: s.spanId,
              parentSpanId: s.parentSpanId ?? '',
              name: s.name,
              kind: s.kind,
              attributes: attributesOf(s.attributes),
              links: (s.links ?? []).map((l) => ({ traceId: l.traceId, spanId: l.spanId })),
              status: s.status ?? {},
              service,
            });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      for (const w of waiters) w();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    bodies,
    waitFor: (until, ms = 120_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (!until(spans)) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(spans);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`the OTLP receiver did not get the spans awaited within ${ms} ms; it has: ${spans.map((s) => s.name).join(', ')}`));
        }, ms);
        waiters.add(check);
        check();
      }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
