// The role matrix of DESIGN §3, every role × every business route, and the rule that no route can be
// registered without declaring who may call it.
import Fastify, { type RouteOptions } from 'fastify';
import fp from 'fastify-plugin';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { demoFixtures } from '../../connectors/mock/fixtures.js';
import type { MockCore } from '../../connectors/mock/index.js';
import { ROLES, type Role } from '../../schemas/common.js';
import cardlineApp, { serverOptions } from '../../src/app.js';
import type { OperationId } from '../../src/operations/index.js';
import auth from '../../src/plugins/auth.js';
import { mockCoreOf, LIMIT_URL, PROBLEM_BASE, UPGRADE_URL, createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const mockCore = (tenant = 'demo') => mockCoreOf(t, tenant);

beforeEach(async () => {
  const core = await mockCore();
  Object.assign(core.state, demoFixtures());
});

const forbiddenDetail = (role: Role) => `The role '${role}' may not call this operation.`;

interface RouteCase {
  name: string;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH';
  url: string;
  headers: Record<string, string>;
  allowed: readonly Role[];
  /** The success status; 200 unless the operation creates something (201). */
  status?: 200 | 201;
  /** A valid body, distinct per role so that each allowed call succeeds on fresh data. None for GET. */
  body?: (role: Role) => Record<string, unknown>;
  /** Puts the card in the state the operation starts from (on fresh fixtures). */
  setup?: (core: MockCore) => void;
  forbidden: (role: Role) => unknown;
  /** What the allowed call changed in the mock core (for a read: what must stay as it was). */
  effect: (core: MockCore) => unknown;
  expectedEffect: unknown;
  /** For a read: the whole body every allowed role gets. */
  expectedBody?: unknown;
}

const problemForbidden = (role: Role) => ({
  type: `${PROBLEM_BASE}/problem-with-message`,
  title: 'Forbidden',
  status: 403,
  message: 'error.http.403',
  detail: forbiddenDetail(role),
});

const CARD_WRITERS: readonly Role[] = ['Admin', 'Operations', 'API Integration'];
const EVERYONE: readonly Role[] = ['Admin', 'Operations', 'API Integration', 'Read-Only'];
const FETCH_LIMIT_URL = '/credit-line-management/business-entity-manager/fetchLimit';
const SANDBOX_ADVANCE_URL = '/v1/sandbox/cards/:cardId/fulfilment/advance';

/** CARD-3001 as a physical card with kit KIT-2001, in the given state, fulfilment ORDERED. */
const physical3001 = (state: 'ACTIVE' | 'LOCKED' | 'PENDING_ACTIVATION') => (core: MockCore) => {
  Object.assign(core.state.cards.get('CARD-3001')!, { form: 'PHYSICAL', state, kitNo: 'KIT-2001', fulfilment: 'ORDERED' });
  Object.assign(core.state.kits.get('KIT-2001')!, { mappedTo: 'CARD-3001', allocatedTo: 'ENT-1001' });
};
const card3001 = (core: MockCore) => {
  const c = core.state.cards.get('CARD-3001');
  return { state: c?.state, fulfilment: c?.fulfilment, blockReason: c?.blockReason, preferences: c?.preferences };
};
const CARD_3001_VIEW = { cardId: 'CARD-3001', entityId: 'ENT-1001', form: 'VIRTUAL', state: 'ACTIVE', panMasked: '400000******0017' };
const UNCHANGED_3001 = { state: 'ACTIVE', fulfilment: undefined, blockReason: undefined, preferences: undefined };

const MERCHANT = { name: 'Cafe Central', mcc: '5814', country: 'PT' };
const NEW_CONTACT = { email: 'new@demo.example', mobile: '+351910000777' };
const roleSlug = (role: Role) => role.toUpperCase().replace(/[^A-Z]/g, '');
const entity1001 = (core: MockCore) => {
  const e = core.state.entities.get('ENT-1001')!;
  return { outstanding: e.outstandingMinor, contact: e.contact };
};
const FIXTURE_1001 = { outstanding: 0n, contact: { email: 'accounts@demo-business-1.example', mobile: '+351910001001' } };

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
  {
    name: 'card activate',
    method: 'POST',
    url: '/card/activate',
    headers: { 'X-TENANT-ID': 'demo' },
    allowed: CARD_WRITERS,
    body: () => ({ cardId: 'CARD-3001' }),
    setup: physical3001('PENDING_ACTIVATION'),
    forbidden: problemForbidden,
    effect: card3001,
    expectedEffect: { ...UNCHANGED_3001, fulfilment: 'ORDERED' },
  },
  {
    name: 'card lock',
    method: 'POST',
    url: '/v1/cards/CARD-3001/lock',
    headers: { 'X-TENANT-ID': 'demo' },
    allowed: CARD_WRITERS,
    forbidden: problemForbidden,
    effect: card3001,
    expectedEffect: { ...UNCHANGED_3001, state: 'LOCKED' },
  },
  {
    name: 'card unlock',
    method: 'POST',
    url: '/v1/cards/CARD-3001/unlock',
    headers: { 'X-TENANT-ID': 'demo' },
    allowed: CARD_WRITERS,
    setup: physical3001('LOCKED'),
    forbidden: problemForbidden,
    effect: card3001,
    expectedEffect: { ...UNCHANGED_3001, fulfilment: 'ORDERED' },
  },
  {
    name: 'card block',
    method: 'POST',
    url: '/v1/cards/CARD-3001/block',
    headers: { 'X-TENANT-ID': 'demo' },
    allowed: CARD_WRITERS,
    body: () => ({ reasonCode: 'LOST' }),
    forbidden: problemForbidden,
    effect: card3001,
    expectedEffect: { ...UNCHANGED_3001, state: 'BLOCKED', blockReason: 'LOST' },
  },
  {
    name: 'card preferences update',
    method: 'PUT',
    url: '/v1/cards/CARD-3001/preferences',
    headers: { 'X-TENANT-ID': 'demo' },
    allowed: CARD_WRITERS,
    body: () => ({ international: { enabled: false } }),
    forbidden: problemForbidden,
    effect: card3001,
    expectedEffect: { ...UNCHANGED_3001, preferences: { international: { enabled: false } } },
  },
  {
    name: 'sandbox fulfilment advance',
    method: 'POST',
    url: '/v1/sandbox/cards/CARD-3001/fulfilment/advance',
    headers: { 'X-TENANT-ID': 'demo' },
    allowed: CARD_WRITERS,
    setup: physical3001('ACTIVE'),
    forbidden: problemForbidden,
    effect: card3001,
    expectedEffect: { ...UNCHANGED_3001, fulfilment: 'EMBOSSED' },
  },
  {
    name: 'entity cards list',
    method: 'GET',
    url: '/v1/entities/ENT-1001/cards',
    headers: { 'X-TENANT-ID': 'demo' },
    allowed: EVERYONE,
    forbidden: problemForbidden,
    effect: card3001,
    expectedEffect: UNCHANGED_3001,
    expectedBody: { result: [CARD_3001_VIEW], pagination: null },
  },
  {
    name: 'card read',
    method: 'GET',
    url: '/v1/cards/CARD-3001',
    headers: { 'X-TENANT-ID': 'demo' },
    allowed: EVERYONE,
    forbidden: problemForbidden,
    effect: card3001,
    expectedEffect: UNCHANGED_3001,
    expectedBody: { result: CARD_3001_VIEW, pagination: null },
  },
  {
    name: 'card preferences read',
    method: 'GET',
    url: '/v1/cards/CARD-3001/preferences',
    headers: { 'X-TENANT-ID': 'demo' },
    allowed: EVERYONE,
    forbidden: problemForbidden,
    effect: card3001,
    expectedEffect: UNCHANGED_3001,
    expectedBody: { result: { cardId: 'CARD-3001', preferences: {}, effective: {} }, pagination: null },
  },
  {
    name: 'credit-line fetchLimit',
    method: 'POST',
    url: FETCH_LIMIT_URL,
    headers: { TENANT: 'demo' },
    allowed: EVERYONE,
    body: () => ({ entityId: 'ENT-1001' }),
    forbidden: (role) => ({
      result: null,
      exception: { errorCode: 'ERR_403', shortMessage: 'Forbidden', detailMessage: forbiddenDetail(role) },
      pagination: null,
    }),
    effect: (core) => core.state.entities.get('ENT-1001')?.creditLimitMinor,
    expectedEffect: 5_000_000n,
    expectedBody: { result: { entityId: 'ENT-1001', creditLimit: '50000.00', outstanding: '0.00', availableCredit: '50000.00' }, exception: null, pagination: null },
  },
  {
    name: 'entity register',
    method: 'POST',
    url: '/v1/entities',
    headers: { 'X-TENANT-ID': 'demo' },
    allowed: CARD_WRITERS,
    status: 201,
    body: (role) => ({
      entityId: `ENT-${roleSlug(role)}`,
      name: 'Role Test Ltd',
      type: 'BUSINESS',
      contact: NEW_CONTACT,
      primaryAddress: { address1: '1 Test Road', city: 'Porto', state: 'Porto', country: 'PT', pin: '4000-001' },
      creditLimit: '1000.00',
    }),
    forbidden: problemForbidden,
    effect: (core) => ({ entities: core.state.entities.size, cards: core.state.cards.size }),
    expectedEffect: { entities: 4, cards: 4 },
  },
  {
    name: 'entity read',
    method: 'GET',
    url: '/v1/entities/ENT-1001',
    headers: { 'X-TENANT-ID': 'demo' },
    allowed: EVERYONE,
    forbidden: problemForbidden,
    effect: entity1001,
    expectedEffect: FIXTURE_1001,
    expectedBody: {
      result: {
        entityId: 'ENT-1001',
        name: 'Demo Business 1',
        type: 'BUSINESS',
        contact: { email: 'a*******@demo-business-1.example', mobile: '+********1001' },
        primaryAddress: { address1: '1* D*** S*****', city: 'Lisbon', state: 'Demo', country: 'PT', pin: '1000-001' },
        creditLimit: '50000.00',
        outstanding: '0.00',
        availableCredit: '50000.00',
        cardCount: 1,
      },
      pagination: null,
    },
  },
  {
    name: 'entity update',
    method: 'PATCH',
    url: '/v1/entities/ENT-1001',
    headers: { 'X-TENANT-ID': 'demo' },
    allowed: CARD_WRITERS,
    body: () => ({ contact: NEW_CONTACT }),
    forbidden: problemForbidden,
    effect: entity1001,
    expectedEffect: { ...FIXTURE_1001, contact: NEW_CONTACT },
  },
  {
    name: 'card issue',
    method: 'POST',
    url: '/v1/entities/ENT-1001/cards',
    headers: { 'X-TENANT-ID': 'demo' },
    allowed: CARD_WRITERS,
    status: 201,
    forbidden: problemForbidden,
    effect: (core) => core.state.cards.get('CARD-3004')?.entityId,
    expectedEffect: 'ENT-1001',
  },
  {
    name: 'card replace',
    method: 'POST',
    url: '/v1/cards/CARD-3001/replace',
    headers: { 'X-TENANT-ID': 'demo' },
    allowed: CARD_WRITERS,
    status: 201,
    body: () => ({ reason: 'LOST' }),
    setup: (core) => Object.assign(core.state.cards.get('CARD-3001')!, { state: 'BLOCKED', blockReason: 'LOST' }),
    forbidden: problemForbidden,
    effect: (core) => core.state.cards.get('CARD-3001')?.replacedBy,
    expectedEffect: 'CARD-3004',
  },
  {
    name: 'sandbox authorization',
    method: 'POST',
    url: '/v1/sandbox/cards/CARD-3001/authorizations',
    headers: { 'X-TENANT-ID': 'demo' },
    allowed: CARD_WRITERS,
    status: 201,
    body: () => ({ amount: '10.00', merchant: MERCHANT, channel: 'POS' }),
    forbidden: problemForbidden,
    effect: entity1001,
    expectedEffect: { ...FIXTURE_1001, outstanding: 1000n },
  },
  {
    name: 'authorization from the processor',
    method: 'POST',
    url: '/v1/authorizations',
    headers: { 'X-TENANT-ID': 'demo' },
    allowed: ['Admin', 'API Integration'],
    status: 201,
    body: () => ({ cardId: 'CARD-3001', amount: '10.00', currency: 'EUR', merchant: MERCHANT, channel: 'POS' }),
    forbidden: problemForbidden,
    effect: entity1001,
    expectedEffect: { ...FIXTURE_1001, outstanding: 1000n },
  },
  {
    name: 'sandbox repayment',
    method: 'POST',
    url: '/v1/sandbox/entities/ENT-1001/repayments',
    headers: { 'X-TENANT-ID': 'demo' },
    allowed: CARD_WRITERS,
    status: 201,
    body: () => ({ amount: '10.00' }),
    setup: (core) => void (core.state.entities.get('ENT-1001')!.outstandingMinor = 2500n),
    forbidden: problemForbidden,
    effect: entity1001,
    expectedEffect: { ...FIXTURE_1001, outstanding: 1500n },
  },
  {
    name: 'entity transactions',
    method: 'GET',
    url: '/v1/entities/ENT-1001/transactions',
    headers: { 'X-TENANT-ID': 'demo' },
    allowed: EVERYONE,
    forbidden: problemForbidden,
    effect: entity1001,
    expectedEffect: FIXTURE_1001,
    expectedBody: { result: [], pagination: { nextCursor: null } },
  },
];

/** What a login or a public key set needs instead of a role. */
const NO_TOKEN = 'no token';
const ADMIN: readonly Role[] = ['Admin'];
/**
 * Who may call each operation of the public table: the roles of DESIGN §3 (and the table for the audit
 * read). Keyed by operation id and checked by the compiler: an operation added without its line does not build.
 */
const ROLES_OF = {
  authenticate: NO_TOKEN,
  'keys.public': NO_TOKEN,
  'credit-limit.upgrade': ['Admin', 'API Integration'],
  'credit-limit.read': EVERYONE,
  'card.upgrade-physical': CARD_WRITERS,
  'card.activate': CARD_WRITERS,
  'card.lock': CARD_WRITERS,
  'card.unlock': CARD_WRITERS,
  'card.block': CARD_WRITERS,
  'card.list': EVERYONE,
  'card.read': EVERYONE,
  'card.preferences-read': EVERYONE,
  'card.preferences-update': CARD_WRITERS,
  'entity.register': CARD_WRITERS,
  'entity.read': EVERYONE,
  'entity.update': CARD_WRITERS,
  'card.issue': CARD_WRITERS,
  'card.replace': CARD_WRITERS,
  'transaction.list': EVERYONE,
  'report.activity': EVERYONE,
  'report.credit-limit-changes': EVERYONE,
  'report.transactions': EVERYONE,
  'card.set-pin': CARD_WRITERS,
  'card.fulfilment-advance': CARD_WRITERS,
  'transaction.authorize': CARD_WRITERS,
  'repayment.receive': CARD_WRITERS,
  'authorization.create': ['Admin', 'API Integration'],
  'authorization.read': EVERYONE,
  'authorization.clear': ['Admin', 'API Integration'],
  'authorization.reverse': ['Admin', 'API Integration'],
  'transaction.refund': ['Admin', 'API Integration'],
  'transaction.read': EVERYONE,
  'dispute.open': ['Admin', 'Operations'],
  'dispute.read': EVERYONE,
  'dispute.resolve': ['Admin', 'Operations'],
  'audit.read': ['Admin', 'Operations', 'Read-Only'],
  'audit.checkpoint': ADMIN,
  'keys.list': ADMIN,
  'keys.rotate': ADMIN,
  'keys.retire': ADMIN,
  'client-key.register': ADMIN,
  'client-key.read': ADMIN,
  'user.list': ADMIN,
  'user.create': ADMIN,
  'user.update': ADMIN,
  'user.unlock': ADMIN,
  'user.password-reset': ADMIN,
  'user.remove': ADMIN,
  'tenant.config-read': ADMIN,
  'tenant.config-update': ADMIN,
  'user.password-change': EVERYONE,
  'channel.list': ADMIN,
  'channel.create': ADMIN,
  'channel.read': ADMIN,
  'channel.update': ADMIN,
  'channel.remove': ADMIN,
  'channel.rotate-secret': ADMIN,
  'channel.test': ADMIN,
  'channel.deliveries': ADMIN,
  'delivery.retry': ADMIN,
  'channel.replay': ADMIN,
  'connectors.list': ADMIN,
  'shadow.divergences': ADMIN,
  'shadow.summary': ADMIN,
  // Four eyes: every role reaches them; the policy's approvers and the maker decide who may act (test/routes/approvals.test.ts).
  'approvals.list': EVERYONE,
  'approvals.read': EVERYONE,
  'approvals.approve': EVERYONE,
  'approvals.reject': EVERYONE,
  'approvals.cancel': EVERYONE,
  'auth-rules.list': ADMIN,
  'auth-rules.create': ADMIN,
  'auth-rules.read': ADMIN,
  'auth-rules.update': ADMIN,
  'auth-rules.remove': ADMIN,
  'auth-rules.promote': ADMIN,
  'auth-rules.backtest': ADMIN,
} as const satisfies Record<OperationId, readonly Role[] | typeof NO_TOKEN>;
// Were an id widened to `string` (an entry without its literal), any table would satisfy the check above.
const _idsAreLiterals: string extends OperationId ? never : true = true;

const MATRIX = ROUTES.flatMap((route) =>
  ROLES.map((role) => ({ route: route.name, role, allowed: route.allowed.includes(role), spec: route })),
);

describe('the matrix covers every role and every business route', () => {
  it('has 4 roles × 21 routes, with the allowed sets of DESIGN §3', () => {
    expect(MATRIX.map((c) => `${c.route}/${c.role}/${c.allowed ? 'yes' : 'no'}`)).toEqual([
      'credit-line upgradeLimit/Admin/yes',
      'credit-line upgradeLimit/Operations/no',
      'credit-line upgradeLimit/API Integration/yes',
      'credit-line upgradeLimit/Read-Only/no',
      'card upgrade to physical/Admin/yes',
      'card upgrade to physical/Operations/yes',
      'card upgrade to physical/API Integration/yes',
      'card upgrade to physical/Read-Only/no',
      ...['card activate', 'card lock', 'card unlock', 'card block', 'card preferences update'].flatMap((route) => [
        `${route}/Admin/yes`,
        `${route}/Operations/yes`,
        `${route}/API Integration/yes`,
        `${route}/Read-Only/no`,
      ]),
      'sandbox fulfilment advance/Admin/yes',
      'sandbox fulfilment advance/Operations/yes',
      'sandbox fulfilment advance/API Integration/yes',
      'sandbox fulfilment advance/Read-Only/no',
      ...['entity cards list', 'card read', 'card preferences read', 'credit-line fetchLimit'].flatMap((route) =>
        ROLES.map((role) => `${route}/${role}/yes`),
      ),
      'entity register/Admin/yes',
      'entity register/Operations/yes',
      'entity register/API Integration/yes',
      'entity register/Read-Only/no',
      'entity read/Admin/yes',
      'entity read/Operations/yes',
      'entity read/API Integration/yes',
      'entity read/Read-Only/yes',
      'entity update/Admin/yes',
      'entity update/Operations/yes',
      'entity update/API Integration/yes',
      'entity update/Read-Only/no',
      'card issue/Admin/yes',
      'card issue/Operations/yes',
      'card issue/API Integration/yes',
      'card issue/Read-Only/no',
      'card replace/Admin/yes',
      'card replace/Operations/yes',
      'card replace/API Integration/yes',
      'card replace/Read-Only/no',
      'sandbox authorization/Admin/yes',
      'sandbox authorization/Operations/yes',
      'sandbox authorization/API Integration/yes',
      'sandbox authorization/Read-Only/no',
      'authorization from the processor/Admin/yes',
      'authorization from the processor/Operations/no',
      'authorization from the processor/API Integration/yes',
      'authorization from the processor/Read-Only/no',
      'sandbox repayment/Admin/yes',
      'sandbox repayment/Operations/yes',
      'sandbox repayment/API Integration/yes',
      'sandbox repayment/Read-Only/no',
      'entity transactions/Admin/yes',
      'entity transactions/Operations/yes',
      'entity transactions/API Integration/yes',
      'entity transactions/Read-Only/yes',
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
    spec.setup?.(core);
    const before = structuredClone(core.state);
    const res = await t.inject({
      method: spec.method,
      url: spec.url,
      headers: { ...spec.headers, authorization: `Bearer ${await t.token(role)}` },
      ...(spec.body ? { payload: spec.body(role) } : {}),
    });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual(spec.forbidden(role));
    expect(core.state).toEqual(before);
  });

  it.each(MATRIX.filter((c) => c.allowed))('$route × $role → 200 (201 for a creation) with a valid body', async ({ role, spec }) => {
    spec.setup?.(await mockCore());
    const res = await t.inject({
      method: spec.method,
      url: spec.url,
      headers: { ...spec.headers, authorization: `Bearer ${await t.token(role)}` },
      ...(spec.body ? { payload: spec.body(role) } : {}),
    });
    expect(res.statusCode).not.toBe(403);
    expect(res.statusCode).toBe(spec.status ?? 200);
    expect(spec.effect(await mockCore())).toEqual(spec.expectedEffect);
    if (spec.expectedBody !== undefined) expect(res.json()).toEqual(spec.expectedBody);
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
    // The test app's store (already migrated and seeded), with its master key.
    await app.register(cardlineApp, { config: t.config, db: t.db, masterKey: t.masterKey, ownsDb: false });
    await app.ready();
    await app.close();

    const declared = routes.map((r) => ({
      route: `${String(r.method)} ${r.url}`,
      ok: r.config?.auth === false || (r.config?.roles?.length ?? 0) > 0,
    }));
    expect(declared.filter((d) => !d.ok)).toEqual([]);
    const urls = new Set(routes.map((r) => r.url));
    const lifecycle = ['/card/activate', '/v1/cards/:cardId/lock', '/v1/cards/:cardId/unlock', '/v1/cards/:cardId/block'];
    const cardReads = ['/v1/entities/:entityId/cards', '/v1/cards/:cardId', '/v1/cards/:cardId/preferences'];
    for (const url of [...lifecycle, ...cardReads, FETCH_LIMIT_URL, SANDBOX_ADVANCE_URL]) expect(urls).toContain(url);
    for (const url of [LIMIT_URL, UPGRADE_URL, '/api/authenticate', '/api/keys', '/.well-known/jwks.json', '/health/live', '/health/ready']) {
      expect(urls).toContain(url);
    }
    // Only these may be reached without a token: besides them, the API's documentation (GET under /docs).
    const open = routes.filter((r) => r.config?.auth === false && r.method !== 'HEAD').map((r) => `${String(r.method)} ${r.url}`);
    const isDocs = (r: string) => / \/docs(\/|$)/.test(r);
    expect(open.filter((r) => !isDocs(r)).sort()).toEqual([
      'GET /.well-known/jwks.json',
      'GET /api/keys',
      'GET /health/live',
      'GET /health/ready',
      'GET /openapi.json',
      'POST /api/authenticate',
    ]);
    expect(open.filter(isDocs).length).toBeGreaterThan(0);
    for (const r of open.filter(isDocs)) expect(r).toMatch(/^(HEAD,)?GET \/docs/);
    // Every operation of the public table, with exactly the roles of DESIGN §3 (ROLES_OF), and no other route with roles.
    const actual = Object.fromEntries(
      routes.filter((r) => r.config?.operation && r.method !== 'HEAD').map((r) => [r.config!.operation!.id, r.config!.auth === false ? NO_TOKEN : r.config!.roles]),
    );
    expect(actual).toEqual(ROLES_OF);
    expect(routes.filter((r) => r.config?.roles && !r.config.operation).map((r) => `${String(r.method)} ${r.url}`)).toEqual([]);
  });
});

describe('the remaining routes refuse every role outside their table (403 in the problem dialect)', () => {
  const FORBIDDEN = (role: Role) => ({
    type: `${PROBLEM_BASE}/problem-with-message`,
    title: 'Forbidden',
    status: 403,
    message: 'error.http.403',
    detail: `The role '${role}' may not call this operation.`,
  });
  const cases: { route: string; method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'; url: string; allowed: readonly Role[]; payload?: object }[] = [
    { route: 'PUT /v1/cards/:cardId/pin', method: 'PUT', url: '/v1/cards/CARD-3001/pin', allowed: CARD_WRITERS, payload: { pinBlock: '00', format: 4 } },
    { route: 'GET /v1/audit', method: 'GET', url: '/v1/audit', allowed: ['Admin', 'Operations', 'Read-Only'] },
    { route: 'GET /v1/admin/keys', method: 'GET', url: '/v1/admin/keys', allowed: ['Admin'] },
    { route: 'POST /v1/admin/keys/rotate', method: 'POST', url: '/v1/admin/keys/rotate', allowed: ['Admin'], payload: { use: 'enc' } },
    { route: 'POST /v1/admin/keys/:kid/retire', method: 'POST', url: '/v1/admin/keys/no-such-kid/retire', allowed: ['Admin'] },
    { route: 'GET /v1/admin/client-key', method: 'GET', url: '/v1/admin/client-key', allowed: ['Admin'] },
    { route: 'PUT /v1/admin/client-key', method: 'PUT', url: '/v1/admin/client-key', allowed: ['Admin'], payload: { jwk: {} } },
    { route: 'GET /v1/admin/users', method: 'GET', url: '/v1/admin/users', allowed: ['Admin'] },
    { route: 'POST /v1/admin/users', method: 'POST', url: '/v1/admin/users', allowed: ['Admin'], payload: { username: 'x', role: 'Admin', password: 'x' } },
    { route: 'PATCH /v1/admin/users/:username', method: 'PATCH', url: '/v1/admin/users/ops', allowed: ['Admin'], payload: { role: 'Admin' } },
    { route: 'POST /v1/admin/users/:username/unlock', method: 'POST', url: '/v1/admin/users/ops/unlock', allowed: ['Admin'] },
    { route: 'PUT /v1/admin/users/:username/password', method: 'PUT', url: '/v1/admin/users/ops/password', allowed: ['Admin'], payload: { password: 'x' } },
    { route: 'DELETE /v1/admin/users/:username', method: 'DELETE', url: '/v1/admin/users/admin', allowed: ['Admin'] },
    { route: 'GET /v1/admin/config', method: 'GET', url: '/v1/admin/config', allowed: ['Admin'] },
    { route: 'PATCH /v1/admin/config', method: 'PATCH', url: '/v1/admin/config', allowed: ['Admin'], payload: { tokenLifetimeSeconds: 60 } },
  ];
  const denied = cases.flatMap((c) => EVERYONE.filter((role) => !c.allowed.includes(role)).map((role) => [c.route, role, c] as const));
  it.each(denied)('%s refuses %s', async (_route, role, c) => {
    const res = await t.inject({
      method: c.method,
      url: c.url,
      headers: { TENANT: 'demo', authorization: `Bearer ${await t.token(role)}` },
      ...(c.payload ? { payload: c.payload } : {}),
    });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual(FORBIDDEN(role));
  });
});
