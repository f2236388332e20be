// POST /v1/authorizations through a real gateway (PGlite, or PostgreSQL with DATABASE_URL): the pipeline's steps in
// order with their trail, the core's hold, partial approvals, bad input refused whole with nothing changed, the
// events of record, GET with the decision trail, and Idempotency-Key.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { demoFixtures } from '../../connectors/mock/fixtures.js';
import type { Role } from '../../schemas/common.js';
import { mockCoreOf, PASSWORD, PROBLEM_BASE, createTestApp, type TestApp } from '../helpers/app.js';
import { businessProblem, validationProblem } from '../helpers/problems.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({
    tenants: [
      {
        id: 'partial',
        config: {
          connector: { id: 'mock', options: { fixtures: 'demo' } },
          currency: 'GBP',
          authorization: { partialApproval: true },
        },
      },
    ],
  });
  await t.app.cardline.users.add('partial', 'integration', 'API Integration', PASSWORD);
});
afterAll(() => t.close());

const mockCore = (tenant = 'demo') => mockCoreOf(t, tenant);

beforeEach(async () => {
  for (const tenant of ['demo', 'partial']) Object.assign((await mockCore(tenant)).state, demoFixtures());
  await t.db.query(`DELETE FROM authorizations`);
});

const CAFE = { name: 'Cafe Central', id: 'M-1001', mcc: '5814', country: 'PT' };
const ask = (amount: string, extra: Record<string, unknown> = {}) => ({ cardId: 'CARD-3001', amount, currency: 'EUR', merchant: CAFE, channel: 'POS', ...extra });

async function call(method: 'GET' | 'POST', url: string, payload?: unknown, role: Role = 'API Integration', tenant = 'demo', headers: Record<string, string> = {}) {
  return t.inject({
    method,
    url,
    headers: { 'X-TENANT-ID': tenant, authorization: `Bearer ${await t.token(role, tenant)}`, ...headers },
    ...(payload === undefined ? {} : { payload: payload as string }),
  });
}

const authorize = (body: unknown, tenant = 'demo', headers: Record<string, string> = {}) => call('POST', '/v1/authorizations', body, 'API Integration', tenant, headers);

const ISO = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
const AUTH_ID = expect.stringMatching(/^auth_[0-9a-f]{32}$/);

async function outstanding(tenant = 'demo', entityId = 'ENT-1001'): Promise<bigint> {
  return (await mockCore(tenant)).state.entities.get(entityId)!.outstandingMinor;
}

async function rows() {
  return (await t.db.query<{ n: string }>(`SELECT count(*)::text AS n FROM authorizations`)).rows[0]!.n;
}

describe('POST /v1/authorizations', () => {
  it('approves: every step recorded in order, the core holds the amount, authorization.approved', async () => {
    await t.db.query(`DELETE FROM outbox`);
    const res = await authorize(ask('42.50', { networkReference: 'NET-000123' }));
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual({
      result: {
        authorizationId: AUTH_ID,
        cardId: 'CARD-3001',
        entityId: 'ENT-1001',
        status: 'APPROVED',
        declineReason: null,
        decidedBy: 'core',
        amount: '42.50',
        approvedAmount: '42.50',
        currency: 'EUR',
        merchant: CAFE,
        channel: 'POS',
        networkReference: 'NET-000123',
        trail: [
          { step: 'card-state', outcome: 'approved' },
          { step: 'spend-controls', outcome: 'skipped', detail: 'no rules' },
          { step: 'decision-endpoint', outcome: 'skipped', detail: 'not configured' },
          { step: 'core', outcome: 'approved' },
        ],
        at: ISO,
      },
      pagination: null,
    });
    const id = res.json().result.authorizationId as string;
    expect(await outstanding()).toBe(4250n);
    expect((await mockCore()).state.holds.get(id)).toMatchObject({ heldMinor: 4250n, approved: true });
    const events = await t.db.query<{ type: string; aggregate_id: string; payload: unknown }>(
      `SELECT type, aggregate_id, payload FROM outbox WHERE tenant_id = 'demo' AND type LIKE 'authorization.%'`,
    );
    expect(events.rows).toEqual([
      {
        type: 'authorization.approved',
        aggregate_id: 'CARD-3001',
        payload: {
          authorizationId: id,
          cardId: 'CARD-3001',
          entityId: 'ENT-1001',
          amount: '42.50',
          approvedAmount: '42.50',
          currency: 'EUR',
          channel: 'POS',
          mcc: '5814',
          merchantCountry: 'PT',
          status: 'APPROVED',
          declineReason: null,
          decidedBy: 'core',
        },
      },
    ]);
    // GET answers the same record, to any role.
    const read = await call('GET', `/v1/authorizations/${id}`, undefined, 'Read-Only');
    expect(read.statusCode).toBe(200);
    expect(read.json()).toEqual(res.json());
  });

  it('declines at the card state without calling the later steps: a locked card holds nothing', async () => {
    (await mockCore()).state.cards.get('CARD-3001')!.state = 'LOCKED';
    const res = await authorize(ask('10.00'));
    expect(res.statusCode).toBe(201);
    expect(res.json().result).toMatchObject({
      status: 'DECLINED',
      declineReason: 'CARD_NOT_ACTIVE',
      decidedBy: 'card-state',
      entityId: null,
      approvedAmount: '0.00',
      trail: [{ step: 'card-state', outcome: 'declined', declineReason: 'CARD_NOT_ACTIVE', detail: 'card is LOCKED' }],
    });
    // The core was never asked for a hold.
    expect((await mockCore()).state.holds.size).toBe(0);
    expect(await outstanding()).toBe(0n);
    const events = await t.db.query<{ type: string }>(`SELECT type FROM outbox WHERE tenant_id = 'demo' AND type LIKE 'authorization.%' ORDER BY audit_seq DESC LIMIT 1`);
    expect(events.rows[0]!.type).toBe('authorization.declined');
  });

  it("declines above the available credit at the core's step", async () => {
    const res = await authorize(ask('50000.01'));
    expect(res.statusCode).toBe(201);
    expect(res.json().result).toMatchObject({
      status: 'DECLINED',
      declineReason: 'INSUFFICIENT_CREDIT',
      decidedBy: 'core',
      entityId: 'ENT-1001',
      approvedAmount: '0.00',
    });
    expect(res.json().result.trail.at(-1)).toEqual({ step: 'core', outcome: 'declined', declineReason: 'INSUFFICIENT_CREDIT' });
    expect(await outstanding()).toBe(0n);
  });

  it('approves part of the amount where the tenant allows partial approvals', async () => {
    (await mockCore('partial')).state.entities.get('ENT-1001')!.outstandingMinor = 4_990_000n;
    const res = await authorize(ask('250.00', { currency: 'GBP' }), 'partial');
    expect(res.statusCode).toBe(201);
    expect(res.json().result).toMatchObject({ status: 'APPROVED', amount: '250.00', approvedAmount: '100.00', currency: 'GBP' });
    expect(res.json().result.trail.at(-1)).toEqual({ step: 'core', outcome: 'approved', detail: 'partial: 100.00 held' });
    expect(await outstanding('partial')).toBe(5_000_000n);
  });

  it('an unknown card is the core refusal CARD_NOT_FOUND, and nothing is recorded', async () => {
    const res = await authorize(ask('1.00', { cardId: 'CARD-9999' }));
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual(businessProblem('Card Not Found', 'CARD_NOT_FOUND', 'Card CARD-9999 does not exist.'));
    expect(await rows()).toBe('0');
  });

  it.each([
    ['a currency other than the card\u2019s', ask('1.00', { currency: 'USD' }), ['currency', 'Invalid']],
    ['a negative amount', ask('-1.00'), ['amount', 'DecimalAmount']],
    ['a float amount', { ...ask('1.00'), amount: 1.5 }, ['amount', 'TypeMismatch']],
    ['three decimals', ask('1.005'), ['amount', 'DecimalAmount']],
    ['a zero amount', ask('0.00'), ['amount', 'DecimalAmount']],
    ['an MCC of three digits', ask('1.00', { merchant: { ...CAFE, mcc: '581' } }), ['merchant.mcc', 'Pattern']],
    ['an MCC with a letter', ask('1.00', { merchant: { ...CAFE, mcc: '58A4' } }), ['merchant.mcc', 'Pattern']],
    ['a lower-case country', ask('1.00', { merchant: { ...CAFE, country: 'pt' } }), ['merchant.country', 'Pattern']],
    ['an unknown channel', ask('1.00', { channel: 'MAIL' }), ['channel', 'Invalid']],
    ['an unknown field', ask('1.00', { tip: '1.00' }), ['tip', 'UnknownProperty']],
  ])('refuses %s: 400 naming the field, nothing recorded or held', async (_what, body, [field, message]) => {
    const res = await authorize(body);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(validationProblem('authorizationRequest', [field!, message!]));
    expect(await rows()).toBe('0');
    expect(await outstanding()).toBe(0n);
  });

  it('admits API Integration and Admin only', async () => {
    const res = await call('POST', '/v1/authorizations', ask('1.00'), 'Operations');
    expect(res.statusCode).toBe(403);
    expect(await rows()).toBe('0');
  });

  it('a retry under the same Idempotency-Key answers the first decision and holds once', async () => {
    const key = { 'Idempotency-Key': 'auth-retry-0001' };
    const first = await authorize(ask('20.00'), 'demo', key);
    const retry = await authorize(ask('20.00'), 'demo', key);
    expect(first.statusCode).toBe(201);
    expect(retry.statusCode).toBe(201);
    expect(retry.json()).toEqual(first.json());
    expect(await outstanding()).toBe(2000n);
    expect(await rows()).toBe('1');
  });

  it('ids sort in the order the authorizations were decided (decision 0452), declines included', async () => {
    const ids: string[] = [];
    for (const body of [ask('1.00'), ask('1.00', { cardId: 'CARD-3003' }), ask('2.00'), ask('999999.00'), ask('3.00')]) {
      const res = await authorize(body);
      expect(res.statusCode).toBe(201);
      ids.push(res.json().result.authorizationId);
    }
    for (const id of ids) expect(id).toEqual(AUTH_ID);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(5);
    const stored = await t.db.query<{ id: string }>(`SELECT id FROM authorizations WHERE tenant_id = 'demo' ORDER BY id`);
    expect(stored.rows.map((r) => r.id)).toEqual(ids);
  });

  it('GET of an unknown authorization is 404 in the problem dialect', async () => {
    const res = await call('GET', '/v1/authorizations/auth_unknown', undefined, 'Read-Only');
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ type: `${PROBLEM_BASE}/problem-with-message`, status: 404, detail: "This tenant has no authorization 'auth_unknown'." });
  });
});

describe('the sandbox route runs the same pipeline', () => {
  it('records its authorization with the trail, the core deciding last; the answer is unchanged', async () => {
    const res = await call('POST', '/v1/sandbox/cards/CARD-3001/authorizations', { amount: '5.00', merchant: { name: 'Cafe Central', mcc: '5814', country: 'PT' }, channel: 'POS' }, 'Operations');
    expect(res.statusCode).toBe(201);
    expect(res.json().result).toMatchObject({ transactionId: 'TXN-00000001', status: 'APPROVED' });
    const stored = await t.db.query<{ decided_by: string; trail: unknown; status: string }>(`SELECT decided_by, trail, status FROM authorizations WHERE tenant_id = 'demo'`);
    expect(stored.rows).toEqual([
      {
        decided_by: 'core',
        status: 'APPROVED',
        trail: [
          { step: 'spend-controls', outcome: 'skipped', detail: 'no rules' },
          { step: 'decision-endpoint', outcome: 'skipped', detail: 'not configured' },
          { step: 'core', outcome: 'approved' },
        ],
      },
    ]);
  });
});

describe('an authorization whose audit record cannot be committed (decision 0380)', () => {
  it('answers 500 in the problem dialect and leaves no authorization row: the row goes in with the record or not at all', async () => {
    await t.db.exec(`ALTER TABLE audit_log ADD CONSTRAINT test_no_authorizations CHECK (action <> 'authorization.create') NOT VALID`);
    try {
      const res = await authorize(ask('10.00'));
      expect(res.statusCode).toBe(500);
      expect(res.json()).toMatchObject({ type: `${PROBLEM_BASE}/problem-with-message`, status: 500, message: 'error.http.500' });
    } finally {
      await t.db.exec('ALTER TABLE audit_log DROP CONSTRAINT test_no_authorizations');
    }
    expect(await rows()).toBe('0');
    // The same authorization once the record can be written: stored with it.
    expect((await authorize(ask('10.00'))).statusCode).toBe(201);
    expect(await rows()).toBe('1');
  });
});
