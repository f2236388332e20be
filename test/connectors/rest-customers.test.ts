// The REST connector's mappings of the customer operations: requests out (only what the caller gave) and
// answers in, each confirming *this* request or read as pending (writes) or a failure (reads).
import { describe, expect, it } from 'vitest';
import type { AuthorizationInput, RegisterEntityInput } from '../../connectors/contract.js';
import {
  corePath,
  fromCoreCardIssued,
  fromCoreCardReplaced,
  fromCoreEntityRead,
  fromCoreEntityRegistered,
  fromCoreRepayment,
  fromCoreTransaction,
  fromCoreTransactionPage,
  toCoreEntityRegistration,
  toCoreReplacement,
} from '../../connectors/rest/transformers.js';
import { CORE_PROTOCOL } from '../../connectors/rest/protocol.js';

const CONTACT = { email: 'a@b.example', mobile: '+351910000001' };
const ADDRESS = { address1: '1 Road', city: 'Lisbon', state: 'Lisboa', country: 'PT', pin: '1000-001' };
const ENTITY = { entityId: 'ENT-1', name: 'Acme', type: 'BUSINESS', contact: CONTACT, primaryAddress: ADDRESS, creditLimit: '100.00', outstanding: '40.00', availableCredit: '60.00', cardCount: 1 };
const CARD = { cardId: 'CARD-1', entityId: 'ENT-1', form: 'VIRTUAL', state: 'ACTIVE', maskedPan: '400000******0017', expiry: '12/29' };
const SUMMARY = { cardId: 'CARD-1', entityId: 'ENT-1', form: 'VIRTUAL', state: 'ACTIVE', panMasked: '400000******0017', expiry: '12/29' };
const REGISTRATION: RegisterEntityInput = { name: 'Acme', type: 'BUSINESS', contact: CONTACT, primaryAddress: ADDRESS, creditLimit: '100.00', issueVirtualCard: true };
const AUTH: AuthorizationInput = {
  cardId: 'CARD-1',
  amount: '12.50',
  merchant: { name: 'Shop', mcc: '5411', country: 'PT' },
  channel: 'POS',
  at: '2026-11-23T10:00:00.000Z',
  homeCountry: 'PT',
  timeZone: 'UTC',
};
const TXN = { transactionId: 'TXN-1', cardId: 'CARD-1', entityId: 'ENT-1', amount: '12.50', channel: 'POS', merchant: AUTH.merchant, international: false, status: 'APPROVED', declineReason: null, at: AUTH.at };
const ok = (value: unknown) => ({ kind: 'result', result: { status: 'succeeded', value } });
const PENDING = { kind: 'result', result: { status: 'pending' } };

describe('requests', () => {
  it('a registration sends only what the caller gave; a replacement its kit only when given', () => {
    expect(toCoreEntityRegistration(REGISTRATION)).toEqual({ name: 'Acme', type: 'BUSINESS', contact: CONTACT, primaryAddress: ADDRESS, creditLimit: '100.00', issueVirtualCard: true });
    expect(toCoreReplacement({ cardId: 'CARD-1', reason: 'LOST' })).toEqual({ reason: 'LOST' });
    expect(toCoreReplacement({ cardId: 'CARD-1', reason: 'LOST', kitNo: 'KIT-1' })).toEqual({ reason: 'LOST', kitNo: 'KIT-1' });
  });

  it('the transaction list: identifiers in the path, the filters and the page in the query', () => {
    expect(corePath(CORE_PROTOCOL.listTransactions, { entityId: 'ENT 1', limit: 2, before: 'TXN-9', status: 'DECLINED' })).toBe(
      '/v1/entities/ENT%201/transactions?status=DECLINED&limit=2&before=TXN-9',
    );
  });
});

describe('answers', () => {
  it('a registration: the entity and its card, or pending when the answer is not this registration', () => {
    expect(fromCoreEntityRegistered({ status: 200, body: { status: 'APPLIED', entity: ENTITY, card: CARD } }, REGISTRATION)).toEqual(ok({ entity: ENTITY, card: SUMMARY }));
    for (const body of [
      { status: 'APPLIED', entity: ENTITY },
      { status: 'APPLIED', entity: { ...ENTITY, name: 'Other' }, card: CARD },
      { status: 'APPLIED', entity: { ...ENTITY, availableCredit: '100.00' }, card: CARD },
      { status: 'APPLIED', entity: ENTITY, card: { ...CARD, entityId: 'ENT-2' } },
    ]) {
      expect(fromCoreEntityRegistered({ status: 200, body }, REGISTRATION)).toEqual(PENDING);
    }
    expect(fromCoreEntityRegistered({ status: 422, body: { error: { code: 'ENTITY_EXISTS', message: 'taken' } } }, REGISTRATION)).toEqual({
      kind: 'result',
      result: { status: 'rejected', code: 'ENTITY_EXISTS', message: 'taken' },
    });
  });

  it('a card issued must be VIRTUAL and ACTIVE for the entity; a replacement the new card on the kit asked for', () => {
    expect(fromCoreCardIssued({ status: 200, body: { status: 'APPLIED', ...CARD } }, { entityId: 'ENT-1' })).toEqual(ok(SUMMARY));
    expect(fromCoreCardIssued({ status: 200, body: { status: 'APPLIED', ...CARD, state: 'LOCKED' } }, { entityId: 'ENT-1' })).toEqual(PENDING);
    const replaced = { status: 'APPLIED', replacedCardId: 'CARD-0', card: CARD };
    expect(fromCoreCardReplaced({ status: 200, body: replaced }, { cardId: 'CARD-0', reason: 'LOST' })).toEqual(ok({ replacedCardId: 'CARD-0', card: SUMMARY }));
    expect(fromCoreCardReplaced({ status: 200, body: replaced }, { cardId: 'CARD-0', reason: 'LOST', kitNo: 'KIT-1' })).toEqual(PENDING);
    expect(fromCoreCardReplaced({ status: 200, body: { ...replaced, replacedCardId: 'CARD-9' } }, { cardId: 'CARD-0', reason: 'LOST' })).toEqual(PENDING);
  });

  it('an authorization: the transaction of this card, amount and channel; a repayment of this entity and amount', () => {
    expect(fromCoreTransaction({ status: 200, body: { status: 'APPLIED', transaction: TXN } }, AUTH)).toEqual(ok(TXN));
    expect(fromCoreTransaction({ status: 200, body: { status: 'APPLIED', transaction: { ...TXN, amount: '12.00' } } }, AUTH)).toEqual(PENDING);
    const declined = { ...TXN, status: 'DECLINED', declineReason: 'INSUFFICIENT_CREDIT' };
    expect(fromCoreTransaction({ status: 200, body: { status: 'APPLIED', transaction: declined } }, AUTH)).toEqual(ok(declined));
    const repaid = { status: 'APPLIED', repaymentId: 'RPY-1', entityId: 'ENT-1', amount: '10.00', outstanding: '30.00', availableCredit: '70.00', at: AUTH.at };
    const input = { entityId: 'ENT-1', amount: '10.00', at: AUTH.at };
    expect(fromCoreRepayment({ status: 200, body: repaid }, input)).toEqual(ok({ repaymentId: 'RPY-1', entityId: 'ENT-1', amount: '10.00', outstanding: '30.00', availableCredit: '70.00', at: AUTH.at }));
    expect(fromCoreRepayment({ status: 202, body: { status: 'ACCEPTED' } }, input)).toEqual(PENDING);
  });

  it('reads: an entity, a page of transactions; anything else is a failure of the core', () => {
    expect(fromCoreEntityRead({ status: 200, body: ENTITY }, 'ENT-1')).toEqual(ok(ENTITY));
    expect(fromCoreEntityRead({ status: 200, body: ENTITY }, 'ENT-2')).toMatchObject({ kind: 'unavailable', retryable: false });
    const query = { entityId: 'ENT-1', limit: 1 };
    expect(fromCoreTransactionPage({ status: 200, body: { entityId: 'ENT-1', transactions: [TXN], next: 'TXN-1' } }, query)).toEqual(ok({ transactions: [TXN], next: 'TXN-1' }));
    // More than a page, or another entity's transaction, is not an answer to this read.
    expect(fromCoreTransactionPage({ status: 200, body: { entityId: 'ENT-1', transactions: [TXN, TXN], next: null } }, query)).toMatchObject({ kind: 'unavailable' });
    expect(fromCoreTransactionPage({ status: 200, body: { entityId: 'ENT-1', transactions: [{ ...TXN, entityId: 'ENT-2' }], next: null } }, query)).toMatchObject({ kind: 'unavailable' });
  });
});
