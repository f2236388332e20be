// Whole request bodies as compact JWEs (Content-Type: application/jose) on the business routes: after
// decryption a route answers exactly as it does to the same plain JSON; every JWE failure is the one
// generic 400; a tenant's policy can refuse plain JSON on chosen routes.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { demoFixtures } from '../../connectors/mock/fixtures.js';
import type { MockCore } from '../../connectors/mock/index.js';
import { LIMIT_URL, PASSWORD, PROBLEM_BASE, UPGRADE_URL, createTestApp, type TestApp } from '../helpers/app.js';

const JOSE = { 'content-type': 'application/jose' };
const FETCH_URL = '/credit-line-management/business-entity-manager/fetchLimit';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({
    tenants: [
      {
        id: 'strict-bank',
        config: {
          connector: { id: 'mock', options: { fixtures: 'demo' } },
          encryption: {
            allowPlaintextPassword: false,
            requireEncryptedBody: ['PUT /v1/cards/upgrade/physical', '/credit-line-management/*'],
          },
        },
      },
    ],
  });
  await t.app.cardline.users.add('strict-bank', 'admin', 'Admin', PASSWORD);
});
afterAll(() => t.close());

beforeEach(async () => {
  for (const tenant of ['demo', 'strict-bank']) {
    const core = (await t.app.cardline.connectors.forTenant((await t.app.cardline.tenants.get(tenant))!)) as unknown as MockCore;
    Object.assign(core.state, demoFixtures());
  }
});

const encryptBody = (body: unknown, tenant = 'demo', opts = {}) =>
  t.encrypt(typeof body === 'string' ? body : JSON.stringify(body), tenant, opts);

async function send(method: 'POST' | 'PUT', url: string, body: string | object, opts: { tenant?: string; encrypted?: boolean } = {}) {
  const tenant = opts.tenant ?? 'demo';
  const headers = { TENANT: tenant, authorization: `Bearer ${await t.token('Admin', tenant)}` };
  if (opts.encrypted) return t.inject({ method, url, headers: { ...headers, ...JOSE }, payload: typeof body === 'string' ? body : await encryptBody(body, tenant) });
  return t.inject({ method, url, headers: { ...headers, 'content-type': 'application/json' }, payload: typeof body === 'string' ? body : JSON.stringify(body) });
}

const GENERIC_ENVELOPE = {
  result: null,
  exception: { errorCode: 'ERR_400', shortMessage: 'Bad Request', detailMessage: 'The encrypted payload could not be processed.' },
  pagination: null,
};
const GENERIC_PROBLEM = {
  type: `${PROBLEM_BASE}/problem-with-message`,
  title: 'Bad Request',
  status: 400,
  message: 'error.http.400',
  detail: 'The encrypted payload could not be processed.',
};

async function auditRows(action: string) {
  const r = await t.db.query<{ target: unknown; outcome: string; status: number }>(
    "SELECT target, outcome, status FROM audit_log WHERE tenant_id = 'demo' AND action = $1 ORDER BY seq",
    [action],
  );
  return r.rows;
}

describe('encrypted body on the credit-line route (envelope)', () => {
  it('raises the limit exactly as the plain body does, and the limit is applied', async () => {
    const encrypted = await send('POST', LIMIT_URL, { entityId: 'ENT-1001', amount: '75000.00' }, { encrypted: true });
    const plain = await send('POST', LIMIT_URL, { entityId: 'ENT-1002', amount: '75000.00' });
    expect([encrypted.statusCode, encrypted.json()]).toEqual([200, { result: true, exception: null, pagination: null }]);
    expect([encrypted.statusCode, encrypted.json()]).toEqual([plain.statusCode, plain.json()]);
    const read = await send('POST', FETCH_URL, { entityId: 'ENT-1001' }, { encrypted: true });
    expect(read.json()).toEqual({
      result: { entityId: 'ENT-1001', creditLimit: '75000.00', outstanding: '0.00', availableCredit: '75000.00' },
      exception: null,
      pagination: null,
    });
  });

  it('answers the same validation, business and strict-JSON errors as the plain body', async () => {
    const cases: (string | object)[] = [
      { entityId: 'ENT-1001', amount: 75000 },
      { entityId: 'ENT-1001' },
      { entityId: 'ENT-1001', amount: '2000000.00' },
      { entityId: 'ENT-1001', amount: '10.00' },
      '{"entityId":"ENT-1001","amount":"1.00","amount":"90000.00"}',
      'not json',
    ];
    for (const body of cases) {
      const plain = await send('POST', LIMIT_URL, body);
      const encrypted = await send('POST', LIMIT_URL, typeof body === 'string' ? await encryptBody(body) : body, { encrypted: true });
      expect(plain.statusCode).toBeGreaterThanOrEqual(400);
      expect([encrypted.statusCode, encrypted.json()], JSON.stringify(body)).toEqual([plain.statusCode, plain.json()]);
    }
  });

  it('records the same audit target for the encrypted request as for the plain one', async () => {
    await send('POST', LIMIT_URL, { entityId: 'ENT-1003', amount: '60000.00' }, { encrypted: true });
    await send('POST', LIMIT_URL, { entityId: 'ENT-1003', amount: '61000.00' });
    const rows = (await auditRows('credit-limit.upgrade')).filter((r) => JSON.stringify(r.target).includes('ENT-1003'));
    expect(rows).toEqual([
      { target: { entityId: 'ENT-1003' }, outcome: 'succeeded', status: 200 },
      { target: { entityId: 'ENT-1003' }, outcome: 'succeeded', status: 200 },
    ]);
  });
});

describe('encrypted body on the card route (problem)', () => {
  it('upgrades the card exactly as the plain body does', async () => {
    const body = (kitNo: string, entityId: string) => ({
      kitNo,
      entityId,
      communicationAddress: { address1: '1 Rua Augusta', city: 'Lisbon', state: 'Lisboa', country: 'PT', pin: '1100-053' },
      lockOnUpgrade: true,
    });
    const encrypted = await send('PUT', UPGRADE_URL, body('KIT-2001', 'ENT-1001'), { encrypted: true });
    const plain = await send('PUT', UPGRADE_URL, body('KIT-2002', 'ENT-1002'));
    expect([encrypted.statusCode, encrypted.json()]).toEqual([
      200,
      { result: { message: 'Card CARD-3001 upgraded to physical with kit KIT-2001; the card stays locked until it is activated' }, pagination: null },
    ]);
    expect(plain.json()).toEqual({
      result: { message: 'Card CARD-3002 upgraded to physical with kit KIT-2002; the card stays locked until it is activated' },
      pagination: null,
    });
  });

  it('answers the same validation and business problems as the plain body', async () => {
    const cases: object[] = [
      { entityId: 'ENT-1001' },
      { kitNo: '', entityId: 'ENT-1001', extra: true },
      { kitNo: 'KIT-2001', entityId: 'ENT-1001', communicationAddress: { city: 'Lisbon' } },
      { kitNo: 'KIT-9999', entityId: 'ENT-1002' },
    ];
    for (const body of cases) {
      const plain = await send('PUT', UPGRADE_URL, body);
      const encrypted = await send('PUT', UPGRADE_URL, body, { encrypted: true });
      expect(plain.statusCode).toBeGreaterThanOrEqual(400);
      expect([encrypted.statusCode, encrypted.json()], JSON.stringify(body)).toEqual([plain.statusCode, plain.json()]);
    }
  });
});

describe('JWE failures: one generic 400 in the route dialect', () => {
  const body = { entityId: 'ENT-1001', amount: '70000.00' };

  it('refuses a tampered, replayed, stale, future, wrong-key, unknown-kid or malformed JWE', async () => {
    const fresh = await encryptBody(body);
    const parts = fresh.split('.');
    const tag = parts[4]!;
    const tampered = [...parts.slice(0, 4), (tag[0] === 'A' ? 'B' : 'A') + tag.slice(1)].join('.');
    const replayed = await encryptBody(body);
    expect((await send('POST', LIMIT_URL, replayed, { encrypted: true })).statusCode).toBe(200);
    const now = Math.floor(Date.now() / 1000);
    const failures: Record<string, string> = {
      tampered,
      replayed,
      // Well outside ±300 s: the requests below are sent seconds after `now` on a loaded machine.
      stale: await encryptBody(body, 'demo', { iat: now - 330 }),
      future: await encryptBody(body, 'demo', { iat: now + 330 }),
      'other tenant key': await encryptBody(body, 'demo-b'),
      'unknown kid': await (async () => {
        const key = (await t.inject({ method: 'GET', url: '/api/keys', headers: { TENANT: 'demo' } })).json().keys[0];
        const { encryptCompact } = await import('../../src/crypto/jwe.js');
        return encryptCompact(JSON.stringify(body), { ...key, kid: 'no-such-kid' });
      })(),
      'not a JWE': '{"entityId":"ENT-1001","amount":"70000.00"}',
      empty: '',
    };
    for (const [name, jwe] of Object.entries(failures)) {
      const env = await send('POST', LIMIT_URL, jwe, { encrypted: true });
      expect([env.statusCode, env.json()], name).toEqual([400, GENERIC_ENVELOPE]);
    }
    const problem = await send('PUT', UPGRADE_URL, tampered, { encrypted: true });
    expect([problem.statusCode, problem.json()]).toEqual([400, GENERIC_PROBLEM]);
    const staleProblem = await send('PUT', UPGRADE_URL, await encryptBody({ kitNo: 'KIT-2001' }, 'demo', { iat: now - 400 }), { encrypted: true });
    expect([staleProblem.statusCode, staleProblem.json()]).toEqual([400, GENERIC_PROBLEM]);
  });

  it('checks the token before reading the body: no token → 401, whatever the JWE', async () => {
    const res = await t.inject({ method: 'POST', url: LIMIT_URL, headers: { TENANT: 'demo', ...JOSE }, payload: 'garbage' });
    expect(res.statusCode).toBe(401);
    expect(res.json().exception.errorCode).toBe('ERR_401');
  });
});

describe('tenant policy: encryption.requireEncryptedBody', () => {
  it('refuses plain JSON on a listed route with a detail that says how to fix it, in the route dialect', async () => {
    const envelope = await send('POST', LIMIT_URL, { entityId: 'ENT-1001', amount: '75000.00' }, { tenant: 'strict-bank' });
    expect([envelope.statusCode, envelope.json()]).toEqual([
      400,
      {
        result: null,
        exception: {
          errorCode: 'ERR_400',
          shortMessage: 'Bad Request',
          detailMessage: `This tenant requires the body of POST ${LIMIT_URL} to be encrypted: send it with Content-Type: application/jose, as a compact JWE (ECDH-ES+A256KW, A256GCM) to the tenant's key (GET /api/keys).`,
        },
        pagination: null,
      },
    ]);
    const problem = await send('PUT', UPGRADE_URL, { kitNo: 'KIT-2001', entityId: 'ENT-1001' }, { tenant: 'strict-bank' });
    expect([problem.statusCode, problem.json()]).toEqual([
      400,
      {
        type: `${PROBLEM_BASE}/problem-with-message`,
        title: 'Bad Request',
        status: 400,
        message: 'error.http.400',
        detail: `This tenant requires the body of PUT ${UPGRADE_URL} to be encrypted: send it with Content-Type: application/jose, as a compact JWE (ECDH-ES+A256KW, A256GCM) to the tenant's key (GET /api/keys).`,
      },
    ]);
    // The refusal changed nothing: the limit is still the fixture's.
    const read = await send('POST', FETCH_URL, { entityId: 'ENT-1001' }, { tenant: 'strict-bank', encrypted: true });
    expect(read.json().result).toEqual({ entityId: 'ENT-1001', creditLimit: '50000.00', outstanding: '0.00', availableCredit: '50000.00' });
  });

  it('accepts the same requests encrypted', async () => {
    const limit = await send('POST', LIMIT_URL, { entityId: 'ENT-1001', amount: '75000.00' }, { tenant: 'strict-bank', encrypted: true });
    expect([limit.statusCode, limit.json()]).toEqual([200, { result: true, exception: null, pagination: null }]);
    const card = await send('PUT', UPGRADE_URL, { kitNo: 'KIT-2001', entityId: 'ENT-1001' }, { tenant: 'strict-bank', encrypted: true });
    expect([card.statusCode, card.json()]).toEqual([200, { result: { message: 'Card CARD-3001 upgraded to physical with kit KIT-2001' }, pagination: null }]);
  });

  it('leaves routes outside the policy, and other tenants, accepting plain JSON', async () => {
    const other = await send('POST', '/card/activate', { cardId: 'CARD-3001' }, { tenant: 'strict-bank' });
    expect(other.json().detail).not.toMatch(/requires the body/);
    expect(other.statusCode).not.toBe(400);
    const demo = await send('POST', LIMIT_URL, { entityId: 'ENT-1001', amount: '75000.00' });
    expect(demo.statusCode).toBe(200);
  });

  it('refuses a policy entry that is not a route pattern when the tenant is configured', async () => {
    const { parseTenantConfig } = await import('../../src/services/tenancy/tenants.js');
    expect(() =>
      parseTenantConfig('x', { encryption: { allowPlaintextPassword: false, requireEncryptedBody: ['upgradeLimit'] } }),
    ).toThrow(/\/encryption\/requireEncryptedBody\/0/);
  });
});

describe('encrypted body on the authentication route', () => {
  it('logs in with a body encrypted as a whole: the password inside travelled encrypted', async () => {
    const res = await t.inject({
      method: 'POST',
      url: '/api/authenticate',
      headers: { TENANT: 'demo', ...JOSE },
      payload: await encryptBody({ username: 'viewer', password: PASSWORD }),
    });
    expect(res.statusCode).toBe(200);
    expect(Object.keys(res.json())).toEqual(['id_token']);
  });
});
