// The role matrix of DESIGN §3, every role × every business route, and the rule that no route can be
// registered without declaring who may call it.
import Fastify, { type RouteOptions } from 'fastify';
import fp from 'fastify-plugin';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { demoFixtures } from '../../connectors/mock/fixtures.js';
import type { MockCore } from '../../connectors/mock/index.js';
import { ROLES, type Role } from '../../schemas/common.js';
import cardlineApp, { serverOptions } from '../../src/app.js';
import { MasterKey } from '../../src/crypto/master-key.js';
import auth from '../../src/plugins/auth.js';
import { LIMIT_URL, PROBLEM_BASE, UPGRADE_URL, createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

async function mockCore(tenant = 'demo'): Promise<MockCore> {
  return (await t.app.cardline.connectors.forTenant((await t.app.cardline.tenants.get(tenant))!)) as MockCore;
}

beforeEach(async () => {
  const core = await mockCore();
  Object.assign(core.state, demoFixtures());
});

const forbiddenDetail = (role: Role) => `The role '${role}' may not call this operation.`;

interface RouteCase {
  name: string;
  method: 'POST' | 'PUT';
  url: string;
  headers: Record<string, string>;
  allowed: readonly Role[];
  /** A valid body, distinct per role so that each allowed call succeeds on fresh data. */
  body: (role: Role) => Record<string, unknown>;
  forbidden: (role: Role) => unknown;
  /** What the allowed call changed in the mock core. */
  effect: (core: MockCore) => unknown;
  expectedEffect: unknown;
}

const ROUTES: RouteCase[] = [
  {
    name: 'credit-line upgradeLimit',
    method: 'POST',
    url: LIMIT_URL,
    headers: { TENANT: 'demo' },
    allowed: ['Admin', 'API Integration'],
    body: () => ({ entityId: 'ENT-1002', amount: '65000.00' }),
    forbidden: (role) => ({
      result: null,
      exception: { errorCode: 'ERR_403', shortMessage: 'Forbidden', detailMessage: forbiddenDetail(role) },
      pagination: null,
    }),
    effect: (core) => core.state.entities.get('ENT-1002')?.creditLimitMinor,
    expectedEffect: 6_500_000n,
  },
  {
    name: 'card upgrade to physical',
    method: 'PUT',
    url: UPGRADE_URL,
    headers: { 'X-TENANT-ID': 'demo' },
    allowed: ['Admin', 'Operations', 'API Integration'],
    body: () => ({ kitNo: 'KIT-2002', entityId: 'ENT-1002', communicationAddress: { usePrimaryAddress: true } }),
    forbidden: (role) => ({
      type: `${PROBLEM_BASE}/problem-with-message`,
      title: 'Forbidden',
      status: 403,
      message: 'error.http.403',
      detail: forbiddenDetail(role),
    }),
    effect: (core) => {
      const card = core.state.cards.get('CARD-3002');
      return { form: card?.form, kitNo: card?.kitNo };
    },
    expectedEffect: { form: 'PHYSICAL', kitNo: 'KIT-2002' },
  },
];

const MATRIX = ROUTES.flatMap((route) =>
  ROLES.map((role) => ({ route: route.name, role, allowed: route.allowed.includes(role), spec: route })),
);

describe('the matrix covers every role and every business route', () => {
  it('has 4 roles × 2 routes, with the allowed sets of DESIGN §3', () => {
    expect(MATRIX.map((c) => `${c.route}/${c.role}/${c.allowed ? 'yes' : 'no'}`)).toEqual([
      'credit-line upgradeLimit/Admin/yes',
      'credit-line upgradeLimit/Operations/no',
      'credit-line upgradeLimit/API Integration/yes',
      'credit-line upgradeLimit/Read-Only/no',
      'card upgrade to physical/Admin/yes',
      'card upgrade to physical/Operations/yes',
      'card upgrade to physical/API Integration/yes',
      'card upgrade to physical/Read-Only/no',
    ]);
  });

  it('the tokens carry the role names exactly as the spec writes them', async () => {
    for (const role of ROLES) {
      const payload = JSON.parse(Buffer.from((await t.token(role)).split('.')[1]!, 'base64url').toString());
      expect(payload.role).toBe(role);
    }
  });
});

describe('role matrix', () => {
  it.each(MATRIX.filter((c) => !c.allowed))('$route × $role → 403 in the route dialect, nothing changes', async ({ role, spec }) => {
    const core = await mockCore();
    const before = structuredClone(core.state);
    const res = await t.inject({
      method: spec.method,
      url: spec.url,
      headers: { ...spec.headers, authorization: `Bearer ${await t.token(role)}` },
      payload: spec.body(role),
    });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual(spec.forbidden(role));
    expect(core.state).toEqual(before);
  });

  it.each(MATRIX.filter((c) => c.allowed))('$route × $role → 200 with a valid body', async ({ role, spec }) => {
    const res = await t.inject({
      method: spec.method,
      url: spec.url,
      headers: { ...spec.headers, authorization: `Bearer ${await t.token(role)}` },
      payload: spec.body(role),
    });
    expect(res.statusCode).not.toBe(403);
    expect(res.statusCode).toBe(200);
    expect(spec.effect(await mockCore())).toEqual(spec.expectedEffect);
  });

  it.each(MATRIX.filter((c) => !c.allowed))('$route × $role → 403 even before the body is validated', async ({ role, spec }) => {
    const res = await t.inject({
      method: spec.method,
      url: spec.url,
      headers: { ...spec.headers, authorization: `Bearer ${await t.token(role)}` },
      payload: { unexpected: true },
    });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual(spec.forbidden(role));
  });
});

describe('every route declares its roles or auth: false', () => {
  /** Stands in for the tenant plugin the auth plugin depends on. */
  const fakeTenant = fp(async () => undefined, { name: 'tenant' });

  async function appWith(route: Partial<RouteOptions>) {
    const app = Fastify({ logger: false });
    await app.register(fakeTenant);
    await app.register(auth);
    app.route({ method: 'GET', url: '/probe', handler: async () => ({ ok: true }), ...route } as RouteOptions);
    return app;
  }

  it('a route with neither roles nor auth: false stops the app from starting', async () => {
    const app = Fastify({ logger: false });
    await app.register(fakeTenant);
    await app.register(auth);
    let error: unknown;
    try {
      app.get('/forgotten', async () => ({ open: true }));
      await app.ready();
    } catch (err) {
      error = err;
    } finally {
      await app.close().catch(() => undefined);
    }
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toBe('Route GET /forgotten declares neither roles nor auth: false');
  });

  it('an empty roles list counts as no declaration', async () => {
    let error: unknown;
    try {
      const app = await appWith({ config: { roles: [] } });
      await app.ready();
      await app.close();
    } catch (err) {
      error = err;
    }
    expect((error as Error | undefined)?.message).toBe('Route GET /probe declares neither roles nor auth: false');
  });

  it('a route declaring roles, or auth: false, starts', async () => {
    for (const config of [{ roles: ['Admin'] as const }, { auth: false as const }]) {
      const app = await appWith({ config });
      await expect(app.ready()).resolves.toBeDefined();
      await app.close();
    }
  });

  it('every route of the real app declares roles or auth: false', async () => {
    const routes: RouteOptions[] = [];
    const app = Fastify(serverOptions(t.config));
    app.addHook('onRoute', (route) => {
      routes.push(route);
    });
    // The test app's store (already migrated and seeded), with a master key of its own: nothing is unsealed.
    await app.register(cardlineApp, { config: t.config, db: t.db, masterKey: MasterKey.generate(), ownsDb: false });
    await app.ready();
    await app.close();

    const declared = routes.map((r) => ({
      route: `${String(r.method)} ${r.url}`,
      ok: r.config?.auth === false || (r.config?.roles?.length ?? 0) > 0,
    }));
    expect(declared.filter((d) => !d.ok)).toEqual([]);
    const urls = new Set(routes.map((r) => r.url));
    for (const url of [LIMIT_URL, UPGRADE_URL, '/api/authenticate', '/api/keys', '/.well-known/jwks.json', '/health/live', '/health/ready']) {
      expect(urls).toContain(url);
    }
    // Only these may be reached without a token.
    expect(
      routes
        .filter((r) => r.config?.auth === false && r.method !== 'HEAD')
        .map((r) => `${String(r.method)} ${r.url}`)
        .sort(),
    ).toEqual(['GET /.well-known/jwks.json', 'GET /api/keys', 'GET /health/live', 'GET /health/ready', 'POST /api/authenticate']);
    // The business routes name exactly the roles of DESIGN §3.
    const rolesOf = (url: string) => routes.find((r) => r.url === url)?.config?.roles;
    expect(rolesOf(LIMIT_URL)).toEqual(['Admin', 'API Integration']);
    expect(rolesOf(UPGRADE_URL)).toEqual(['Admin', 'Operations', 'API Integration']);
  });
});
