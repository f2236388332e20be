// The access matrix over both listeners, generated from the operation tables (decision 0192): every operator
// route (the management table) refuses a call without a key, with a tenant's token and with a revoked operator
// key, with the exact 401; every public route that takes a token (the public table) refuses an operator key,
// with the exact 401 of its dialect. A refusal comes before anything else runs: nothing is changed.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Operation } from '../../src/operations/define.js';
import { managementOperations, operations } from '../../src/operations/index.js';
import { PROBLEM_BASE, createTestApp, type TestApp } from '../helpers/app.js';
import { operatorUnauthorizedDetail } from '../helpers/problems.js';

let t: TestApp;
let m: FastifyInstance;
let operatorKey: string;
let revokedKey: string;
let tenantToken: string;
beforeAll(async () => {
  t = await createTestApp();
  m = await t.management();
  operatorKey = await t.operatorKey('matrix-live');
  revokedKey = await t.operatorKey('matrix-revoked');
  expect(await t.app.cardline.operatorKeys.revoke('matrix-revoked')).toBe(true);
  tenantToken = await t.token('Admin');
  // A channel of demo's, so that an operator's read of its deliveries has one to read.
  VALUES.channelId = (await t.app.cardline.channels.create('demo', true, { type: 'webhook', url: 'http://127.0.0.1:9/matrix', eventTypes: ['*'] })).channelId;
  // And a request of demo's held for approval, so that an operator's read of it has one to read.
  VALUES.approvalId = (
    await t.app.cardline.approvals.create(
      'demo',
      'credit-limit.upgrade',
      { operation: 'credit-limit.upgrade', approvers: ['Admin'] },
      { username: 'admin', role: 'Admin', token: 'matrix-token' },
      { method: 'POST', route: '/credit-line-management/business-entity-manager/upgradeLimit', path: '/credit-line-management/business-entity-manager/upgradeLimit', params: {}, body: { entityId: 'ENT-1001', amount: '60000.00' }, sealed: [] },
    )
  ).id;
  // And an authorization of demo's, so that an operator's lookup of it has one to read.
  const authorized = await t.inject({
    method: 'POST',
    url: '/v1/authorizations',
    headers: { 'X-TENANT-ID': 'demo', authorization: `Bearer ${tenantToken}` },
    payload: { cardId: 'CARD-3001', amount: '1.00', currency: 'EUR', merchant: { name: 'Cafe Central', id: 'M-1001', mcc: '5814', country: 'PT' }, channel: 'POS' },
  });
  expect(authorized.statusCode, authorized.body).toBe(201);
  VALUES.authorizationId = authorized.json().result.authorizationId as string;
});
afterAll(() => t.close());

/** A concrete URL of the route: each path parameter given a value of its own name's kind. */
const VALUES: Record<string, string> = { tenantId: 'demo', username: 'admin', name: 'matrix-live', entityId: 'ENT-1001', cardId: 'CARD-3001' };
const concrete = (op: Operation) => op.url.replace(/:(\w+)/g, (_m, name: string) => VALUES[name] ?? 'X-1');

const OPERATOR_401 = {
  type: `${PROBLEM_BASE}/problem-with-message`,
  title: 'Unauthorized',
  status: 401,
  message: 'error.http.401',
  detail: operatorUnauthorizedDetail(),
};

const TOKEN_DETAIL = 'A valid bearer token for this tenant is required; obtain one from POST /api/authenticate.';
/** The public API's 401 for a bearer value that is no token (an operator key), in each dialect. */
const TOKEN_401 = {
  problem: { type: `${PROBLEM_BASE}/problem-with-message`, title: 'Unauthorized', status: 401, message: 'error.http.401', detail: TOKEN_DETAIL },
  envelope: { result: null, exception: { errorCode: 'ERR_401', shortMessage: 'Unauthorized', detailMessage: TOKEN_DETAIL }, pagination: null },
} as const;

const callers = () =>
  [
    ['no key', undefined],
    ["a tenant's token", `Bearer ${tenantToken}`],
    ['a revoked operator key', `Bearer ${revokedKey}`],
  ] as const;

describe('the management listener: every operator route refuses everything but a live operator key', () => {
  it('the table is the listener: every entry is an operator route', () => {
    expect(managementOperations.length).toBeGreaterThanOrEqual(17);
    for (const op of managementOperations) expect([op.listener, op.access], op.id).toEqual(['management', 'operator']);
  });

  it("the console's API is in the table: a tenant's channel operations are its Admin's own functions (decision 0165)", () => {
    const pairs = [
      ['tenant-channel.list', 'channel.list'],
      ['tenant-channel.deliveries', 'channel.deliveries'],
      ['tenant-delivery.retry', 'delivery.retry'],
      ['tenant-channel.rotate-secret', 'channel.rotate-secret'],
      ['tenant-channel.replay', 'channel.replay'],
      ['tenant-shadow.summary', 'shadow.summary'],
      ['tenant-approval.list', 'approvals.list'],
      ['tenant-approval.read', 'approvals.read'],
      ['tenant-approval.approve', 'approvals.approve'],
      ['tenant-approval.reject', 'approvals.reject'],
    ] as const;
    for (const [managed, admin] of pairs) {
      const op = managementOperations.find((o) => o.id === managed)!;
      const own = operations.find((o) => o.id === admin)!;
      expect([op.execute, op.view, op.check, op.idempotent, op.tenantParam], managed).toEqual([own.execute, own.view, own.check, own.idempotent, 'tenantId']);
    }
    const urls = managementOperations.map((o) => `${o.method} ${o.url}`);
    for (const url of ['GET /v1/tenants/:tenantId/audit', 'GET /v1/tenants/:tenantId/audit/verify', 'GET /v1/console/cores', 'GET /v1/console/figures', 'GET /v1/console/connectors', 'POST /v1/console/connectors/check', 'GET /v1/tenants/:tenantId/customers/:entityId', 'GET /v1/tenants/:tenantId/cards/:cardId']) {
      expect(urls).toContain(url);
    }
  });

  // Each refused attempt from an address of its own: wrong operator keys from one address are throttled (429).
  let attempts = 0;
  const address = () => `10.77.${++attempts >> 8}.${attempts & 255}`;

  it.each(managementOperations.map((op) => [`${op.method} ${op.url}`, op] as const))('%s', async (_route, op) => {
    for (const [who, authorization] of callers()) {
      const res = await m.inject({
        method: op.method,
        url: concrete(op),
        headers: authorization ? { authorization } : {},
        remoteAddress: address(),
        ...(op.body ? { payload: {} } : {}),
      });
      expect(res.statusCode, `${who}: ${res.body}`).toBe(401);
      expect(res.headers['www-authenticate'], who).toBe('Bearer');
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.json(), who).toEqual(OPERATOR_401);
    }
  });

  it('the same routes answer a live operator key (the refusals above were about the caller)', async () => {
    const reads = managementOperations.filter((op) => op.method === 'GET');
    expect(reads.length).toBeGreaterThan(0);
    for (const op of reads) {
      const res = await m.inject({ method: 'GET', url: concrete(op), headers: { authorization: `Bearer ${operatorKey}` } });
      expect(res.statusCode, `${op.id}: ${res.body}`).toBe(200);
    }
  });
});

describe('the public listener: every route that takes a token refuses an operator key', () => {
  const guarded = operations.filter((op) => op.access !== 'public');

  it('no public entry is an operator route', () => {
    for (const op of operations) expect([op.listener ?? 'public', op.access === 'operator'], op.id).toEqual(['public', false]);
  });

  it.each(guarded.map((op) => [`${op.method} ${op.url}`, op] as const))('%s', async (_route, op) => {
    const res = await t.inject({
      method: op.method,
      url: concrete(op),
      headers: { TENANT: 'demo', authorization: `Bearer ${operatorKey}` },
      ...(op.body ? { payload: {} } : {}),
    });
    expect(res.statusCode, res.body).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Bearer error="invalid_token"');
    expect(res.json()).toEqual(TOKEN_401[op.dialect]);
  });
});
