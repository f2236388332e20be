// Sandbox authorizations and repayments, and the transaction list: whole bodies, each decline reason through
// the gateway, refusals, validation rows, cursor paging; no answer carries a card number.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { demoFixtures } from '../../connectors/mock/fixtures.js';
import type { Role } from '../../schemas/common.js';
import { encodeTransactionCursor } from '../../src/operations/transactions.js';
import { mockCoreOf, PASSWORD, PROBLEM_BASE, createTestApp, type TestApp } from '../helpers/app.js';
import { findPans } from '../helpers/log-scan.js';
import { businessProblem, validationProblem } from '../helpers/problems.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({
    tenants: [
      // A bank in India: home country IN, days of Asia/Kolkata; and a bank that is not a sandbox.
      {
        id: 'kolkata',
        config: {
          connector: { id: 'mock', options: { fixtures: 'demo' } },
          sandbox: true,
          homeCountry: 'IN',
          timeZone: 'Asia/Kolkata',
          creditLimit: { maximum: '1000000.00', allowDecrease: true },
        },
      },
      { id: 'live', config: { connector: { id: 'mock', options: { fixtures: 'demo' } } } },
    ],
  });
  for (const tenant of ['kolkata', 'live']) await t.app.cardline.users.add(tenant, 'ops', 'Operations', PASSWORD);
  await t.app.cardline.users.add('kolkata', 'integration', 'API Integration', PASSWORD);
});
afterAll(() => t.close());

const mockCore = (tenant = 'demo') => mockCoreOf(t, tenant);

beforeEach(async () => {
  for (const tenant of ['demo', 'kolkata', 'live']) Object.assign((await mockCore(tenant)).state, demoFixtures());
});

const bodies: string[] = [];
async function call(method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown, role: Role = 'Operations', tenant = 'demo') {
  const res = await t.inject({
    method,
    url,
    headers: { 'X-TENANT-ID': tenant, authorization: `Bearer ${await t.token(role, tenant)}` },
    ...(payload === undefined ? {} : { payload: payload as string }),
  });
  bodies.push(res.body);
  return res;
}

/** A setup call that must succeed. */
async function send(method: 'POST' | 'PUT', url: string, payload?: unknown): Promise<void> {
  expect((await call(method, url, payload)).statusCode).toBe(200);
}


const CAFE = { name: 'Cafe Central', mcc: '5814', country: 'PT' };
const ABROAD = { name: 'Corner Deli', mcc: '5411', country: 'US' };
const AUTH_URL = '/v1/sandbox/cards/CARD-3001/authorizations';
const authorize = (amount: string, extra: Record<string, unknown> = {}, tenant = 'demo') =>
  call('POST', AUTH_URL, { amount, merchant: CAFE, channel: 'POS', ...extra }, 'Operations', tenant);

const ISO = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
const transaction = (n: number, amount: string, patch: Record<string, unknown> = {}) => ({
  transactionId: `TXN-${String(n).padStart(8, '0')}`,
  cardId: 'CARD-3001',
  entityId: 'ENT-1001',
  amount,
  channel: 'POS',
  merchant: CAFE,
  international: false,
  status: 'APPROVED',
  declineReason: null,
  at: ISO,
  ...patch,
});
/** A host decision as the transaction list shows it: of type AUTHORIZATION, belonging to no authorization. */
const listed = (n: number, amount: string, patch: Record<string, unknown> = {}) => ({ ...transaction(n, amount, patch), type: 'AUTHORIZATION', authorizationId: null });

async function events() {
  const r = await t.db.query<{ type: string; aggregate_id: string; payload: unknown }>(
    `SELECT type, aggregate_id, payload FROM outbox WHERE tenant_id = 'demo' AND (type LIKE 'transaction.%' OR type = 'repayment.received') ORDER BY audit_seq`,
  );
  return r.rows;
}

describe('POST /v1/sandbox/cards/{cardId}/authorizations', () => {
  it('approves within the credit line: 201, the transaction, a raised outstanding balance, transaction.approved', async () => {
    await t.db.query(`DELETE FROM outbox`);
    const res = await authorize('42.50');
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual({ result: transaction(1, '42.50'), pagination: null });
    const limit = await t.inject({
      method: 'POST',
      url: '/credit-line-management/business-entity-manager/fetchLimit',
      headers: { TENANT: 'demo', authorization: `Bearer ${await t.token('Read-Only')}` },
      payload: { entityId: 'ENT-1001' },
    });
    expect(limit.json().result).toEqual({ entityId: 'ENT-1001', creditLimit: '50000.00', outstanding: '42.50', availableCredit: '49957.50' });
    expect(await events()).toEqual([
      {
        type: 'transaction.approved',
        aggregate_id: 'CARD-3001',
        payload: {
          transactionId: 'TXN-00000001',
          cardId: 'CARD-3001',
          entityId: 'ENT-1001',
          amount: '42.50',
          channel: 'POS',
          mcc: '5814',
          merchantCountry: 'PT',
          international: false,
          status: 'APPROVED',
          declineReason: null,
        },
      },
    ]);
  });

  const DECLINES: [string, () => Promise<void>, Record<string, unknown>][] = [
    ['CARD_NOT_ACTIVE', () => send('POST', '/v1/cards/CARD-3001/lock'), {}],
    ['INTERNATIONAL_DISABLED', async () => {}, { merchant: ABROAD }],
    ['CHANNEL_DISABLED', () => send('PUT', '/v1/cards/CARD-3001/preferences', { domestic: { atm: { enabled: false } } }), { channel: 'ATM' }],
    ['DAILY_LIMIT_EXCEEDED', () => send('PUT', '/v1/cards/CARD-3001/preferences', { domestic: { pos: { enabled: true, dailyLimit: '10.00' } } }), {}],
    ['DAILY_COUNT_EXCEEDED', () => send('PUT', '/v1/cards/CARD-3001/preferences', { domestic: { pos: { enabled: true, dailyCount: 0 } } }), {}],
    ['INSUFFICIENT_CREDIT', async () => {}, { amount: '50000.01' }],
  ];
  it.each(DECLINES)('declines %s: 201, a DECLINED transaction, transaction.declined, nothing drawn', async (reason, setup, extra) => {
    await t.db.query(`DELETE FROM outbox`);
    await setup();
    const { amount = '42.50', ...rest } = extra as { amount?: string };
    const res = await authorize(amount, rest);
    const international = 'merchant' in rest;
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual({
      result: transaction(1, amount, { status: 'DECLINED', declineReason: reason, international, ...rest }),
      pagination: null,
    });
    expect((await mockCore()).state.entities.get('ENT-1001')!.outstandingMinor).toBe(0n);
    const [event] = await events();
    expect(event).toMatchObject({ type: 'transaction.declined', payload: { status: 'DECLINED', declineReason: reason } });
  });

  it('a channel the preferences do not name is declined CHANNEL_DISABLED once they name one (issue 20, point 11)', async () => {
    // The card's domestic preferences name POS only: POS works, ATM (not named) is declined, nothing is drawn.
    await send('PUT', '/v1/cards/CARD-3001/preferences', { domestic: { enabled: true, pos: { enabled: true } } });
    const atm = await authorize('42.50', { channel: 'ATM' });
    expect(atm.statusCode).toBe(201);
    expect(atm.json()).toEqual({
      result: transaction(1, '42.50', { status: 'DECLINED', declineReason: 'CHANNEL_DISABLED', channel: 'ATM' }),
      pagination: null,
    });
    expect((await mockCore()).state.entities.get('ENT-1001')!.outstandingMinor).toBe(0n);
    expect((await authorize('10.00')).json().result).toMatchObject({ status: 'APPROVED', channel: 'POS' });
    // International use switched on naming ECOM only: an international POS payment is declined the same way.
    await send('PUT', '/v1/cards/CARD-3001/preferences', { international: { enabled: true, ecom: { enabled: true } } });
    expect((await authorize('10.00', { merchant: ABROAD })).json().result).toMatchObject({ status: 'DECLINED', declineReason: 'CHANNEL_DISABLED' });
    expect((await authorize('10.00', { merchant: ABROAD, channel: 'ECOM' })).json().result).toMatchObject({ status: 'APPROVED', international: true });
    // A category that names no channel leaves all four to its switch; domestic is on when not mentioned.
    expect((await authorize('10.00', { channel: 'CONTACTLESS' })).json().result).toMatchObject({ status: 'APPROVED', international: false });
  });

  it("international once switched on; a day's limit counted in the tenant's time zone", async () => {
    await call('PUT', '/v1/cards/CARD-3001/preferences', { international: { enabled: true } });
    expect((await authorize('10.00', { merchant: ABROAD })).json().result).toMatchObject({ status: 'APPROVED', international: true });
    // The Indian tenant: a Portuguese merchant is international there, an Indian one domestic.
    const tea = { name: 'Chai Point', mcc: '5814', country: 'IN' };
    expect((await authorize('10.00', { merchant: tea }, 'kolkata')).json().result).toMatchObject({ status: 'APPROVED', international: false });
    expect((await authorize('10.00', {}, 'kolkata')).json().result).toMatchObject({ status: 'DECLINED', declineReason: 'INTERNATIONAL_DISABLED' });
  });

  it('a retry with the same Idempotency-Key answers the first decision again and draws once', async () => {
    const send = () =>
      t.inject({
        method: 'POST',
        url: AUTH_URL,
        headers: { 'X-TENANT-ID': 'demo', authorization: `Bearer ${token}`, 'idempotency-key': 'auth-retry-1' },
        payload: { amount: '15.00', merchant: CAFE, channel: 'POS' },
      });
    const token = await t.token('Operations');
    const first = await send();
    const retry = await send();
    expect([first.statusCode, retry.statusCode, retry.headers['idempotent-replayed']]).toEqual([201, 201, 'true']);
    expect(retry.body).toBe(first.body);
    expect((await mockCore()).state.entities.get('ENT-1001')!.outstandingMinor).toBe(1500n);
  });

  it('a limit below the outstanding balance is refused even where decreases are allowed (envelope 400 LIMIT_BELOW_OUTSTANDING)', async () => {
    const tea = { name: 'Chai Point', mcc: '5814', country: 'IN' };
    expect((await authorize('300.00', { merchant: tea }, 'kolkata')).json().result.status).toBe('APPROVED');
    const lower = (amount: string) =>
      t.token('API Integration', 'kolkata').then((token) =>
        t.inject({
          method: 'POST',
          url: '/credit-line-management/business-entity-manager/upgradeLimit',
          headers: { TENANT: 'kolkata', authorization: `Bearer ${token}` },
          payload: { entityId: 'ENT-1001', amount },
        }),
      );
    const refused = await lower('299.99');
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toEqual({
      result: null,
      exception: { errorCode: 'ERR_400', shortMessage: 'Bad Request', detailMessage: 'Entity ENT-1001 owes 300.00; its limit cannot go below that (asked: 299.99).' },
      pagination: null,
    });
    expect((await lower('300.00')).json()).toEqual({ result: true, exception: null, pagination: null });
  });

  it('an unknown card → 409 CARD_NOT_FOUND; a tenant that is no sandbox → 404; Read-Only → 403', async () => {
    const unknown = await call('POST', '/v1/sandbox/cards/CARD-9999/authorizations', { amount: '1.00', merchant: CAFE, channel: 'POS' });
    expect(unknown.statusCode).toBe(409);
    expect(unknown.json()).toEqual(businessProblem('Card Not Found', 'CARD_NOT_FOUND', 'Card CARD-9999 does not exist.'));
    const live = await authorize('1.00', {}, 'live');
    expect(live.statusCode).toBe(404);
    expect(live.json()).toEqual({
      type: `${PROBLEM_BASE}/problem-with-message`,
      title: 'Not Found',
      status: 404,
      message: 'error.http.404',
      detail: `No route POST ${AUTH_URL}.`,
    });
    const forbidden = await call('POST', AUTH_URL, { amount: '1.00', merchant: CAFE, channel: 'POS' }, 'Read-Only');
    expect(forbidden.statusCode).toBe(403);
  });

  it.each([
    ['no amount', { merchant: CAFE, channel: 'POS' }, [['amount', 'NotNull']]],
    ['an amount as a number', { amount: 1, merchant: CAFE, channel: 'POS' }, [['amount', 'TypeMismatch']]],
    ['three decimals', { amount: '1.005', merchant: CAFE, channel: 'POS' }, [['amount', 'DecimalAmount']]],
    ['an unknown channel', { amount: '1.00', merchant: CAFE, channel: 'MOTO' }, [['channel', 'Invalid']]],
    ['a country of three letters', { amount: '1.00', merchant: { ...CAFE, country: 'PRT' }, channel: 'POS' }, [['merchant.country', 'Pattern']]],
    ['an MCC of three digits', { amount: '1.00', merchant: { ...CAFE, mcc: '581' }, channel: 'POS' }, [['merchant.mcc', 'Pattern']]],
    ['no merchant name', { amount: '1.00', merchant: { mcc: '5814', country: 'PT' }, channel: 'POS' }, [['merchant.name', 'NotNull']]],
  ])('%s → 400', async (_, payload, fields) => {
    const res = await call('POST', AUTH_URL, payload);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(validationProblem('authorizationRequest', ...(fields as [string, string][])));
  });
});

describe('POST /v1/sandbox/entities/{entityId}/repayments', () => {
  it('lowers the outstanding balance: 201 and repayment.received; more than is owed → 409', async () => {
    await authorize('300.00');
    await t.db.query(`DELETE FROM outbox`);
    const res = await call('POST', '/v1/sandbox/entities/ENT-1001/repayments', { amount: '120.25' });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual({
      result: { repaymentId: 'RPY-00000001', entityId: 'ENT-1001', amount: '120.25', outstanding: '179.75', availableCredit: '49820.25', at: ISO },
      pagination: null,
    });
    expect(await events()).toEqual([
      { type: 'repayment.received', aggregate_id: 'ENT-1001', payload: { repaymentId: 'RPY-00000001', entityId: 'ENT-1001', amount: '120.25', outstanding: '179.75' } },
    ]);
    const over = await call('POST', '/v1/sandbox/entities/ENT-1001/repayments', { amount: '179.76' });
    expect(over.statusCode).toBe(409);
    expect(over.json()).toEqual(
      businessProblem('Repayment Exceeds Outstanding', 'REPAYMENT_EXCEEDS_OUTSTANDING', 'Entity ENT-1001 owes 179.75; a repayment of 179.76 is more than that.'),
    );
  });

  it('an unknown entity → 409 ENTITY_NOT_FOUND; validation rows', async () => {
    const unknown = await call('POST', '/v1/sandbox/entities/ENT-9999/repayments', { amount: '1.00' });
    expect(unknown.statusCode).toBe(409);
    expect(unknown.json()).toEqual(businessProblem('Entity Not Found', 'ENTITY_NOT_FOUND', 'Entity ENT-9999 does not exist.'));
    for (const [payload, field, message] of [
      [{}, 'amount', 'NotNull'],
      [{ amount: '0' }, 'amount', 'DecimalAmount'],
      [{ amount: '1.00', currency: 'EUR' }, 'currency', 'UnknownProperty'],
    ] as const) {
      const res = await call('POST', '/v1/sandbox/entities/ENT-1001/repayments', payload);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual(validationProblem('repaymentRequest', [field, message]));
    }
  });
});

describe('GET /v1/entities/{entityId}/transactions', () => {
  const list = (query = '', role: Role = 'Read-Only') => call('GET', `/v1/entities/ENT-1001/transactions${query}`, undefined, role);

  it('newest first, a page at a time: the cursor stays put while new transactions arrive', async () => {
    for (const amount of ['1.00', '2.00', '3.00']) await authorize(amount);
    await authorize('60000.00');
    const first = await list('?limit=2');
    expect(first.statusCode).toBe(200);
    const next = encodeTransactionCursor('TXN-00000003');
    expect(first.json()).toEqual({
      result: [listed(4, '60000.00', { status: 'DECLINED', declineReason: 'INSUFFICIENT_CREDIT' }), listed(3, '3.00')],
      pagination: { nextCursor: next },
    });
    await authorize('5.00');
    const second = await list(`?limit=2&cursor=${next}`);
    expect(second.json()).toEqual({ result: [listed(2, '2.00'), listed(1, '1.00')], pagination: { nextCursor: null } });
    expect((await list('?status=DECLINED')).json().result.map((x: { amount: string }) => x.amount)).toEqual(['60000.00']);
    expect((await list('?cardId=CARD-3001&status=APPROVED&limit=1')).json().pagination.nextCursor).not.toBeNull();
  });

  it('from and to: days of the tenant time zone or date-times with an offset', async () => {
    await authorize('1.00');
    const today = new Date().toISOString().slice(0, 10);
    expect((await list(`?from=${today}&to=${today}`)).json().result).toHaveLength(1);
    expect((await list('?from=2000-01-01&to=2000-12-31')).json()).toEqual({ result: [], pagination: { nextCursor: null } });
    expect((await list('?to=2000-01-01T00:00:00%2B05:30')).json().result).toEqual([]);
  });

  it('a cardId of another entity → 409 CARD_NOT_FOUND; an unknown entity → 409 ENTITY_NOT_FOUND', async () => {
    const other = await list('?cardId=CARD-3002');
    expect(other.statusCode).toBe(409);
    expect(other.json()).toEqual(businessProblem('Card Not Found', 'CARD_NOT_FOUND', 'Card CARD-3002 does not exist for entity ENT-1001.'));
    const unknown = await call('GET', '/v1/entities/ENT-9999/transactions');
    expect(unknown.json()).toEqual(businessProblem('Entity Not Found', 'ENTITY_NOT_FOUND', 'Entity ENT-9999 does not exist.'));
  });

  it.each([
    ['a limit of 0', '?limit=0', [['limit', 'Min']]],
    ['a limit of 201', '?limit=201', [['limit', 'Max']]],
    ['a limit that is no number', '?limit=ten', [['limit', 'Pattern']]],
    ['a malformed cursor', '?cursor=bm90LWEtY3Vyc29y', [['cursor', 'Invalid']]],
    ['a cursor naming no transaction of the entity', `?cursor=${encodeTransactionCursor('TXN-00000099')}`, [['cursor', 'Invalid']]],
    ['a day that does not exist', '?from=2026-02-30', [['from', 'Invalid']]],
    ['a date-time without an offset', '?to=2026-11-23T10:00:00', [['to', 'Invalid']]],
    ['to before from', '?from=2026-11-23&to=2026-11-22', [['to', 'Invalid']]],
    ['an unknown status', '?status=PENDING', [['status', 'Invalid']]],
    ['an unknown parameter', '?page=2', [['page', 'UnknownProperty']]],
  ])('%s → 400', async (_, query, fields) => {
    const res = await list(query);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(validationProblem('transactionQuery', ...(fields as [string, string][])));
  });

  it('no answer of this file carries a card number', () => {
    expect(bodies.flatMap((b) => findPans(b))).toEqual([]);
  });
});
