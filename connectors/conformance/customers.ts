// Customer, credit-line and transaction scenarios: registration, profile, card issue and replacement, every
// decline reason of an authorization, repayments, the limit floor, and paging newest first.
import { randomUUID } from 'node:crypto';
import type { AuthorizationInput, CardSummary, RegisterEntityInput, Transaction } from '../contract.js';
import type { Preferences } from '../../schemas/cards.js';
import type { DeclineReason } from '../../schemas/transactions.js';
import { check, expectAmount, expectEqual, expectRejected, expectSame, expectSucceeded } from './expect.js';
import { fromMinor, toMinor } from '../shared/money.js';
import type { Scenario, ScenarioContext } from './types.js';

const scenario = (name: string, run: Scenario['run']): Scenario => ({ name, run });

const HOME = 'PT';
const CONTACT = { email: 'treasury@conformance.example', mobile: '+351910000099' };
const ADDRESS = { address1: '1 Conformance Way', city: 'Lisbon', state: 'Lisboa', country: 'PT', pin: '1100-001' };

const registration = (extra: Partial<RegisterEntityInput> = {}): RegisterEntityInput => ({
  name: 'Conformance Ltd',
  type: 'BUSINESS',
  contact: CONTACT,
  primaryAddress: ADDRESS,
  creditLimit: '20000.00',
  issueVirtualCard: true,
  ...extra,
});

/** The one card of a fixture entity. */
async function cardOf(s: ScenarioContext, entityId: string): Promise<CardSummary> {
  const cards = expectSucceeded(await s.connector.listCards({ entityId }, s.ctx()), `listing the cards of ${entityId}`);
  check(cards.length === 1, `${entityId} must start with exactly one card (demo fixtures), got ${cards.length}`);
  return cards[0]!;
}

/** An authorization at a domestic merchant by default; `at` defaults to now. */
const auth = (cardId: string, amount: string, extra: Partial<AuthorizationInput> = {}): AuthorizationInput => ({
  cardId,
  amount,
  merchant: { name: 'Cafe Central', mcc: '5814', country: HOME },
  channel: 'POS',
  at: new Date().toISOString(),
  homeCountry: HOME,
  timeZone: 'UTC',
  ...extra,
});

async function authorize(s: ScenarioContext, input: AuthorizationInput, what: string): Promise<Transaction> {
  const t = expectSucceeded(await s.connector.authorize(input, s.ctx()), what);
  expectEqual(t.cardId, input.cardId, `${what}: cardId`);
  expectAmount(t.amount, input.amount, `${what}: amount`);
  expectEqual(t.channel, input.channel, `${what}: channel`);
  check(typeof t.transactionId === 'string' && t.transactionId.length > 0, `${what}: a transactionId`);
  return t;
}

async function expectApproved(s: ScenarioContext, input: AuthorizationInput, what: string): Promise<Transaction> {
  const t = await authorize(s, input, what);
  expectEqual(t.status, 'APPROVED', `${what}: status`);
  expectEqual(t.declineReason, null, `${what}: declineReason`);
  return t;
}

async function expectDeclined(s: ScenarioContext, input: AuthorizationInput, reason: DeclineReason, what: string): Promise<Transaction> {
  const t = await authorize(s, input, what);
  expectEqual(t.status, 'DECLINED', `${what}: status`);
  expectEqual(t.declineReason, reason, `${what}: declineReason`);
  return t;
}

async function expectOutstanding(s: ScenarioContext, entityId: string, outstanding: string, available: string, what: string) {
  const line = expectSucceeded(await s.connector.getCreditLimit({ entityId }, s.ctx()), `reading the credit line of ${entityId}`);
  expectAmount(line.outstanding, outstanding, `${what}: outstanding`);
  expectAmount(line.availableCredit, available, `${what}: availableCredit`);
}

async function setPreferences(s: ScenarioContext, cardId: string, preferences: Preferences) {
  expectSucceeded(await s.connector.updatePreferences({ cardId, preferences }, s.ctx()), `setting the preferences of ${cardId}`);
}

/** One decline reason: the card prepared by `setup`, then the authorization it must decline, and nothing drawn. */
const declineScenario = (reason: DeclineReason, setup: (s: ScenarioContext, cardId: string) => Promise<AuthorizationInput>): Scenario =>
  scenario(`declines an authorization: ${reason}`, async (s) => {
    const { cardId } = await cardOf(s, 'ENT-1002');
    const input = await setup(s, cardId);
    const t = await expectDeclined(s, input, reason, `the authorization that must be declined ${reason}`);
    await expectOutstanding(s, 'ENT-1002', '0.00', '50000.00', 'after the decline');
    // A decline is a transaction too.
    const page = expectSucceeded(await s.connector.listTransactions({ entityId: 'ENT-1002', limit: 10 }, s.ctx()), 'listing the transactions');
    expectSame(page.transactions[0], t, 'the newest transaction listed');
  });

export const customerScenarios: Scenario[] = [
  scenario('registers a customer with its first virtual card', async (s) => {
    const r = expectSucceeded(await s.connector.registerEntity(registration(), s.ctx()), 'registering Conformance Ltd');
    const { entity, card } = r;
    check(typeof entity.entityId === 'string' && entity.entityId.length > 0, 'the core assigns an entityId');
    expectSame(
      { ...entity, entityId: 'any' },
      { entityId: 'any', name: 'Conformance Ltd', type: 'BUSINESS', contact: CONTACT, primaryAddress: ADDRESS, creditLimit: entity.creditLimit, outstanding: entity.outstanding, availableCredit: entity.availableCredit, cardCount: 1 },
      'the entity registered',
    );
    expectAmount(entity.creditLimit, '20000.00', 'creditLimit');
    expectAmount(entity.outstanding, '0.00', 'outstanding');
    expectAmount(entity.availableCredit, '20000.00', 'availableCredit');
    check(card !== undefined, 'a first virtual card');
    expectEqual(card.entityId, entity.entityId, 'the card belongs to the entity');
    expectEqual(`${card.form}/${card.state}`, 'VIRTUAL/ACTIVE', 'the first card');
    check(/^\d{6}\*+\d{4}$/.test(card.panMasked), 'the card carries a masked number only');
    expectSame(expectSucceeded(await s.connector.getEntity({ entityId: entity.entityId }, s.ctx()), 'reading it'), entity, 'the entity read');
    const cards = expectSucceeded(await s.connector.listCards({ entityId: entity.entityId }, s.ctx()), 'listing its cards');
    expectSame(cards, [card], 'its cards');
  }),

  scenario('registers a customer under the id it is given, without a card, and refuses the id twice', async (s) => {
    const r = expectSucceeded(await s.connector.registerEntity(registration({ entityId: 'ENT-CONF-1', type: 'INDIVIDUAL', issueVirtualCard: false }), s.ctx()), 'registering ENT-CONF-1');
    expectEqual(r.entity.entityId, 'ENT-CONF-1', 'entityId');
    expectEqual(r.entity.type, 'INDIVIDUAL', 'type');
    expectEqual(r.entity.cardCount, 0, 'cardCount');
    check(r.card === undefined, 'no card was asked for');
    expectRejected(await s.connector.registerEntity(registration({ entityId: 'ENT-CONF-1' }), s.ctx()), 'ENT-CONF-1 again', 'ENTITY_EXISTS');
    expectRejected(await s.connector.registerEntity(registration({ entityId: 'ENT-1001' }), s.ctx()), 'ENT-1001 (a fixture)', 'ENTITY_EXISTS');
  }),

  scenario("updates an entity's contact and primary address", async (s) => {
    const address = { address1: '9 New Street', address2: 'Floor 3', city: 'Porto', state: 'Porto', country: 'PT', pin: '4000-001' };
    const updated = expectSucceeded(await s.connector.updateEntity({ entityId: 'ENT-1001', primaryAddress: address }, s.ctx()), 'moving ENT-1001');
    expectSame(updated.primaryAddress, address, 'the address answered');
    const contact = { email: 'new@demo.example', mobile: '+351910000777' };
    expectSucceeded(await s.connector.updateEntity({ entityId: 'ENT-1001', contact }, s.ctx()), 'a new contact');
    const read = expectSucceeded(await s.connector.getEntity({ entityId: 'ENT-1001' }, s.ctx()), 'reading ENT-1001');
    expectSame({ contact: read.contact, primaryAddress: read.primaryAddress }, { contact, primaryAddress: address }, 'the entity read');
    expectRejected(await s.connector.updateEntity({ entityId: 'ENT-0000', contact }, s.ctx()), 'updating ENT-0000', 'ENTITY_NOT_FOUND');
    expectRejected(await s.connector.getEntity({ entityId: 'ENT-0000' }, s.ctx()), 'reading ENT-0000', 'ENTITY_NOT_FOUND');
  }),

  scenario('issues another virtual card to an entity', async (s) => {
    const first = await cardOf(s, 'ENT-1001');
    const card = expectSucceeded(await s.connector.issueCard({ entityId: 'ENT-1001' }, s.ctx()), 'issuing a card to ENT-1001');
    check(card.cardId !== first.cardId, 'a new card');
    expectEqual(`${card.entityId} ${card.form}/${card.state}`, 'ENT-1001 VIRTUAL/ACTIVE', 'the card issued');
    expectEqual(expectSucceeded(await s.connector.getEntity({ entityId: 'ENT-1001' }, s.ctx()), 'reading ENT-1001').cardCount, 2, 'cardCount');
    expectRejected(await s.connector.issueCard({ entityId: 'ENT-0000' }, s.ctx()), 'issuing a card to ENT-0000', 'ENTITY_NOT_FOUND');
  }),

  scenario('replaces a blocked card with a virtual one that keeps its preferences, once', async (s) => {
    const { cardId } = await cardOf(s, 'ENT-1001');
    expectRejected(await s.connector.replaceCard({ cardId, reason: 'LOST' }, s.ctx()), 'replacing an ACTIVE card', 'CARD_NOT_BLOCKED');
    const preferences: Preferences = { domestic: { enabled: true, atm: { enabled: false } }, international: { enabled: true } };
    await setPreferences(s, cardId, preferences);
    expectSucceeded(await s.connector.blockCard({ cardId, reasonCode: 'LOST' }, s.ctx()), 'blocking it');
    const r = expectSucceeded(await s.connector.replaceCard({ cardId, reason: 'LOST' }, s.ctx()), 'replacing it');
    expectEqual(r.replacedCardId, cardId, 'replacedCardId');
    check(r.card.cardId !== cardId, 'a new card');
    expectEqual(`${r.card.entityId} ${r.card.form}/${r.card.state}`, 'ENT-1001 VIRTUAL/ACTIVE', 'the replacement');
    expectSame(expectSucceeded(await s.connector.getPreferences({ cardId: r.card.cardId }, s.ctx()), 'its preferences'), preferences, 'the preferences kept');
    expectRejected(await s.connector.replaceCard({ cardId, reason: 'LOST' }, s.ctx()), 'replacing it again', 'CARD_ALREADY_REPLACED');
    expectRejected(await s.connector.replaceCard({ cardId: 'CARD-0000', reason: 'LOST' }, s.ctx()), 'replacing CARD-0000', 'CARD_NOT_FOUND');
  }),

  scenario('replaces a blocked card with a physical one on a free kit', async (s) => {
    const { cardId } = await cardOf(s, 'ENT-1002');
    expectSucceeded(await s.connector.blockCard({ cardId, reasonCode: 'DAMAGED' }, s.ctx()), 'blocking it');
    expectRejected(await s.connector.replaceCard({ cardId, reason: 'DAMAGED', kitNo: 'KIT-9999' }, s.ctx()), 'on the unknown KIT-9999', 'PPCUST_018');
    expectRejected(await s.connector.replaceCard({ cardId, reason: 'DAMAGED', kitNo: 'KIT-2101' }, s.ctx()), 'on KIT-2101 (allocated to ENT-1003)', 'PPCUST_018');
    const r = expectSucceeded(await s.connector.replaceCard({ cardId, reason: 'DAMAGED', kitNo: 'KIT-2002' }, s.ctx()), 'on KIT-2002');
    expectEqual(`${r.card.form}/${r.card.state}/${r.card.fulfilment} ${r.card.kitNo}`, 'PHYSICAL/ACTIVE/ORDERED KIT-2002', 'the replacement');
  }),

  scenario('approves an authorization within the credit line and raises the outstanding balance', async (s) => {
    const { cardId } = await cardOf(s, 'ENT-1001');
    const t = await expectApproved(s, auth(cardId, '125.50'), 'a domestic POS authorization of 125.50');
    expectEqual(t.entityId, 'ENT-1001', 'entityId');
    expectEqual(t.international, false, 'international');
    expectSame(t.merchant, { name: 'Cafe Central', mcc: '5814', country: HOME }, 'merchant');
    await expectOutstanding(s, 'ENT-1001', '125.50', '49874.50', 'after the approval');
    const entity = expectSucceeded(await s.connector.getEntity({ entityId: 'ENT-1001' }, s.ctx()), 'reading ENT-1001');
    expectAmount(entity.outstanding, '125.50', 'the entity: outstanding');
  }),

  declineScenario('CARD_NOT_ACTIVE', async (s, cardId) => {
    expectSucceeded(await s.connector.lockCard({ cardId }, s.ctx()), 'locking the card');
    return auth(cardId, '10.00');
  }),

  declineScenario('INTERNATIONAL_DISABLED', async (_s, cardId) => auth(cardId, '10.00', { merchant: { name: 'Corner Deli', mcc: '5411', country: 'US' } })),

  declineScenario('CHANNEL_DISABLED', async (s, cardId) => {
    await setPreferences(s, cardId, { domestic: { enabled: true, atm: { enabled: false } } });
    return auth(cardId, '10.00', { channel: 'ATM' });
  }),

  scenario('declines an authorization on a channel the preferences do not name: CHANNEL_DISABLED', async (s) => {
    const { cardId } = await cardOf(s, 'ENT-1002');
    // Domestic preferences that name POS only: an ATM withdrawal is declined, POS still works (decision 0176).
    await setPreferences(s, cardId, { domestic: { enabled: true, pos: { enabled: true } } });
    await expectDeclined(s, auth(cardId, '10.00', { channel: 'ATM' }), 'CHANNEL_DISABLED', 'an ATM withdrawal the preferences do not name');
    await expectOutstanding(s, 'ENT-1002', '0.00', '50000.00', 'after the decline');
    await expectApproved(s, auth(cardId, '10.00'), 'a POS payment the preferences name');
    await expectOutstandingAfterRepaying(s, 'ENT-1002', '10.00');
  }),

  declineScenario('DAILY_LIMIT_EXCEEDED', async (s, cardId) => {
    await setPreferences(s, cardId, { domestic: { pos: { enabled: true, dailyLimit: '150.00' } } });
    await expectApproved(s, auth(cardId, '100.00'), 'the first 100.00');
    await expectApproved(s, auth(cardId, '50.00'), '50.00 more: exactly the daily limit');
    // Approved ones above drew 150.00; the scenario checks the decline of what follows and nothing else.
    await expectOutstandingAfterRepaying(s, 'ENT-1002', '150.00');
    return auth(cardId, '0.01');
  }),

  declineScenario('DAILY_COUNT_EXCEEDED', async (s, cardId) => {
    await setPreferences(s, cardId, { domestic: { ecom: { enabled: true, dailyCount: 2 } } });
    for (const n of [1, 2]) await expectApproved(s, auth(cardId, '1.00', { channel: 'ECOM' }), `e-commerce authorization ${n}`);
    await expectOutstandingAfterRepaying(s, 'ENT-1002', '2.00');
    return auth(cardId, '1.00', { channel: 'ECOM' });
  }),

  declineScenario('INSUFFICIENT_CREDIT', async (_s, cardId) => auth(cardId, '50000.01')),

  scenario("counts a day's limit in the tenant's time zone, and international use once switched on", async (s) => {
    const { cardId } = await cardOf(s, 'ENT-1003');
    const abroad = { name: 'Hotel Kolkata', mcc: '7011', country: 'IN' };
    await setPreferences(s, cardId, { international: { enabled: true, pos: { enabled: true, dailyLimit: '100.00' } } });
    const zone = { timeZone: 'Asia/Kolkata', merchant: abroad };
    // 23:30 on the 23rd in Kolkata, then 23:50 (same day there), then 00:15 on the 24th there (still the 23rd in UTC).
    const t = await expectApproved(s, auth(cardId, '80.00', { ...zone, at: '2026-11-23T18:00:00.000Z' }), '80.00 at 23:30 in Kolkata');
    expectEqual(t.international, true, 'international');
    await expectDeclined(s, auth(cardId, '30.00', { ...zone, at: '2026-11-23T18:20:00.000Z' }), 'DAILY_LIMIT_EXCEEDED', '30.00 at 23:50, the same day');
    await expectApproved(s, auth(cardId, '30.00', { ...zone, at: '2026-11-23T18:45:00.000Z' }), '30.00 at 00:15 the next day in Kolkata');
  }),

  scenario('a repayment lowers the outstanding balance, never below zero', async (s) => {
    const { cardId } = await cardOf(s, 'ENT-1001');
    await expectApproved(s, auth(cardId, '300.00'), 'an authorization of 300.00');
    const r = expectSucceeded(await s.connector.repay({ entityId: 'ENT-1001', amount: '100.00', at: new Date().toISOString() }, s.ctx()), 'repaying 100.00');
    expectEqual(r.entityId, 'ENT-1001', 'entityId');
    expectAmount(r.amount, '100.00', 'amount');
    expectAmount(r.outstanding, '200.00', 'outstanding after the repayment');
    expectAmount(r.availableCredit, '49800.00', 'availableCredit after the repayment');
    await expectOutstanding(s, 'ENT-1001', '200.00', '49800.00', 'the credit line after the repayment');
    expectRejected(await s.connector.repay({ entityId: 'ENT-1001', amount: '200.01', at: new Date().toISOString() }, s.ctx()), 'repaying more than owed', 'REPAYMENT_EXCEEDS_OUTSTANDING');
    expectRejected(await s.connector.repay({ entityId: 'ENT-0000', amount: '1.00', at: new Date().toISOString() }, s.ctx()), 'repaying for ENT-0000', 'ENTITY_NOT_FOUND');
  }),

  scenario('refuses a limit below the outstanding balance, even where decreases are allowed', async (s) => {
    const { cardId } = await cardOf(s, 'ENT-1003');
    await expectApproved(s, auth(cardId, '1000.00'), 'an authorization of 1000.00');
    expectRejected(await s.connector.upgradeLimit({ entityId: 'ENT-1003', amount: '999.99', allowDecrease: true }, s.ctx()), 'lowering the limit to 999.99', 'LIMIT_BELOW_OUTSTANDING');
    expectSucceeded(await s.connector.upgradeLimit({ entityId: 'ENT-1003', amount: '1000.00', allowDecrease: true }, s.ctx()), 'lowering it to 1000.00');
    await expectOutstanding(s, 'ENT-1003', '1000.00', '0.00', 'the credit line at its floor');
    await expectDeclined(s, auth(cardId, '0.01'), 'INSUFFICIENT_CREDIT', 'one cent more');
  }),

  scenario('lists transactions newest first, a page at a time, unmoved by new ones', async (s) => {
    const { cardId } = await cardOf(s, 'ENT-1001');
    const made: Transaction[] = [];
    for (const amount of ['1.00', '2.00', '3.00', '4.00', '5.00']) made.push(await expectApproved(s, auth(cardId, amount), `authorizing ${amount}`));
    const ids = (ts: Transaction[]) => ts.map((t) => t.amount);
    const first = expectSucceeded(await s.connector.listTransactions({ entityId: 'ENT-1001', limit: 2 }, s.ctx()), 'the first page');
    expectSame(ids(first.transactions), ['5.00', '4.00'], 'the first page');
    check(first.next !== null, 'a next page');
    // A transaction made while paging lands above the pages already seen.
    await expectApproved(s, auth(cardId, '6.00'), 'authorizing 6.00 meanwhile');
    const second = expectSucceeded(await s.connector.listTransactions({ entityId: 'ENT-1001', limit: 2, before: first.next! }, s.ctx()), 'the second page');
    expectSame(ids(second.transactions), ['3.00', '2.00'], 'the second page');
    const third = expectSucceeded(await s.connector.listTransactions({ entityId: 'ENT-1001', limit: 2, before: second.next! }, s.ctx()), 'the third page');
    expectSame(ids(third.transactions), ['1.00'], 'the third page');
    expectEqual(third.next, null, 'no page after the last');
    expectSame(third.transactions[0], made[0], 'the oldest transaction, as it was answered');
    // Filters: status and card, and a time window that holds nothing.
    await expectDeclined(s, auth(cardId, '60000.00'), 'INSUFFICIENT_CREDIT', 'a declined one');
    const declined = expectSucceeded(await s.connector.listTransactions({ entityId: 'ENT-1001', status: 'DECLINED', limit: 10 }, s.ctx()), 'the declined ones');
    expectSame(ids(declined.transactions), ['60000.00'], 'the declined ones');
    const byCard = expectSucceeded(await s.connector.listTransactions({ entityId: 'ENT-1001', cardId, limit: 50 }, s.ctx()), 'by card');
    expectEqual(byCard.transactions.length, 7, 'transactions of the card');
    const none = expectSucceeded(await s.connector.listTransactions({ entityId: 'ENT-1001', to: '2000-01-01T00:00:00.000Z', limit: 10 }, s.ctx()), 'before 2000');
    expectSame(none, { transactions: [], next: null }, 'a window without transactions');
    expectRejected(await s.connector.listTransactions({ entityId: 'ENT-1001', limit: 2, before: 'TXN-UNKNOWN' }, s.ctx()), 'an unknown cursor', 'TRANSACTION_NOT_FOUND');
    expectRejected(await s.connector.listTransactions({ entityId: 'ENT-0000', limit: 2 }, s.ctx()), 'ENT-0000', 'ENTITY_NOT_FOUND');
  }),

  scenario('a retried authorization with the same idempotency key is decided once', async (s) => {
    const { cardId } = await cardOf(s, 'ENT-1002');
    const key = `conformance-${randomUUID()}`;
    const input = auth(cardId, '40.00');
    const first = expectSucceeded(await s.connector.authorize(input, s.ctx({ idempotencyKey: key })), 'the first call');
    const retry = expectSucceeded(await s.connector.authorize(input, s.ctx({ idempotencyKey: key })), 'the retry');
    expectSame(retry, first, 'the retry (it must answer the first outcome)');
    await expectOutstanding(s, 'ENT-1002', '40.00', '49960.00', 'after the retry');
  }),
];

/** Repays what the setup's approvals drew, so that the decline scenario sees an untouched credit line. */
async function expectOutstandingAfterRepaying(s: ScenarioContext, entityId: string, drawn: string) {
  await expectOutstanding(s, entityId, drawn, fromMinor(toMinor('50000.00') - toMinor(drawn)), 'after the setup');
  expectSucceeded(await s.connector.repay({ entityId, amount: drawn, at: new Date().toISOString() }, s.ctx()), `repaying ${drawn}`);
}
