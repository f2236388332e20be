// Tracing a request: every answer names its request in X-Request-Id — successes, replays, every error — and a
// 5xx, which says nothing of its cause, carries the id in its detail for the client to quote to support.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConnectorTimeoutError, ConnectorUnavailableError } from '../../connectors/contract.js';
import { LIMIT_URL, createTestApp, type TestApp } from '../helpers/app.js';
import { problem } from '../helpers/problems.js';

let t: TestApp;
const restores: (() => void)[] = [];
beforeAll(async () => {
  t = await createTestApp({ tenants: [{ id: 'broken' }] });
  // A tenant whose stored configuration became invalid answers 503 (src/plugins/tenant.ts).
  await t.db.query(`UPDATE tenants SET config = jsonb_set(config, '{tokenLifetimeSeconds}', '5') WHERE tenant_id = 'broken'`);
});
afterAll(() => t?.close());
afterEach(() => {
  while (restores.length) restores.pop()!();
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const bearer = async () => ({ authorization: `Bearer ${await t.token('Admin')}` });

/** Makes the demo tenant's connector method throw (once per call) until the test ends. */
async function failing(method: 'upgradeLimit' | 'lockCard', error: () => Error) {
  const connector = (await t.app.cardline.connectors.forTenant((await t.app.cardline.tenants.get('demo'))!)) as unknown as Record<string, unknown>;
  const original = connector[method];
  connector[method] = async () => {
    throw error();
  };
  restores.push(() => (connector[method] = original));
}

const limit = async (requestId: string, tenant = 'demo') =>
  t.inject({ method: 'POST', url: LIMIT_URL, headers: { TENANT: tenant, 'x-request-id': requestId, ...(tenant === 'demo' ? await bearer() : {}) }, payload: { entityId: 'ENT-1001', amount: '60000.00' } });
const lock = async (requestId: string, tenant = 'demo') =>
  t.inject({ method: 'POST', url: '/v1/cards/CARD-3001/lock', headers: { TENANT: tenant, 'x-request-id': requestId, ...(tenant === 'demo' ? await bearer() : {}) } });

describe('X-Request-Id on every answer', () => {
  it.each([
    ['a success', async (id: string) => limit(id)],
    ['a validation failure', async (id: string) => t.inject({ method: 'POST', url: LIMIT_URL, headers: { TENANT: 'demo', 'x-request-id': id, ...(await bearer()) }, payload: {} })],
    ['a missing token', async (id: string) => t.inject({ method: 'GET', url: '/v1/cards/CARD-3001', headers: { TENANT: 'demo', 'x-request-id': id } })],
    ['a missing tenant', async (id: string) => t.inject({ method: 'GET', url: '/v1/cards/CARD-3001', headers: { 'x-request-id': id } })],
    ['a role refused', async (id: string) => t.inject({ method: 'GET', url: '/v1/audit', headers: { TENANT: 'demo', 'x-request-id': id, authorization: `Bearer ${await t.token('API Integration')}` } })],
    ['an unknown route', async (id: string) => t.inject({ method: 'GET', url: '/v1/nothing-here', headers: { 'x-request-id': id } })],
    ['an unsupported media type', async (id: string) => t.inject({ method: 'POST', url: LIMIT_URL, headers: { TENANT: 'demo', 'x-request-id': id, 'content-type': 'text/plain', ...(await bearer()) }, payload: 'x' })],
    ['a health probe', async (id: string) => t.inject({ method: 'GET', url: '/health/live', headers: { 'x-request-id': id } })],
    ['the OpenAPI document', async (id: string) => t.inject({ method: 'GET', url: '/openapi.json', headers: { 'x-request-id': id } })],
  ])('%s', async (_name, send) => {
    const res = await send('trace-every-answer');
    expect(res.headers['x-request-id']).toBe('trace-every-answer');
  });

  it('an idempotent replay names the retry, not the first request', async () => {
    const send = async (id: string) =>
      t.inject({ method: 'POST', url: LIMIT_URL, headers: { TENANT: 'demo', 'x-request-id': id, 'idempotency-key': 'trace-replay', ...(await bearer()) }, payload: { entityId: 'ENT-1002', amount: '61000.00' } });
    expect((await send('trace-first')).headers['x-request-id']).toBe('trace-first');
    const replay = await send('trace-retry');
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.headers['x-request-id']).toBe('trace-retry');
  });

  it('a replaced X-Request-Id is answered with the UUID the gateway gave the request (the one its record holds)', async () => {
    const res = await limit('4111-1111-1111-1111');
    const id = res.headers['x-request-id'];
    expect(id).toMatch(UUID);
    const r = await t.db.query("SELECT 1 FROM audit_log WHERE tenant_id = 'demo' AND request_id = $1", [id]);
    expect(r.rows).toHaveLength(1);
  });
});

describe('a 5xx quotes the request id', () => {
  const envelope = (status: number, shortMessage: string, detailMessage: string) => ({
    result: null,
    exception: { errorCode: `ERR_${status}`, shortMessage, detailMessage },
    pagination: null,
  });

  it.each([
    [500, 'Internal Server Error', 'An unexpected error occurred.', () => new Error('core exploded at /srv/core.js:12')],
    [502, 'Bad Gateway', 'The core-banking system is unavailable; retry later.', () => new ConnectorUnavailableError('down')],
    [504, 'Gateway Timeout', 'The core-banking system did not answer in time; the outcome is unknown, check before retrying.', () => new ConnectorTimeoutError('slow')],
  ])('%i in both dialects', async (status, reason, detail, error) => {
    await failing('upgradeLimit', error);
    await failing('lockCard', error);
    const e = await limit(`trace-${status}-envelope`);
    expect([e.statusCode, e.headers['x-request-id']]).toEqual([status, `trace-${status}-envelope`]);
    expect(e.json()).toEqual(envelope(status, reason, `${detail} Quote request id trace-${status}-envelope to support.`));
    const p = await lock(`trace-${status}-problem`);
    expect([p.statusCode, p.headers['x-request-id']]).toEqual([status, `trace-${status}-problem`]);
    expect(p.json()).toEqual(problem(status, reason, `${detail} Quote request id trace-${status}-problem to support.`));
  });

  it('503 in both dialects', async () => {
    const detail = "The configuration of tenant 'broken' is invalid; an operator must correct it.";
    const e = await limit('trace-503-envelope', 'broken');
    expect([e.statusCode, e.headers['x-request-id']]).toEqual([503, 'trace-503-envelope']);
    expect(e.json()).toEqual(envelope(503, 'Service Unavailable', `${detail} Quote request id trace-503-envelope to support.`));
    const p = await lock('trace-503-problem', 'broken');
    expect([p.statusCode, p.headers['x-request-id']]).toEqual([503, 'trace-503-problem']);
    expect(p.json()).toEqual(problem(503, 'Service Unavailable', `${detail} Quote request id trace-503-problem to support.`));
  });

  it('a 4xx does not (it says what to fix)', async () => {
    const res = await t.inject({ method: 'POST', url: LIMIT_URL, headers: { TENANT: 'demo', 'x-request-id': 'trace-4xx', ...(await bearer()) }, payload: { entityId: 'ENT-1001', amount: '10.00' } });
    expect(res.statusCode).toBe(400);
    expect(res.body).not.toContain('trace-4xx');
  });
});
