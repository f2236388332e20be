// The tracing bench's OTLP/HTTP receiver (bench/tracing.ts), in a process of its own so that its CPU is counted
// apart from the gateways' and from the load generator's event loop: it takes what an exporter POSTs to
// /v1/traces and counts the spans in it without decoding them (a collector's work is not the gateway's).
// GET /stats answers its span count, bytes received and CPU time (process.cpuUsage, µs).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const SPAN_START = Buffer.from('"startTimeUnixNano"');
let spans = 0;
let bytes = 0;
let posts = 0;

/** The length-delimited fields numbered `field` in buf[from, to) of a protobuf message, as [start, end) pairs. */
function fields(buf: Buffer, from: number, to: number, field: number): [number, number][] {
  const out: [number, number][] = [];
  const varint = (): number => {
    let n = 0;
    for (let shift = 0; ; shift += 7) {
      const b = buf[from++]!;
      n += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) return n;
    }
  };
  while (from < to) {
    const tag = varint();
    const wire = tag & 7;
    if (wire === 0) varint();
    else if (wire === 1) from += 8;
    else if (wire === 5) from += 4;
    else {
      const len = varint();
      if ((tag >>> 3) === field) out.push([from, from + len]);
      from += len;
    }
  }
  return out;
}

// ExportTraceServiceRequest.resource_spans (1) > ResourceSpans.scope_spans (2) > ScopeSpans.spans (2).
const protobufSpans = (body: Buffer): number =>
  fields(body, 0, body.length, 1)
    .flatMap(([a, b]) => fields(body, a, b, 2))
    .reduce((n, [a, b]) => n + fields(body, a, b, 2).length, 0);

const server = createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/stats') {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ spans, bytes, posts, cpu: process.cpuUsage() }));
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    if (req.url !== '/v1/traces') {
      res.writeHead(404).end();
      return;
    }
    const body = Buffer.concat(chunks);
    posts += 1;
    bytes += body.length;
    if (String(req.headers['content-type']).startsWith('application/x-protobuf')) spans += protobufSpans(body);
    // JSON's spans each carry one start time (a link carries a "spanId" too, but no time; an event's is timeUnixNano).
    else for (let i = body.indexOf(SPAN_START); i !== -1; i = body.indexOf(SPAN_START, i + SPAN_START.length)) spans += 1;
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ otlpSink: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })}\n`);
});
const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.stdin.on('end', stop);
process.stdin.resume();
