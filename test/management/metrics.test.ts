// GET /metrics on the management listener: Prometheus text with the requests, connector calls, audit batches,
// outbox depth, logins and Node's own series; a tenant label that can be switched off.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMIT_URL, createTestApp, type TestApp } from '../helpers/app.js';

/** The value of one series, by its exact name and labels as Prometheus prints them. */
const sample = (text: string, series: string): number | undefined => {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};

describe('GET /metrics', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
    const h = { TENANT: 'demo', authorization: `Bearer ${await t.token('Admin')}` };
    await t.inject({ method: 'POST', url: LIMIT_URL, headers: h, payload: { entityId: 'ENT-1001', amount: '60000.00' } });
    await t.inject({ method: 'POST', url: LIMIT_URL, headers: h, payload: { entityId: 'ENT-9999', amount: '60000.00' } });  // ENTITY_NOT_FOUND: 404 in the envelope
    await t.inject({ method: 'POST', url: '/api/authenticate', headers: { TENANT: 'demo' }, payload: { username: 'ops', password: await t.encrypt('not-the-password') } });
  });
  afterAll(() => t.close());

  it('answers Prometheus text without an operator key', async () => {
    const res = await (await t.management()).inject({ method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = res.body;
    // Requests by route pattern, method and status, per tenant; their latency.
    expect(sample(text, `cardline_http_requests_total{route="${LIMIT_URL}",method="POST",status="200",tenant="demo"}`)).toBe(1);
    expect(sample(text, `cardline_http_requests_total{route="${LIMIT_URL}",method="POST",status="404",tenant="demo"}`)).toBe(1);
    expect(sample(text, `cardline_http_request_duration_seconds_count{route="${LIMIT_URL}",method="POST",status="200",tenant="demo"}`)).toBe(1);
    // Connector calls by outcome, and their latency.
    expect(sample(text, 'cardline_connector_calls_total{connector="mock",operation="upgradeLimit",outcome="succeeded",tenant="demo"}')).toBe(1);
    expect(sample(text, 'cardline_connector_calls_total{connector="mock",operation="upgradeLimit",outcome="business",tenant="demo"}')).toBe(1);
    expect(sample(text, 'cardline_connector_call_duration_seconds_count{connector="mock",operation="upgradeLimit",tenant="demo"}')).toBe(2);
    // Audit batches, the outbox, logins, and Node's defaults.
    expect(sample(text, 'cardline_audit_batch_records_count')).toBeGreaterThan(0);
    expect(sample(text, 'cardline_audit_commit_seconds_count')).toBeGreaterThan(0);
    // The demo tenant has no channel: its events are written done, so nothing waits (issue 21, point 3).
    expect(sample(text, 'cardline_outbox_pending')).toBe(0);
    expect(sample(text, 'cardline_login_failures_total{tenant="demo"}')).toBe(1);
    expect(text).toMatch(/^cardline_process_cpu_seconds_total /m);
    expect(text).toMatch(/^cardline_nodejs_eventloop_lag_seconds /m);
    // No concrete URL, token or card number ever becomes a label.
    expect(text).not.toMatch(/ENT-1001|eyJ|4000000000/);
  });
});

describe('GET /metrics without the tenant label', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { CARDLINE_METRICS_TENANT_LABEL: '0' } });
    const h = { TENANT: 'demo', authorization: `Bearer ${await t.token('Admin')}` };
    await t.inject({ method: 'POST', url: LIMIT_URL, headers: h, payload: { entityId: 'ENT-1001', amount: '60000.00' } });
  });
  afterAll(() => t.close());

  it('keeps one series per route and status for all tenants', async () => {
    const text = (await (await t.management()).inject({ method: 'GET', url: '/metrics' })).body;
    expect(sample(text, `cardline_http_requests_total{route="${LIMIT_URL}",method="POST",status="200"}`)).toBe(1);
    expect(sample(text, 'cardline_connector_calls_total{connector="mock",operation="upgradeLimit",outcome="succeeded"}')).toBe(1);
    expect(text).not.toContain('tenant="');
  });
});
