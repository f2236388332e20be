// Card transaction scenarios after the gateway's pipeline: the core's hold (credit available, partial approvals),
// clearings, reversals, refunds and dispute credits, whose amounts never go below zero or above what they derive from.
import { randomUUID } from 'node:crypto';
import type { HoldInput, HoldState } from '../contract.js';
import { fromMinor, toMinor } from '../shared/money.js';
import { check, describeResult, expectAmount, expectEqual, expectRejected, expectSucceeded, fail } from './expect.js';
import type { Scenario, ScenarioContext } from './types.js';

const scenario = (name: string, run: Scenario['run']): Scenario => ({ name, run });

/** Card of ENT-1001 in the demo fixtures. */
const CARD = 'CARD-3001';
const now = () => new Date().toISOString();

const hold = (amount: string, extra: Partial<HoldInput> = {}): HoldInput => ({
  authorizationId: `auth-${randomUUID()}`,
  cardId: CARD,
  amount,
  merchant: { name: 'Cafe Central', mcc: '5814', country: 'PT' },
  channel: 'POS',
  partialAllowed: false,
  at: now(),
  ...extra,
});

async function held(s: ScenarioContext, amount: string, what: string, extra: Partial<HoldInput> = {}): Promise<HoldState> {
  const input = hold(amount, extra);
  const h = expectSucceeded(await s.connector.holdFunds(input, s.ctx()), what);
  expectEqual(h.authorizationId, input.authorizationId, `${what}: authorizationId`);
  expectEqual(h.cardId, CARD, `${what}: cardId`);
  expectEqual(h.entityId, 'ENT-1001', `${what}: entityId`);
  return h;
}

async function expectAvailable(s: ScenarioContext, available: string, what: string) {
  const line = expectSucceeded(await s.connector.getCreditLimit({ entityId: 'ENT-1001' }, s.ctx()), 'reading the credit line of ENT-1001');
  expectAmount(line.availableCredit, available, `${what}: availableCredit`);
}

export const holdScenarios: Scenario[] = [
  scenario('holds an authorization on the credit line and declines one above the available credit', async (s) => {
    const h = await held(s, '120.00', 'holding 120.00');
    expectEqual(h.approved, true, 'approved');
    expectEqual(h.declineReason, null, 'declineReason');
    expectAmount(h.authorized, '120.00', 'authorized');
    expectAmount(h.held, '120.00', 'held');
    expectAmount(h.availableCredit, '49880.00', 'availableCredit');
    const d = await held(s, '49880.01', 'holding more than is available');
    expectEqual(d.approved, false, 'approved of the decline');
    expectEqual(d.declineReason, 'INSUFFICIENT_CREDIT', 'declineReason of the decline');
    expectAmount(d.held, '0.00', 'held of the decline');
    await expectAvailable(s, '49880.00', 'after the decline');
    expectRejected(await s.connector.holdFunds(hold('1.00', { cardId: 'CARD-9999' }), s.ctx()), 'a hold on CARD-9999', 'CARD_NOT_FOUND');
  }),

  scenario('a partial approval holds what is available', async (s) => {
    await held(s, '49900.00', 'holding 49900.00');
    const p = await held(s, '250.00', 'holding 250.00 with partialAllowed', { partialAllowed: true });
    expectEqual(p.approved, true, 'approved');
    expectAmount(p.authorized, '100.00', 'authorized (what was available)');
    expectAmount(p.held, '100.00', 'held');
    await expectAvailable(s, '0.00', 'after the partial approval');
  }),

  scenario('clears part of a hold, then finally, releasing the rest; never more than is held', async (s) => {
    const h = await held(s, '100.00', 'holding 100.00');
    const first = expectSucceeded(await s.connector.clearFunds({ authorizationId: h.authorizationId, amount: '30.00', final: false, at: now() }, s.ctx()), 'clearing 30.00');
    expectAmount(first.held, '70.00', 'held after the first clearing');
    expectAmount(first.cleared, '30.00', 'cleared after the first clearing');
    expectRejected(
      await s.connector.clearFunds({ authorizationId: h.authorizationId, amount: '70.01', final: false, at: now() }, s.ctx()),
      'clearing 70.01 of 70.00 held',
      'CLEAR_EXCEEDS_HELD',
    );
    const last = expectSucceeded(await s.connector.clearFunds({ authorizationId: h.authorizationId, amount: '50.00', final: true, at: now() }, s.ctx()), 'clearing 50.00, final');
    expectAmount(last.held, '0.00', 'held after the final clearing');
    expectAmount(last.cleared, '80.00', 'cleared after the final clearing');
    expectAmount(last.reversed, '20.00', 'released by the final clearing');
    await expectAvailable(s, '49920.00', 'after the final clearing');
    expectRejected(
      await s.connector.clearFunds({ authorizationId: 'auth-unknown', amount: '1.00', final: false, at: now() }, s.ctx()),
      'clearing an unknown authorization',
      'AUTHORIZATION_NOT_FOUND',
    );
  }),

  scenario('reverses part of a hold, then the rest; a reversal of nothing held is refused', async (s) => {
    const h = await held(s, '100.00', 'holding 100.00');
    const part = expectSucceeded(await s.connector.reverseHold({ authorizationId: h.authorizationId, amount: '40.00', at: now() }, s.ctx()), 'reversing 40.00');
    expectAmount(part.held, '60.00', 'held after the partial reversal');
    const rest = expectSucceeded(await s.connector.reverseHold({ authorizationId: h.authorizationId, at: now() }, s.ctx()), 'reversing the rest');
    expectAmount(rest.held, '0.00', 'held after the full reversal');
    expectAmount(rest.reversed, '100.00', 'reversed');
    await expectAvailable(s, '50000.00', 'after the reversals');
    expectRejected(await s.connector.reverseHold({ authorizationId: h.authorizationId, at: now() }, s.ctx()), 'reversing twice', 'REVERSAL_EXCEEDS_HELD');
  }),

  scenario('refunds and credits a won dispute up to what was cleared, never more', async (s) => {
    const h = await held(s, '100.00', 'holding 100.00');
    expectRejected(await s.connector.refund({ authorizationId: h.authorizationId, amount: '1.00', at: now() }, s.ctx()), 'refunding before any clearing', 'REFUND_EXCEEDS_CLEARED');
    expectSucceeded(await s.connector.clearFunds({ authorizationId: h.authorizationId, amount: '100.00', final: true, at: now() }, s.ctx()), 'clearing 100.00');
    const r = expectSucceeded(await s.connector.refund({ authorizationId: h.authorizationId, amount: '25.00', at: now() }, s.ctx()), 'refunding 25.00');
    expectAmount(r.refunded, '25.00', 'refunded');
    const c = expectSucceeded(
      await s.connector.creditDispute({ authorizationId: h.authorizationId, disputeId: `dsp-${randomUUID()}`, amount: '75.00', at: now() }, s.ctx()),
      'crediting a dispute of 75.00',
    );
    expectAmount(c.credited, '75.00', 'credited');
    await expectAvailable(s, '50000.00', 'after the refund and the credit');
    expectRejected(await s.connector.refund({ authorizationId: h.authorizationId, amount: '0.01', at: now() }, s.ctx()), 'refunding beyond what was cleared', 'REFUND_EXCEEDS_CLEARED');
    expectRejected(
      await s.connector.creditDispute({ authorizationId: h.authorizationId, disputeId: `dsp-${randomUUID()}`, amount: '0.01', at: now() }, s.ctx()),
      'crediting beyond what was cleared',
      'DISPUTE_EXCEEDS_CLEARED',
    );
  }),

  scenario('lists a hold and what followed it in the transaction list, each entry naming the authorization', async (s) => {
    const h = await held(s, '100.00', 'holding 100.00', { homeCountry: 'PT' });
    const id = h.authorizationId;
    expectSucceeded(await s.connector.clearFunds({ authorizationId: id, amount: '30.00', final: false, at: now() }, s.ctx()), 'clearing 30.00');
    expectSucceeded(await s.connector.reverseHold({ authorizationId: id, amount: '20.00', at: now() }, s.ctx()), 'reversing 20.00');
    expectSucceeded(await s.connector.clearFunds({ authorizationId: id, amount: '40.00', final: true, at: now() }, s.ctx()), 'clearing 40.00, final');
    expectSucceeded(await s.connector.refund({ authorizationId: id, amount: '5.00', at: now() }, s.ctx()), 'refunding 5.00');
    const declined = await held(s, '99999.00', 'holding more than is available');
    const page = expectSucceeded(await s.connector.listTransactions({ entityId: 'ENT-1001', limit: 50 }, s.ctx()), 'listing the transactions of ENT-1001');
    const mine = page.transactions.filter((t) => t.authorizationId === id || t.authorizationId === declined.authorizationId);
    const shown = mine.map((t) => `${t.type} ${t.status} ${fromMinor(toMinor(t.amount))}`);
    // Newest first: the decline, the refund, the final clearing's release and clearing, the reversal, the first clearing, the hold.
    const expected = ['HOLD DECLINED 99999.00', 'REFUND APPROVED 5.00', 'REVERSAL APPROVED 10.00', 'CLEARING APPROVED 40.00', 'REVERSAL APPROVED 20.00', 'CLEARING APPROVED 30.00', 'HOLD APPROVED 100.00'];
    check(JSON.stringify(shown) === JSON.stringify(expected), `expected the entries ${JSON.stringify(expected)}, got ${JSON.stringify(shown)}`);
    const hold = mine[mine.length - 1]!;
    expectEqual(hold.transactionId, id, "the hold's transactionId (the authorization's id)");
    expectEqual(hold.channel, 'POS', "the hold's channel");
    expectEqual(hold.international, false, "the hold's international (a merchant in the home country)");
    expectEqual(mine[0]!.declineReason, 'INSUFFICIENT_CREDIT', "the declined hold's declineReason");
    check(new Set(mine.map((t) => t.transactionId)).size === mine.length, `every entry has its own transactionId, got ${JSON.stringify(mine.map((t) => t.transactionId))}`);
  }),

  scenario('a retried hold with the same idempotency key holds once', async (s) => {
    const key = `conformance-${randomUUID()}`;
    const input = hold('10.00');
    const first = expectSucceeded(await s.connector.holdFunds(input, s.ctx({ idempotencyKey: key })), 'the first hold');
    const retry = expectSucceeded(await s.connector.holdFunds(input, s.ctx({ idempotencyKey: key })), 'the retry');
    expectAmount(retry.availableCredit, first.availableCredit, 'availableCredit of the retry (it must answer the first outcome)');
    await expectAvailable(s, '49990.00', 'after the retry');
    expectRejected(await s.connector.holdFunds(input, s.ctx()), 'a second hold under the same authorization id', 'AUTHORIZATION_EXISTS');
  }),

  scenario('concurrent clearing and reversal of one hold never go beyond its amount', async (s) => {
    const h = await held(s, '100.00', 'holding 100.00');
    const outcomes = await Promise.allSettled([
      s.connector.clearFunds({ authorizationId: h.authorizationId, amount: '100.00', final: true, at: now() }, s.ctx()),
      s.connector.reverseHold({ authorizationId: h.authorizationId, amount: '100.00', at: now() }, s.ctx()),
    ]);
    const results = outcomes.map((o) => (o.status === 'fulfilled' ? o.value : fail(`a call threw ${(o.reason as Error)?.message}`)));
    const won = results.filter((r) => r.status === 'succeeded');
    check(won.length === 1, `expected exactly one of clear and reverse to succeed, got ${results.map(describeResult).join('; ')}`);
    const loser = results.find((r) => r.status !== 'succeeded')!;
    check(loser.status === 'rejected', `the other must be refused, got ${describeResult(loser)}`);
  }),
];
