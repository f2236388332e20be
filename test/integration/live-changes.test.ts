// Live administration under load: while requests flow, an operator creates a tenant, switches another's
// connector from the in-process mock to the REST core, and disables a third. No request of a tenant that
// was not disabled fails; each request to the switched tenant is answered by exactly one of its two cores.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildMockCore } from '../../connectors/mock-core/server.js';
import { PASSWORD, createTestApp, type TestApp } from '../helpers/app.js';

const FETCH_URL = '/credit-line-management/business-entity-manager/fetchLimit';
/** ENT-1001's limit in each core: the mock's fixtures, and the REST bank's after the test raised it. */
const MOCK_LIMIT = '50000.00';
const REST_LIMIT = '77777.00';
const WORKERS = 6;
const REQUESTS_PER_WORKER = 50;

let t: TestApp;
let core: FastifyInstance;
let coreBase: string;
let operator: string;
beforeAll(async () => {
  const mock = { connector: { id: 'mock', options: { fixtures: 'demo' } } };
  t = await createTestApp({ tenants: [{ id: 'steady', config: mock }, { id: 'switch', config: mock }, { id: 'doomed', config: mock }] });
  for (const id of ['steady', 'switch', 'doomed']) await t.app.cardline.users.add(id, 'reader', 'Read-Only', PASSWORD);
  core = buildMockCore({ fixtures: 'demo' });
  coreBase = await core.listen({ host: '127.0.0.1', port: 0 });
  const raised = await fetch(`${coreBase}/banks/switch/v1/entities/ENT-1001/credit-limit`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ amount: REST_LIMIT, allowDecrease: true }),
  });
  expect(raised.status).toBe(200);
  operator = await t.operatorKey('load-operator');
});
afterAll(async () => {
  await t.close();
  await core.close();
});

const login = async (tenant: string, username = 'reader', password = PASSWORD) => {
  const res = await t.inject({ method: 'POST', url: '/api/authenticate', headers: { TENANT: tenant }, payload: { username, password: await t.encrypt(password, tenant) } });
  expect(res.statusCode).toBe(200);
  return res.json().id_token as string;
};

interface Answer {
  tenant: string;
  status: number;
  limit?: string;
  /** Whether the request started after the change to its tenant had been answered. */
  afterChange: boolean;
}

describe('changes while requests flow', () => {
  it('creates, switches and disables tenants without failing a request of the others', async () => {
    const tokens = { steady: await login('steady'), switch: await login('switch'), doomed: await login('doomed') };
    const m = await t.management();
    const op = (method: 'POST' | 'PATCH', url: string, payload?: object) =>
      m.inject({ method, url, headers: { authorization: `Bearer ${operator}` }, ...(payload ? { payload } : {}) });
    const changed = { switch: false, doomed: false };
    const answers: Answer[] = [];

    const worker = async (w: number) => {
      for (let i = 0; i < REQUESTS_PER_WORKER; i++) {
        const tenant = (['steady', 'switch', 'doomed'] as const)[(w + i) % 3]!;
        const afterChange = tenant !== 'steady' && changed[tenant];
        const res = await t.inject({ method: 'POST', url: FETCH_URL, headers: { TENANT: tenant, authorization: `Bearer ${tokens[tenant]}` }, payload: { entityId: 'ENT-1001' } });
        answers.push({ tenant, status: res.statusCode, ...(res.statusCode === 200 ? { limit: res.json().result.creditLimit } : {}), afterChange });
      }
    };

    const changes = (async () => {
      // Let the load start, then change three tenants one after another.
      while (answers.length < 40) await new Promise((r) => setTimeout(r, 5));
      const created = await op('POST', '/v1/tenants', { id: 'newcomer', config: { connector: { id: 'mock', options: { fixtures: 'demo' } } } });
      expect(created.statusCode).toBe(201);
      while (answers.length < 110) await new Promise((r) => setTimeout(r, 5));
      // A merge patch: the mock's option is removed (null) as the REST core's is added.
      const switched = await op('PATCH', '/v1/tenants/switch', { config: { connector: { id: 'rest', options: { fixtures: null, baseUrl: `${coreBase}/banks/switch` } } } });
      expect(switched.statusCode, switched.body).toBe(200);
      changed.switch = true;
      while (answers.length < 190) await new Promise((r) => setTimeout(r, 5));
      expect((await op('POST', '/v1/tenants/doomed/disable')).statusCode).toBe(200);
      changed.doomed = true;
    })();

    await Promise.all([...Array.from({ length: WORKERS }, (_, w) => worker(w)), changes]);

    expect(answers).toHaveLength(WORKERS * REQUESTS_PER_WORKER);
    // Nothing failed for the tenants that stayed enabled.
    expect(answers.filter((a) => a.tenant !== 'doomed' && a.status !== 200)).toEqual([]);
    expect(answers.filter((a) => a.tenant === 'steady').every((a) => a.limit === MOCK_LIMIT)).toBe(true);
    // Each request to the switched tenant was answered by one core or the other, never a mix or an error;
    // every request that started after the switch was answered, by the new one.
    const switched = answers.filter((a) => a.tenant === 'switch');
    expect(switched.every((a) => a.limit === MOCK_LIMIT || a.limit === REST_LIMIT)).toBe(true);
    expect(switched.filter((a) => a.afterChange).every((a) => a.limit === REST_LIMIT)).toBe(true);
    expect(switched.some((a) => a.limit === MOCK_LIMIT)).toBe(true);
    expect(switched.some((a) => a.limit === REST_LIMIT)).toBe(true);
    // The disabled tenant: answered until it was disabled, then refused as unknown (401 in the envelope), never a 5xx.
    const doomed = answers.filter((a) => a.tenant === 'doomed');
    expect(doomed.filter((a) => a.afterChange).every((a) => a.status === 401)).toBe(true);
    expect(doomed.every((a) => a.status === 200 || a.status === 401)).toBe(true);
    expect(doomed.some((a) => a.status === 200)).toBe(true);

    // The new tenant answers at once: its first Admin logs in and reads.
    const m2 = await op('POST', '/v1/tenants/newcomer/users', { username: 'root', role: 'Admin', password: await t.encrypt('newcomer-root-1', 'newcomer') });
    expect(m2.statusCode).toBe(201);
    const root = await login('newcomer', 'root', 'newcomer-root-1');
    const read = await t.inject({ method: 'POST', url: FETCH_URL, headers: { TENANT: 'newcomer', authorization: `Bearer ${root}` }, payload: { entityId: 'ENT-1001' } });
    expect(read.json().result.creditLimit).toBe(MOCK_LIMIT);
    // The replaced mock instance was closed once its last call returned.
    expect(t.app.cardline.connectors.inFlight('switch')).toBe(0);
  }, 180_000);
});
