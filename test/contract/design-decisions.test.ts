// DESIGN §3 (and the §7 defaults it relies on), one test per decision, whole bodies.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { demoFixtures } from '../../connectors/mock/fixtures.js';
import { mockCoreOf, LIMIT_URL, PASSWORD, PROBLEM_BASE, UPGRADE_URL, createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const mockCore = (tenant = 'demo') => mockCoreOf(t, tenant);

beforeEach(async () => {
  for (const tenant of ['demo', 'demo-b']) Object.assign((await mockCore(tenant)).state, demoFixtures());
});

const TENANT_MISSING_DETAIL = 'Send the TENANT or X-TENANT-ID header with the identifier assigned at onboarding.';
/** A header that names no active tenant (unknown, malformed, disabled): status and code as when missing (issue 20, point 8). */
const TENANT_UNKNOWN_DETAIL = 'The tenant named by the TENANT or X-TENANT-ID header is unknown; send the identifier assigned at onboarding.';
const TENANT_CONFLICT_DETAIL = 'The TENANT and X-TENANT-ID headers name different tenants; send one, or the same value in both.';

const envelope = (status: number, shortMessage: string, detailMessage: string) => ({
  result: null,
  exception: { errorCode: `ERR_${status}`, shortMessage, detailMessage },
  pagination: null,
});

const problem = (status: number, title: string, message: string, detail: string, base = PROBLEM_BASE) => ({
  type: `${base}/problem-with-message`,
  title,
  status,
  message,
  detail,
});

const business = (status: number, title: string, businessCode: string, detail: string) => ({
  type: `${PROBLEM_BASE}/problem-with-message`,
  title,
  status,
  message: 'error.business',
  detail,
  businessCode,
});

const bearer = async (tenant = 'demo', role: Parameters<TestApp['token']>[0] = 'Admin') => `Bearer ${await t.token(role, tenant)}`;

type Response = Awaited<ReturnType<TestApp['inject']>>;

/**
 * Every route that needs a tenant. `prepare` fetches what the client holds beforehand (a token, an
 * encrypted password) for `tenant`, and returns a sender of a request that succeeds when the headers
 * resolve to that tenant.
 */
interface TenantRoute {
  name: string;
  dialect: 'envelope' | 'problem';
  prepare: (tenant: string) => Promise<(tenantHeaders: Record<string, string>) => Promise<Response>>;
}

const TENANT_ROUTES: TenantRoute[] = [
  {
    name: 'POST /api/authenticate',
    dialect: 'problem',
    prepare: async (tenant) => {
      const password = await t.encrypt(PASSWORD, tenant);
      return (headers) => t.inject({ method: 'POST', url: '/api/authenticate', headers, payload: { username: 'admin', password } });
    },
  },
  {
    name: 'GET /api/keys',
    dialect: 'problem',
    prepare: async () => (headers) => t.inject({ method: 'GET', url: '/api/keys', headers }),
  },
  {
    name: `POST ${LIMIT_URL}`,
    dialect: 'envelope',
    prepare: async (tenant) => {
      const authorization = await bearer(tenant);
      return (headers) =>
        t.inject({
          method: 'POST',
          url: LIMIT_URL,
          headers: { ...headers, authorization },
          payload: { entityId: 'ENT-1001', amount: '60000.00' },
        });
    },
  },
  {
    name: `PUT ${UPGRADE_URL}`,
    dialect: 'problem',
    prepare: async (tenant) => {
      const authorization = await bearer(tenant);
      return (headers) =>
        t.inject({
          method: 'PUT',
          url: UPGRADE_URL,
          headers: { ...headers, authorization },
          payload: { kitNo: 'KIT-2001', entityId: 'ENT-1001', communicationAddress: { usePrimaryAddress: true } },
        });
    },
  },
];

/** Sends with demo-b disabled, restoring it afterwards. */
async function whileDisabled<T>(fn: () => Promise<T>): Promise<T> {
  await t.app.cardline.tenants.setStatus('demo-b', 'disabled');
  try {
    return await fn();
  } finally {
    await t.app.cardline.tenants.setStatus('demo-b', 'active');
  }
}

describe('tenant header', () => {
  const byHeader = TENANT_ROUTES.flatMap((route) => ['TENANT', 'X-TENANT-ID'].map((header) => ({ ...route, header })));

  it.each(byHeader)('$name accepts $header alone', async ({ prepare, header }) => {
    const res = await (await prepare('demo'))({ [header]: 'demo' });
    expect(res.statusCode).toBe(200);
  });

  it.each(TENANT_ROUTES)('$name accepts both headers when they are equal', async ({ prepare }) => {
    const res = await (await prepare('demo'))({ TENANT: 'demo', 'X-TENANT-ID': 'demo' });
    expect(res.statusCode).toBe(200);
  });

  it('the header chooses the tenant: X-TENANT-ID demo-b reaches demo-b data only', async () => {
    const res = await (await TENANT_ROUTES[2]!.prepare('demo-b'))({ 'X-TENANT-ID': 'demo-b' });
    expect(res.statusCode).toBe(200);
    expect((await mockCore('demo-b')).state.entities.get('ENT-1001')?.creditLimitMinor).toBe(6_000_000n);
    expect((await mockCore('demo')).state.entities.get('ENT-1001')?.creditLimitMinor).toBe(5_000_000n);
  });

  it.each(TENANT_ROUTES)('$name: both headers, different → 400 in the route dialect', async ({ prepare, dialect }) => {
    const res = await (await prepare('demo'))({ TENANT: 'demo', 'X-TENANT-ID': 'demo-b' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(
      dialect === 'envelope'
        ? envelope(400, 'Bad Request', TENANT_CONFLICT_DETAIL)
        : problem(400, 'Bad Request', 'tenant.header.missing', TENANT_CONFLICT_DETAIL),
    );
  });

  const BAD_TENANTS: [string, Record<string, string>][] = [
    ['missing', {}],
    ['empty', { TENANT: '' }],
    ['blank', { 'X-TENANT-ID': '   ' }],
    ['unknown', { TENANT: 'no-such-bank' }],
    ['malformed', { TENANT: 'DEMO; drop table tenants' }],
    ['disabled', { TENANT: 'demo-b' }],
  ];
  const badCases = TENANT_ROUTES.flatMap((route) => BAD_TENANTS.map(([kind, headers]) => ({ ...route, kind, headers })));

  it.each(badCases)('$name: $kind tenant → 401 envelope on credit-line, 400 tenant.header.missing elsewhere', async ({ prepare, dialect, kind, headers }) => {
    // What the client holds is fetched while demo-b is still active: the refusal is the tenant's alone.
    const send = await prepare(kind === 'disabled' ? 'demo-b' : 'demo');
    const cores = [await mockCore('demo'), await mockCore('demo-b')];
    const before = cores.map((c) => structuredClone(c.state));
    const res = kind === 'disabled' ? await whileDisabled(() => send(headers)) : await send(headers);
    expect(res.statusCode).toBe(dialect === 'envelope' ? 401 : 400);
    const detail = ['missing', 'empty', 'blank'].includes(kind) ? TENANT_MISSING_DETAIL : TENANT_UNKNOWN_DETAIL;
    expect(res.json()).toEqual(
      dialect === 'envelope' ? envelope(401, 'Unauthorized', detail) : problem(400, 'Bad Request', 'tenant.header.missing', detail),
    );
    expect(cores.map((c) => c.state)).toEqual(before);
  });

  it('a disabled tenant is refused even with a token it issued, and works again once re-enabled', async () => {
    const send = await TENANT_ROUTES[2]!.prepare('demo-b');
    const refused = await whileDisabled(() => send({ TENANT: 'demo-b' }));
    expect(refused.statusCode).toBe(401);
    expect(refused.json()).toEqual(envelope(401, 'Unauthorized', TENANT_UNKNOWN_DETAIL));
    const accepted = await send({ TENANT: 'demo-b' });
    expect(accepted.statusCode).toBe(200);
    expect(accepted.json()).toEqual({ result: true, exception: null, pagination: null });
  });
});

describe('authentication', () => {
  it('is required on the credit-line route (the spec example omits it; DESIGN §3 does not)', async () => {
    const res = await t.inject({
      method: 'POST',
      url: LIMIT_URL,
      headers: { TENANT: 'demo' },
      payload: { entityId: 'ENT-1001', amount: '60000.00' },
    });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual(
      envelope(401, 'Unauthorized', 'A valid bearer token for this tenant is required; obtain one from POST /api/authenticate.'),
    );
    expect((await mockCore()).state.entities.get('ENT-1001')?.creditLimitMinor).toBe(5_000_000n);
  });

  it('is required on the card route', async () => {
    const res = await t.inject({ method: 'PUT', url: UPGRADE_URL, headers: { 'X-TENANT-ID': 'demo' }, payload: { kitNo: 'KIT-2001', entityId: 'ENT-1001' } });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual(
      problem(401, 'Unauthorized', 'error.http.401', 'A valid bearer token for this tenant is required; obtain one from POST /api/authenticate.'),
    );
  });

  it.each([
    ['/health/live', { status: 'ok' }],
    ['/health/ready', { status: 'ready', checks: { store: 'ok', migrations: 'ok' }, degraded: [] }],
  ])('exempt: GET %s needs no tenant header and no token (a tenant header there is ignored)', async (url, body) => {
    for (const headers of [{}, { TENANT: 'no-such-bank' }, { TENANT: 'demo', 'X-TENANT-ID': 'demo-b' }]) {
      const res = await t.inject({ method: 'GET', url, headers });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual(body);
    }
  });

  it('exempt: GET /.well-known/jwks.json needs no tenant header; it lists both demo tenants\' signing keys', async () => {
    const kids = [
      (await t.app.cardline.keys.forTenant('demo')).sig[0]!.kid,
      (await t.app.cardline.keys.forTenant('demo-b')).sig[0]!.kid,
    ];
    for (const headers of [{}, { TENANT: 'no-such-bank' }]) {
      const res = await t.inject({ method: 'GET', url: '/.well-known/jwks.json', headers });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({
        keys: kids.map((kid) => ({ kty: 'EC', crv: 'P-256', x: expect.any(String), y: expect.any(String), kid, use: 'sig', alg: 'ES256' })),
      });
    }
  });

  it('an unknown route → 404 problem, with or without a tenant header', async () => {
    for (const headers of [{}, { TENANT: 'demo' }]) {
      const res = await t.inject({ method: 'GET', url: '/v1/nowhere?x=1', headers });
      expect(res.statusCode).toBe(404);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.json()).toEqual(problem(404, 'Not Found', 'error.http.404', 'No route GET /v1/nowhere.'));
    }
  });

  it('a known path with the wrong method → 405 problem, Allow naming the method it answers', async () => {
    const res = await t.inject({ method: 'GET', url: UPGRADE_URL, headers: { 'X-TENANT-ID': 'demo' } });
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toBe('PUT');
    expect(res.json()).toEqual(problem(405, 'Method Not Allowed', 'error.http.405', `GET is not allowed on ${UPGRADE_URL}; it answers PUT.`));
  });
});

describe('which card an upgrade applies to', () => {
  const upgrade = async (payload: Record<string, unknown>, tenant = 'demo') =>
    t.inject({ method: 'PUT', url: UPGRADE_URL, headers: { 'X-TENANT-ID': tenant, authorization: await bearer(tenant) }, payload });

  it('a kit pre-allocated to an entity (KIT-2101 → ENT-1003) upgrades that entity\'s card without entityId', async () => {
    const res = await upgrade({ kitNo: 'KIT-2101' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ result: { message: 'Card CARD-3003 upgraded to physical with kit KIT-2101' }, pagination: null });
    const core = await mockCore();
    expect(core.state.cards.get('CARD-3003')).toMatchObject({ entityId: 'ENT-1003', form: 'PHYSICAL', kitNo: 'KIT-2101', state: 'ACTIVE' });
    expect(core.state.kits.get('KIT-2101')).toEqual({ kitNo: 'KIT-2101', allocatedTo: 'ENT-1003', mappedTo: 'CARD-3003' });
  });

  it('a free kit without entityId → 409 PPCUST_018', async () => {
    const res = await upgrade({ kitNo: 'KIT-2002' });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual(business(409, 'Invalid Kit', 'PPCUST_018', 'Kit KIT-2002 is not allocated to an entity; send entityId.'));
  });

  it('an unknown kit → 409 PPCUST_018', async () => {
    const res = await upgrade({ kitNo: 'KIT-0000', entityId: 'ENT-1001' });
    expect(res.json()).toEqual(business(409, 'Invalid Kit', 'PPCUST_018', 'Kit KIT-0000 is not known to the core.'));
  });

  it('a kit already mapped → 409 PPCUST_018', async () => {
    expect((await upgrade({ kitNo: 'KIT-2002', entityId: 'ENT-1002' })).statusCode).toBe(200);
    const res = await upgrade({ kitNo: 'KIT-2002', entityId: 'ENT-1001' });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual(business(409, 'Invalid Kit', 'PPCUST_018', 'Kit KIT-2002 is already mapped to a card.'));
    expect((await mockCore()).state.cards.get('CARD-3001')?.form).toBe('VIRTUAL');
  });

  it('a kit allocated to another entity (KIT-2101 with entityId ENT-1001) → 409 PPCUST_018', async () => {
    const core = await mockCore();
    const before = structuredClone(core.state);
    const res = await upgrade({ kitNo: 'KIT-2101', entityId: 'ENT-1001' });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual(business(409, 'Invalid Kit', 'PPCUST_018', 'Kit KIT-2101 is allocated to another entity.'));
    expect(core.state).toEqual(before);
  });

  it('an entity whose card is already physical → 409 CARD_NOT_VIRTUAL', async () => {
    expect((await upgrade({ kitNo: 'KIT-2001', entityId: 'ENT-1001' })).statusCode).toBe(200);
    const res = await upgrade({ kitNo: 'KIT-2003', entityId: 'ENT-1001' });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual(business(409, 'No Virtual Card', 'CARD_NOT_VIRTUAL', 'Entity ENT-1001 has no virtual card to upgrade.'));
    expect((await mockCore()).state.kits.get('KIT-2003')).toEqual({ kitNo: 'KIT-2003' });
  });
});

describe('card states on upgrade', () => {
  const upgrade = async (payload: Record<string, unknown>) =>
    t.inject({ method: 'PUT', url: UPGRADE_URL, headers: { 'X-TENANT-ID': 'demo', authorization: await bearer() }, payload });

  it('lockOnUpgrade true → PENDING_ACTIVATION, account and balance retained', async () => {
    const before = structuredClone((await mockCore()).state.cards.get('CARD-3001')!);
    const res = await upgrade({ kitNo: 'KIT-2001', entityId: 'ENT-1001', lockOnUpgrade: true });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      result: { message: 'Card CARD-3001 upgraded to physical with kit KIT-2001; the card stays locked until it is activated' },
      pagination: null,
    });
    const card = (await mockCore()).state.cards.get('CARD-3001')!;
    expect(card).toMatchObject({ cardId: 'CARD-3001', form: 'PHYSICAL', state: 'PENDING_ACTIVATION', fulfilment: 'ORDERED', kitNo: 'KIT-2001' });
    expect(card.pan).toBe(before.pan);
    expect(card.balanceMinor).toBe(before.balanceMinor);
    expect(card.balanceMinor).toBe(12_345n);
  });

  it('lockOnUpgrade omitted (default false) → ACTIVE, balance retained', async () => {
    const res = await upgrade({ kitNo: 'KIT-2002', entityId: 'ENT-1002' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ result: { message: 'Card CARD-3002 upgraded to physical with kit KIT-2002' }, pagination: null });
    const card = (await mockCore()).state.cards.get('CARD-3002')!;
    expect(card).toMatchObject({ form: 'PHYSICAL', state: 'ACTIVE', balanceMinor: 24_690n });
  });

  it('lockOnUpgrade false explicitly → ACTIVE', async () => {
    expect((await upgrade({ kitNo: 'KIT-2003', entityId: 'ENT-1003', lockOnUpgrade: false })).statusCode).toBe(200);
    expect((await mockCore()).state.cards.get('CARD-3003')?.state).toBe('ACTIVE');
  });

  it('plasticCodeDto and preferences are stored on the card', async () => {
    const plasticCodeDto = { code: 'PLT-GOLD', description: 'Gold metal' };
    const preferences = {
      domestic: { enabled: true, atm: { enabled: true, dailyLimit: '500.00', dailyCount: 5 }, pos: { enabled: true } },
      international: { enabled: false, ecom: { enabled: false, dailyLimit: '0' } },
    };
    const res = await upgrade({ kitNo: 'KIT-2001', entityId: 'ENT-1001', plasticCodeDto, preferences });
    expect(res.statusCode).toBe(200);
    const card = (await mockCore()).state.cards.get('CARD-3001')!;
    expect(card.plasticCode).toEqual(plasticCodeDto);
    expect(card.preferences).toEqual(preferences);
  });
});

describe('tenants are isolated', () => {
  it("upgrading ENT-1001 in demo leaves demo-b's ENT-1001 unchanged", async () => {
    const b = await mockCore('demo-b');
    const beforeB = structuredClone(b.state);
    const card = await t.inject({
      method: 'PUT',
      url: UPGRADE_URL,
      headers: { 'X-TENANT-ID': 'demo', authorization: await bearer() },
      payload: { kitNo: 'KIT-2001', entityId: 'ENT-1001' },
    });
    expect(card.statusCode).toBe(200);
    const limit = await t.inject({
      method: 'POST',
      url: LIMIT_URL,
      headers: { TENANT: 'demo', authorization: await bearer() },
      payload: { entityId: 'ENT-1001', amount: '90000.00' },
    });
    expect(limit.statusCode).toBe(200);
    const demo = await mockCore('demo');
    expect(demo).not.toBe(b);
    expect(demo.state.cards.get('CARD-3001')?.form).toBe('PHYSICAL');
    expect(demo.state.entities.get('ENT-1001')?.creditLimitMinor).toBe(9_000_000n);
    expect(b.state).toEqual(beforeB);
    expect(b.state.cards.get('CARD-3001')?.form).toBe('VIRTUAL');
    expect(b.state.kits.get('KIT-2001')).toEqual({ kitNo: 'KIT-2001' });
    expect(b.state.entities.get('ENT-1001')?.creditLimitMinor).toBe(5_000_000n);
  });
});

describe('money', () => {
  it('is never a float: limits are stored as bigint minor units, exactly', async () => {
    for (const [amount, minor] of [
      ['123456.78', 12_345_678n],
      ['123456.79', 12_345_679n],
      ['999999.99', 99_999_999n],
    ] as const) {
      const res = await t.inject({
        method: 'POST',
        url: LIMIT_URL,
        headers: { TENANT: 'demo', authorization: await bearer() },
        payload: { entityId: 'ENT-1002', amount },
      });
      expect(res.statusCode).toBe(200);
      const stored = (await mockCore()).state.entities.get('ENT-1002')!.creditLimitMinor;
      expect(typeof stored).toBe('bigint');
      expect(stored).toBe(minor);
    }
    for (const card of (await mockCore()).state.cards.values()) expect(typeof card.balanceMinor).toBe('bigint');
  });

  it('an amount sent as a JSON number is refused, not converted', async () => {
    const res = await t.inject({
      method: 'POST',
      url: LIMIT_URL,
      headers: { TENANT: 'demo', authorization: await bearer(), 'content-type': 'application/json' },
      payload: '{"entityId":"ENT-1002","amount":60000.10}',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(envelope(400, 'Bad Request', 'amount has the wrong type: send a decimal string such as "75000.00", not a number'));
    expect((await mockCore()).state.entities.get('ENT-1002')?.creditLimitMinor).toBe(5_000_000n);
  });
});

describe('problem base URL', () => {
  it('defaults to the URIs existing clients already receive', async () => {
    const res = await t.inject({ method: 'GET', url: '/api/keys' });
    expect(res.json().type).toBe('https://www.jhipster.tech/problem/problem-with-message');
  });

  describe('configured with CARDLINE_PROBLEM_BASE_URL', () => {
    const BASE = 'https://errors.example.com/p';
    let custom: TestApp;
    beforeAll(async () => {
      custom = await createTestApp({ env: { CARDLINE_PROBLEM_BASE_URL: BASE } });
    });
    afterAll(() => custom.close());

    it('is used in every problem type; the envelope is unaffected', async () => {
      const notFound = await custom.inject({ method: 'GET', url: '/nowhere' });
      expect(notFound.json()).toEqual(problem(404, 'Not Found', 'error.http.404', 'No route GET /nowhere.', BASE));

      const noTenant = await custom.inject({ method: 'GET', url: '/api/keys' });
      expect(noTenant.json()).toEqual(problem(400, 'Bad Request', 'tenant.header.missing', TENANT_MISSING_DETAIL, BASE));

      const invalid = await custom.inject({
        method: 'PUT',
        url: UPGRADE_URL,
        headers: { 'X-TENANT-ID': 'demo', authorization: `Bearer ${await custom.token('Admin')}` },
        payload: { kitNo: '' },
      });
      expect(invalid.statusCode).toBe(400);
      expect(invalid.json()).toEqual({
        type: `${BASE}/constraint-violation`,
        title: 'Method argument not valid',
        status: 400,
        message: 'error.validation',
        fieldErrors: [{ field: 'kitNo', message: 'NotBlank', objectName: 'physicalCardUpgradeRequest' }],
      });

      const kit = await custom.inject({
        method: 'PUT',
        url: UPGRADE_URL,
        headers: { 'X-TENANT-ID': 'demo', authorization: `Bearer ${await custom.token('Admin')}` },
        payload: { kitNo: 'KIT-0000', entityId: 'ENT-1001' },
      });
      expect(kit.json()).toEqual({ ...business(409, 'Invalid Kit', 'PPCUST_018', 'Kit KIT-0000 is not known to the core.'), type: `${BASE}/problem-with-message` });

      const env = await custom.inject({ method: 'POST', url: LIMIT_URL, payload: { entityId: 'ENT-1001', amount: '60000.00' } });
      expect(env.json()).toEqual(envelope(401, 'Unauthorized', TENANT_MISSING_DETAIL));
    });
  });
});
