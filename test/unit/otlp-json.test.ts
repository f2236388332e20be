// The OTLP/JSON span encoder (decision 0451): the same spans, sent by the SDK's own JSON exporter and by ours,
// decode to the same document; http/protobuf keeps the SDK's exporter.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as api from '@opentelemetry/api';
import { TraceState } from '@opentelemetry/core';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { TracerProvider, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { nanos } from '../../src/telemetry/otlp-json.js';
import { exporterFromEnv, jsonExporter } from '../../src/telemetry/sdk.js';

/** A receiver keeping each POST's path, content type and body. */
const posts: { url: string; type: string; body: Buffer }[] = [];
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    posts.push({ url: req.url ?? '', type: String(req.headers['content-type']), body: Buffer.concat(chunks) });
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
});
let endpoint = '';
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** Spans of every shape the encoder writes, ended and kept. */
function makeSpans(): ReadableSpan[] {
  const ended: ReadableSpan[] = [];
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'cardline-test', 'host.ids': ['a', 'b'] }, { schemaUrl: 'https://opentelemetry.io/schemas/1.30.0' }),
    spanProcessors: [{ onStart() {}, onEnd: (s) => void ended.push(s), forceFlush: async () => {}, shutdown: async () => {} }],
  });
  const tracer = provider.getTracer('cardline');
  const other = provider.getTracer('other-scope', '1.2.3', { schemaUrl: 'https://example.test/schema' });
  const remote = api.trace.setSpanContext(api.ROOT_CONTEXT, {
    traceId: '0af7651916cd43dd8448eb211c80319c',
    spanId: 'b7ad6b7169203331',
    traceFlags: 1,
    isRemote: true,
    traceState: new TraceState('vendor=a,other=b'),
  });
  const server = tracer.startSpan('POST /x', {
    kind: api.SpanKind.SERVER,
    startTime: [1_764_400_000, 5],
    attributes: { s: 'plain', q: 'quote " back \\ new\nline \u2028 é ✓ 𝄞', i: 42, neg: -7, big: 2 ** 53, d: 0.25, inf: Infinity, t: true, f: false, arr: ['x', 'y'], nums: [1, 2.5], bools: [true] },
    links: [{ context: { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: 0, isRemote: true }, attributes: { 'cardline.link': 'caller' } }, { context: { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b8', traceFlags: 1 } }],
  }, remote);
  server.addEvent('retry', { attempt: 2 }, [1_764_400_000, 999_999_999]);
  server.addEvent('plain');
  server.setStatus({ code: api.SpanStatusCode.ERROR, message: 'core "down"' });
  const ctx = api.trace.setSpan(remote, server);
  // The same key again, with the same value and with another (the encoder keeps the last pair per key).
  tracer.startSpan('auth', { attributes: { s: 'plain', i: 43, t: true } }, ctx).end();
  other.startSpan('SELECT', { kind: api.SpanKind.CLIENT, attributes: { 'db.query.text': 'SELECT 1' } }, ctx).end([1_764_400_001, 0]);
  tracer.startSpan('root of its own', { kind: api.SpanKind.PRODUCER, startTime: [0, 12] }).end([0, 13]);
  server.end();
  return ended;
}

/** The body of each POST to /v1/traces after `from`, decoded. */
const docs = (from: number) => posts.slice(from).filter((p) => p.url === '/v1/traces').map((p) => JSON.parse(p.body.toString('utf8')) as unknown);

describe('the OTLP/JSON encoder', () => {
  it('encodes the same spans to the document the SDK’s JSON exporter sends', async () => {
    const spans = makeSpans();
    const from = posts.length;
    const official = new JsonExporter({ url: `${endpoint}/v1/traces` });
    await new Promise((resolve) => official.export(spans, resolve));
    const ours = jsonExporter({ url: `${endpoint}/v1/traces` });
    await new Promise((resolve) => ours.export(spans, resolve));
    // Twice: the second time from the encoder's kept attribute pairs and its grown buffer.
    await new Promise((resolve) => ours.export(spans, resolve));
    await ours.shutdown();
    await official.shutdown();
    const [theirs, mine, again] = docs(from);
    expect(posts.slice(from).map((p) => p.type)).toEqual(['application/json', 'application/json', 'application/json']);
    expect(JSON.stringify(theirs)).toContain('𝄞');
    expect(mine).toEqual(theirs);
    expect(again).toEqual(theirs);
  });

  it('writes an HrTime as the SDK does: nanoseconds as a decimal string', () => {
    expect([nanos([0, 0]), nanos([0, 12]), nanos([1, 5]), nanos([1_764_400_000, 123_456_789]), nanos([1_764_400_000.9, 1.7])]).toEqual(['0', '12', '1000000005', '1764400000123456789', '1764400000000000001']);
    // An HrTime given as such is kept as given: nanoseconds of a second or more, or before 1970.
    expect([nanos([1, 1_000_000_000]), nanos([1_764_400_000, 1_500_000_000]), nanos([-1, -500_000_000]), nanos([-2, 5])]).toEqual(['2000000000', '1764400001500000000', '-1500000000', '-1999999995']);
  });

  it('edge values as the SDK sends them: arrays with holes, and times given as an HrTime not normalized', async () => {
    const ended: ReadableSpan[] = [];
    const provider = new TracerProvider({ spanProcessors: [{ onStart() {}, onEnd: (s) => void ended.push(s), forceFlush: async () => {}, shutdown: async () => {} }] });
    const holes: (number | undefined)[] = [1];
    holes[2] = 3;
    const span = provider.getTracer('cardline').startSpan('edges', { startTime: [1_764_400_000, 1_000_000_000], attributes: { holes, empty: new Array<string>(2) } });
    span.addEvent('before 1970', [-1, -500_000_000]);
    span.end([1_764_400_001, 1_500_000_000]);
    const from = posts.length;
    for (const exporter of [new JsonExporter({ url: `${endpoint}/v1/traces` }), jsonExporter({ url: `${endpoint}/v1/traces` })]) {
      await new Promise((resolve) => exporter.export(ended, resolve));
      await exporter.shutdown();
    }
    const [theirs, mine] = docs(from);
    expect(mine).toEqual(theirs);
  });
});

describe('the protocol OTEL_EXPORTER_OTLP_PROTOCOL names', () => {
  it.each([
    [{}, 'json'],
    [{ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' }, 'protobuf'],
    [{ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json' }, 'json'],
  ])('%j', (env, kind) => {
    expect(exporterFromEnv(env) instanceof ProtobufExporter ? 'protobuf' : 'json').toBe(kind);
  });

  it('grpc is refused by name', () => {
    expect(() => exporterFromEnv({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(/'grpc' is not one of http\/protobuf, http\/json/);
  });

  it('http/protobuf still sends protobuf, with the SDK’s exporter', async () => {
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = endpoint;
    const from = posts.length;
    try {
      const exporter = exporterFromEnv({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' });
      await new Promise((resolve) => exporter.export(makeSpans(), resolve));
      await exporter.shutdown();
    } finally {
      delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    }
    expect(posts.slice(from).map((p) => [p.url, p.type])).toEqual([['/v1/traces', 'application/x-protobuf']]);
    expect(posts.at(-1)!.body.includes('0af7651916cd43dd8448eb211c80319c')).toBe(false);
    expect(posts.at(-1)!.body.includes(Buffer.from('0af7651916cd43dd8448eb211c80319c', 'hex'))).toBe(true);
  });
});
