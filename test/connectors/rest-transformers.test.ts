// The REST connector's pure mappings, as tables: canonical → core requests, core answers → outcomes,
// transport errors → failure kinds, backoff, options; and the shared transport's breaker.
import { Value } from '@sinclair/typebox/value';
import { BrokenCircuitError, ExponentialBackoff } from 'cockatiel';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { PhysicalUpgradeInput, SetPinInput, UpgradeLimitInput } from '../../connectors/contract.js';
import { authorizationHeader } from '../../connectors/http/client.js';
import { UNREADABLE, classifyTransportError } from '../../connectors/http/failures.js';
import { CoreBreaker, fullJitter } from '../../connectors/http/policies.js';
import { RestOptions, RestOptionsError, resolveRestOptions } from '../../connectors/rest/options.js';
import {
  cleanMessage,
  corePath,
  fromCoreCard,
  fromCoreCardChange,
  fromCoreCardList,
  fromCoreCardResolution,
  fromCoreCreditLimit,
  fromCoreCreditLimitRead,
  fromCoreHold,
  fromCorePhysicalUpgrade,
  fromCorePin,
  fromCorePreferences,
  fromCorePreferencesApplied,
  isBareCardId,
  toCoreBlock,
  toCoreCreditLimit,
  toCorePhysicalUpgrade,
  toCorePin,
  toCorePreferences,
  toCoreHold,
  toCoreReversal,
} from '../../connectors/rest/transformers.js';
import {
  CoreBlockRequest,
  CoreCreditLimitRequest,
  CorePhysicalUpgradeRequest,
  CorePinRequest,
  CorePreferencesRequest,
  CoreHoldRequest,
  CoreReversalRequest,
} from '../../schemas/core-protocol.js';
import { CORE_PROTOCOL } from '../../connectors/rest/protocol.js';

const limit: UpgradeLimitInput = { entityId: 'ENT-1001', amount: '75000.00', allowDecrease: false };
const upgrade: PhysicalUpgradeInput = { kitNo: 'KIT-2001', entityId: 'ENT-1001', lockOnUpgrade: false };
const applied = { status: 'APPLIED', entityId: 'ENT-1001', previousLimit: '50000.00', newLimit: '75000.00' };
const upgraded = { status: 'APPLIED', cardId: 'CARD-3001', entityId: 'ENT-1001', kitNo: 'KIT-2001', cardState: 'ACTIVE' };
const refusal = (code: string, message = 'refused') => ({ error: { code, message } });

describe('requests', () => {
  it('credit limit: amount stays a string, the rule travels along', () => {
    const body = toCoreCreditLimit({ entityId: 'ENT-1', amount: '1000000.5', allowDecrease: true });
    expect(body).toEqual({ amount: '1000000.5', allowDecrease: true });
    expect(Value.Check(CoreCreditLimitRequest, body)).toBe(true);
  });

  it('entity ids are path-encoded', () => {
    expect(corePath(CORE_PROTOCOL.setCreditLimit, { ...limit, entityId: 'ENT 1/2' })).toBe('/v1/entities/ENT%201%2F2/credit-limit');
  });

  it('physical upgrade: fields left out stay out; the rest maps one to one', () => {
    expect(toCorePhysicalUpgrade({ kitNo: 'KIT-2101', lockOnUpgrade: true, entityId: undefined })).toEqual({ kitNo: 'KIT-2101', lockOnUpgrade: true });
    const full: PhysicalUpgradeInput = {
      kitNo: 'KIT-2001',
      entityId: 'ENT-1001',
      cardId: 'CARD-3001',
      communicationAddress: { address1: '1 Main St', city: 'Lisbon', state: 'L', country: 'PT', pin: '1000-001' },
      plasticCode: { code: 'PLAT', description: 'platinum' },
      lockOnUpgrade: false,
      preferences: { domestic: { atm: { enabled: true, dailyLimit: '500.00' } } },
    };
    const body = toCorePhysicalUpgrade(full);
    expect(body).toEqual(full);
    expect(Value.Check(CorePhysicalUpgradeRequest, body)).toBe(true);
  });
});

describe('credit-limit answers', () => {
  it.each([
    ['200 APPLIED', 200, applied, { status: 'succeeded', value: { entityId: 'ENT-1001', previousLimit: '50000.00', newLimit: '75000.00' } }],
    ['200 APPLIED with extra fields', 200, { ...applied, ledgerRef: 'x' }, { status: 'succeeded', value: { entityId: 'ENT-1001', previousLimit: '50000.00', newLimit: '75000.00' } }],
    ['200 APPLIED, newLimit 75000 (same amount, other spelling)', 200, { ...applied, newLimit: '75000' }, { status: 'succeeded', value: { entityId: 'ENT-1001', previousLimit: '50000.00', newLimit: '75000' } }],
    ['200 APPLIED for another entity', 200, { ...applied, entityId: 'ENT-1002' }, { status: 'pending' }],
    ['200 APPLIED with another amount', 200, { ...applied, newLimit: '70000.00' }, { status: 'pending' }],
    ['200 APPLIED with a float amount', 200, { ...applied, newLimit: 75000 }, { status: 'pending' }],
    ['200 APPLIED missing previousLimit', 200, { status: 'APPLIED', entityId: 'ENT-1001', newLimit: '75000.00' }, { status: 'pending' }],
    ['200 with status DONE', 200, { ...applied, status: 'DONE' }, { status: 'pending' }],
    ['200 with status ACCEPTED and a reference', 200, { status: 'ACCEPTED', reference: 'R-1' }, { status: 'pending', reference: 'R-1' }],
    ['200 with status PENDING', 200, { status: 'PENDING' }, { status: 'pending' }],
    ['200 with an unreadable body', 200, UNREADABLE, { status: 'pending' }],
    ['200 with a JSON string', 200, 'APPLIED', { status: 'pending' }],
    ['200 with null', 200, null, { status: 'pending' }],
    ['202 ACCEPTED', 202, { status: 'ACCEPTED', reference: 'R-2' }, { status: 'pending', reference: 'R-2' }],
    ['202 with an unreadable body', 202, UNREADABLE, { status: 'pending' }],
    ['202 claiming APPLIED', 202, applied, { status: 'pending' }],
    ['422 business refusal', 422, refusal('LIMIT_DECREASE_NOT_ALLOWED', 'no decrease'), { status: 'rejected', code: 'LIMIT_DECREASE_NOT_ALLOWED', message: 'no decrease' }],
    ['422 with a core-specific code', 422, refusal('ACME_77', 'acme says no'), { status: 'rejected', code: 'ACME_77', message: 'acme says no' }],
    ['422 with an unreadable body', 422, UNREADABLE, { status: 'pending' }],
    ['422 with a malformed code', 422, refusal('no such code!'), { status: 'pending' }],
    ['422 without error object', 422, { code: 'X' }, { status: 'pending' }],
    ['201 (not in the protocol)', 201, applied, { status: 'pending' }],
    ['204', 204, UNREADABLE, { status: 'pending' }],
    ['301', 301, UNREADABLE, { status: 'pending' }],
    ['409', 409, refusal('CONFLICT'), { status: 'pending' }],
    ['418', 418, UNREADABLE, { status: 'pending' }],
  ])('%s → %j', (_name, status, body, result) => {
    expect(fromCoreCreditLimit({ status, body }, limit)).toEqual({ kind: 'result', result });
  });

  it.each([
    [502, true],
    [503, true],
    [504, true],
    [500, false],
    [501, false],
    [599, false],
    [400, false],
    [401, false],
    [403, false],
    [404, false],
    [429, false],
  ])('%i → unavailable (retryable with a key: %s)', (status, retryable) => {
    const out = fromCoreCreditLimit({ status, body: refusal('CORE_UNAVAILABLE') }, limit);
    expect(out).toMatchObject({ kind: 'unavailable', retryable });
  });
});

describe('physical-upgrade answers', () => {
  const req = (over: Partial<PhysicalUpgradeInput>) => ({ ...upgrade, ...over });
  it.each([
    ['200 APPLIED ACTIVE', req({}), upgraded, { status: 'succeeded', value: { cardId: 'CARD-3001', entityId: 'ENT-1001', kitNo: 'KIT-2001', state: 'ACTIVE' } }],
    [
      '200 APPLIED PENDING_ACTIVATION',
      req({ lockOnUpgrade: true }),
      { ...upgraded, cardState: 'PENDING_ACTIVATION' },
      { status: 'succeeded', value: { cardId: 'CARD-3001', entityId: 'ENT-1001', kitNo: 'KIT-2001', state: 'PENDING_ACTIVATION' } },
    ],
    [
      '200 APPLIED, entity found by the core from the kit',
      { kitNo: 'KIT-2101', lockOnUpgrade: false },
      { ...upgraded, kitNo: 'KIT-2101', entityId: 'ENT-1003', cardId: 'CARD-3003' },
      { status: 'succeeded', value: { cardId: 'CARD-3003', entityId: 'ENT-1003', kitNo: 'KIT-2101', state: 'ACTIVE' } },
    ],
    ['200 APPLIED with an unknown card state', req({}), { ...upgraded, cardState: 'LOCKED' }, { status: 'pending' }],
    ['200 APPLIED for another kit', req({}), { ...upgraded, kitNo: 'KIT-2002' }, { status: 'pending' }],
    ['200 APPLIED for another entity', req({}), { ...upgraded, entityId: 'ENT-1002' }, { status: 'pending' }],
    ['200 APPLIED for another card', req({ cardId: 'CARD-3009' }), upgraded, { status: 'pending' }],
    ['200 APPLIED without cardId', req({}), { ...upgraded, cardId: undefined }, { status: 'pending' }],
    ['200 a credit-limit answer', req({}), applied, { status: 'pending' }],
  ])('200: %s', (_name, input, body, result) => {
    expect(fromCorePhysicalUpgrade({ status: 200, body }, input)).toEqual({ kind: 'result', result });
  });

  it('422 PPCUST_018 → rejected with the code and message', () => {
    expect(fromCorePhysicalUpgrade({ status: 422, body: refusal('PPCUST_018', 'Invalid Kit') }, req({ kitNo: 'KIT-9999' }))).toEqual({
      kind: 'result',
      result: { status: 'rejected', code: 'PPCUST_018', message: 'Invalid Kit' },
    });
  });

  it('503 → unavailable, retryable', () => {
    expect(fromCorePhysicalUpgrade({ status: 503, body: UNREADABLE }, upgrade)).toMatchObject({ kind: 'unavailable', retryable: true });
  });
});

// ── Card lifecycle ──────────────────────────────────────────────────────────────────────────────────

const coreCard = { cardId: 'CARD-3001', entityId: 'ENT-1001', form: 'VIRTUAL', state: 'LOCKED', maskedPan: '400000******3006', expiry: '12/29' };
const summary = { cardId: 'CARD-3001', entityId: 'ENT-1001', form: 'VIRTUAL', state: 'LOCKED', panMasked: '400000******3006', expiry: '12/29' };
const changed = (over: object = {}) => ({ status: 'APPLIED', ...coreCard, ...over });
const prefs = { domestic: { enabled: true, atm: { enabled: true, dailyLimit: '500.00' } } };
const pin: SetPinInput = { cardId: 'CARD-3001', pinBlock: '0412AC89ABCDEF67', format: 0, keyId: 'zpk-1' };

describe('lifecycle requests', () => {
  it('paths encode their identifiers', () => {
    expect(corePath(CORE_PROTOCOL.lockCard, { cardId: 'CARD 1/2' })).toBe('/v1/cards/CARD%201%2F2/lock');
    expect(corePath(CORE_PROTOCOL.getCard, { cardId: 'CARD-1' })).toBe('/v1/cards/CARD-1');
    expect(corePath(CORE_PROTOCOL.listCards, { entityId: 'ENT/1' })).toBe('/v1/entities/ENT%2F1/cards');
    expect(() => corePath(CORE_PROTOCOL.getCard, {} as { cardId: string })).toThrow('/v1/cards/{cardId}: the input has no cardId');
  });

  it('a reference other than a bare cardId is resolved first, with only the identifiers given', () => {
    expect(isBareCardId({ cardId: 'C' })).toBe(true);
    expect(isBareCardId({ cardId: 'C', entityId: 'E' })).toBe(false);
    expect(isBareCardId({ kitNo: 'K' })).toBe(false);
    expect(corePath(CORE_PROTOCOL.resolveCard, { action: 'activate', entityId: 'ENT 1' })).toBe('/v1/card-resolution?action=activate&entityId=ENT+1');
    expect(corePath(CORE_PROTOCOL.resolveCard, { kitNo: 'K&1', entityId: 'E', cardId: 'C', action: 'block' })).toBe(
      '/v1/card-resolution?action=block&cardId=C&entityId=E&kitNo=K%261',
    );
  });

  it('bodies follow the protocol schemas', () => {
    expect(toCoreBlock({ cardId: 'C', reasonCode: 'STOLEN' })).toEqual({ reasonCode: 'STOLEN' });
    expect(Value.Check(CoreBlockRequest, toCoreBlock({ entityId: 'E', reasonCode: 'STOLEN' }))).toBe(true);
    expect(toCorePreferences({ cardId: 'C', preferences: prefs })).toEqual({ preferences: prefs });
    expect(Value.Check(CorePreferencesRequest, toCorePreferences({ cardId: 'C', preferences: prefs }))).toBe(true);
    expect(toCorePin(pin)).toEqual({ pinBlock: '0412AC89ABCDEF67', format: 0, keyId: 'zpk-1' });
    expect(Value.Check(CorePinRequest, toCorePin(pin))).toBe(true);
    expect(Value.Check(CorePinRequest, { ...toCorePin(pin), pinBlock: '1234' })).toBe(false);
  });
});

describe('lifecycle change answers (writes: anything unrecognised is pending)', () => {
  it.each([
    ['200 APPLIED LOCKED', 200, changed(), { status: 'succeeded', value: summary }],
    ['200 APPLIED with extra fields', 200, changed({ ledger: 'x' }), { status: 'succeeded', value: summary }],
    [
      '200 APPLIED physical',
      200,
      changed({ form: 'PHYSICAL', kitNo: 'KIT-1', fulfilment: 'ORDERED' }),
      { status: 'succeeded', value: { ...summary, form: 'PHYSICAL', kitNo: 'KIT-1', fulfilment: 'ORDERED' } },
    ],
    ['200 APPLIED for another card', 200, changed({ cardId: 'CARD-3002' }), { status: 'pending' }],
    ['200 APPLIED still ACTIVE (not this change)', 200, changed({ state: 'ACTIVE' }), { status: 'pending' }],
    ['200 APPLIED with a full PAN instead of a masked one', 200, changed({ maskedPan: '4000000000003006' }), { status: 'pending' }],
    ['200 APPLIED without expiry', 200, changed({ expiry: undefined }), { status: 'pending' }],
    ['200 ACCEPTED', 200, { status: 'ACCEPTED', reference: 'R-9' }, { status: 'pending', reference: 'R-9' }],
    ['200 unreadable', 200, UNREADABLE, { status: 'pending' }],
    ['202', 202, { status: 'ACCEPTED' }, { status: 'pending' }],
    ['422 CARD_STATE_INVALID', 422, refusal('CARD_STATE_INVALID', 'only an ACTIVE card can be locked'), { status: 'rejected', code: 'CARD_STATE_INVALID', message: 'only an ACTIVE card can be locked' }],
    ['422 unreadable', 422, UNREADABLE, { status: 'pending' }],
    ['409', 409, refusal('CONFLICT'), { status: 'pending' }],
  ])('lock: %s', (_name, status, body, result) => {
    expect(fromCoreCardChange({ status, body }, 'lock', 'CARD-3001')).toEqual({ kind: 'result', result });
  });

  it('each change must show the state it leads to', () => {
    const ok = (change: 'activate' | 'unlock' | 'block' | 'advanceFulfilment', over: object, input = {}) =>
      fromCoreCardChange({ status: 200, body: changed(over) }, change, 'CARD-3001', input);
    expect(ok('activate', { state: 'ACTIVE' })).toMatchObject({ result: { status: 'succeeded' } });
    expect(ok('activate', { state: 'PENDING_ACTIVATION' })).toMatchObject({ result: { status: 'pending' } });
    expect(ok('unlock', { state: 'ACTIVE' })).toMatchObject({ result: { status: 'succeeded' } });
    expect(ok('block', { state: 'BLOCKED', blockReason: 'LOST' }, { reasonCode: 'LOST' })).toEqual({
      kind: 'result',
      result: { status: 'succeeded', value: { ...summary, state: 'BLOCKED', blockReason: 'LOST' } },
    });
    expect(ok('block', { state: 'BLOCKED', blockReason: 'FRAUD' }, { reasonCode: 'LOST' })).toMatchObject({ result: { status: 'pending' } });
    expect(ok('block', { state: 'BLOCKED' }, { reasonCode: 'LOST' })).toMatchObject({ result: { status: 'pending' } });
    expect(ok('advanceFulfilment', { form: 'PHYSICAL', fulfilment: 'EMBOSSED' })).toMatchObject({ result: { status: 'succeeded' } });
    expect(ok('advanceFulfilment', { form: 'VIRTUAL' })).toMatchObject({ result: { status: 'pending' } });
  });

  it('503 → unavailable, retryable with a key; 500 → unavailable, not retryable', () => {
    expect(fromCoreCardChange({ status: 503, body: UNREADABLE }, 'lock', 'C')).toMatchObject({ kind: 'unavailable', retryable: true });
    expect(fromCoreCardChange({ status: 500, body: UNREADABLE }, 'lock', 'C')).toMatchObject({ kind: 'unavailable', retryable: false });
  });

  it('preferences: succeeded only when the core stored what was sent', () => {
    const input = { cardId: 'CARD-3001', preferences: prefs };
    expect(fromCorePreferencesApplied({ status: 200, body: { status: 'APPLIED', cardId: 'CARD-3001', preferences: prefs } }, input)).toEqual({
      kind: 'result',
      result: { status: 'succeeded', value: prefs },
    });
    expect(fromCorePreferencesApplied({ status: 200, body: { status: 'APPLIED', cardId: 'CARD-3001', preferences: {} } }, input)).toMatchObject({
      result: { status: 'pending' },
    });
    expect(fromCorePreferencesApplied({ status: 200, body: { status: 'APPLIED', cardId: 'CARD-9', preferences: prefs } }, input)).toMatchObject({
      result: { status: 'pending' },
    });
  });

  it('PIN: the card only; an answer for another card is pending', () => {
    expect(fromCorePin({ status: 200, body: { status: 'APPLIED', cardId: 'CARD-3001', pinBlock: pin.pinBlock } }, 'CARD-3001')).toEqual({
      kind: 'result',
      result: { status: 'succeeded', value: { cardId: 'CARD-3001' } },
    });
    expect(fromCorePin({ status: 200, body: { status: 'APPLIED', cardId: 'CARD-3002' } }, 'CARD-3001')).toMatchObject({ result: { status: 'pending' } });
    expect(fromCorePin({ status: 422, body: refusal('CARD_STATE_INVALID', 'virtual') }, 'CARD-3001')).toMatchObject({
      result: { status: 'rejected', code: 'CARD_STATE_INVALID' },
    });
  });
});

describe('read answers (no pending read: anything unrecognised is unavailable)', () => {
  const details = { ...coreCard, state: 'ACTIVE', sensitive: { pan: '4000000000003006', cvv: '150' } };
  const detailsValue = { ...summary, state: 'ACTIVE', sensitive: { pan: '4000000000003006', cvv: '150' } };
  it.each([
    ['200 card', 200, details, { kind: 'result', result: { status: 'succeeded', value: detailsValue } }],
    [
      '200 card with preferences and plastic',
      200,
      { ...details, preferences: prefs, plasticCode: { code: 'P1' } },
      { kind: 'result', result: { status: 'succeeded', value: { ...detailsValue, preferences: prefs, plasticCode: { code: 'P1' } } } },
    ],
    ['422 CARD_NOT_FOUND', 422, refusal('CARD_NOT_FOUND', 'no card'), { kind: 'result', result: { status: 'rejected', code: 'CARD_NOT_FOUND', message: 'no card' } }],
  ])('getCard: %s', (_name, status, body, expected) => {
    expect(fromCoreCard({ status, body }, 'CARD-3001')).toEqual(expected);
  });

  it.each([
    ['200 for another card', 200, { ...details, cardId: 'CARD-3002' }, false],
    ['200 whose masked PAN is another card’s', 200, { ...details, maskedPan: '400000******9999' }, false],
    ['200 without the sensitive block', 200, { ...details, sensitive: undefined }, false],
    ['200 ACCEPTED', 200, { status: 'ACCEPTED' }, false],
    ['200 unreadable', 200, UNREADABLE, false],
    ['202', 202, { status: 'ACCEPTED' }, false],
    ['201', 201, details, false],
    ['301', 301, UNREADABLE, false],
    ['404', 404, refusal('NOT_FOUND'), false],
    ['409', 409, refusal('CONFLICT'), false],
    ['422 malformed code', 422, refusal('no such code!'), false],
    ['422 unreadable', 422, UNREADABLE, false],
    ['500', 500, refusal('CORE_ERROR'), false],
    ['502', 502, UNREADABLE, true],
    ['503', 503, refusal('CORE_UNAVAILABLE'), true],
    ['504', 504, UNREADABLE, true],
  ])('getCard: %s → unavailable (retryable: %s)', (_name, status, body, retryable) => {
    expect(fromCoreCard({ status, body }, 'CARD-3001')).toMatchObject({ kind: 'unavailable', retryable });
  });

  it('listCards: the entity’s cards with masked numbers; a list for another entity or with its cards is unavailable', () => {
    expect(fromCoreCardList({ status: 200, body: { entityId: 'ENT-1001', cards: [coreCard] } }, 'ENT-1001')).toEqual({
      kind: 'result',
      result: { status: 'succeeded', value: [summary] },
    });
    expect(fromCoreCardList({ status: 200, body: { entityId: 'ENT-1001', cards: [] } }, 'ENT-1001')).toMatchObject({ result: { value: [] } });
    expect(fromCoreCardList({ status: 200, body: { entityId: 'ENT-1002', cards: [] } }, 'ENT-1001')).toMatchObject({ kind: 'unavailable' });
    expect(fromCoreCardList({ status: 200, body: { entityId: 'ENT-1001', cards: [{ ...coreCard, entityId: 'ENT-2' }] } }, 'ENT-1001')).toMatchObject({
      kind: 'unavailable',
    });
    expect(fromCoreCardList({ status: 200, body: { entityId: 'ENT-1001', cards: [{ ...coreCard, maskedPan: '4000000000003006' }] } }, 'ENT-1001')).toMatchObject({
      kind: 'unavailable',
    });
    expect(fromCoreCardList({ status: 422, body: refusal('ENTITY_NOT_FOUND', 'no') }, 'ENT-0')).toMatchObject({
      result: { status: 'rejected', code: 'ENTITY_NOT_FOUND' },
    });
  });

  it('preferences, credit limit and card resolution', () => {
    expect(fromCorePreferences({ status: 200, body: { cardId: 'CARD-3001', preferences: prefs } }, 'CARD-3001')).toEqual({
      kind: 'result',
      result: { status: 'succeeded', value: prefs },
    });
    expect(fromCorePreferences({ status: 200, body: { cardId: 'CARD-3001', preferences: { domestic: { x: 1 } } } }, 'CARD-3001')).toMatchObject({
      kind: 'unavailable',
    });
    expect(fromCorePreferences({ status: 200, body: { cardId: 'CARD-2', preferences: prefs } }, 'CARD-3001')).toMatchObject({ kind: 'unavailable' });
    const line = { entityId: 'ENT-1', creditLimit: '50000.00', outstanding: '120.50', availableCredit: '49879.50' };
    // A credit line whose available credit is not limit − outstanding, or without them, is not an answer.
    for (const body of [{ ...line, availableCredit: '50000.00' }, { entityId: 'ENT-1', creditLimit: '50000.00' }]) {
      expect(fromCoreCreditLimitRead({ status: 200, body }, 'ENT-1')).toMatchObject({ kind: 'unavailable', retryable: false });
    }
    expect(fromCoreCreditLimitRead({ status: 200, body: line }, 'ENT-1')).toEqual({
      kind: 'result',
      result: { status: 'succeeded', value: line },
    });
    expect(fromCoreCreditLimitRead({ status: 200, body: { entityId: 'ENT-1', creditLimit: 50000 } }, 'ENT-1')).toMatchObject({ kind: 'unavailable' });
    expect(fromCoreCreditLimitRead({ status: 200, body: { entityId: 'ENT-2', creditLimit: '1.00' } }, 'ENT-1')).toMatchObject({ kind: 'unavailable' });
    expect(fromCoreCardResolution({ status: 200, body: { cardId: 'CARD-3001' } })).toEqual({
      kind: 'result',
      result: { status: 'succeeded', value: { cardId: 'CARD-3001' } },
    });
    expect(fromCoreCardResolution({ status: 422, body: refusal('CARD_AMBIGUOUS', 'send cardId') })).toMatchObject({
      result: { status: 'rejected', code: 'CARD_AMBIGUOUS' },
    });
    expect(fromCoreCardResolution({ status: 200, body: {} })).toMatchObject({ kind: 'unavailable', retryable: false });
  });
});

describe('refusal messages', () => {
  it('are single-line, bounded, with card numbers masked', () => {
    expect(cleanMessage('card 4000000000003001 is\nblocked')).toBe('card 400000******3001 is blocked');
    expect(cleanMessage('x'.repeat(2000))).toHaveLength(500);
  });
});

describe('transport errors', () => {
  const err = (code: string, extra: object = {}) => Object.assign(new Error(code), { code }, extra);
  it.each([
    ['connection refused', err('ECONNREFUSED'), false, 'not-sent'],
    ['connect timeout', err('UND_ERR_CONNECT_TIMEOUT'), false, 'not-sent'],
    ['DNS failure', err('ENOTFOUND'), false, 'not-sent'],
    ['happy eyeballs, all refused', Object.assign(new AggregateError([err('ECONNREFUSED'), err('ECONNREFUSED')]), { code: 'ECONNREFUSED' }), false, 'not-sent'],
    ['happy eyeballs, one reset', new AggregateError([err('ECONNREFUSED'), err('ECONNRESET')]), false, 'maybe-sent'],
    ['reset', err('ECONNRESET'), false, 'maybe-sent'],
    ['undici socket error', err('UND_ERR_SOCKET', { cause: err('ECONNRESET') }), false, 'maybe-sent'],
    ['broken pipe', err('EPIPE'), false, 'maybe-sent'],
    ['an error without a code', new Error('boom'), false, 'maybe-sent'],
    ['headers timeout', err('UND_ERR_HEADERS_TIMEOUT'), false, 'timeout'],
    ['body timeout', err('UND_ERR_BODY_TIMEOUT'), false, 'timeout'],
    ['abort by a signal', new DOMException('aborted', 'AbortError'), false, 'timeout'],
    ['deadline reason', new DOMException('deadline', 'TimeoutError'), false, 'timeout'],
    ['anything after our signal fired', err('ECONNREFUSED'), true, 'timeout'],
  ])('%s → %s', (_name, error, aborted, kind) => {
    expect(classifyTransportError(error, aborted).kind).toBe(kind);
  });
});

describe('backoff', () => {
  /** The delay before retry `n` (0-based) of cockatiel's exponential backoff with full jitter. */
  const delay = (n: number, random: () => number) => {
    let backoff = new ExponentialBackoff({ generator: fullJitter(random), initialDelay: 50, maxDelay: 1000 }).next();
    for (let i = 0; i < n; i++) backoff = backoff.next(undefined);
    return backoff.duration;
  };
  it('is full jitter under an exponential ceiling, capped', () => {
    expect(delay(0, () => 0.999)).toBe(49);
    expect(delay(3, () => 0.5)).toBe(200);
    expect(delay(10, () => 0.999)).toBe(999);
    expect(delay(2, () => 0)).toBe(0);
  });
});

describe('auth headers', () => {
  it.each([
    [{ type: 'none' as const }, undefined],
    [{ type: 'bearer' as const, token: 't0k' }, 'Bearer t0k'],
    [{ type: 'basic' as const, username: 'core', password: 'pä:ss' }, `Basic ${Buffer.from('core:pä:ss').toString('base64')}`],
    [{ type: 'mtls' as const, cert: '/c.pem', key: '/k.pem' }, undefined],
  ])('%j → %s', (auth, header) => {
    expect(authorizationHeader(auth)).toBe(header);
  });
});

describe('options', () => {
  const check = (raw: unknown) => {
    const value = Value.Default(RestOptions, structuredClone(raw));
    return { value, errors: [...Value.Errors(RestOptions, value)].map((e) => e.path) };
  };

  it('fills every default from a baseUrl alone', () => {
    const { value, errors } = check({ baseUrl: 'http://127.0.0.1:9090/banks/demo' });
    expect(errors).toEqual([]);
    expect(value).toEqual({
      baseUrl: 'http://127.0.0.1:9090/banks/demo',
      auth: { type: 'none' },
      connections: 10,
      timeoutMs: 10_000,
      retries: { max: 2, baseDelayMs: 50, maxDelayMs: 1000 },
      breaker: { failureThreshold: 5, openMs: 30_000 },
    });
  });

  it.each([
    [{}, '/baseUrl'],
    [{ baseUrl: 'ftp://core/x' }, '/baseUrl'],
    [{ baseUrl: 'http://user:pw@core/x' }, '/baseUrl'],
    [{ baseUrl: 'not a url' }, '/baseUrl'],
    [{ baseUrl: 'http://core', extra: 1 }, '/extra'],
    [{ baseUrl: 'http://core', auth: { type: 'bearer' } }, '/auth'],
    [{ baseUrl: 'http://core', auth: { type: 'basic', username: 'a:b', password: 'x' } }, '/auth'],
    [{ baseUrl: 'http://core', auth: { type: 'oauth' } }, '/auth'],
    [{ baseUrl: 'http://core', connections: 0 }, '/connections'],
    [{ baseUrl: 'http://core', timeoutMs: 5 }, '/timeoutMs'],
    [{ baseUrl: 'http://core', retries: { max: 11 } }, '/retries/max'],
    [{ baseUrl: 'http://core', breaker: { openMs: 0 } }, '/breaker/openMs'],
    [{ baseUrl: 'http://core', breaker: { probes: 1 } }, '/breaker/probes'],
    // Never honoured (decision 0040): refused at save time instead of silently ignored.
    [{ baseUrl: 'http://core', breaker: { halfOpenProbes: 2 } }, '/breaker/halfOpenProbes'],
  ])('refuses %j at %s', (raw, path) => {
    expect(check(raw).errors).toContain(path);
  });

  it('checks at create what the schema cannot', () => {
    expect(() => resolveRestOptions({ baseUrl: 'http://core/x', auth: { type: 'mtls', cert: '/c', key: '/k' } })).toThrow(RestOptionsError);
    expect(() => resolveRestOptions({ baseUrl: 'http://core/x', retries: { max: 1, baseDelayMs: 100, maxDelayMs: 10 } })).toThrow(/maxDelayMs/);
    expect(resolveRestOptions({ baseUrl: 'https://core/x/' }).baseUrl.pathname).toBe('/x/');
  });

  it('accepts the one probe older configurations name, and refuses any other count with the reason', () => {
    expect(check({ baseUrl: 'http://core', breaker: { halfOpenProbes: 1 } }).errors).toEqual([]);
    expect(resolveRestOptions({ baseUrl: 'http://core/x', breaker: { halfOpenProbes: 1 } as never }).breaker).toEqual({ failureThreshold: 5, openMs: 30_000 });
    expect(() => resolveRestOptions({ baseUrl: 'http://core/x', breaker: { halfOpenProbes: 3 } as never })).toThrow(
      "connector 'rest': /breaker/halfOpenProbes: 3 is not supported; a half-open breaker probes with exactly one call (decision 0040): remove the option",
    );
  });
});

describe('circuit breaker', () => {
  /** The breaker counts thrown errors and answers equal to 'fail'. */
  const FAILS = { error: () => true, answer: (v: unknown) => v === 'fail' };
  const fail = (b: CoreBreaker) => b.policy.execute(async () => 'fail');
  const succeed = (b: CoreBreaker) => b.policy.execute(async () => 'ok');
  const gate = () => {
    let open!: (answer: string) => void;
    return { answer: new Promise<string>((r) => (open = r)), open: (answer: string) => open(answer) };
  };
  const tick = () => new Promise((r) => setImmediate(r));
  afterEach(() => {
    vi.useRealTimers();
  });

  it('closed → open after N consecutive failures → half-open after openMs → closed on a probe success', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: 0 });
    const states: string[] = [];
    const b = new CoreBreaker({ failureThreshold: 3, openMs: 100 }, FAILS);
    b.onChange((s) => states.push(s));
    await fail(b);
    await succeed(b); // a success in between resets the count
    for (let i = 0; i < 3; i++) await fail(b);
    expect(b.snapshot()).toEqual({ state: 'open', consecutiveFailures: 3, opens: 1 });
    await expect(succeed(b)).rejects.toBeInstanceOf(BrokenCircuitError);
    vi.setSystemTime(100);
    expect(b.snapshot().state).toBe('half-open');
    const probe = gate();
    const probing = b.policy.execute(() => probe.answer);
    // One probe at a time: a second call waits for the probe's outcome instead of reaching the core.
    let reached = false;
    const second = b.policy.execute(async () => {
      reached = true;
      return 'ok';
    });
    await tick();
    expect(reached).toBe(false);
    probe.open('ok');
    await probing;
    await second;
    expect(reached).toBe(true);
    expect(b.snapshot()).toEqual({ state: 'closed', consecutiveFailures: 0, opens: 1 });
    expect(states).toEqual(['open', 'half-open', 'closed']);
  });

  it('a failed probe re-opens it for another openMs; the calls held behind it fail fast', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: 0 });
    const b = new CoreBreaker({ failureThreshold: 1, openMs: 50 }, FAILS);
    await fail(b);
    vi.setSystemTime(50);
    const p1 = gate();
    const probe = b.policy.execute(() => p1.answer);
    let reached = false;
    // One probe at a time: a second call waits for the probe's outcome instead of reaching the core.
    const second = b.policy.execute(async () => {
      reached = true;
      return 'ok';
    });
    await tick();
    expect(reached).toBe(false);
    p1.open('fail');
    await probe;
    expect(b.snapshot()).toMatchObject({ state: 'open', opens: 2 });
    await expect(second).rejects.toBeInstanceOf(BrokenCircuitError);
    expect(reached).toBe(false);
    vi.setSystemTime(99);
    await expect(succeed(b)).rejects.toBeInstanceOf(BrokenCircuitError);
    vi.setSystemTime(100);
    await expect(succeed(b)).resolves.toBe('ok');
  });

  it('counts only the failures its filter names; an error it does not name neither counts nor resets', async () => {
    const b = new CoreBreaker({ failureThreshold: 2, openMs: 50 }, { error: (e) => e === 'transport', answer: (v) => v === 'fail' });
    await fail(b);
    await expect(b.policy.execute(() => Promise.reject(new Error('a bug, not the core')))).rejects.toThrow('a bug');
    expect(b.snapshot()).toEqual({ state: 'closed', consecutiveFailures: 1, opens: 0 });
    await succeed(b);
    expect(b.snapshot().consecutiveFailures).toBe(0);
  });
});

describe('holds: requests and answers', () => {
  const base = {
    authorizationId: 'auth-1',
    cardId: 'CARD-3001',
    entityId: 'ENT-1001',
    approved: true,
    declineReason: null,
    authorized: '100.00',
    held: '60.00',
    cleared: '30.00',
    reversed: '10.00',
    refunded: '5.00',
    credited: '0.00',
    availableCredit: '49940.00',
  };
  const answer = (hold: Record<string, unknown>) => ({ status: 200, body: { status: 'APPLIED', hold }, headers: {} }) as never;

  it('reads a coherent hold of the authorization asked about', () => {
    expect(fromCoreHold(answer(base), { authorizationId: 'auth-1' })).toEqual({ kind: 'result', result: { status: 'succeeded', value: base } });
  });

  it.each([
    ['another authorization', { authorizationId: 'auth-2' }],
    ['parts that do not make up what was authorized', { held: '61.00' }],
    ['more given back than was cleared', { refunded: '20.00', credited: '15.00' }],
    ['a decline that holds something', { approved: false, declineReason: 'INSUFFICIENT_CREDIT' }],
    ['an approval with a decline reason', { declineReason: 'INSUFFICIENT_CREDIT' }],
    ['a negative amount', { reversed: '-10.00' }],
  ])('reads %s as pending, never as success', (_what, change) => {
    expect(fromCoreHold(answer({ ...base, ...change }), { authorizationId: 'auth-1' })).toEqual({ kind: 'result', result: { status: 'pending' } });
  });

  it('sends a reversal without an amount as "all that is held"', () => {
    expect(toCoreReversal({ authorizationId: 'auth-1', at: '2026-11-28T10:00:00Z' })).toEqual({ at: '2026-11-28T10:00:00Z' });
    expect(Value.Check(CoreReversalRequest, toCoreReversal({ authorizationId: 'auth-1', amount: '5.00', at: '2026-11-28T10:00:00Z' }))).toBe(true);
    expect(Value.Check(CoreHoldRequest, toCoreHold({ authorizationId: 'auth-1', cardId: 'CARD-3001', amount: '5.00', merchant: { name: 'Shop', mcc: '5411', country: 'PT' }, channel: 'ECOM', partialAllowed: true, at: '2026-11-28T10:00:00Z' }))).toBe(true);
  });
});
