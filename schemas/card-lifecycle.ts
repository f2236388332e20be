// The card state machine of DESIGN §3, defined once as a pure transition table that every connector
// obeys (the conformance suite checks every state × action against it).

export const CARD_FORMS = ['VIRTUAL', 'PHYSICAL'] as const;
export const CARD_STATES = ['ACTIVE', 'LOCKED', 'PENDING_ACTIVATION', 'BLOCKED'] as const;
export const FULFILMENT_STEPS = ['ORDERED', 'EMBOSSED', 'DISPATCHED', 'DELIVERED'] as const;
export const BLOCK_REASONS = ['LOST', 'STOLEN', 'DAMAGED', 'FRAUD', 'CUSTOMER_REQUEST', 'ACCOUNT_CLOSED'] as const;

export type CardForm = (typeof CARD_FORMS)[number];
export type CardState = (typeof CARD_STATES)[number];
export type Fulfilment = (typeof FULFILMENT_STEPS)[number];
export type BlockReason = (typeof BLOCK_REASONS)[number];

export const CARD_ACTIONS = [
  'upgradeToPhysical',
  'activate',
  'lock',
  'unlock',
  'block',
  'advanceFulfilment',
  'updatePreferences',
  'setPin',
] as const;
export type CardAction = (typeof CARD_ACTIONS)[number];

export interface CardStatus {
  form: CardForm;
  state: CardState;
  /** Physical cards only. */
  fulfilment?: Fulfilment | undefined;
}

export type Transition =
  | { allowed: true; next: CardStatus }
  | { allowed: false; code: 'CARD_STATE_INVALID'; reason: string };

const refuse = (reason: string): Transition => ({ allowed: false, code: 'CARD_STATE_INVALID', reason });
const to = (card: CardStatus, patch: Partial<CardStatus>): Transition => ({ allowed: true, next: { ...card, ...patch } });

/** What `action` does to a card in `card`'s status: pure, the same for every connector. */
export function transition(card: CardStatus, action: CardAction, opts: { lockOnUpgrade?: boolean } = {}): Transition {
  if (card.state === 'BLOCKED') return refuse('the card is blocked permanently');
  switch (action) {
    case 'upgradeToPhysical':
      if (card.form !== 'VIRTUAL') return refuse('the card is already physical');
      if (card.state !== 'ACTIVE') return refuse(`a ${card.state} card cannot be upgraded`);
      return to(card, { form: 'PHYSICAL', state: opts.lockOnUpgrade ? 'PENDING_ACTIVATION' : 'ACTIVE', fulfilment: 'ORDERED' });
    case 'activate':
      if (card.state !== 'PENDING_ACTIVATION') return refuse(`only a PENDING_ACTIVATION card can be activated; this one is ${card.state}`);
      return to(card, { state: 'ACTIVE' });
    case 'lock':
      if (card.state !== 'ACTIVE') return refuse(`only an ACTIVE card can be locked; this one is ${card.state}`);
      return to(card, { state: 'LOCKED' });
    case 'unlock':
      if (card.state !== 'LOCKED') return refuse(`only a LOCKED card can be unlocked; this one is ${card.state}`);
      return to(card, { state: 'ACTIVE' });
    case 'block':
      return to(card, { state: 'BLOCKED' });
    case 'advanceFulfilment': {
      if (card.form !== 'PHYSICAL' || !card.fulfilment) return refuse('only a physical card has a fulfilment to advance');
      const i = FULFILMENT_STEPS.indexOf(card.fulfilment);
      const next = FULFILMENT_STEPS[i + 1];
      if (!next) return refuse('the card is already DELIVERED');
      return to(card, { fulfilment: next });
    }
    case 'updatePreferences':
      return to(card, {});
    case 'setPin':
      if (card.form !== 'PHYSICAL') return refuse('a PIN can be set on a physical card only');
      return to(card, {});
  }
}

/** Every status a card can be in, for exhaustive checks (conformance, tests). */
export function allStatuses(): CardStatus[] {
  const out: CardStatus[] = [];
  for (const state of CARD_STATES) {
    if (state !== 'PENDING_ACTIVATION') out.push({ form: 'VIRTUAL', state });
    for (const fulfilment of FULFILMENT_STEPS) out.push({ form: 'PHYSICAL', state, fulfilment });
  }
  return out;
}
