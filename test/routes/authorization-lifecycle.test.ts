// After the authorization, through a real gateway (PGlite, or PostgreSQL with DATABASE_URL): clearings (partial,
// several, final), reversals (partial, full, twice refused), refunds, disputes opened and resolved once (won
// credits the credit line, lost does not); bad input refused whole with nothing changed in the gateway or the
// core; Idempotency-Key; parallel clearings and reversals never beyond the amount; events of record, the
// transaction list and the transactions report; 501 from a core without the capabilities.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ConnectorUnavailableError } from '../../connectors/contract.js';
import { CoreBank } from '../../connectors/mock/core.js';
import { demoFixtures } from '../../connectors/mock/fixtures.js';
import type { MockCore } from '../../connectors/mock/index.js';
import type { Role } from '../../schemas/common.js';
import { mockCoreOf, PASSWORD, PROBLEM_BASE, createTestApp, supportDetail, type TestApp } from '../helpers/app.js';
import { businessProblem, validationProblem } from '../helpers/problems.js';

const ACME = './examples/acme-core/index.ts';
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ tenants: [{ id: 'acme', config: { connector: { id: 'acme-core', module: ACME, options: {} } } }] });
  for (const [user, role] of [['integration', 'API Integration'], ['ops', 'Operations']] as const) await t.app.cardline.users.add('acme', user, role, PASSWORD);
});
afterAll(() => t.close());

const mockCore = (tenant = 'demo') => mockCoreOf(t, tenant);

beforeEach(async () => {
  Object.assign((await mockCore()).state, demoFixtures());
  await t.db.query(`DELETE FROM authorizations`);
  await t.db.query(`DELETE FROM outbox`);
});

async function call(method: 'GET' | 'POST', url: string, payload?: unknown, role: Role = 'API Integration', tenant = 'demo', headers: Record<string, string> = {}) {
  return t.inject({
    method,
    url,
    headers: { 'X-TENANT-ID': tenant, authorization: `Bearer ${await t.token(role, tenant)}`, ...headers },
    ...(payload === undefined ? {} : { payload: payload as string }),
  });
}

const CAFE = { name: 'Cafe Central', mcc: '5814', country: 'PT' };

/** An approved authorization of `amount` on CARD-3001 (ENT-1001): its id. */
async function approved(amount: string): Promise<string> {
  const res = await call('POST', '/v1/authorizations', { cardId: 'CARD-3001', amount, currency: 'EUR', merchant: CAFE, channel: 'POS' });
  expect(res.statusCode).toBe(201);
  expect(res.json().result.status).toBe('APPROVED');
  return res.json().result.authorizationId as string;
}

const clear = (id: string, amount: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
  call('POST', `/v1/authorizations/${id}/clear`, { amount, currency: 'EUR', ...extra }, 'API Integration', 'demo', headers);
const reverse = (id: string, body: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
  call('POST', `/v1/authorizations/${id}/reverse`, body, 'API Integration', 'demo', headers);
const refund = (id: string, amount: string, extra: Record<string, unknown> = {}) => call('POST', `/v1/transactions/${id}/refund`, { amount, currency: 'EUR', ...extra });
const openDispute = (id: string, amount: string, extra: Record<string, unknown> = {}, role: Role = 'Operations') =>
  call('POST', `/v1/transactions/${id}/disputes`, { reason: 'NOT_AS_DESCRIBED', amount, currency: 'EUR', ...extra }, role);
const resolve = (id: string, outcome: string, role: Role = 'Operations') => call('POST', `/v1/disputes/${id}/resolve`, { outcome }, role);

/** The transaction's amounts as the answers show them. */
const state = (id: string, amounts: Partial<Record<'held' | 'cleared' | 'reversed' | 'refunded' | 'credited' | 'disputed', string>>, authorized = '100.00') => ({
  transactionId: id,
  cardId: 'CARD-3001',
  entityId: 'ENT-1001',
  status: 'APPROVED',
  currency: 'EUR',
  authorized,
  held: '0.00',
  cleared: '0.00',
  reversed: '0.00',
  refunded: '0.00',
  credited: '0.00',
  disputed: '0.00',
  ...amounts,
});

async function outstanding(): Promise<bigint> {
  return (await mockCore()).state.entities.get('ENT-1001')!.outstandingMinor;
}

/** The gateway's row and the core's hold, side by side: what a refusal must leave as it was. */
async function snapshot(id: string) {
  const row = await t.db.query(
    `SELECT held_minor::text, cleared_minor::text, reversed_minor::text, refunded_minor::text, credited_minor::text FROM authorizations WHERE tenant_id = 'demo' AND id = $1`,
    [id],
  );
  const reservations = await t.db.query(`SELECT count(*)::int AS n FROM authorization_reservations`);
  const disputes = await t.db.query(`SELECT id, status FROM disputes ORDER BY id`);
  const hold = (await mockCore()).state.holds.get(id);
  const events = await t.db.query(`SELECT count(*)::int AS n FROM outbox`);
  return { row: row.rows, reservations: reservations.rows, disputes: disputes.rows, hold: hold ? { ...hold } : null, outstanding: await outstanding(), events: events.rows };
}

async function events(prefix: string) {
  const r = await t.db.query<{ type: string; aggregate_id: string; payload: unknown }>(
    `SELECT type, aggregate_id, payload FROM outbox WHERE tenant_id = 'demo' AND type LIKE $1 ORDER BY audit_seq`,
    [`${prefix}%`],
  );
  return r.rows;
}

const notFound = (detail: string) => ({ type: `${PROBLEM_BASE}/problem-with-message`, title: 'Not Found', status: 404, message: 'error.http.404', detail });

describe('clearing', () => {
  it('clears part of the hold, then more, then finally: the rest is released; core, events and list agree', async () => {
    const id = await approved('100.00');
    const first = await clear(id, '30.00');
    expect(first.statusCode).toBe(200);
    expect(first.json()).toEqual({ result: state(id, { held: '70.00', cleared: '30.00' }), pagination: null });
    const second = await clear(id, '20.00');
    expect(second.json().result).toEqual(state(id, { held: '50.00', cleared: '50.00' }));
    const last = await clear(id, '40.00', { final: true });
    expect(last.json().result).toEqual(state(id, { held: '0.00', cleared: '90.00', reversed: '10.00' }));
    // The core agrees, and the entity owes what was cleared.
    expect((await mockCore()).state.holds.get(id)).toMatchObject({ heldMinor: 0n, clearedMinor: 9000n, reversedMinor: 1000n });
    expect(await outstanding()).toBe(9000n);
    const cleared = await events('authorization.cleared');
    expect(cleared.map((e) => e.payload)).toEqual([
      { authorizationId: id, cardId: 'CARD-3001', entityId: 'ENT-1001', currency: 'EUR', amount: '30.00', final: false, released: '0.00', held: '70.00', cleared: '30.00' },
      { authorizationId: id, cardId: 'CARD-3001', entityId: 'ENT-1001', currency: 'EUR', amount: '20.00', final: false, released: '0.00', held: '50.00', cleared: '50.00' },
      { authorizationId: id, cardId: 'CARD-3001', entityId: 'ENT-1001', currency: 'EUR', amount: '40.00', final: true, released: '10.00', held: '0.00', cleared: '90.00' },
    ]);
    expect(cleared.every((e) => e.aggregate_id === 'CARD-3001')).toBe(true);
    // Nothing is held any more: another clearing is refused.
    const after = await clear(id, '0.01');
    expect(after.statusCode).toBe(409);
    expect(after.json()).toEqual(businessProblem('Clearing Exceeds Held', 'CLEAR_EXCEEDS_HELD', `Authorization ${id} holds nothing; there is nothing to clear.`));
  });

  it('a retry under the same Idempotency-Key answers the first clearing and clears once', async () => {
    const id = await approved('100.00');
    const key = { 'Idempotency-Key': 'clear-retry-0001' };
    const first = await clear(id, '25.00', {}, key);
    const retry = await clear(id, '25.00', {}, key);
    expect(retry.statusCode).toBe(200);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.body).toBe(first.body);
    expect((await mockCore()).state.holds.get(id)!.clearedMinor).toBe(2500n);
    expect(await events('authorization.cleared')).toHaveLength(1);
  });
});

describe('every change is idempotent under Idempotency-Key', () => {
  it('a reversal, a refund, a dispute opened and its resolution, each retried under its key: the first answer again, nothing changed', async () => {
    const id = await approved('100.00');
    const key = (k: string) => ({ 'Idempotency-Key': k });
    /** Sends twice under one key: the retry answers the first answer and changes nothing in the gateway or the core. */
    const twice = async (status: number, send: () => ReturnType<typeof call>) => {
      const first = await send();
      expect(first.statusCode, first.body).toBe(status);
      const before = await snapshot(id);
      const retry = await send();
      expect(retry.statusCode).toBe(status);
      expect(retry.headers['idempotent-replayed']).toBe('true');
      expect(retry.body).toBe(first.body);
      expect(await snapshot(id)).toEqual(before);
      return first;
    };
    await twice(200, () => reverse(id, { amount: '10.00', currency: 'EUR' }, key('reverse-retry-0001')));
    expect((await mockCore()).state.holds.get(id)!.reversedMinor).toBe(1000n);
    await clear(id, '90.00', { final: true });
    await twice(200, () => call('POST', `/v1/transactions/${id}/refund`, { amount: '5.00', currency: 'EUR' }, 'API Integration', 'demo', key('refund-retry-0001')));
    expect((await mockCore()).state.holds.get(id)!.refundedMinor).toBe(500n);
    const opened = await twice(201, () =>
      call('POST', `/v1/transactions/${id}/disputes`, { reason: 'FRAUD', amount: '20.00', currency: 'EUR' }, 'Operations', 'demo', key('dispute-retry-0001')),
    );
    const disputeId = opened.json().result.disputeId as string;
    expect((await t.db.query(`SELECT id FROM disputes`)).rows).toEqual([{ id: disputeId }]);
    await twice(200, () => call('POST', `/v1/disputes/${disputeId}/resolve`, { outcome: 'WON' }, 'Operations', 'demo', key('resolve-retry-0001')));
    expect((await mockCore()).state.holds.get(id)!.creditedMinor).toBe(2000n);
    expect((await events('')).map((e) => e.type).filter((type) => type !== 'authorization.approved')).toEqual([
      'authorization.reversed',
      'authorization.cleared',
      'transaction.refunded',
      'dispute.opened',
      'dispute.resolved',
    ]);
    expect((await call('GET', `/v1/transactions/${id}`)).json().result).toEqual(state(id, { cleared: '90.00', reversed: '10.00', refunded: '5.00', credited: '20.00' }));
  });
});

describe('a change whose outcome the gateway did not learn', () => {
  it('a clearing the core applied but whose answer was lost (502): the retry under the same key is admitted again and cleared once', async () => {
    const id = await approved('100.00');
    const core = await mockCore();
    const applied = core.clearFunds.bind(core);
    let lost = 0;
    Object.assign(core, {
      clearFunds: async (...args: Parameters<MockCore['clearFunds']>) => {
        const result = await applied(...args);
        if (lost++ === 0) throw new ConnectorUnavailableError('connection reset after the core applied the clearing');
        return result;
      },
    });
    try {
      const key = { 'Idempotency-Key': 'clear-lost-0001' };
      const first = await clear(id, '30.00', {}, key);
      expect(first.statusCode).toBe(502);
      expect(core.state.holds.get(id)!.clearedMinor).toBe(3000n);
      // Nothing reserved stays behind, and the gateway's row waits for an answer it can merge.
      expect((await t.db.query(`SELECT count(*)::int AS n FROM authorization_reservations`)).rows).toEqual([{ n: 0 }]);
      expect((await call('GET', `/v1/transactions/${id}`)).json().result).toEqual(state(id, { held: '100.00' }));
      const retry = await clear(id, '30.00', {}, key);
      expect(retry.statusCode).toBe(200);
      expect(retry.json().result).toEqual(state(id, { held: '70.00', cleared: '30.00' }));
      expect(core.state.holds.get(id)!.clearedMinor).toBe(3000n);
      expect(await outstanding()).toBe(10000n);
      expect((await events('authorization.cleared')).map((e) => e.payload)).toEqual([
        { authorizationId: id, cardId: 'CARD-3001', entityId: 'ENT-1001', currency: 'EUR', amount: '30.00', final: false, released: '0.00', held: '70.00', cleared: '30.00' },
      ]);
    } finally {
      Reflect.deleteProperty(core, 'clearFunds');
    }
  });
});

describe('reversal', () => {
  it('reverses part, then the rest (no amount), releasing the credit; reversing twice is 409 and changes nothing', async () => {
    const id = await approved('100.00');
    const part = await reverse(id, { amount: '40.00', currency: 'EUR' });
    expect(part.statusCode).toBe(200);
    expect(part.json().result).toEqual(state(id, { held: '60.00', reversed: '40.00' }));
    expect(await outstanding()).toBe(6000n);
    const rest = await reverse(id);
    expect(rest.json().result).toEqual(state(id, { reversed: '100.00' }));
    expect(await outstanding()).toBe(0n);
    expect((await events('authorization.reversed')).map((e) => e.payload)).toEqual([
      { authorizationId: id, cardId: 'CARD-3001', entityId: 'ENT-1001', currency: 'EUR', amount: '40.00', held: '60.00', reversed: '40.00' },
      { authorizationId: id, cardId: 'CARD-3001', entityId: 'ENT-1001', currency: 'EUR', amount: '60.00', held: '0.00', reversed: '100.00' },
    ]);
    const before = await snapshot(id);
    const twice = await reverse(id);
    expect(twice.statusCode).toBe(409);
    expect(twice.json()).toEqual(businessProblem('Reversal Exceeds Held', 'REVERSAL_EXCEEDS_HELD', `Authorization ${id} holds nothing; there is nothing to reverse.`));
    expect(await snapshot(id)).toEqual(before);
  });
});

describe('refund', () => {
  it('refunds up to what was cleared; more is 409 and changes nothing', async () => {
    const id = await approved('100.00');
    await clear(id, '80.00', { final: true });
    const res = await refund(id, '30.00');
    expect(res.statusCode).toBe(200);
    expect(res.json().result).toEqual(state(id, { cleared: '80.00', reversed: '20.00', refunded: '30.00' }));
    expect(await outstanding()).toBe(5000n);
    expect((await events('transaction.refunded')).map((e) => e.payload)).toEqual([
      { transactionId: id, cardId: 'CARD-3001', entityId: 'ENT-1001', currency: 'EUR', amount: '30.00', refunded: '30.00' },
    ]);
    const before = await snapshot(id);
    const more = await refund(id, '50.01');
    expect(more.statusCode).toBe(409);
    expect(more.json()).toEqual(
      businessProblem('Refund Exceeds Cleared', 'REFUND_EXCEEDS_CLEARED', `Transaction ${id} has 50.00 cleared and not yet refunded, credited or disputed; a refund of 50.01 is more than that.`),
    );
    expect(await snapshot(id)).toEqual(before);
    // The transaction as it stands, to any role.
    const read = await call('GET', `/v1/transactions/${id}`, undefined, 'Read-Only');
    expect(read.json()).toEqual({ result: state(id, { cleared: '80.00', reversed: '20.00', refunded: '30.00' }), pagination: null });
  });
});

describe('bad input: a clear 4xx, nothing changed in the gateway or the core', () => {
  let id: string;
  let declined: string;
  beforeEach(async () => {
    id = await approved('100.00');
    await clear(id, '50.00');
    const res = await call('POST', '/v1/authorizations', { cardId: 'CARD-3001', amount: '60000.00', currency: 'EUR', merchant: CAFE, channel: 'POS' });
    declined = res.json().result.authorizationId;
  });

  const cases: [string, () => Promise<Awaited<ReturnType<typeof call>>>, number, () => unknown][] = [
    ['clearing more than held', () => clear(id, '50.01'), 409, () => businessProblem('Clearing Exceeds Held', 'CLEAR_EXCEEDS_HELD', `Authorization ${id} holds 50.00; a clearing of 50.01 is more than that.`)],
    ['reversing more than held', () => reverse(id, { amount: '60.00' }), 409, () => businessProblem('Reversal Exceeds Held', 'REVERSAL_EXCEEDS_HELD', `Authorization ${id} holds 50.00; a reversal of 60.00 is more than that.`)],
    ['refunding more than cleared', () => refund(id, '50.01'), 409, () => businessProblem('Refund Exceeds Cleared', 'REFUND_EXCEEDS_CLEARED', `Transaction ${id} has 50.00 cleared and not yet refunded, credited or disputed; a refund of 50.01 is more than that.`)],
    ['a negative amount', () => clear(id, '-1.00'), 400, () => validationProblem('clearingRequest', ['amount', 'DecimalAmount'])],
    ['a float amount', () => call('POST', `/v1/authorizations/${id}/clear`, { amount: 1.5, currency: 'EUR' }), 400, () => validationProblem('clearingRequest', ['amount', 'TypeMismatch'])],
    ['a zero amount', () => reverse(id, { amount: '0.00' }), 400, () => validationProblem('reversalRequest', ['amount', 'DecimalAmount'])],
    ['three decimals', () => refund(id, '1.005'), 400, () => validationProblem('refundRequest', ['amount', 'DecimalAmount'])],
    ['another currency on a clearing', () => clear(id, '1.00', { currency: 'USD' }), 400, () => validationProblem('clearingRequest', ['currency', 'Invalid'])],
    ['another currency on a reversal', () => reverse(id, { amount: '1.00', currency: 'GBP' }), 400, () => validationProblem('reversalRequest', ['currency', 'Invalid'])],
    ['another currency on a refund', () => refund(id, '1.00', { currency: 'USD' }), 400, () => validationProblem('refundRequest', ['currency', 'Invalid'])],
    ['a missing currency on a clearing', () => call('POST', `/v1/authorizations/${id}/clear`, { amount: '1.00' }), 400, () => validationProblem('clearingRequest', ['currency', 'NotNull'])],
    ['an unknown field', () => clear(id, '1.00', { tip: '1.00' }), 400, () => validationProblem('clearingRequest', ['tip', 'UnknownProperty'])],
    ['clearing a declined authorization', () => clear(declined, '1.00'), 409, () => businessProblem('Authorization Declined', 'AUTHORIZATION_DECLINED', `Authorization ${declined} was declined: nothing was held.`)],
    ['clearing an unknown authorization', () => clear('auth_unknown', '1.00'), 404, () => notFound("This tenant has no authorization 'auth_unknown'.")],
    ['refunding an unknown transaction', () => refund('auth_unknown', '1.00'), 404, () => notFound("This tenant has no card transaction 'auth_unknown'.")],
    ['a clearing from Operations', () => call('POST', `/v1/authorizations/${id}/clear`, { amount: '1.00', currency: 'EUR' }, 'Operations'), 403, () => ({
      type: `${PROBLEM_BASE}/problem-with-message`,
      title: 'Forbidden',
      status: 403,
      message: 'error.http.403',
      detail: "The role 'Operations' may not call this operation.",
    })],
  ];

  it.each(cases)('%s', async (_what, send, status, body) => {
    const before = await snapshot(id);
    const res = await send();
    expect(res.statusCode).toBe(status);
    expect(res.json()).toEqual(body());
    expect(await snapshot(id)).toEqual(before);
  });
});

describe('parallel changes of one authorization never go beyond its amount', () => {
  it('a full clearing and a full reversal sent together: exactly one succeeds, the other is refused', async () => {
    for (let round = 0; round < 5; round++) {
      const id = await approved('100.00');
      const [c, r] = await Promise.all([clear(id, '100.00', { final: true }), reverse(id, { amount: '100.00' })]);
      expect([c.statusCode, r.statusCode].sort()).toEqual([200, 409]);
      const won = c.statusCode === 200 ? state(id, { cleared: '100.00' }) : state(id, { reversed: '100.00' });
      expect((c.statusCode === 200 ? c : r).json().result).toEqual(won);
      expect((c.statusCode === 200 ? r : c).json().businessCode).toBe(c.statusCode === 200 ? 'REVERSAL_EXCEEDS_HELD' : 'CLEAR_EXCEEDS_HELD');
      const read = await call('GET', `/v1/transactions/${id}`);
      expect(read.json().result).toEqual(won);
      expect((await mockCore()).state.holds.get(id)).toMatchObject({ heldMinor: 0n, clearedMinor: c.statusCode === 200 ? 10000n : 0n });
    }
  });

  it('the gateway admits one of them even before a core that does not serialize its own changes: the core is asked once', async () => {
    // A careless core: it decides on the state it read, answers later, and writes that decision over whatever changed meanwhile.
    const core = await mockCore();
    let calls = 0;
    const careless = <O extends 'clearFunds' | 'reverseHold'>(operation: O) =>
      async (input: Parameters<MockCore[O]>[0]) => {
        calls++;
        const stale = new CoreBank(structuredClone(core.state));
        await new Promise((r) => setTimeout(r, 30));
        const result = stale[operation](input as never);
        if (result.status === 'succeeded') {
          core.state.holds.set(input.authorizationId, stale.state.holds.get(input.authorizationId)!);
          core.state.entities.set('ENT-1001', stale.state.entities.get('ENT-1001')!);
        }
        return result;
      };
    const id = await approved('100.00');
    Object.assign(core, { clearFunds: careless('clearFunds'), reverseHold: careless('reverseHold') });
    try {
      const [c, r] = await Promise.all([clear(id, '100.00', { final: true }), reverse(id, { amount: '100.00' })]);
      expect([c.statusCode, r.statusCode].sort()).toEqual([200, 409]);
      expect(calls).toBe(1);
    } finally {
      Reflect.deleteProperty(core, 'clearFunds');
      Reflect.deleteProperty(core, 'reverseHold');
    }
  });

  // While two changes are in flight, the core's answer to one may already count the other, which is then also
  // still reserved: the gateway errs on the side of refusing (decision 0344), so the safety bound is asserted,
  // not that every amount that was free found a taker.
  it('ten clearings of 20.00 and ten reversals of 20.00 of a hold of 100.00 sent together: at most five pass, the amounts add up', async () => {
    const id = await approved('100.00');
    const sent = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? clear(id, '20.00') : reverse(id, { amount: '20.00' }))));
    const passed = sent.filter((r) => r.statusCode === 200);
    expect(passed.length).toBeGreaterThanOrEqual(1);
    expect(passed.length).toBeLessThanOrEqual(5);
    expect(sent.filter((r) => r.statusCode === 409)).toHaveLength(20 - passed.length);
    const now = (await call('GET', `/v1/transactions/${id}`)).json().result;
    expect(BigInt(now.cleared.replace('.', '')) + BigInt(now.reversed.replace('.', ''))).toBe(2000n * BigInt(passed.length));
    expect(BigInt(now.held.replace('.', ''))).toBe(10000n - 2000n * BigInt(passed.length));
    const hold = (await mockCore()).state.holds.get(id)!;
    expect([hold.clearedMinor, hold.reversedMinor]).toEqual([BigInt(now.cleared.replace('.', '')), BigInt(now.reversed.replace('.', ''))]);
    expect((await t.db.query(`SELECT count(*)::int AS n FROM authorization_reservations`)).rows).toEqual([{ n: 0 }]);
  });

  it('refunds and a dispute sent together never claim more than was cleared', async () => {
    const id = await approved('100.00');
    await clear(id, '100.00', { final: true });
    const sent = await Promise.all([...Array.from({ length: 6 }, () => refund(id, '30.00')), openDispute(id, '30.00')]);
    const outcomes = sent.map((r) => (r.statusCode < 300 ? 'passed' : `${r.statusCode} ${r.json().businessCode}`));
    const passed = outcomes.filter((o) => o === 'passed').length;
    const answers = sent.map((r) => `${r.statusCode} ${r.body}`).join('\n');
    expect(passed, answers).toBeGreaterThanOrEqual(1);
    expect(passed, answers).toBeLessThanOrEqual(3);
    expect(outcomes.filter((o) => o !== 'passed').every((o) => /^409 (REFUND|DISPUTE)_EXCEEDS_CLEARED$/.test(o)), outcomes.join(', ')).toBe(true);
    const now = (await call('GET', `/v1/transactions/${id}`)).json().result;
    const minor = (s: string) => BigInt(s.replace('.', ''));
    expect(minor(now.refunded) + minor(now.disputed), JSON.stringify(now)).toBe(3000n * BigInt(passed));
  });
});

describe('disputes', () => {
  it('opens a dispute on a cleared transaction (Operations), reads it, and a won resolution credits the credit line once', async () => {
    const id = await approved('100.00');
    await clear(id, '100.00', { final: true });
    expect(await outstanding()).toBe(10000n);
    const opened = await openDispute(id, '60.00', { note: 'Arrived broken' });
    expect(opened.statusCode).toBe(201);
    const dispute = opened.json().result;
    const view = {
      disputeId: expect.stringMatching(/^dsp_[0-9a-f]{32}$/),
      transactionId: id,
      cardId: 'CARD-3001',
      entityId: 'ENT-1001',
      amount: '60.00',
      currency: 'EUR',
      reason: 'NOT_AS_DESCRIBED',
      note: 'Arrived broken',
      status: 'OPEN',
      credited: '0.00',
      openedBy: 'ops',
      resolvedBy: null,
      openedAt: expect.stringMatching(/Z$/),
      resolvedAt: null,
    };
    expect(dispute).toEqual(view);
    expect((await call('GET', `/v1/disputes/${dispute.disputeId}`, undefined, 'Read-Only')).json()).toEqual({ result: view, pagination: null });
    // The claim stands against a refund of the same money.
    expect((await call('GET', `/v1/transactions/${id}`)).json().result).toEqual(state(id, { cleared: '100.00', disputed: '60.00' }));
    const refused = await refund(id, '40.01');
    expect(refused.json()).toEqual(
      businessProblem('Refund Exceeds Cleared', 'REFUND_EXCEEDS_CLEARED', `Transaction ${id} has 40.00 cleared and not yet refunded, credited or disputed; a refund of 40.01 is more than that.`),
    );

    const won = await resolve(dispute.disputeId, 'WON');
    expect(won.statusCode).toBe(200);
    expect(won.json().result).toEqual({ ...view, status: 'WON', credited: '60.00', resolvedBy: 'ops', resolvedAt: expect.stringMatching(/Z$/) });
    expect(await outstanding()).toBe(4000n);
    expect((await mockCore()).state.holds.get(id)!.creditedMinor).toBe(6000n);
    expect((await call('GET', `/v1/transactions/${id}`)).json().result).toEqual(state(id, { cleared: '100.00', credited: '60.00' }));

    const again = await resolve(dispute.disputeId, 'LOST');
    expect(again.statusCode).toBe(409);
    expect(again.json()).toEqual(businessProblem('Dispute Not Open', 'DISPUTE_NOT_OPEN', `Dispute ${dispute.disputeId} was already resolved: WON; a dispute is resolved once.`));
    expect(await outstanding()).toBe(4000n);
    const common = { disputeId: dispute.disputeId, transactionId: id, cardId: 'CARD-3001', entityId: 'ENT-1001', currency: 'EUR', amount: '60.00' };
    expect((await events('dispute.')).map((e) => [e.type, e.payload])).toEqual([
      ['dispute.opened', { ...common, reason: 'NOT_AS_DESCRIBED' }],
      ['dispute.resolved', { ...common, outcome: 'WON', credited: '60.00' }],
    ]);
  });

  it('a lost dispute credits nothing and gives its claim back', async () => {
    const id = await approved('100.00');
    await clear(id, '100.00', { final: true });
    const dispute = (await openDispute(id, '100.00', {}, 'Admin')).json().result;
    expect((await refund(id, '0.01')).statusCode).toBe(409);
    const lost = await resolve(dispute.disputeId, 'LOST', 'Admin');
    expect(lost.json().result).toMatchObject({ status: 'LOST', credited: '0.00', resolvedBy: 'admin' });
    expect(await outstanding()).toBe(10000n);
    expect((await mockCore()).state.holds.get(id)!.creditedMinor).toBe(0n);
    expect((await refund(id, '100.00')).statusCode).toBe(200);
  });

  it('two resolutions sent together: one resolves, the other is 409, the credit is given once', async () => {
    const id = await approved('100.00');
    await clear(id, '100.00', { final: true });
    const dispute = (await openDispute(id, '50.00')).json().result;
    const both = await Promise.all([resolve(dispute.disputeId, 'WON'), resolve(dispute.disputeId, 'WON')]);
    expect(both.map((r) => r.statusCode).sort()).toEqual([200, 409]);
    expect(both.find((r) => r.statusCode === 409)!.json().businessCode).toBe('DISPUTE_NOT_OPEN');
    expect((await mockCore()).state.holds.get(id)!.creditedMinor).toBe(5000n);
    expect(await outstanding()).toBe(5000n);
  });

  it('refuses a dispute on an uncleared transaction, above what was cleared, in another currency, or from API Integration; nothing changes', async () => {
    const id = await approved('100.00');
    const untouched = await snapshot(id);
    const uncleared = await openDispute(id, '10.00');
    expect(uncleared.statusCode).toBe(409);
    expect(uncleared.json()).toEqual(businessProblem('Transaction Not Cleared', 'TRANSACTION_NOT_CLEARED', `Nothing of transaction ${id} was cleared yet; only a cleared amount can be disputed.`));
    expect(await snapshot(id)).toEqual(untouched);
    await clear(id, '30.00');
    const before = await snapshot(id);
    const above = await openDispute(id, '30.01');
    expect(above.json()).toEqual(
      businessProblem('Dispute Exceeds Cleared', 'DISPUTE_EXCEEDS_CLEARED', `Transaction ${id} has 30.00 cleared and not yet refunded, credited or disputed; a dispute of 30.01 is more than that.`),
    );
    expect((await openDispute(id, '1.00', { currency: 'USD' })).json()).toEqual(validationProblem('disputeRequest', ['currency', 'Invalid']));
    expect((await openDispute(id, '1.00', { reason: 'BORED' })).json()).toEqual(validationProblem('disputeRequest', ['reason', 'Invalid']));
    expect((await openDispute(id, '1.00', {}, 'API Integration')).statusCode).toBe(403);
    expect(await snapshot(id)).toEqual(before);
    expect((await call('GET', '/v1/disputes/dsp_unknown')).json()).toEqual(notFound("This tenant has no dispute 'dsp_unknown'."));
    expect((await resolve('dsp_unknown', 'WON')).json()).toEqual(notFound("This tenant has no dispute 'dsp_unknown'."));
  });
});

describe('what a bank reads: the transaction list and the transactions report', () => {
  it('lists the hold, its clearings, reversals, refund and dispute credit, each naming the authorization', async () => {
    const id = await approved('100.00');
    await clear(id, '30.00');
    await reverse(id, { amount: '20.00' });
    await clear(id, '40.00', { final: true });
    await refund(id, '5.00');
    const dispute = (await openDispute(id, '15.00')).json().result;
    await resolve(dispute.disputeId, 'WON');
    const res = await call('GET', '/v1/entities/ENT-1001/transactions', undefined, 'Read-Only');
    expect(res.statusCode).toBe(200);
    const entries = res.json().result as { transactionId: string; type: string; amount: string; status: string; authorizationId: string | null }[];
    expect(entries.map((e) => [e.type, e.amount, e.status, e.authorizationId])).toEqual([
      ['DISPUTE_CREDIT', '15.00', 'APPROVED', id],
      ['REFUND', '5.00', 'APPROVED', id],
      ['REVERSAL', '10.00', 'APPROVED', id],
      ['CLEARING', '40.00', 'APPROVED', id],
      ['REVERSAL', '20.00', 'APPROVED', id],
      ['CLEARING', '30.00', 'APPROVED', id],
      ['HOLD', '100.00', 'APPROVED', id],
    ]);
    expect(entries.at(-1)!.transactionId).toBe(id);

    const day = new Date().toISOString().slice(0, 10);
    const report = await call('GET', `/v1/reports/transactions?from=${day}&to=${day}`, undefined, 'Read-Only');
    expect(report.json().result).toEqual([
      {
        date: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
        approved: 1,
        declined: 0,
        approvedAmount: '100.00',
        clearings: 2,
        clearedAmount: '70.00',
        reversals: 1,
        reversedAmount: '30.00',
        refunds: 1,
        refundedAmount: '5.00',
      },
    ]);
    const csv = await call('GET', `/v1/reports/transactions?from=${day}&to=${day}`, undefined, 'Read-Only', 'demo', { accept: 'text/csv' });
    expect(csv.body.split('\r\n')[0]).toBe('date,approved,declined,approvedAmount,clearings,clearedAmount,reversals,reversedAmount,refunds,refundedAmount');
    expect(csv.body.split('\r\n')[1]).toMatch(/^\d{4}-\d{2}-\d{2},1,0,100\.00,2,70\.00,1,30\.00,1,5\.00$/);
  });
});

describe('a core without the capabilities', () => {
  const notSupported = (operation: string, res: Awaited<ReturnType<typeof call>>) => ({
    type: `${PROBLEM_BASE}/problem-with-message`,
    title: 'Not Implemented',
    status: 501,
    message: 'error.http.501',
    detail: supportDetail(`The operation ${operation} is not offered by the core-banking connector 'acme-core' this tenant routes it to; nothing was sent to the core.`, res),
    businessCode: 'OPERATION_NOT_SUPPORTED',
  });

  /** An approved authorization of 100.00 on the acme core, which offers none of the changes after it. */
  const acmeAuthorization = async () => {
    await t.db.query(`DELETE FROM disputes WHERE tenant_id = 'acme'`);
    await t.db.query(`DELETE FROM authorizations WHERE tenant_id = 'acme'`);
    await t.app.cardline.authorizations.insert('acme', {
      id: 'auth_acme1',
      cardId: 'CARD-3001',
      entityId: 'ENT-1001',
      status: 'APPROVED',
      declineReason: null,
      decidedBy: 'core',
      amountMinor: 10000n,
      approvedMinor: 10000n,
      currency: 'EUR',
      merchant: CAFE,
      channel: 'POS',
      networkReference: null,
      trail: [],
      at: new Date(),
    });
  };

  it('answers 501 for a clearing and a dispute, sends nothing to the core, and changes nothing', async () => {
    await acmeAuthorization();
    const res = await call('POST', '/v1/authorizations/auth_acme1/clear', { amount: '10.00', currency: 'EUR' }, 'API Integration', 'acme');
    expect(res.statusCode).toBe(501);
    expect(res.json()).toEqual(notSupported('clearFunds', res));
    const dispute = await call('POST', '/v1/transactions/auth_acme1/disputes', { reason: 'FRAUD', amount: '1.00', currency: 'EUR' }, 'Operations', 'acme');
    expect(dispute.statusCode).toBe(501);
    expect(dispute.json()).toEqual(notSupported('creditDispute', dispute));
    const row = await t.db.query(`SELECT held_minor::text, cleared_minor::text FROM authorizations WHERE tenant_id = 'acme'`);
    expect(row.rows).toEqual([{ held_minor: '10000', cleared_minor: '0' }]);
    expect((await t.db.query(`SELECT count(*)::int AS n FROM authorization_reservations WHERE tenant_id = 'acme'`)).rows).toEqual([{ n: 0 }]);
    expect((await t.db.query(`SELECT count(*)::int AS n FROM disputes WHERE tenant_id = 'acme'`)).rows).toEqual([{ n: 0 }]);
  });
  it('answers 501 for a reversal and a refund too (the refund of an amount the gateway counts as cleared), changing nothing', async () => {
    await acmeAuthorization();
    await t.db.query(`UPDATE authorizations SET held_minor = 5000, cleared_minor = 5000 WHERE tenant_id = 'acme' AND id = 'auth_acme1'`);
    const reversed = await call('POST', '/v1/authorizations/auth_acme1/reverse', { amount: '10.00', currency: 'EUR' }, 'API Integration', 'acme');
    expect(reversed.statusCode).toBe(501);
    expect(reversed.json()).toEqual(notSupported('reverseHold', reversed));
    const refunded = await call('POST', '/v1/transactions/auth_acme1/refund', { amount: '10.00', currency: 'EUR' }, 'API Integration', 'acme');
    expect(refunded.statusCode).toBe(501);
    expect(refunded.json()).toEqual(notSupported('refund', refunded));
    const row = await t.db.query(`SELECT held_minor::text, cleared_minor::text, reversed_minor::text, refunded_minor::text FROM authorizations WHERE tenant_id = 'acme'`);
    expect(row.rows).toEqual([{ held_minor: '5000', cleared_minor: '5000', reversed_minor: '0', refunded_minor: '0' }]);
    expect((await t.db.query(`SELECT count(*)::int AS n FROM authorization_reservations WHERE tenant_id = 'acme'`)).rows).toEqual([{ n: 0 }]);
  });
  it('answers 501 before the amounts are weighed: a refund where nothing is cleared, a reversal where nothing is held', async () => {
    await acmeAuthorization();
    const refunded = await call('POST', '/v1/transactions/auth_acme1/refund', { amount: '10.00', currency: 'EUR' }, 'API Integration', 'acme');
    expect(refunded.statusCode).toBe(501);
    expect(refunded.json()).toEqual(notSupported('refund', refunded));
    await t.db.query(`UPDATE authorizations SET held_minor = 0, reversed_minor = 10000 WHERE tenant_id = 'acme' AND id = 'auth_acme1'`);
    const reversed = await call('POST', '/v1/authorizations/auth_acme1/reverse', {}, 'API Integration', 'acme');
    expect(reversed.statusCode).toBe(501);
    expect(reversed.json()).toEqual(notSupported('reverseHold', reversed));
  });
});
