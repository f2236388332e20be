// The tracing bench's OTLP/HTTP receiver (bench/tracing.ts), in a process of its own so that its CPU is counted
// apart from the gateways' and from the load generator's event loop: it takes what an exporter POSTs to
// /v1/traces and counts the spans in it without parsing the body (a collector's work is not the gateway's).
// GET /stats answers its span count, bytes received and CPU time (process.cpuUsage, µs).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const SPAN_ID = Buffer.from('"spanId"');
let spans = 0;
let bytes = 0;
let posts = 0;

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
    // JSON's spans each carry one "spanId" key (links and parents use other keys); protobuf bodies are only counted.
    for (let i = body.indexOf(SPAN_ID); i !== -1; i = body.indexOf(SPAN_ID, i + SPAN_ID.length)) spans += 1;
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
