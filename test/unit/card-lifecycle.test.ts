// The card transition table of DESIGN §3, row by row: every status × action written out by hand, so
// that a change to schemas/card-lifecycle.ts shows up here as a deliberate edit of the expected table.
import { describe, expect, it } from 'vitest';
import { CARD_ACTIONS, allStatuses, transition, type CardAction, type CardStatus } from '../../schemas/card-lifecycle.js';

const label = (s: CardStatus) => [s.form, s.state, s.fulfilment].filter(Boolean).join('/');
const parse = (text: string): CardStatus => {
  const [form, state, fulfilment] = text.split('/');
  return { form, state, ...(fulfilment ? { fulfilment } : {}) } as CardStatus;
};

/** `—` is a refusal (CARD_STATE_INVALID); anything else is the status the action leads to. */
const NO = '—';
type Row = Record<CardAction, string>;

// Columns: upgradeToPhysical (lockOnUpgrade false), activate, lock, unlock, block, advanceFulfilment, updatePreferences, setPin.
const row = (up: string, activate: string, lock: string, unlock: string, block: string, advance: string, prefs: string, pin: string): Row => ({
  upgradeToPhysical: up,
  activate,
  lock,
  unlock,
  block,
  advanceFulfilment: advance,
  updatePreferences: prefs,
  setPin: pin,
});

const EXPECTED: Record<string, Row> = {
  'VIRTUAL/ACTIVE': row('PHYSICAL/ACTIVE/ORDERED', NO, 'VIRTUAL/LOCKED', NO, 'VIRTUAL/BLOCKED', NO, 'VIRTUAL/ACTIVE', NO),
  'VIRTUAL/LOCKED': row(NO, NO, NO, 'VIRTUAL/ACTIVE', 'VIRTUAL/BLOCKED', NO, 'VIRTUAL/LOCKED', NO),
  'VIRTUAL/BLOCKED': row(NO, NO, NO, NO, NO, NO, NO, NO),

  'PHYSICAL/ACTIVE/ORDERED': row(NO, NO, 'PHYSICAL/LOCKED/ORDERED', NO, 'PHYSICAL/BLOCKED/ORDERED', 'PHYSICAL/ACTIVE/EMBOSSED', 'PHYSICAL/ACTIVE/ORDERED', 'PHYSICAL/ACTIVE/ORDERED'),
  'PHYSICAL/ACTIVE/EMBOSSED': row(NO, NO, 'PHYSICAL/LOCKED/EMBOSSED', NO, 'PHYSICAL/BLOCKED/EMBOSSED', 'PHYSICAL/ACTIVE/DISPATCHED', 'PHYSICAL/ACTIVE/EMBOSSED', 'PHYSICAL/ACTIVE/EMBOSSED'),
  'PHYSICAL/ACTIVE/DISPATCHED': row(NO, NO, 'PHYSICAL/LOCKED/DISPATCHED', NO, 'PHYSICAL/BLOCKED/DISPATCHED', 'PHYSICAL/ACTIVE/DELIVERED', 'PHYSICAL/ACTIVE/DISPATCHED', 'PHYSICAL/ACTIVE/DISPATCHED'),
  'PHYSICAL/ACTIVE/DELIVERED': row(NO, NO, 'PHYSICAL/LOCKED/DELIVERED', NO, 'PHYSICAL/BLOCKED/DELIVERED', NO, 'PHYSICAL/ACTIVE/DELIVERED', 'PHYSICAL/ACTIVE/DELIVERED'),

  'PHYSICAL/LOCKED/ORDERED': row(NO, NO, NO, 'PHYSICAL/ACTIVE/ORDERED', 'PHYSICAL/BLOCKED/ORDERED', 'PHYSICAL/LOCKED/EMBOSSED', 'PHYSICAL/LOCKED/ORDERED', 'PHYSICAL/LOCKED/ORDERED'),
  'PHYSICAL/LOCKED/EMBOSSED': row(NO, NO, NO, 'PHYSICAL/ACTIVE/EMBOSSED', 'PHYSICAL/BLOCKED/EMBOSSED', 'PHYSICAL/LOCKED/DISPATCHED', 'PHYSICAL/LOCKED/EMBOSSED', 'PHYSICAL/LOCKED/EMBOSSED'),
  'PHYSICAL/LOCKED/DISPATCHED': row(NO, NO, NO, 'PHYSICAL/ACTIVE/DISPATCHED', 'PHYSICAL/BLOCKED/DISPATCHED', 'PHYSICAL/LOCKED/DELIVERED', 'PHYSICAL/LOCKED/DISPATCHED', 'PHYSICAL/LOCKED/DISPATCHED'),
  'PHYSICAL/LOCKED/DELIVERED': row(NO, NO, NO, 'PHYSICAL/ACTIVE/DELIVERED', 'PHYSICAL/BLOCKED/DELIVERED', NO, 'PHYSICAL/LOCKED/DELIVERED', 'PHYSICAL/LOCKED/DELIVERED'),

  'PHYSICAL/PENDING_ACTIVATION/ORDERED': row(NO, 'PHYSICAL/ACTIVE/ORDERED', NO, NO, 'PHYSICAL/BLOCKED/ORDERED', 'PHYSICAL/PENDING_ACTIVATION/EMBOSSED', 'PHYSICAL/PENDING_ACTIVATION/ORDERED', 'PHYSICAL/PENDING_ACTIVATION/ORDERED'),
  'PHYSICAL/PENDING_ACTIVATION/EMBOSSED': row(NO, 'PHYSICAL/ACTIVE/EMBOSSED', NO, NO, 'PHYSICAL/BLOCKED/EMBOSSED', 'PHYSICAL/PENDING_ACTIVATION/DISPATCHED', 'PHYSICAL/PENDING_ACTIVATION/EMBOSSED', 'PHYSICAL/PENDING_ACTIVATION/EMBOSSED'),
  'PHYSICAL/PENDING_ACTIVATION/DISPATCHED': row(NO, 'PHYSICAL/ACTIVE/DISPATCHED', NO, NO, 'PHYSICAL/BLOCKED/DISPATCHED', 'PHYSICAL/PENDING_ACTIVATION/DELIVERED', 'PHYSICAL/PENDING_ACTIVATION/DISPATCHED', 'PHYSICAL/PENDING_ACTIVATION/DISPATCHED'),
  'PHYSICAL/PENDING_ACTIVATION/DELIVERED': row(NO, 'PHYSICAL/ACTIVE/DELIVERED', NO, NO, 'PHYSICAL/BLOCKED/DELIVERED', NO, 'PHYSICAL/PENDING_ACTIVATION/DELIVERED', 'PHYSICAL/PENDING_ACTIVATION/DELIVERED'),

  'PHYSICAL/BLOCKED/ORDERED': row(NO, NO, NO, NO, NO, NO, NO, NO),
  'PHYSICAL/BLOCKED/EMBOSSED': row(NO, NO, NO, NO, NO, NO, NO, NO),
  'PHYSICAL/BLOCKED/DISPATCHED': row(NO, NO, NO, NO, NO, NO, NO, NO),
  'PHYSICAL/BLOCKED/DELIVERED': row(NO, NO, NO, NO, NO, NO, NO, NO),
};

describe('card transition table', () => {
  it('allStatuses() lists exactly the 19 statuses of the table (no PENDING_ACTIVATION virtual card)', () => {
    expect(allStatuses().map(label).sort()).toEqual(Object.keys(EXPECTED).sort());
  });

  it('has the eight actions of the table, in its column order', () => {
    expect([...CARD_ACTIONS]).toEqual(['upgradeToPhysical', 'activate', 'lock', 'unlock', 'block', 'advanceFulfilment', 'updatePreferences', 'setPin']);
  });

  for (const [from, expected] of Object.entries(EXPECTED)) {
    for (const action of CARD_ACTIONS) {
      const want = expected[action];
      it(`${action} on ${from} → ${want === NO ? 'refused' : want}`, () => {
        const t = transition(parse(from), action);
        if (want === NO) {
          expect(t).toEqual({ allowed: false, code: 'CARD_STATE_INVALID', reason: expect.any(String) });
        } else {
          expect(t.allowed).toBe(true);
          if (t.allowed) expect(label(t.next)).toBe(want);
        }
      });
    }
  }

  it('upgradeToPhysical with lockOnUpgrade issues the card PENDING_ACTIVATION, fulfilment ORDERED', () => {
    expect(transition({ form: 'VIRTUAL', state: 'ACTIVE' }, 'upgradeToPhysical', { lockOnUpgrade: true })).toEqual({
      allowed: true,
      next: { form: 'PHYSICAL', state: 'PENDING_ACTIVATION', fulfilment: 'ORDERED' },
    });
  });

  it('refusals explain themselves', () => {
    const reason = (s: string, a: CardAction) => {
      const t = transition(parse(s), a);
      return t.allowed ? null : t.reason;
    };
    expect(reason('PHYSICAL/BLOCKED/DELIVERED', 'unlock')).toBe('the card is blocked permanently');
    expect(reason('PHYSICAL/ACTIVE/ORDERED', 'upgradeToPhysical')).toBe('the card is already physical');
    expect(reason('VIRTUAL/LOCKED', 'upgradeToPhysical')).toBe('a LOCKED card cannot be upgraded');
    expect(reason('VIRTUAL/ACTIVE', 'activate')).toBe('only a PENDING_ACTIVATION card can be activated; this one is ACTIVE');
    expect(reason('PHYSICAL/LOCKED/ORDERED', 'lock')).toBe('only an ACTIVE card can be locked; this one is LOCKED');
    expect(reason('VIRTUAL/ACTIVE', 'unlock')).toBe('only a LOCKED card can be unlocked; this one is ACTIVE');
    expect(reason('VIRTUAL/ACTIVE', 'advanceFulfilment')).toBe('only a physical card has a fulfilment to advance');
    expect(reason('PHYSICAL/ACTIVE/DELIVERED', 'advanceFulfilment')).toBe('the card is already DELIVERED');
    expect(reason('VIRTUAL/ACTIVE', 'setPin')).toBe('a PIN can be set on a physical card only');
  });

  it('is pure: the status passed in is never changed', () => {
    const card: CardStatus = { form: 'PHYSICAL', state: 'ACTIVE', fulfilment: 'ORDERED' };
    const t = transition(card, 'lock');
    expect(card).toEqual({ form: 'PHYSICAL', state: 'ACTIVE', fulfilment: 'ORDERED' });
    expect(t.allowed && t.next).not.toBe(card);
  });
});
