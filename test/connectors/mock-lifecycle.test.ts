// The mock core's card lifecycle (CoreBank, shared by the mock, file and mock-core-server connectors):
// card references, exact answers, copies not internals, idempotency, PIN secrecy, snapshots, deadlines.
import { describe, expect, it } from 'vitest';
import { ConnectorTimeoutError, type ConnectorContext } from '../../connectors/contract.js';

/** The core reads only the deadline and the key. */
const call = (c: Partial<ConnectorContext>) => c as ConnectorContext;
import { CoreBank } from '../../connectors/mock/core.js';
import { demoFixtures, fromSnapshot, toSnapshot } from '../../connectors/mock/fixtures.js';
import { MockCore } from '../../connectors/mock/index.js';

const PAN = '4000000000030017';
const summary3001 = { cardId: 'CARD-3001', entityId: 'ENT-1001', form: 'VIRTUAL', state: 'ACTIVE', panMasked: '400000******0017', expiry: '12/29' };

function bank() {
  return new CoreBank(demoFixtures());
}

/** ENT-1001 with a second ACTIVE virtual card, CARD-3901. */
function twoCards() {
  const b = bank();
  const first = b.state.cards.get('CARD-3001')!;
  b.state.cards.set('CARD-3901', { ...structuredClone(first), cardId: 'CARD-3901' });
  return b;
}

const physical = (b: CoreBank, kitNo: string, entityId: string, lockOnUpgrade = false) =>
  expect(b.upgradeToPhysical({ kitNo, entityId, lockOnUpgrade }).status).toBe('succeeded');

describe('answers', () => {
  it('listCards: summaries with the masked PAN and expiry, no PAN or CVV', () => {
    expect(bank().listCards({ entityId: 'ENT-1001' })).toEqual({ status: 'succeeded', value: [summary3001] });
  });

  it('getCard: the summary plus the sensitive PAN and CVV', () => {
    expect(bank().getCard({ cardId: 'CARD-3001' })).toEqual({ status: 'succeeded', value: { ...summary3001, sensitive: { pan: PAN, cvv: '272' } } });
  });

  it('a physical card shows its kit, fulfilment, plastic and preferences', () => {
    const b = bank();
    const preferences = { domestic: { enabled: true, atm: { enabled: true, dailyLimit: '300.00' } } };
    b.upgradeToPhysical({ kitNo: 'KIT-2001', entityId: 'ENT-1001', lockOnUpgrade: true, plasticCode: { code: 'PLT-1' }, preferences });
    expect(b.getCard({ cardId: 'CARD-3001' })).toEqual({
      status: 'succeeded',
      value: {
        ...summary3001,
        form: 'PHYSICAL',
        state: 'PENDING_ACTIVATION',
        fulfilment: 'ORDERED',
        kitNo: 'KIT-2001',
        plasticCode: { code: 'PLT-1' },
        preferences,
        sensitive: { pan: PAN, cvv: '272' },
      },
    });
  });

  it('getCreditLimit and lifecycle changes answer exactly', () => {
    const b = bank();
    expect(b.getCreditLimit({ entityId: 'ENT-1002' })).toEqual({ status: 'succeeded', value: { entityId: 'ENT-1002', creditLimit: '50000.00', outstanding: '0.00', availableCredit: '50000.00' } });
    expect(b.lockCard({ cardId: 'CARD-3001' })).toEqual({ status: 'succeeded', value: { ...summary3001, state: 'LOCKED' } });
    expect(b.blockCard({ cardId: 'CARD-3001', reasonCode: 'FRAUD' })).toEqual({
      status: 'succeeded',
      value: { ...summary3001, state: 'BLOCKED', blockReason: 'FRAUD' },
    });
    expect(b.unlockCard({ cardId: 'CARD-3001' })).toEqual({
      status: 'rejected',
      code: 'CARD_STATE_INVALID',
      message: 'Card CARD-3001: the card is blocked permanently.',
    });
  });

  it('upgradeToPhysical obeys the table: an explicit physical card → CARD_STATE_INVALID, the kit stays free', () => {
    const b = bank();
    physical(b, 'KIT-2001', 'ENT-1001');
    expect(b.upgradeToPhysical({ kitNo: 'KIT-2002', cardId: 'CARD-3001', lockOnUpgrade: false })).toEqual({
      status: 'rejected',
      code: 'CARD_STATE_INVALID',
      message: 'Card CARD-3001 cannot be upgraded: the card is already physical.',
    });
    expect(b.state.kits.get('KIT-2002')).toEqual({ kitNo: 'KIT-2002' });
    b.lockCard({ cardId: 'CARD-3002' });
    expect(b.upgradeToPhysical({ kitNo: 'KIT-2002', entityId: 'ENT-1002', lockOnUpgrade: false })).toEqual({
      status: 'rejected',
      code: 'CARD_STATE_INVALID',
      message: 'Card CARD-3002 cannot be upgraded: a LOCKED card cannot be upgraded.',
    });
  });
});

describe('card references', () => {
  it('an entity with one card: the card, and a refusal that says why when its state does not allow the change', () => {
    const b = bank();
    expect(b.activateCard({ entityId: 'ENT-1002' })).toEqual({
      status: 'rejected',
      code: 'CARD_STATE_INVALID',
      message: 'Card CARD-3002: only a PENDING_ACTIVATION card can be activated; this one is ACTIVE.',
    });
    expect(b.lockCard({ entityId: 'ENT-1002' })).toMatchObject({ status: 'succeeded', value: { cardId: 'CARD-3002', state: 'LOCKED' } });
  });

  it('an entity with several cards: the single one the change applies to, else CARD_AMBIGUOUS or CARD_STATE_INVALID', () => {
    const b = twoCards();
    expect(b.lockCard({ entityId: 'ENT-1001' })).toEqual({
      status: 'rejected',
      code: 'CARD_AMBIGUOUS',
      message: 'Entity ENT-1001 has 2 cards this applies to; send cardId.',
    });
    b.lockCard({ cardId: 'CARD-3001' });
    expect(b.lockCard({ entityId: 'ENT-1001' })).toMatchObject({ status: 'succeeded', value: { cardId: 'CARD-3901', state: 'LOCKED' } });
    expect(b.activateCard({ entityId: 'ENT-1001' })).toEqual({
      status: 'rejected',
      code: 'CARD_STATE_INVALID',
      message: 'None of the 2 cards of entity ENT-1001 is in a state that allows this; send cardId.',
    });
    expect(b.unlockCard({ entityId: 'ENT-1001' })).toMatchObject({ status: 'rejected', code: 'CARD_AMBIGUOUS' });
  });

  it('activation by entity picks the PENDING_ACTIVATION card among several', () => {
    const b = twoCards();
    b.upgradeToPhysical({ kitNo: 'KIT-2001', cardId: 'CARD-3901', entityId: 'ENT-1001', lockOnUpgrade: true });
    expect(b.activateCard({ entityId: 'ENT-1001' })).toMatchObject({ status: 'succeeded', value: { cardId: 'CARD-3901', state: 'ACTIVE' } });
  });

  it('a kit names the card mapped to it; every identifier given must name the same card', () => {
    const b = bank();
    physical(b, 'KIT-2101', 'ENT-1003', true);
    expect(b.activateCard({ kitNo: 'KIT-2001' })).toEqual({ status: 'rejected', code: 'CARD_NOT_FOUND', message: 'No card is mapped to kit KIT-2001.' });
    expect(b.activateCard({ kitNo: 'KIT-2101', entityId: 'ENT-1001' })).toEqual({
      status: 'rejected',
      code: 'CARD_NOT_FOUND',
      message: 'Kit KIT-2101 is not mapped to a card of entity ENT-1001.',
    });
    expect(b.activateCard({ cardId: 'CARD-3003', kitNo: 'KIT-2002' })).toEqual({
      status: 'rejected',
      code: 'CARD_NOT_FOUND',
      message: 'Card CARD-3003 is not mapped to kit KIT-2002.',
    });
    expect(b.lockCard({ cardId: 'CARD-3003', entityId: 'ENT-1001' })).toEqual({
      status: 'rejected',
      code: 'CARD_NOT_FOUND',
      message: 'Card CARD-3003 does not exist for entity ENT-1001.',
    });
    expect(b.activateCard({ kitNo: 'KIT-2101' })).toMatchObject({ status: 'succeeded', value: { cardId: 'CARD-3003', kitNo: 'KIT-2101', state: 'ACTIVE' } });
  });

  it('unknown entity → ENTITY_NOT_FOUND, unknown card → CARD_NOT_FOUND, no identifier → CARD_NOT_FOUND', () => {
    const b = bank();
    expect(b.lockCard({ entityId: 'ENT-0' })).toEqual({ status: 'rejected', code: 'ENTITY_NOT_FOUND', message: 'Entity ENT-0 does not exist.' });
    expect(b.lockCard({ cardId: 'CARD-0' })).toEqual({ status: 'rejected', code: 'CARD_NOT_FOUND', message: 'Card CARD-0 does not exist.' });
    expect(b.lockCard({})).toEqual({ status: 'rejected', code: 'CARD_NOT_FOUND', message: 'Name the card: cardId, entityId or kitNo.' });
    expect(b.listCards({ entityId: 'ENT-0' })).toMatchObject({ status: 'rejected', code: 'ENTITY_NOT_FOUND' });
    expect(b.getCreditLimit({ entityId: 'ENT-0' })).toMatchObject({ status: 'rejected', code: 'ENTITY_NOT_FOUND' });
    expect(b.getCard({ cardId: 'CARD-0' })).toMatchObject({ status: 'rejected', code: 'CARD_NOT_FOUND' });
  });

  it('resolveCardId: by the same rules; with the key of a change that succeeded, the card that change applied to', () => {
    const b = twoCards();
    b.lockCard({ cardId: 'CARD-3001' });
    expect(b.resolveCardId({ entityId: 'ENT-1001' }, 'lock')).toEqual({ status: 'succeeded', value: { cardId: 'CARD-3901' } });
    b.lockCard({ entityId: 'ENT-1001' }, 'k-1');
    b.unlockCard({ cardId: 'CARD-3001' });
    // Without the key the entity now resolves to CARD-3001; with it, to the card the keyed lock changed.
    expect(b.resolveCardId({ entityId: 'ENT-1001' }, 'lock')).toEqual({ status: 'succeeded', value: { cardId: 'CARD-3001' } });
    expect(b.resolveCardId({ entityId: 'ENT-1001' }, 'lock', 'k-1')).toEqual({ status: 'succeeded', value: { cardId: 'CARD-3901' } });
    expect(b.resolveCardId({ entityId: 'ENT-0' }, 'block')).toMatchObject({ status: 'rejected', code: 'ENTITY_NOT_FOUND' });
  });
});

describe('state stays the core’s own', () => {
  it('reads and write answers are copies: changing them changes nothing', () => {
    const b = bank();
    const prefs = { domestic: { enabled: true } };
    const answered = b.updatePreferences({ cardId: 'CARD-3001', preferences: prefs }, 'k-p');
    prefs.domestic.enabled = false;
    if (answered.status === 'succeeded') answered.value.domestic!.enabled = false;
    const read = b.getPreferences({ cardId: 'CARD-3001' });
    expect(read).toEqual({ status: 'succeeded', value: { domestic: { enabled: true } } });
    if (read.status === 'succeeded') read.value.domestic!.enabled = false;
    const card = b.getCard({ cardId: 'CARD-3001' });
    if (card.status === 'succeeded') card.value.preferences!.domestic!.enabled = false;
    const list = b.listCards({ entityId: 'ENT-1001' });
    if (list.status === 'succeeded') list.value[0]!.state = 'BLOCKED';
    expect(b.state.cards.get('CARD-3001')).toMatchObject({ state: 'ACTIVE', preferences: { domestic: { enabled: true } } });
    // The kept outcome of the keyed write is unchanged too.
    expect(b.updatePreferences({ cardId: 'CARD-3001', preferences: {} }, 'k-p')).toEqual({ status: 'succeeded', value: { domestic: { enabled: true } } });
  });

  it('each core has its own demo records: changing them, even in place, changes no other core’s', () => {
    const pristine = toSnapshot(demoFixtures());
    const b = bank();
    const other = bank();
    expect(b.upgradeLimit({ entityId: 'ENT-1001', amount: '60000.00', allowDecrease: false }).status).toBe('succeeded');
    physical(b, 'KIT-2101', 'ENT-1003');
    b.blockCard({ cardId: 'CARD-3001', reasonCode: 'LOST' });
    const entity = b.state.entities.get('ENT-1002')!;
    entity.contact.email = 'changed@example.invalid';
    entity.primaryAddress.city = 'Faro';
    expect(toSnapshot(b.state)).not.toEqual(pristine);
    expect(toSnapshot(other.state)).toEqual(pristine);
    expect(toSnapshot(demoFixtures())).toEqual(pristine);
  });

  it('a keyed change applies once: the retry answers the first outcome even after the state moved on', () => {
    const b = bank();
    const first = b.lockCard({ cardId: 'CARD-3001' }, 'k-lock');
    b.unlockCard({ cardId: 'CARD-3001' });
    expect(b.lockCard({ cardId: 'CARD-3001' }, 'k-lock')).toEqual(first);
    expect(b.state.cards.get('CARD-3001')?.state).toBe('ACTIVE');
    // Keys are per operation: the same key on another operation is another request.
    expect(b.blockCard({ cardId: 'CARD-3001', reasonCode: 'LOST' }, 'k-lock')).toMatchObject({ status: 'succeeded', value: { state: 'BLOCKED' } });
  });

  it('setPin records that a PIN was set and keeps no PIN block', () => {
    const b = bank();
    physical(b, 'KIT-2001', 'ENT-1001');
    const input = { cardId: 'CARD-3001', pinBlock: '0412AC89ABCDEF67', format: 0 as const, keyId: 'zpk-1' };
    expect(b.setPin(input, 'k-pin')).toEqual({ status: 'succeeded', value: { cardId: 'CARD-3001' } });
    expect(b.state.cards.get('CARD-3001')?.pinSet).toBe(true);
    const everything = JSON.stringify(toSnapshot(b.state));
    expect(everything).not.toContain('0412AC89ABCDEF67');
    expect(b.setPin({ ...input, cardId: 'CARD-3002' })).toEqual({
      status: 'rejected',
      code: 'CARD_STATE_INVALID',
      message: 'Card CARD-3002: a PIN can be set on a physical card only.',
    });
  });

  it('advanceFulfilment walks ORDERED → EMBOSSED → DISPATCHED → DELIVERED, then refuses', () => {
    const b = bank();
    physical(b, 'KIT-2001', 'ENT-1001');
    const steps = [1, 2, 3, 4].map(() => b.advanceFulfilment({ cardId: 'CARD-3001' }));
    expect(steps.map((r) => (r.status === 'succeeded' ? r.value.fulfilment : r.status === 'rejected' ? r.code : r.status))).toEqual([
      'EMBOSSED',
      'DISPATCHED',
      'DELIVERED',
      'CARD_STATE_INVALID',
    ]);
  });
});

describe('snapshots', () => {
  it('round-trip the new card fields', () => {
    const b = bank();
    physical(b, 'KIT-2001', 'ENT-1001');
    b.setPin({ cardId: 'CARD-3001', format: 4, keyId: 'zpk' });
    b.blockCard({ cardId: 'CARD-3002', reasonCode: 'STOLEN' });
    const again = fromSnapshot(JSON.parse(JSON.stringify(toSnapshot(b.state))));
    expect(again.cards.get('CARD-3001')).toMatchObject({ pinSet: true, expiry: '12/29', cvv: '272', form: 'PHYSICAL' });
    expect(again.cards.get('CARD-3002')).toMatchObject({ state: 'BLOCKED', blockReason: 'STOLEN', pinSet: false });
    expect(again).toEqual(b.state);
  });

  it('an older snapshot without expiry, CVV or pinSet loads with defaults', () => {
    const old = toSnapshot(demoFixtures());
    for (const card of old.cards) {
      delete card.expiry;
      delete card.cvv;
      delete card.pinSet;
    }
    const state = fromSnapshot(old);
    expect(state.cards.get('CARD-3002')).toMatchObject({ expiry: '12/29', cvv: '301', pinSet: false });
    expect(new CoreBank(state).getCard({ cardId: 'CARD-3002' })).toMatchObject({ status: 'succeeded', value: { sensitive: { cvv: '301' } } });
  });
});

describe('MockCore', () => {
  it('every new operation honours the deadline: an expired one applies nothing', async () => {
    const core = new MockCore(demoFixtures(), 5);
    const expired = call({ signal: AbortSignal.abort() });
    await expect(core.lockCard({ cardId: 'CARD-3001' }, expired)).rejects.toBeInstanceOf(ConnectorTimeoutError);
    await expect(core.listCards({ entityId: 'ENT-1001' }, expired)).rejects.toBeInstanceOf(ConnectorTimeoutError);
    expect(core.state.cards.get('CARD-3001')?.state).toBe('ACTIVE');
    const slow = new MockCore(demoFixtures(), 200);
    await expect(slow.blockCard({ cardId: 'CARD-3001', reasonCode: 'LOST' }, call({ signal: AbortSignal.timeout(20) }))).rejects.toBeInstanceOf(ConnectorTimeoutError);
    expect(slow.state.cards.get('CARD-3001')?.state).toBe('ACTIVE');
  });

  it('setPin hands CoreBank the record of the change only', async () => {
    const core = new MockCore(demoFixtures());
    await core.upgradeToPhysical({ kitNo: 'KIT-2001', entityId: 'ENT-1001', lockOnUpgrade: false }, call({ signal: new AbortController().signal }));
    const result = await core.setPin(
      { cardId: 'CARD-3001', pinBlock: 'ABCDEF0123456789', format: 3, keyId: 'zpk' },
      call({ signal: new AbortController().signal, idempotencyKey: 'pin-1' }),
    );
    expect(result).toEqual({ status: 'succeeded', value: { cardId: 'CARD-3001' } });
    expect(JSON.stringify(toSnapshot(core.state))).not.toContain('ABCDEF0123456789');
  });
});
