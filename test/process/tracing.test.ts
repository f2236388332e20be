// OpenTelemetry traces of a gateway process (issue 31): started with OTEL_EXPORTER_OTLP_ENDPOINT naming an OTLP/HTTP
// receiver of the test's own, it raises a limit on a REST core and fires a webhook. One trace holds the request
// (continuing the caller's traceparent), its steps, the core call, the store's statements, the audit group commit
// and the webhook's send; the core and the webhook receiver get the trace's context; the log lines name it; no
// attribute holds a secret. A tenant set to `traceContext: 'link'` starts a trace of its own, linked to the
// caller's. On the embedded store, or on PostgreSQL when DATABASE_URL is set.
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildMockCore } from '../../connectors/mock-core/server.js';
import { MasterKey } from '../../src/crypto/master-key.js';
import { LIMIT_URL, createTestDataDir, createTestDb, type TestDb } from '../helpers/app.js';
import { GatewayProcess } from '../helpers/gateway.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../helpers/otlp.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { BUILD_TIMEOUT_MS, ensureBuilt } from '../helpers/spawn.js';

beforeAll(ensureBuilt, BUILD_TIMEOUT_MS);

const PASSWORD = 'Tracing-Passw0rd-31-secret';
const OPERATOR_KEY = 'clop_tracing-test-operator-key-31';
const MASTER_KEY = MasterKey.generate();
const SERVER = 2;
const CLIENT = 3;
const PRODUCER = 4;

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

// CARDLINE_TRACING_CONTEXT=explicit (decision 0456): the same trace, every span given its parent without AsyncLocalStorage.
describe.each(['async', 'explicit'])('traces of a limit upgrade that reaches a REST core and fires a webhook (context %s)', (contextMode) => {
  let otlp: OtlpReceiver;
  let rx: Receiver;
  let core: FastifyInstance;
  const coreHeaders: IncomingHttpHeaders[] = [];
  let store: TestDb | undefined;
  let dataDir: string;
  let gw: GatewayProcess;

  beforeAll(async () => {
    otlp = await startOtlpReceiver();
    rx = await startReceiver();
    core = buildMockCore();
    core.addHook('onRequest', async (request) => {
      if (request.url.startsWith('/banks/')) coreHeaders.push(request.headers);
    });
    const coreBase = await core.listen({ host: '127.0.0.1', port: 0 });
    dataDir = await createTestDataDir('cardline-tracing-');
    const env: Record<string, string> = {
      CARDLINE_DATA_DIR: dataDir,
      CARDLINE_MASTER_KEY: MASTER_KEY,
      CARDLINE_DEMO_OPERATOR_KEY: OPERATOR_KEY,
      CARDLINE_DELIVERY_POLL_MS: '50',
      LOG_LEVEL: 'info',
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint,
      OTEL_SERVICE_NAME: 'cardline-tracing-test',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=tracing-test',
      OTEL_BSP_SCHEDULE_DELAY: '100',
      CARDLINE_TRACING_CONTEXT: contextMode,
    };
    if (process.env.DATABASE_URL) {
      store = await createTestDb();
      env.DATABASE_URL = store.url!;
    }
    gw = new GatewayProcess(env, PASSWORD);
    await gw.start();
    const patched = await fetch(`${gw.admin}/v1/tenants/demo`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${OPERATOR_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ config: { connector: { id: 'rest', options: { fixtures: null, baseUrl: `${coreBase}/banks/demo` } } } }),
    });
    expect(patched.status, await patched.text()).toBe(200);
  }, 300_000);

  afterAll(async () => {
    await gw?.kill();
    await core?.close();
    await rx?.close();
    await otlp?.close();
    await store?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  const upgrade = async (token: string, traceparent: string, amount: string) =>
    fetch(`${gw.base}${LIMIT_URL}`, {
      method: 'POST',
      headers: { TENANT: 'demo', authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': `trace-${hex(8)}`, traceparent },
      body: JSON.stringify({ entityId: 'ENT-1001', amount }),
    });

  it("continues the caller's trace through the steps, the core, the store, the audit commit and the webhook", async () => {
    const admin = await gw.token('admin');
    const created = await gw.call('POST', '/v1/admin/channels', admin, { type: 'webhook', url: `${rx.base}/traced`, eventTypes: ['credit-limit.upgraded'] });
    expect(created.status).toBe(201);
    const channelSecret = created.json.result.secret as string;
    const integration = await gw.token('integration');

    const callerTrace = hex(16);
    const callerSpan = hex(8);
    const res = await upgrade(integration, `00-${callerTrace}-${callerSpan}-01`, '61000.00');
    expect(res.status, await res.clone().text()).toBe(200);
    const requestId = res.headers.get('x-request-id')!;
    const [hook] = await rx.waitFor('/traced', 1, 120_000);

    const inTrace = (spans: ReceivedSpan[]) => spans.filter((s) => s.traceId === callerTrace);
    const spans = inTrace(
      await otlp.waitFor((all) => {
        const names = inTrace(all).map((s) => s.name);
        return [`POST ${LIMIT_URL}`, 'core upgradeLimit', 'audit group commit', 'send credit-limit.upgraded'].every((n) => names.includes(n));
      }),
    );
    const one = (name: string) => {
      const found = spans.filter((s) => s.name === name);
      expect(found, `${name} in ${spans.map((s) => s.name).join(', ')}`).toHaveLength(1);
      return found[0]!;
    };
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    const ancestors = (s: ReceivedSpan): string[] => {
      const names: string[] = [];
      for (let p = byId.get(s.parentSpanId); p; p = byId.get(p.parentSpanId)) names.push(p.name);
      return names;
    };

    // The server span continues the caller's span, and names the route, the tenant and the operation.
    const server = one(`POST ${LIMIT_URL}`);
    expect(server).toMatchObject({ parentSpanId: callerSpan, kind: SERVER, service: 'cardline-tracing-test' });
    // OTEL_RESOURCE_ATTRIBUTES reach the resource, beside the service's name.
    expect(otlp.bodies.join('')).toContain('{"key":"deployment.environment.name","value":{"stringValue":"tracing-test"}}');
    expect(server.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.route': LIMIT_URL,
      'http.response.status_code': 200,
      'cardline.tenant': 'demo',
      'cardline.operation': 'credit-limit.upgrade',
      'cardline.request_id': requestId,
    });
    // Each step that did work is a child of the server span.
    for (const step of ['auth', 'idempotency', 'operation']) expect(one(step).parentSpanId, step).toBe(server.spanId);
    const operation = one('operation');
    // The core call, under the operation, with its connector and breaker; the core got its context.
    const coreCall = one('core upgradeLimit');
    expect(coreCall).toMatchObject({ parentSpanId: operation.spanId, kind: CLIENT });
    expect(coreCall.attributes).toMatchObject({ 'cardline.connector': 'rest', 'cardline.core.operation': 'upgradeLimit', 'cardline.core.role': 'routed', 'cardline.core.breaker': 'closed' });
    const atCore = coreHeaders.filter((h) => h['x-request-id'] === requestId);
    expect(atCore.length).toBeGreaterThan(0);
    expect(atCore[0]!.traceparent).toBe(`00-${callerTrace}-${coreCall.spanId}-01`);
    // The store's statements, each under the work that ran it; the token check's and the key's among them.
    const statements = spans.filter((s) => s.attributes['db.system.name'] === (store ? 'postgresql' : 'pglite') && s.kind === CLIENT);
    expect(statements.length).toBeGreaterThan(0);
    for (const s of statements) expect(byId.has(s.parentSpanId), `${s.name} has a parent in the trace`).toBe(true);
    expect(statements.some((s) => ancestors(s).includes('idempotency'))).toBe(true);
    expect(statements.some((s) => ancestors(s).includes('auth'))).toBe(true);
    // The audit: the request's wait, and the group commit that served it (its statement under it).
    const audit = one('audit');
    expect(audit.parentSpanId).toBe(server.spanId);
    const commit = one('audit group commit');
    expect(commit.parentSpanId).toBe(audit.spanId);
    expect(commit.attributes['cardline.audit.records']).toBeGreaterThanOrEqual(1);
    expect(statements.some((s) => s.parentSpanId === commit.spanId && String(s.attributes['db.query.summary']).startsWith('cardline_audit_append'))).toBe(true);
    // The webhook's send continues the request's trace, and the receiver got the send's context.
    const send = one('send credit-limit.upgraded');
    expect(send).toMatchObject({ parentSpanId: server.spanId, kind: PRODUCER });
    expect(send.attributes).toMatchObject({ 'messaging.system': 'webhook', 'messaging.operation.type': 'send', 'http.response.status_code': 204, 'cardline.tenant': 'demo' });
    expect(hook!.headers.traceparent).toBe(`00-${callerTrace}-${send.spanId}-01`);

    // The request's log lines name its trace and its server span; X-Request-Id is as it was. The gateway writes
    // its lines in 4 kB or 100 ms batches (decision 0388): waited for until the line is out.
    const completed = () =>
      gw
        .proc!.output()
        .split('\n')
        .filter((l) => l.includes('"request completed"') && l.includes(requestId))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    await expect.poll(completed, { timeout: 60_000, interval: 50 }).toHaveLength(1);
    expect(completed()).toEqual([expect.objectContaining({ requestId, trace_id: callerTrace, span_id: server.spanId, status: 200 })]);

    // A scrape that asks for OpenMetrics gets the request's trace as its latency bucket's exemplar.
    const scraped = await fetch(`${gw.admin}/metrics`, { headers: { accept: 'application/openmetrics-text; version=1.0.0,text/plain;q=0.5' } });
    expect(scraped.headers.get('content-type')).toMatch(/^application\/openmetrics-text/);
    const om = await scraped.text();
    expect(om.trimEnd().endsWith('# EOF')).toBe(true);
    expect(om).toContain(`# {trace_id="${callerTrace}",span_id="${server.spanId}"}`);
    expect(om).toMatch(/^cardline_http_requests_total\{/m);
    // The Prometheus text is as it was, counters' names included.
    const text = await (await fetch(`${gw.admin}/metrics`)).text();
    expect(text).toMatch(/^cardline_http_requests_total\{/m);
    expect(text).not.toContain('trace_id');

    // No secret in any span: not the password, the tokens, the operator or master key, the webhook's secret.
    const exported = otlp.bodies.join('\n');
    for (const secret of [PASSWORD, integration, admin, OPERATOR_KEY, MASTER_KEY, channelSecret, 'eyJ']) expect(exported).not.toContain(secret);
  }, 300_000);

  it("starts a trace of its own, linked to the caller's, for a tenant set to traceContext 'link'", async () => {
    const patched = await fetch(`${gw.admin}/v1/tenants/demo`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${OPERATOR_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ config: { traceContext: 'link' } }),
    });
    expect(patched.status, await patched.text()).toBe(200);
    const integration = await gw.token('integration');
    const callerTrace = hex(16);
    const callerSpan = hex(8);
    const res = await upgrade(integration, `00-${callerTrace}-${callerSpan}-01`, '62000.00');
    expect(res.status).toBe(200);
    const requestId = res.headers.get('x-request-id')!;
    const isServer = (s: ReceivedSpan) => s.kind === SERVER && s.attributes['cardline.request_id'] === requestId;
    const server = (await otlp.waitFor((all) => all.some(isServer))).find(isServer)!;
    expect(server.traceId).not.toBe(callerTrace);
    expect(server.parentSpanId).toBe('');
    expect(server.links).toEqual([{ traceId: callerTrace, spanId: callerSpan }]);
    // Nothing of the gateway's joined the caller's trace.
    expect(otlp.spans.filter((s) => s.traceId === callerTrace)).toEqual([]);
  }, 300_000);
});
