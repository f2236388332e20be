// The gateway end to end with a tenant on the REST connector, talking to the mock core over loopback:
// both operations, a business refusal, and 504/502 when the core times out or fails.
import type { FastifyInstance } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildMockCore } from '../../connectors/mock-core/server.js';
import { LIMIT_URL, PASSWORD, PROBLEM_BASE, UPGRADE_URL, createTestApp, type TestApp } from '../helpers/app.js';

const TENANT = 'rest-bank';
let core: FastifyInstance;
let t: TestApp;

beforeAll(async () => {
  core = buildMockCore({ maxHoldMs: 5_000 });
  const base = await core.listen({ host: '127.0.0.1', port: 0 });
  t = await createTestApp({
    // Short enough to keep the timeout test fast; the happy paths answer in a few milliseconds.
    env: { CARDLINE_CONNECTOR_TIMEOUT_MS: '400' },
    tenants: [{ id: TENANT, config: { connector: { id: 'rest', options: { baseUrl: `${base}/banks/demo`, retries: { max: 1, baseDelayMs: 1, maxDelayMs: 5 } } } } }],
  });
  await t.app.cardline.users.add(TENANT, 'admin', 'Admin', PASSWORD);
});
afterAll(async () => {
  await t?.close();
  await core?.close();
});
afterEach(async () => {
  await core.inject({ method: 'PUT', url: '/__admin/faults', payload: {} });
});

const headers = async (extra: Record<string, string> = {}) => ({ TENANT, authorization: `Bearer ${await t.token('Admin', TENANT)}`, ...extra });
const coreEntity = async (entityId: string) => (await core.inject({ method: 'GET', url: `/banks/demo/v1/entities/${entityId}` })).json();

describe('a tenant on the REST connector', () => {
  it('upgrades a credit limit (spec 4.2) and the core holds the new limit', async () => {
    const res = await t.inject({ method: 'POST', url: LIMIT_URL, headers: await headers(), payload: { entityId: 'ENT-1001', amount: '75000.00' } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ result: true, exception: null, pagination: null });
    expect((await coreEntity('ENT-1001')).creditLimit).toBe('75000.00');
  });

  it('upgrades a virtual card to physical (spec 4.3)', async () => {
    const res = await t.inject({
      method: 'PUT',
      url: UPGRADE_URL,
      headers: await headers(),
      payload: { kitNo: 'KIT-2001', entityId: 'ENT-1001', communicationAddress: { usePrimaryAddress: true } },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ result: { message: 'Card CARD-3001 upgraded to physical with kit KIT-2001' }, pagination: null });
    expect((await coreEntity('ENT-1001')).cards[0]).toMatchObject({ form: 'PHYSICAL', kitNo: 'KIT-2001' });
  });

  it('refuses an unknown kit with 409 PPCUST_018', async () => {
    const res = await t.inject({ method: 'PUT', url: UPGRADE_URL, headers: await headers(), payload: { kitNo: 'KIT-9999', entityId: 'ENT-1002' } });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({
      type: `${PROBLEM_BASE}/problem-with-message`,
      title: 'Invalid Kit',
      status: 409,
      message: 'error.business',
      detail: 'Kit KIT-9999 is not known to the core.',
      businessCode: 'PPCUST_018',
    });
  });

  it('answers 504 when the core does not answer in time, and nothing is applied', async () => {
    await core.inject({ method: 'PUT', url: '/__admin/faults', payload: { timeoutRate: 1 } });
    const started = Date.now();
    const res = await t.inject({ method: 'POST', url: LIMIT_URL, headers: await headers(), payload: { entityId: 'ENT-1002', amount: '90000.00' } });
    expect(res.statusCode).toBe(504);
    expect(res.json()).toMatchObject({ result: null, exception: { errorCode: 'ERR_504' }, pagination: null });
    expect(Date.now() - started).toBeLessThan(60_000); // the deadline: the core never answers

    const upgrade = await t.inject({ method: 'PUT', url: UPGRADE_URL, headers: await headers(), payload: { kitNo: 'KIT-2002', entityId: 'ENT-1002' } });
    expect(upgrade.statusCode).toBe(504);
    expect(upgrade.json()).toMatchObject({ status: 504, type: `${PROBLEM_BASE}/problem-with-message` });

    await core.inject({ method: 'PUT', url: '/__admin/faults', payload: {} });
    expect(await coreEntity('ENT-1002')).toMatchObject({ creditLimit: '50000.00', cards: [{ form: 'VIRTUAL' }] });
  });

  it('answers 502 when the core fails, without internals in the body', async () => {
    await core.inject({ method: 'PUT', url: '/__admin/faults', payload: { errorRate: 1 } });
    const res = await t.inject({ method: 'POST', url: LIMIT_URL, headers: await headers(), payload: { entityId: 'ENT-1003', amount: '90000.00' } });
    expect(res.statusCode).toBe(502);
    expect(res.json()).toMatchObject({ result: null, exception: { errorCode: 'ERR_502' } });
    expect(res.body).not.toMatch(/127\.0\.0\.1|CORE_UNAVAILABLE/);
  });
});
