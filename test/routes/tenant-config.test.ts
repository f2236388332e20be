// A tenant whose stored configuration became invalid is refused with 503 and listed as degraded; the
// other tenants are unaffected.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { LIMIT_URL, PROBLEM_BASE, createTestApp, supportDetail, type TestApp } from '../helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
  await t.db.query(`UPDATE tenants SET config = jsonb_set(config, '{tokenLifetimeSeconds}', '5') WHERE tenant_id = 'demo-b'`);
});
afterAll(() => t.close());

it('answers 503 in the route dialect for the broken tenant', async () => {
  const keys = await t.inject({ method: 'GET', url: '/api/keys', headers: { TENANT: 'demo-b' } });
  expect(keys.statusCode).toBe(503);
  expect(keys.json()).toEqual({
    type: `${PROBLEM_BASE}/problem-with-message`,
    title: 'Service Unavailable',
    status: 503,
    message: 'error.http.503',
    detail: supportDetail("The configuration of tenant 'demo-b' is invalid; an operator must correct it.", keys),
  });
  const limit = await t.inject({ method: 'POST', url: LIMIT_URL, headers: { TENANT: 'demo-b' }, payload: { entityId: 'ENT-1001', amount: '60000.00' } });
  expect(limit.statusCode).toBe(503);
  expect(limit.json().exception).toEqual({
    errorCode: 'ERR_503',
    shortMessage: 'Service Unavailable',
    detailMessage: supportDetail("The configuration of tenant 'demo-b' is invalid; an operator must correct it.", limit),
  });
});

it('keeps serving the other tenants', async () => {
  const res = await t.inject({
    method: 'POST',
    url: LIMIT_URL,
    headers: { TENANT: 'demo', authorization: `Bearer ${await t.token('Admin')}` },
    payload: { entityId: 'ENT-1002', amount: '60000.00' },
  });
  expect(res.json()).toEqual({ result: true, exception: null, pagination: null });
});

it('lists the tenant as degraded, naming the field', async () => {
  const res = await t.inject({ method: 'GET', url: '/health/ready' });
  expect(res.statusCode).toBe(200);
  expect(res.json().degraded).toEqual([
    { tenant: 'demo-b', reason: expect.stringMatching(/^Tenant 'demo-b' has an invalid configuration: \/tokenLifetimeSeconds: /) },
  ]);
});
