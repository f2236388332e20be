// Pure mappings between Cardline's canonical operations and Acme's vocabulary; unit-tested on their own.
import {
  ConnectorTimeoutError,
  ConnectorUnavailableError,
  rejected,
  succeeded,
  type AuthorizationInput,
  type CardDetails,
  type CardRef,
  type EntityDetails,
  type RegisterEntityInput,
  type Transaction,
  type CardSummary,
  type OperationResult,
  type PhysicalUpgradeInput,
  type PhysicalUpgradeResult,
  type UpgradeLimitInput,
  type UpgradeLimitResult,
} from '../../connectors/contract.js';
import type { Preferences } from '../../schemas/cards.js';
import { transition, type BlockReason, type CardAction, type CardState, type CardStatus, type Fulfilment } from '../../schemas/card-lifecycle.js';
import type { PrimaryAddress } from '../../schemas/entities.js';
import type { Channel, DeclineReason } from '../../schemas/transactions.js';
import type {
  AcmeCardView,
  AcmeChannel,
  AcmeCloseReason,
  AcmeCustomerView,
  AcmeDecline,
  AcmeDelivery,
  AcmeHome,
  AcmeReason,
  AcmeReply,
  AcmeStatus,
  AcmeSwipe,
  IssuePlastic,
  OpenCustomer,
  Plastic,
  SetCreditLine,
  SwipeRequest,
} from './core.js';

const DECIMAL = /^(\d{1,15})(?:\.(\d{1,2}))?$/;

/** '75000.5' → 7500050n; null when the string is not a decimal amount. Never through a float. */
export function toCents(amount: string): bigint | null {
  const m = DECIMAL.exec(amount);
  if (!m) return null;
  return BigInt(m[1]!) * 100n + BigInt((m[2] ?? '').padEnd(2, '0'));
}

export function fromCents(cents: bigint): string {
  const sign = cents < 0n ? '-' : '';
  const abs = cents < 0n ? -cents : cents;
  return `${sign}${abs / 100n}.${String(abs % 100n).padStart(2, '0')}`;
}

/** Acme's reasons as Cardline business codes (schemas/business-codes.ts). */
const CODES: Record<AcmeReason, string> = {
  NO_CUSTOMER: 'ENTITY_NOT_FOUND',
  LOWERING_DENIED: 'LIMIT_DECREASE_NOT_ALLOWED',
  BAD_AMOUNT: 'LIMIT_NOT_POSITIVE',
  KIT_UNKNOWN: 'PPCUST_018',
  KIT_USED: 'PPCUST_018',
  KIT_RESERVED: 'PPCUST_018',
  KIT_UNASSIGNED: 'PPCUST_018',
  NO_CARD: 'CARD_NOT_FOUND',
  NO_VIRTUAL_CARD: 'CARD_NOT_VIRTUAL',
  MANY_CARDS: 'CARD_AMBIGUOUS',
  CARD_NOT_OPEN: 'CARD_STATE_INVALID',
  ALREADY_PLASTIC: 'CARD_STATE_INVALID',
  WRONG_STATUS: 'CARD_STATE_INVALID',
  ALREADY_CLOSED: 'CARD_STATE_INVALID',
  NOT_PLASTIC: 'CARD_STATE_INVALID',
  DELIVERED_ALREADY: 'CARD_STATE_INVALID',
  CUSTOMER_EXISTS: 'ENTITY_EXISTS',
  CARD_STILL_OPEN: 'CARD_NOT_BLOCKED',
  REISSUED_ALREADY: 'CARD_ALREADY_REPLACED',
  OVERPAYMENT: 'REPAYMENT_EXCEEDS_OUTSTANDING',
  BELOW_OWED: 'LIMIT_BELOW_OUTSTANDING',
  NO_SWIPE: 'TRANSACTION_NOT_FOUND',
};

/** A refusal Acme explained. A reason this mapping does not know keeps Acme's name, prefixed. */
export function refusal<T>(reply: { reason: AcmeReason; text: string }): OperationResult<T> {
  return rejected(CODES[reply.reason] ?? `ACME_${reply.reason}`, `Acme core: ${reply.text}.`);
}

export function toSetCreditLine(input: UpgradeLimitInput, requestKey: string | undefined): SetCreditLine | null {
  const cents = toCents(input.amount);
  return cents === null ? null : { customer: input.entityId, cents, mayLower: input.allowDecrease, requestKey };
}

export function fromSetCreditLine(entityId: string, reply: AcmeReply<{ oldCents: bigint; newCents: bigint }>): OperationResult<UpgradeLimitResult> {
  if (!reply.ok) return refusal(reply);
  return succeeded({ entityId, previousLimit: fromCents(reply.data.oldCents), newLimit: fromCents(reply.data.newCents) });
}

export function toIssuePlastic(input: PhysicalUpgradeInput, requestKey: string | undefined): IssuePlastic {
  const a = input.communicationAddress;
  return {
    kit: input.kitNo,
    customer: input.entityId,
    card: input.cardId,
    hold: input.lockOnUpgrade,
    deliverTo:
      !a || a.usePrimaryAddress
        ? 'HOME'
        : { lines: [a.address1, a.address2, a.city, a.state].filter((l): l is string => !!l), country: a.country ?? '', postcode: a.pin ?? '' },
    ...(input.preferences !== undefined ? { controls: input.preferences } : {}),
    requestKey,
  };
}

export function fromIssuePlastic(reply: AcmeReply<Plastic>): OperationResult<PhysicalUpgradeResult> {
  if (!reply.ok) return refusal(reply);
  const { card, customer, kit, status } = reply.data;
  return succeeded({ cardId: card, entityId: customer, kitNo: kit, state: status === 'HOLD' ? 'PENDING_ACTIVATION' : 'ACTIVE' });
}

// ── Cards ───────────────────────────────────────────────────────────────────────────────────────────

const STATES: Record<AcmeStatus, CardState> = { OPEN: 'ACTIVE', HOLD: 'PENDING_ACTIVATION', FROZEN: 'LOCKED', CLOSED: 'BLOCKED' };
const STEPS: Record<AcmeDelivery, Fulfilment> = { QUEUED: 'ORDERED', PRINTED: 'EMBOSSED', SHIPPED: 'DISPATCHED', RECEIVED: 'DELIVERED' };
const CLOSE_REASONS: Record<BlockReason, AcmeCloseReason> = {
  LOST: 'LOST',
  STOLEN: 'STOLEN',
  DAMAGED: 'DAMAGED',
  FRAUD: 'FRAUD',
  CUSTOMER_REQUEST: 'CUSTOMER',
  ACCOUNT_CLOSED: 'ACCOUNT',
};
const BLOCK_REASONS = Object.fromEntries(Object.entries(CLOSE_REASONS).map(([k, v]) => [v, k])) as Record<AcmeCloseReason, BlockReason>;

export const toCloseReason = (reason: BlockReason): AcmeCloseReason => CLOSE_REASONS[reason];

/** First six and last four digits. */
export const maskNumber = (pan: string): string => `${pan.slice(0, 6)}${'*'.repeat(Math.max(pan.length - 10, 1))}${pan.slice(-4)}`;

/** Acme's YYMM as Cardline's MM/YY. */
export const toExpiry = (validThru: string): string => `${validThru.slice(2, 4)}/${validThru.slice(0, 2)}`;

export function toCardStatus(card: AcmeCardView): CardStatus {
  return {
    form: card.kind === 'PLASTIC' ? 'PHYSICAL' : 'VIRTUAL',
    state: STATES[card.status],
    ...(card.delivery ? { fulfilment: STEPS[card.delivery] } : {}),
  };
}

export function toCardSummary(card: AcmeCardView): CardSummary {
  return {
    cardId: card.ref,
    entityId: card.customer,
    ...toCardStatus(card),
    ...(card.kit ? { kitNo: card.kit } : {}),
    panMasked: maskNumber(card.number),
    expiry: toExpiry(card.validThru),
    ...(card.closeReason ? { blockReason: BLOCK_REASONS[card.closeReason] } : {}),
  };
}

export function toCardDetails(card: AcmeCardView): CardDetails {
  return {
    ...toCardSummary(card),
    ...(card.design ? { plasticCode: { code: card.design } } : {}),
    ...(card.controls !== undefined ? { preferences: card.controls as Preferences } : {}),
    sensitive: { pan: card.number, cvv: card.securityCode },
  };
}

/** Acme filters for the cards a CardRef may name: every identifier given must hold. */
export const toCardQuery = (ref: CardRef) => ({ customer: ref.entityId, card: ref.cardId, kit: ref.kitNo });

/**
 * Which card a CardRef names among the cards Acme found for it (contract.ts): a cardId or a kit names
 * one; an entity names its single card the action applies to, asking Cardline's transition table which
 * qualify. An entity with one card resolves to it whatever its state, so that Acme explains a refusal.
 */
export function pickCard(ref: CardRef, action: CardAction, found: AcmeCardView[]): { card: string } | OperationResult<never> {
  const who = ref.cardId ?? (ref.kitNo !== undefined ? `on kit ${ref.kitNo}` : `of ${ref.entityId}`);
  if (ref.cardId !== undefined || ref.kitNo !== undefined) {
    return found[0] ? { card: found[0].ref } : rejected('CARD_NOT_FOUND', `Acme core: no card ${who}.`);
  }
  const candidates = found.filter((c) => transition(toCardStatus(c), action).allowed);
  if (candidates.length === 1) return { card: candidates[0]!.ref };
  if (candidates.length > 1) return rejected('CARD_AMBIGUOUS', `Acme core: ${ref.entityId} has ${candidates.length} cards this applies to; send cardId.`);
  if (found.length === 1) return { card: found[0]!.ref };
  if (found.length === 0) return rejected('CARD_NOT_FOUND', `Acme core: ${ref.entityId} has no card.`);
  return rejected('CARD_STATE_INVALID', `Acme core: none of the cards of ${ref.entityId} allows this; send cardId.`);
}

export function fromCard(reply: AcmeReply<AcmeCardView>): OperationResult<CardSummary> {
  return reply.ok ? succeeded(toCardSummary(reply.data)) : refusal(reply);
}

/** What the client threw, as the contract's errors: an abort is a timeout (outcome unknown), the rest unavailability. */
export function fromFailure(err: unknown): Error {
  if (err instanceof Error && (err.name === 'AbortError' || err.name === 'TimeoutError')) {
    return new ConnectorTimeoutError('Acme did not answer before the deadline', { cause: err });
  }
  return new ConnectorUnavailableError('Acme core call failed', { cause: err });
}

// ── Customers and their line ────────────────────────────────────────────────────────────────────────

/** Cardline's address lines become Acme's street lines; the rest maps one to one. */
export const toHome = (a: PrimaryAddress): AcmeHome => ({
  street: [a.address1, ...(a.address2 !== undefined ? [a.address2] : [])],
  city: a.city,
  region: a.state,
  country: a.country,
  postcode: a.pin,
});

export function toOpenCustomer(input: RegisterEntityInput, requestKey: string | undefined): OpenCustomer | null {
  const limitCents = toCents(input.creditLimit);
  if (limitCents === null) return null;
  return {
    ...(input.entityId !== undefined ? { id: input.entityId } : {}),
    name: input.name,
    kind: input.type === 'INDIVIDUAL' ? 'PERSON' : 'COMPANY',
    email: input.contact.email,
    phone: input.contact.mobile,
    home: toHome(input.primaryAddress),
    limitCents,
    withCard: input.issueVirtualCard,
    requestKey,
  };
}

export function toEntity(c: AcmeCustomerView): EntityDetails {
  const [address1 = '', address2] = c.home.street;
  return {
    entityId: c.id,
    name: c.name,
    type: c.kind === 'PERSON' ? 'INDIVIDUAL' : 'BUSINESS',
    contact: { email: c.email, mobile: c.phone },
    primaryAddress: { address1, ...(address2 !== undefined ? { address2 } : {}), city: c.home.city, state: c.home.region, country: c.home.country, pin: c.home.postcode },
    creditLimit: fromCents(c.limitCents),
    outstanding: fromCents(c.owedCents),
    availableCredit: fromCents(c.limitCents - c.owedCents),
    cardCount: c.cards,
  };
}

const CHANNELS: Record<Channel, AcmeChannel> = { ATM: 'CASH', POS: 'TILL', ECOM: 'WEB', CONTACTLESS: 'TAP' };
const FROM_CHANNEL = Object.fromEntries(Object.entries(CHANNELS).map(([k, v]) => [v, k])) as Record<AcmeChannel, Channel>;
const DECLINES: Record<AcmeDecline, DeclineReason> = {
  NOT_OPEN: 'CARD_NOT_ACTIVE',
  ABROAD_OFF: 'INTERNATIONAL_DISABLED',
  CHANNEL_OFF: 'CHANNEL_DISABLED',
  DAY_AMOUNT: 'DAILY_LIMIT_EXCEEDED',
  DAY_COUNT: 'DAILY_COUNT_EXCEEDED',
  NO_FUNDS: 'INSUFFICIENT_CREDIT',
};

export function toSwipe(input: AuthorizationInput, requestKey: string | undefined): SwipeRequest | null {
  const amount = toCents(input.amount);
  if (amount === null) return null;
  return { card: input.cardId, cents: amount, channel: CHANNELS[input.channel], merchant: input.merchant, at: input.at, homeCountry: input.homeCountry, zone: input.timeZone, requestKey };
}

export function toTransaction(w: AcmeSwipe): Transaction {
  return {
    transactionId: w.ref,
    cardId: w.card,
    entityId: w.customer,
    amount: fromCents(w.cents),
    channel: FROM_CHANNEL[w.channel],
    merchant: { ...w.merchant },
    international: w.abroad,
    status: w.outcome === 'OK' ? 'APPROVED' : 'DECLINED',
    declineReason: w.outcome === 'OK' ? null : DECLINES[w.outcome],
    at: w.at,
  };
}

/** An Acme reply as the contract's result, the data mapped by `map`. */
export const fromReply = <A, T>(reply: AcmeReply<A>, map: (data: A) => T): OperationResult<T> => (reply.ok ? succeeded(map(reply.data)) : refusal(reply));
