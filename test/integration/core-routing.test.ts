// One tenant on several cores (decisions 0110-0113): each operation lands on the core its routing names,
// counted on the mock core servers themselves; 501 in both dialects for an operation the connector does
// not offer; routing refused at save when it names a connector without the operation, and never the
// Admin's; a shadow core's divergences recorded with sensitive fields masked; a hanging shadow changes no
// answer; a routing switch under load drops nothing; the connectors view and readiness show each core.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildMockCore } from '../../connectors/mock-core/server.js';
import { updateTenant } from '../../src/services/tenancy/tenant-admin.js';
import { differences, MASK } from '../../src/services/connectors/shadow.js';
import type { ConnectorView } from '../../schemas/core-routing.js';
import { CONTRACT, CONTRACT_OPERATIONS } from '../../connectors/contract.js';
import { PROBLEM_BASE, createTestApp, supportDetail, type TestApp } from '../helpers/app.js';
import { operatorUnauthorizedDetail, validationProblem } from '../helpers/problems.js';

const FETCH_LIMIT_URL = '/credit-line-management/business-entity-manager/fetchLimit';
const ACME = './examples/acme-core/index.ts';

/** A mock core server that counts, by request line, what reaches it. */
async function countingCore(): Promise<{ server: FastifyInstance; base: string; hits: Map<string, number>; count(pattern: RegExp): number }> {
  const server = buildMockCore({ fixtures: 'demo' });
  const hits = new Map<string, number>();
  server.addHook('onRequest', async (request) => {
    const line = `${request.method} ${request.url.split('?')[0]}`;
    hits.set(line, (hits.get(line) ?? 0) + 1);
  });
  const base = await server.listen({ host: '127.0.0.1', port: 0 });
  const count = (pattern: RegExp) => [...hits].filter(([line]) => pattern.test(line)).reduce((n, [, v]) => n + v, 0);
  return { server, base, hits, count };
}

let t: TestApp;
let m: FastifyInstance;
let key: string;
let oldCore: Awaited<ReturnType<typeof countingCore>>;
let newCore: Awaited<ReturnType<typeof countingCore>>;

beforeAll(async () => {
  t = await createTestApp();
  m = await t.management();
  key = await t.operatorKey('ops-routing');
  [oldCore, newCore] = await Promise.all([countingCore(), countingCore()]);
});
afterAll(async () => {
  await t.close();
  await oldCore.server.close();
  await newCore.server.close();
});

const operator = (method: 'GET' | 'PATCH' | 'POST', url: string, payload?: object) =>
  m.inject({ method, url, headers: { authorization: `Bearer ${key}` }, ...(payload ? { payload } : {}) });

const rest = (core: { base: string }, bank = 'demo-b', extra: object = {}) => ({ id: 'rest', options: { baseUrl: `${core.base}/banks/${bank}`, ...extra } });

const LIMIT_GET = /^GET \/banks\/demo-b\/v1\/entities\/ENT-1001\/credit-limit$/;
const CARD_LIST = /^GET \/banks\/demo-b\/v1\/entities\/ENT-1001\/cards$/;

async function fetchLimit(tenant = 'demo-b') {
  return t.inject({ method: 'POST', url: FETCH_LIMIT_URL, headers: { TENANT: tenant, authorization: `Bearer ${await t.token('Admin', tenant)}` }, payload: { entityId: 'ENT-1001' } });
}
async function listCards(tenant = 'demo-b') {
  return t.inject({ method: 'GET', url: '/v1/entities/ENT-1001/cards', headers: { TENANT: tenant, authorization: `Bearer ${await t.token('Admin', tenant)}` } });
}
/** The request's audit record (committed before its answer was sent). */
async function auditOf(tenant: string, requestId: unknown) {
  const r = await t.db.query<{ status: number; target: Record<string, string> }>('SELECT status, target FROM audit_log WHERE tenant_id = $1 AND request_id = $2', [tenant, String(requestId)]);
  return r.rows[0];
}

async function admin(url: string, tenant = 'demo-b') {
  return t.inject({ method: 'GET', url, headers: { TENANT: tenant, authorization: `Bearer ${await t.token('Admin', tenant)}` } });
}

describe('per-operation routing', () => {
  it('sends each operation to the core its routing names, counted on the cores', async () => {
    const res = await operator('PATCH', '/v1/tenants/demo-b', {
      config: {
        connector: null,
        connectors: { processor: rest(oldCore), core: rest(newCore) },
        routing: { default: 'core', operations: { cards: 'processor' } },
      },
    });
    expect(res.statusCode, res.body).toBe(200);
    const before = { oldLimit: oldCore.count(LIMIT_GET), newLimit: newCore.count(LIMIT_GET), oldCards: oldCore.count(CARD_LIST), newCards: newCore.count(CARD_LIST) };
    expect((await fetchLimit()).statusCode).toBe(200);
    expect((await listCards()).statusCode).toBe(200);
    expect((await listCards()).statusCode).toBe(200);
    // The credit line went to the core, the cards to the processor, and nothing else anywhere.
    expect(newCore.count(LIMIT_GET) - before.newLimit).toBe(1);
    expect(oldCore.count(LIMIT_GET) - before.oldLimit).toBe(0);
    expect(oldCore.count(CARD_LIST) - before.oldCards).toBe(2);
    expect(newCore.count(CARD_LIST) - before.newCards).toBe(0);
  });

  it('names the connector that served in the audit record', async () => {
    const res = await fetchLimit();
    expect(await auditOf('demo-b', res.headers['x-request-id'])).toMatchObject({ target: { entityId: 'ENT-1001', connector: 'core' } });
  });

  it('lists each connector with its offer, routes, breaker and recent calls', async () => {
    const res = await admin('/v1/admin/connectors');
    expect(res.statusCode, res.body).toBe(200);
    const byName = Object.fromEntries((res.json().result as ConnectorView[]).map((c) => [c.name, c])) as Record<string, ConnectorView>;
    expect(byName.processor).toMatchObject({ id: 'rest', started: true, problem: null, breaker: 'closed', shadows: [] });
    expect(byName.processor!.routed).toContain('lockCard');
    expect(byName.processor!.routed).not.toContain('getCreditLimit');
    expect(byName.core!.routed).toEqual(['upgradeLimit', 'getCreditLimit', 'setPin', 'registerEntity', 'getEntity', 'updateEntity', 'authorize', 'repay', 'listTransactions', 'holdFunds', 'clearFunds', 'reverseHold', 'refund', 'creditDispute']);
    expect(byName.core!.offers).toHaveLength(CONTRACT_OPERATIONS.length);
    expect(byName.core!.recent).toMatchObject({ windowSeconds: 300, failures: 0 });
    expect(byName.core!.recent.calls).toBeGreaterThanOrEqual(2);
  });

  it("shows the operator the Admin's view on GET /v1/tenants/{tenantId}/connectors", async () => {
    const admins = await admin('/v1/admin/connectors');
    const operators = await operator('GET', '/v1/tenants/demo-b/connectors');
    expect(operators.statusCode, operators.body).toBe(200);
    expect(operators.json()).toEqual(admins.json());
    const r = await t.db.query<{ actor: string; role: string; action: string; target: unknown; status: number }>(
      "SELECT actor, role, action, target, status FROM audit_log WHERE tenant_id = 'demo-b' AND action = 'tenant.connectors'",
    );
    // An operator's page view is not recorded (decision 0292).
    expect(r.rows).toEqual([]);
  });

  it('answers the operator exactly: each connector of a new tenant, 404 for an unknown tenant, 401 without a key', async () => {
    const created = await operator('POST', '/v1/tenants', {
      id: 'two-cores',
      config: { connectors: { processor: rest(oldCore, 'two-cores'), core: rest(newCore, 'two-cores') }, routing: { default: 'core', operations: { cards: 'processor', pin: 'processor' } } },
    });
    expect(created.statusCode, created.body).toBe(201);
    const quiet = { windowSeconds: 300, calls: 0, failures: 0, errorRate: 0, latencyMs: { avg: 0, max: 0 } };
    const cardsAndPin = CONTRACT_OPERATIONS.filter((o) => CONTRACT[o].group === 'cards' || CONTRACT[o].group === 'pin');
    const res = await operator('GET', '/v1/tenants/two-cores/connectors');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      result: [
      // By name.
        { name: 'core', id: 'rest', started: true, problem: null, offers: [...CONTRACT_OPERATIONS], routed: CONTRACT_OPERATIONS.filter((o) => !cardsAndPin.includes(o)), shadows: [], breaker: 'closed', recent: quiet },
        { name: 'processor', id: 'rest', started: true, problem: null, offers: [...CONTRACT_OPERATIONS], routed: cardsAndPin, shadows: [], breaker: 'closed', recent: quiet },
      ],
      pagination: null,
    });

    const unknown = await operator('GET', '/v1/tenants/nobody/connectors');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ type: `${PROBLEM_BASE}/problem-with-message`, title: 'Not Found', status: 404, message: 'error.http.404', detail: "There is no tenant 'nobody'." });
    const invalid = await operator('GET', '/v1/tenants/Not_An_Id/connectors');
    expect(invalid.statusCode).toBe(400);
    expect(invalid.json()).toMatchObject({ type: `${PROBLEM_BASE}/constraint-violation`, status: 400, fieldErrors: [{ field: 'tenantId', message: 'Pattern' }] });

    for (const authorization of [undefined, `Bearer ${await t.token('Admin', 'demo-b')}`]) {
      const refused = await m.inject({ method: 'GET', url: '/v1/tenants/two-cores/connectors', headers: authorization ? { authorization } : {} });
      expect(refused.statusCode).toBe(401);
      expect(refused.headers['www-authenticate']).toBe('Bearer');
      expect(refused.json()).toEqual({
        type: `${PROBLEM_BASE}/problem-with-message`,
        title: 'Unauthorized',
        status: 401,
        message: 'error.http.401',
        detail: operatorUnauthorizedDetail(),
      });
    }
  });

  it('refuses at save a route to a connector that does not offer the operation, with the reason', async () => {
    const res = await operator('PATCH', '/v1/tenants/demo-b', {
      config: { connectors: { cards: { id: 'acme-core', module: ACME, options: { groups: ['cards'] } } }, routing: { operations: { 'credit-line': 'cards' } } },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().detail).toContain(
      "/routing/operations/credit-line: connector 'cards' (acme-core) does not offer upgradeLimit, getCreditLimit",
    );
    const unknown = await operator('PATCH', '/v1/tenants/demo-b', { config: { routing: { operations: { cards: 'nowhere', teleport: 'core' } } } });
    expect(unknown.statusCode, unknown.body).toBe(400);
    expect(unknown.json().detail).toContain("/routing/operations/cards: 'nowhere' is not a connector of this tenant (named: core, processor)");
    expect(unknown.json().detail).toContain('/routing/operations/teleport: not a core operation or a group');
  });

  it("is not the tenant Admin's to change", async () => {
    const res = await t.inject({
      method: 'PATCH',
      url: '/v1/admin/config',
      headers: { TENANT: 'demo-b', authorization: `Bearer ${await t.token('Admin', 'demo-b')}` },
      payload: { routing: { default: 'processor' } },
    });
    expect(res.statusCode).toBe(400);
    expect(JSON.stringify(res.json())).toContain('routing');
    expect((await t.app.cardline.tenants.get('demo-b'))!.config.routing?.default).toBe('core');
  });
});

describe('an operation the connector does not offer', () => {
  beforeAll(async () => {
    // Acme as a card processor only: its definition says so, and the default route takes the rest.
    await updateTenant(t.app.cardline, 'demo', { config: { connector: { id: 'acme-core', module: ACME, options: { fixtures: null, groups: ['cards'] } } } });
  });
  afterAll(async () => {
    await updateTenant(t.app.cardline, 'demo', { config: { connector: { id: 'mock', module: null, options: { fixtures: 'demo', groups: null } } } });
  });

  it('answers 501 in the envelope dialect, audited, without calling the core', async () => {
    const res = await fetchLimit('demo');
    expect(res.statusCode).toBe(501);
    expect(res.json()).toEqual({
      result: null,
      exception: {
        errorCode: 'ERR_501',
        shortMessage: 'Not Implemented',
        detailMessage: supportDetail(
          "The operation getCreditLimit is not offered by the core-banking connector 'acme-core' this tenant routes it to; nothing was sent to the core.",
          res,
        ),
      },
      pagination: null,
    });
    // Audited; a tenant with one connector is not told which (decision 0111).
    expect(await auditOf('demo', res.headers['x-request-id'])).toEqual({ status: 501, target: { entityId: 'ENT-1001' } });
  });

  it('answers 501 in the problem dialect with businessCode OPERATION_NOT_SUPPORTED', async () => {
    const res = await t.inject({ method: 'GET', url: '/v1/entities/ENT-1001', headers: { TENANT: 'demo', authorization: `Bearer ${await t.token('Admin', 'demo')}` } });
    expect(res.statusCode).toBe(501);
    expect(res.json()).toEqual({
      type: `${PROBLEM_BASE}/problem-with-message`,
      title: 'Not Implemented',
      status: 501,
      message: 'error.http.501',
      detail: supportDetail("The operation getEntity is not offered by the core-banking connector 'acme-core' this tenant routes it to; nothing was sent to the core.", res),
      businessCode: 'OPERATION_NOT_SUPPORTED',
    });
    // What it offers still works.
    expect((await listCards('demo')).statusCode).toBe(200);
  });
});

describe('a routing switch under load', () => {
  it('drops nothing: every request answers, each core counts what it served', async () => {
    const patch = (to: string) =>
      operator('PATCH', '/v1/tenants/demo-b', { config: { connectors: { processor: null, core: null, old: rest(oldCore), new: rest(newCore) }, routing: { default: 'old', operations: { cards: null, 'credit-line': to } } } });
    expect((await patch('old')).statusCode).toBe(200);
    const before = oldCore.count(LIMIT_GET) + newCore.count(LIMIT_GET);
    const beforeNew = newCore.count(LIMIT_GET);
    let switched = false;
    let sent = 0;
    const statuses: number[] = [];
    const worker = async () => {
      // Keeps going until well after the switch: the last requests run on the new routing.
      for (let afterSwitch = 0; afterSwitch < 15; ) {
        sent++;
        statuses.push((await fetchLimit()).statusCode);
        if (switched) afterSwitch++;
      }
    };
    const load = Promise.all(Array.from({ length: 6 }, worker));
    while (sent < 30) await new Promise((r) => setTimeout(r, 5));
    expect((await patch('new')).statusCode).toBe(200);
    switched = true;
    await load;
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    expect(oldCore.count(LIMIT_GET) + newCore.count(LIMIT_GET) - before).toBe(sent);
    expect(newCore.count(LIMIT_GET) - beforeNew).toBeGreaterThanOrEqual(15);
  });
});

describe('shadow mode', () => {
  beforeAll(async () => {
    const res = await operator('PATCH', '/v1/tenants/demo-b', {
      config: {
        routing: { default: 'old', operations: null },
        shadow: { connector: 'new', operations: ['credit-line', 'customers'] },
      },
    });
    expect(res.statusCode, res.body).toBe(200);
    // The new core holds another limit and another e-mail address for ENT-1001.
    await newCore.server.inject({ method: 'POST', url: '/banks/demo-b/v1/entities/ENT-1001/credit-limit', payload: { amount: '65000.00', allowDecrease: true } });
    await newCore.server.inject({ method: 'PATCH', url: '/banks/demo-b/v1/entities/ENT-1001', payload: { contact: { email: 'treasury@new-core.example', mobile: '+351910000001' } } });
  });

  it('answers from the primary and records what the shadow answered differently, sensitive fields masked', async () => {
    const res = await fetchLimit();
    expect(res.json().result.creditLimit).toBe('50000.00');
    const entity = await t.inject({ method: 'GET', url: '/v1/entities/ENT-1001', headers: { TENANT: 'demo-b', authorization: `Bearer ${await t.token('Admin', 'demo-b')}` } });
    expect(entity.statusCode).toBe(200);
    await t.app.cardline.shadow.settled();

    const page = await admin('/v1/admin/shadow/divergences');
    expect(page.statusCode, page.body).toBe(200);
    const [latest, previous] = page.json().result as { operation: string; requestId: string; connector: string; differences: unknown[] }[];
    // Newest first: the entity read, then the limit read.
    expect(latest).toMatchObject({ operation: 'getEntity', connector: 'new', requestId: entity.headers['x-request-id'] });
    expect(latest!.differences).toEqual(
      expect.arrayContaining([
        { path: 'contact.email', primary: MASK, shadow: MASK },
        { path: 'contact.mobile', primary: MASK, shadow: MASK },
        { path: 'creditLimit', primary: '50000.00', shadow: '65000.00' },
      ]),
    );
    expect(JSON.stringify(page.json())).not.toContain('treasury@new-core.example');
    expect(previous).toMatchObject({
      operation: 'getCreditLimit',
      requestId: res.headers['x-request-id'],
      differences: [
        { path: 'availableCredit', primary: '50000.00', shadow: '65000.00' },
        { path: 'creditLimit', primary: '50000.00', shadow: '65000.00' },
      ],
    });
    const summary = (await admin('/v1/admin/shadow/summary')).json().result as { operation: string; diverged: number; matchRate: number }[];
    expect(summary.find((s) => s.operation === 'getCreditLimit')).toMatchObject({ diverged: 1, matchRate: 0 });
    const metrics = await t.app.cardline.metrics.text();
    expect(metrics).toMatch(/cardline_shadow_calls_total\{operation="getCreditLimit",outcome="diverged",tenant="demo-b"\} 1/);
  });

  it('matches once the divergence is fixed', async () => {
    await newCore.server.inject({ method: 'POST', url: '/banks/demo-b/v1/entities/ENT-1001/credit-limit', payload: { amount: '50000.00', allowDecrease: true } });
    await fetchLimit();
    await t.app.cardline.shadow.settled();
    const summary = (await admin('/v1/admin/shadow/summary')).json().result as { operation: string; match: number }[];
    expect(summary.find((s) => s.operation === 'getCreditLimit')?.match).toBe(1);
  });

  it('pages the divergences newest first, and refuses a bad limit or cursor with the list error', async () => {
    const first = await admin('/v1/admin/shadow/divergences?limit=1');
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json().result).toHaveLength(1);
    expect(first.json().result[0]).toMatchObject({ operation: 'getEntity' });
    const next = await admin(`/v1/admin/shadow/divergences?limit=1&cursor=${first.json().pagination.nextCursor}`);
    expect(next.json().result[0]).toMatchObject({ operation: 'getCreditLimit' });
    for (const [query, field, message] of [['limit=0', 'limit', 'Min'], ['limit=201', 'limit', 'Max'], ['cursor=bm90LWEtY3Vyc29y', 'cursor', 'Invalid']] as const) {
      const res = await admin(`/v1/admin/shadow/divergences?${query}`);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual(validationProblem('divergenceListRequest', [field, message]));
    }
  });

  it('a shadow that hangs or fails changes no answer', async () => {
    await newCore.server.inject({ method: 'PUT', url: '/__admin/faults', payload: { timeoutRate: 1 } });
    try {
      const answers = await Promise.all(Array.from({ length: 12 }, () => fetchLimit()));
      for (const a of answers) expect([a.statusCode, a.json().result?.creditLimit]).toEqual([200, '50000.00']);
      await t.app.cardline.shadow.settled();
      const s = (await admin('/v1/admin/shadow/summary')).json().result.find((x: { operation: string }) => x.operation === 'getCreditLimit');
      expect(s.error + s.dropped).toBeGreaterThanOrEqual(12);
    } finally {
      await newCore.server.inject({ method: 'PUT', url: '/__admin/faults', payload: {} });
    }
  });
});

describe('readiness', () => {
  it('reports a tenant whose core opened its breaker as degraded, and stays ready', async () => {
    await operator('PATCH', '/v1/tenants/demo-b', {
      config: { connectors: { old: rest(oldCore, 'demo-b', { retries: { max: 0 }, breaker: { failureThreshold: 2, openMs: 60_000 } }) } },
    });
    await oldCore.server.inject({ method: 'PUT', url: '/__admin/faults', payload: { errorRate: 1 } });
    try {
      for (let i = 0; i < 2; i++) expect((await listCards()).statusCode).toBe(502);
      const ready = await t.inject({ method: 'GET', url: '/health/ready' });
      expect(ready.statusCode).toBe(200);
      expect(ready.json().degraded, ready.body).toContainEqual({ tenant: 'demo-b', reason: "connector 'old': circuit breaker open: the core failed its recent calls" });
    } finally {
      await oldCore.server.inject({ method: 'PUT', url: '/__admin/faults', payload: {} });
    }
  });
});

describe('divergence masking', () => {
  it('masks every field the contract marks sensitive, also inside arrays', () => {
    expect(differences('getCard', { sensitive: { pan: '4000001234563011', cvv: '123' }, state: 'ACTIVE' }, { sensitive: { pan: '4000009999993011', cvv: '123' }, state: 'LOCKED' })).toEqual([
      { path: 'sensitive.pan', primary: MASK, shadow: MASK },
      { path: 'state', primary: 'ACTIVE', shadow: 'LOCKED' },
    ]);
    expect(differences('getEntity', { primaryAddress: { address1: 'Rua A', city: 'Lisboa' } }, { primaryAddress: { address1: 'Rua B', city: 'Porto' } })).toEqual([
      { path: 'primaryAddress.address1', primary: MASK, shadow: MASK },
      { path: 'primaryAddress.city', primary: 'Lisboa', shadow: 'Porto' },
    ]);
    // A whole sensitive object on one side only is masked too.
    expect(differences('getCard', { sensitive: { pan: '4000001234563011' } }, {})).toEqual([{ path: 'sensitive', primary: MASK, shadow: null }]);
  });
});

