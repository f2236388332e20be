// Pure mappings between the canonical operations and the core REST protocol v1: requests out, answers
// in. No I/O here; every rule is a row in test/connectors/rest-transformers.test.ts.
import { Value } from '@sinclair/typebox/value';
import {
  pending,
  rejected,
  succeeded,
  type AuthorizationInput,
  type BlockCardInput,
  type ClearInput,
  type DisputeCreditInput,
  type HoldInput,
  type HoldState,
  type RefundInput,
  type ReverseInput,
  type CardDetails,
  type CardReplacement,
  type EntityDetails,
  type EntityRegistration,
  type RegisterEntityInput,
  type ReplaceCardInput,
  type Repayment,
  type RepaymentInput,
  type Transaction,
  type TransactionPage,
  type TransactionQuery,
  type UpdateEntityInput,
  type CardRef,
  type CardSummary,
  type CreditLimitResult,
  type PhysicalUpgradeInput,
  type PhysicalUpgradeResult,
  type PreferencesInput,
  type SetPinInput,
  type UpgradeLimitInput,
  type UpgradeLimitResult,
} from '../contract.js';
import type { CoreRequest } from '../http/client.js';
import type { Classified, CoreAnswer } from '../http/failures.js';
import { toMinor } from '../shared/money.js';
import type { Preferences } from '../../schemas/cards.js';
import {
  BUSINESS_CODE_PATTERN,
  type CARD_RESOLUTION_ACTIONS,
  CoreAccepted,
  CoreCardApplied,
  CoreCardDetails,
  CoreCardList,
  CoreCardResolution,
  CoreCreditLimit,
  CoreCreditLimitApplied,
  CoreCardReplaced,
  CoreEntityDetails,
  CoreEntityRegistered,
  CoreEntityUpdated,
  CoreHoldApplied,
  CoreRepaymentApplied,
  CoreTransactionApplied,
  CoreTransactionPage,
  CoreError,
  CorePhysicalUpgradeApplied,
  CorePinApplied,
  CorePreferences,
  CorePreferencesApplied,
  type CoreBlockRequest,
  type CoreCardSummary,
  type CoreCreditLimitRequest,
  type CorePhysicalUpgradeRequest,
  type CorePinRequest,
  type CorePreferencesRequest,
  type CoreAuthorizationRequest,
  type CoreClearingRequest,
  type CoreDisputeCreditRequest,
  type CoreHold,
  type CoreHoldRequest,
  type CoreRefundRequest,
  type CoreReversalRequest,
  type CoreEntityRegistrationRequest,
  type CoreEntityUpdateRequest,
  type CoreReplacementRequest,
  type CoreRepaymentRequest,
  type CoreTransaction,
} from '../../schemas/core-protocol.js';
import { type CoreOperation, type CoreRule, type RuleInput } from './protocol.js';

// ── Requests ────────────────────────────────────────────────────────────────────────────────────────

/** An entry's request target: `{name}`s filled (encoded) from the input, then the query parameters it sets. */
export function corePath<R extends CoreRule>(entry: Pick<CoreOperation<R>, 'path' | 'query'>, input: RuleInput<R>): string {
  const fields = input as Record<string, unknown>;
  const path = entry.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = fields[name];
    if (value === undefined) throw new Error(`core protocol path ${entry.path}: the input has no ${name}`);
    return encodeURIComponent(String(value));
  });
  const query = new URLSearchParams();
  for (const name of Object.keys(entry.query?.properties ?? {})) {
    if (fields[name] !== undefined) query.set(name, String(fields[name]));
  }
  return query.size ? `${path}?${query.toString()}` : path;
}

/** One protocol request: the entry's method, its target from the input and, when it has one, the body from its transformer. */
export function coreRequest<R extends CoreRule>(entry: CoreOperation<R>, input: RuleInput<R>, body?: (input: RuleInput<R>) => unknown): CoreRequest {
  return { method: entry.method, path: corePath(entry, input), ...(body ? { body: body(input) } : {}) };
}

/** The lifecycle changes a CardRef may name a card for (resolved first when it is not a bare cardId). */
export type CardChange = (typeof CARD_RESOLUTION_ACTIONS)[number];

/** True when the reference is a bare cardId, so no resolution call is needed. */
export const isBareCardId = (ref: CardRef): ref is CardRef & { cardId: string } =>
  ref.cardId !== undefined && ref.entityId === undefined && ref.kitNo === undefined;

export const toCoreBlock = (input: BlockCardInput): CoreBlockRequest => ({ reasonCode: input.reasonCode });
export const toCorePreferences = (input: PreferencesInput): CorePreferencesRequest => ({ preferences: input.preferences });
export const toCorePin = (input: SetPinInput): CorePinRequest => ({ pinBlock: input.pinBlock, format: input.format, keyId: input.keyId });

export function toCoreCreditLimit(input: UpgradeLimitInput): CoreCreditLimitRequest {
  return { amount: input.amount, allowDecrease: input.allowDecrease };
}

/** Leaves out what the caller left out, so that the core applies its own defaults (primary address). */
export function toCorePhysicalUpgrade(input: PhysicalUpgradeInput): CorePhysicalUpgradeRequest {
  return {
    kitNo: input.kitNo,
    ...(input.entityId !== undefined ? { entityId: input.entityId } : {}),
    ...(input.cardId !== undefined ? { cardId: input.cardId } : {}),
    ...(input.communicationAddress !== undefined ? { communicationAddress: input.communicationAddress } : {}),
    ...(input.plasticCode !== undefined ? { plasticCode: input.plasticCode } : {}),
    lockOnUpgrade: input.lockOnUpgrade,
    ...(input.preferences !== undefined ? { preferences: input.preferences } : {}),
  };
}

export const toCoreEntityRegistration = (input: RegisterEntityInput): CoreEntityRegistrationRequest => ({
  ...(input.entityId !== undefined ? { entityId: input.entityId } : {}),
  name: input.name,
  type: input.type,
  contact: input.contact,
  primaryAddress: input.primaryAddress,
  creditLimit: input.creditLimit,
  issueVirtualCard: input.issueVirtualCard,
});

export const toCoreEntityUpdate = (input: UpdateEntityInput): CoreEntityUpdateRequest => ({
  ...(input.contact !== undefined ? { contact: input.contact } : {}),
  ...(input.primaryAddress !== undefined ? { primaryAddress: input.primaryAddress } : {}),
});

export const toCoreReplacement = (input: ReplaceCardInput): CoreReplacementRequest => ({
  reason: input.reason,
  ...(input.kitNo !== undefined ? { kitNo: input.kitNo } : {}),
});

export const toCoreAuthorization = (input: AuthorizationInput): CoreAuthorizationRequest => ({
  amount: input.amount,
  merchant: input.merchant,
  channel: input.channel,
  at: input.at,
  homeCountry: input.homeCountry,
  timeZone: input.timeZone,
});

export const toCoreRepayment = (input: RepaymentInput): CoreRepaymentRequest => ({ amount: input.amount, at: input.at });

export const toCoreHold = (input: HoldInput): CoreHoldRequest => ({
  authorizationId: input.authorizationId,
  amount: input.amount,
  merchant: input.merchant,
  channel: input.channel,
  partialAllowed: input.partialAllowed,
  at: input.at,
  ...(input.homeCountry !== undefined ? { homeCountry: input.homeCountry } : {}),
});

export const toCoreClearing = (input: ClearInput): CoreClearingRequest => ({ amount: input.amount, final: input.final, at: input.at });

export const toCoreReversal = (input: ReverseInput): CoreReversalRequest => (input.amount === undefined ? { at: input.at } : { amount: input.amount, at: input.at });

export const toCoreRefund = (input: RefundInput): CoreRefundRequest => ({ amount: input.amount, at: input.at });

export const toCoreDisputeCredit = (input: DisputeCreditInput): CoreDisputeCreditRequest => ({ disputeId: input.disputeId, amount: input.amount, at: input.at });

// ── Answers ─────────────────────────────────────────────────────────────────────────────────────────

const BUSINESS_CODE = new RegExp(BUSINESS_CODE_PATTERN);
const MAX_MESSAGE = 500;

/** A core's refusal text as the caller sees it: bounded, single-line, card-number runs masked. */
export function cleanMessage(message: string): string {
  const oneLine = message.replace(/\p{Cc}+/gu, ' ').trim();
  const masked = oneLine.replace(/\d{13,19}/g, (run) => `${run.slice(0, 6)}${'*'.repeat(run.length - 10)}${run.slice(-4)}`);
  return masked.length > MAX_MESSAGE ? `${masked.slice(0, MAX_MESSAGE - 1)}…` : masked;
}

const sameAmount = (a: string, b: string) => {
  try {
    return toMinor(a) === toMinor(b);
  } catch {
    return false;
  }
};

/** The status table of both operations; `applied` is undefined unless a 200 confirms *this* request. */
function classify<T>(answer: CoreAnswer, applied: (body: unknown) => T | undefined): Classified<T> {
  const { status, body } = answer;
  const acceptedReference = () => (Value.Check(CoreAccepted, body) ? body.reference : undefined);
  if (status === 200) {
    if (Value.Check(CoreAccepted, body)) return { kind: 'result', result: pending(body.reference) };
    const value = applied(body);
    // A 200 we cannot read as a confirmation of this request may or may not have applied it.
    return { kind: 'result', result: value === undefined ? pending() : succeeded(value) };
  }
  if (status === 202) return { kind: 'result', result: pending(acceptedReference()) };
  if (status === 422) {
    if (Value.Check(CoreError, body) && BUSINESS_CODE.test(body.error.code)) {
      return { kind: 'result', result: rejected(body.error.code, cleanMessage(body.error.message)) };
    }
    return { kind: 'result', result: pending() };
  }
  if (status === 502 || status === 503 || status === 504) {
    return { kind: 'unavailable', retryable: true, reason: `the core answered ${status}` };
  }
  if (status >= 500 && status <= 599) return { kind: 'unavailable', retryable: false, reason: `the core answered ${status}` };
  // The protocol's own refusals: the request never reached the business logic, so nothing was applied.
  if (status === 400 || status === 401 || status === 403 || status === 404 || status === 405 || status === 413 || status === 415 || status === 429) {
    return { kind: 'unavailable', retryable: false, reason: `the core refused the request with ${status}` };
  }
  // Anything else (1xx, 3xx, other 2xx and 4xx) is not in the protocol: the outcome is unknown.
  return { kind: 'result', result: pending() };
}

export function fromCoreCreditLimit(answer: CoreAnswer, input: UpgradeLimitInput): Classified<UpgradeLimitResult> {
  return classify(answer, (body) => {
    if (!Value.Check(CoreCreditLimitApplied, body)) return undefined;
    if (body.entityId !== input.entityId || !sameAmount(body.newLimit, input.amount)) return undefined;
    return { entityId: body.entityId, previousLimit: body.previousLimit, newLimit: body.newLimit };
  });
}

export function fromCorePhysicalUpgrade(answer: CoreAnswer, input: PhysicalUpgradeInput): Classified<PhysicalUpgradeResult> {
  return classify(answer, (body) => {
    if (!Value.Check(CorePhysicalUpgradeApplied, body)) return undefined;
    if (body.kitNo !== input.kitNo) return undefined;
    if (input.entityId !== undefined && body.entityId !== input.entityId) return undefined;
    if (input.cardId !== undefined && body.cardId !== input.cardId) return undefined;
    return { cardId: body.cardId, entityId: body.entityId, kitNo: body.kitNo, state: body.cardState };
  });
}

/** The protocol's card in the contract's words (panMasked); optional fields only when present. */
function fromCoreSummary(card: CoreCardSummary): CardSummary {
  return {
    cardId: card.cardId,
    entityId: card.entityId,
    form: card.form,
    state: card.state,
    ...(card.fulfilment !== undefined ? { fulfilment: card.fulfilment } : {}),
    ...(card.kitNo !== undefined ? { kitNo: card.kitNo } : {}),
    panMasked: card.maskedPan,
    expiry: card.expiry,
    ...(card.blockReason !== undefined ? { blockReason: card.blockReason } : {}),
  };
}

/** What a confirmed change must show of the card, per change: anything else is not *this* change. */
const CONFIRMS: Record<CardChange | 'advanceFulfilment', (card: CoreCardSummary, input: Partial<BlockCardInput>) => boolean> = {
  activate: (c) => c.state === 'ACTIVE',
  lock: (c) => c.state === 'LOCKED',
  unlock: (c) => c.state === 'ACTIVE',
  block: (c, input) => c.state === 'BLOCKED' && c.blockReason === input.reasonCode,
  advanceFulfilment: (c) => c.form === 'PHYSICAL' && c.fulfilment !== undefined,
};

/** A lifecycle change's answer: succeeded only with the card named in the path, in the state the change leads to. */
export function fromCoreCardChange(
  answer: CoreAnswer,
  change: CardChange | 'advanceFulfilment',
  cardId: string,
  input: Partial<BlockCardInput> = {},
): Classified<CardSummary> {
  return classify(answer, (body) => {
    if (!Value.Check(CoreCardApplied, body) || body.cardId !== cardId || !CONFIRMS[change](body, input)) return undefined;
    return fromCoreSummary(body);
  });
}

export function fromCorePreferencesApplied(answer: CoreAnswer, input: PreferencesInput): Classified<Preferences> {
  return classify(answer, (body) => {
    if (!Value.Check(CorePreferencesApplied, body) || body.cardId !== input.cardId) return undefined;
    // The core must have stored what was sent; a different answer is not a confirmation of this request.
    return Value.Equal(body.preferences, input.preferences) ? body.preferences : undefined;
  });
}

/** A PIN change's answer: the card only. Nothing from the answer but the card id is passed on. */
export function fromCorePin(answer: CoreAnswer, cardId: string): Classified<{ cardId: string }> {
  return classify(answer, (body) => (Value.Check(CorePinApplied, body) && body.cardId === cardId ? { cardId } : undefined));
}

// ── Read answers ────────────────────────────────────────────────────────────────────────────────────

/** Reads' status table: no "pending"; anything but a well-formed 200 is a core failure, retryable freely. */
function classifyRead<T>(answer: CoreAnswer, read: (body: unknown) => T | undefined): Classified<T> {
  const { status, body } = answer;
  if (status === 200) {
    const value = read(body);
    if (value !== undefined) return { kind: 'result', result: succeeded(value) };
    return { kind: 'unavailable', retryable: false, reason: 'the core answered a read with a body that is not the expected answer' };
  }
  if (status === 422 && Value.Check(CoreError, body) && BUSINESS_CODE.test(body.error.code)) {
    return { kind: 'result', result: rejected(body.error.code, cleanMessage(body.error.message)) };
  }
  if (status === 502 || status === 503 || status === 504) return { kind: 'unavailable', retryable: true, reason: `the core answered ${status}` };
  return { kind: 'unavailable', retryable: false, reason: `the core answered a read with ${status}, which is not a protocol answer to it` };
}

export function fromCoreCardResolution(answer: CoreAnswer): Classified<{ cardId: string }> {
  return classifyRead(answer, (body) => (Value.Check(CoreCardResolution, body) ? { cardId: body.cardId } : undefined));
}

export function fromCoreCardList(answer: CoreAnswer, entityId: string): Classified<CardSummary[]> {
  return classifyRead(answer, (body) => {
    if (!Value.Check(CoreCardList, body) || body.entityId !== entityId) return undefined;
    if (body.cards.some((c) => c.entityId !== entityId)) return undefined;
    return body.cards.map(fromCoreSummary);
  });
}

export function fromCoreCard(answer: CoreAnswer, cardId: string): Classified<CardDetails> {
  return classifyRead(answer, (body) => {
    if (!Value.Check(CoreCardDetails, body) || body.cardId !== cardId) return undefined;
    const { pan, cvv } = body.sensitive;
    // The masked number must be this PAN's: a mismatch means the core mixed up two cards.
    if (body.maskedPan.slice(0, 6) !== pan.slice(0, 6) || body.maskedPan.slice(-4) !== pan.slice(-4)) return undefined;
    return {
      ...fromCoreSummary(body),
      ...(body.plasticCode !== undefined ? { plasticCode: body.plasticCode } : {}),
      ...(body.preferences !== undefined ? { preferences: body.preferences } : {}),
      sensitive: { pan, ...(cvv !== undefined ? { cvv } : {}) },
    };
  });
}

export function fromCorePreferences(answer: CoreAnswer, cardId: string): Classified<Preferences> {
  return classifyRead(answer, (body) => (Value.Check(CorePreferences, body) && body.cardId === cardId ? body.preferences : undefined));
}

/** available = limit − outstanding, by value: an answer that does not add up is not a credit line. */
const addsUp = (limit: string, outstanding: string, available: string) => {
  try {
    return toMinor(limit) - toMinor(outstanding) === toMinor(available);
  } catch {
    return false;
  }
};

export function fromCoreCreditLimitRead(answer: CoreAnswer, entityId: string): Classified<CreditLimitResult> {
  return classifyRead(answer, (body) =>
    Value.Check(CoreCreditLimit, body) && body.entityId === entityId && addsUp(body.creditLimit, body.outstanding, body.availableCredit)
      ? { entityId: body.entityId, creditLimit: body.creditLimit, outstanding: body.outstanding, availableCredit: body.availableCredit }
      : undefined,
  );
}

/** The protocol's entity in the contract's words; only the fields the contract names pass. */
function fromCoreEntity(e: CoreEntityDetails): EntityDetails | undefined {
  if (!addsUp(e.creditLimit, e.outstanding, e.availableCredit)) return undefined;
  const a = e.primaryAddress;
  return {
    entityId: e.entityId,
    name: e.name,
    type: e.type,
    contact: { email: e.contact.email, mobile: e.contact.mobile },
    primaryAddress: { address1: a.address1, ...(a.address2 !== undefined ? { address2: a.address2 } : {}), city: a.city, state: a.state, country: a.country, pin: a.pin },
    creditLimit: e.creditLimit,
    outstanding: e.outstanding,
    availableCredit: e.availableCredit,
    cardCount: e.cardCount,
  };
}

function fromCoreTransactionBody(t: CoreTransaction): Transaction {
  return {
    transactionId: t.transactionId,
    cardId: t.cardId,
    entityId: t.entityId,
    amount: t.amount,
    channel: t.channel,
    merchant: { name: t.merchant.name, mcc: t.merchant.mcc, country: t.merchant.country },
    international: t.international,
    status: t.status,
    // A decline names its reason; an approval none.
    declineReason: t.status === 'APPROVED' ? null : t.declineReason,
    at: t.at,
    ...(t.type !== undefined ? { type: t.type } : {}),
    ...(t.authorizationId !== undefined ? { authorizationId: t.authorizationId } : {}),
  };
}

export function fromCoreEntityRegistered(answer: CoreAnswer, input: RegisterEntityInput): Classified<EntityRegistration> {
  return classify(answer, (body) => {
    if (!Value.Check(CoreEntityRegistered, body)) return undefined;
    const entity = fromCoreEntity(body.entity);
    if (!entity || entity.name !== input.name || (input.entityId !== undefined && entity.entityId !== input.entityId)) return undefined;
    // The card asked for, of this entity, and no card when none was asked for.
    if (input.issueVirtualCard !== (body.card !== undefined) || (body.card && body.card.entityId !== entity.entityId)) return undefined;
    return { entity, ...(body.card ? { card: fromCoreSummary(body.card) } : {}) };
  });
}

export function fromCoreEntityUpdated(answer: CoreAnswer, input: UpdateEntityInput): Classified<EntityDetails> {
  return classify(answer, (body) => (Value.Check(CoreEntityUpdated, body) && body.entity.entityId === input.entityId ? fromCoreEntity(body.entity) : undefined));
}

/** A card issued to the entity: VIRTUAL and ACTIVE, or it is not this issue. */
export function fromCoreCardIssued(answer: CoreAnswer, input: { entityId: string }): Classified<CardSummary> {
  return classify(answer, (body) =>
    Value.Check(CoreCardApplied, body) && body.entityId === input.entityId && body.form === 'VIRTUAL' && body.state === 'ACTIVE' ? fromCoreSummary(body) : undefined,
  );
}

export function fromCoreCardReplaced(answer: CoreAnswer, input: ReplaceCardInput): Classified<CardReplacement> {
  return classify(answer, (body) => {
    if (!Value.Check(CoreCardReplaced, body) || body.replacedCardId !== input.cardId || body.card.cardId === input.cardId) return undefined;
    const { card } = body;
    const expected = input.kitNo === undefined ? card.form === 'VIRTUAL' : card.form === 'PHYSICAL' && card.kitNo === input.kitNo;
    return expected && card.state === 'ACTIVE' ? { replacedCardId: body.replacedCardId, card: fromCoreSummary(card) } : undefined;
  });
}

export function fromCoreTransaction(answer: CoreAnswer, input: AuthorizationInput): Classified<Transaction> {
  return classify(answer, (body) => {
    if (!Value.Check(CoreTransactionApplied, body)) return undefined;
    const t = body.transaction;
    if (t.cardId !== input.cardId || t.channel !== input.channel || !sameAmount(t.amount, input.amount)) return undefined;
    return fromCoreTransactionBody(t);
  });
}

export function fromCoreRepayment(answer: CoreAnswer, input: RepaymentInput): Classified<Repayment> {
  return classify(answer, (body) => {
    if (!Value.Check(CoreRepaymentApplied, body) || body.entityId !== input.entityId || !sameAmount(body.amount, input.amount)) return undefined;
    const { status: _status, ...repayment } = body;
    return {
      repaymentId: repayment.repaymentId,
      entityId: repayment.entityId,
      amount: repayment.amount,
      outstanding: repayment.outstanding,
      availableCredit: repayment.availableCredit,
      at: repayment.at,
    };
  });
}

export function fromCoreEntityRead(answer: CoreAnswer, entityId: string): Classified<EntityDetails> {
  return classifyRead(answer, (body) => (Value.Check(CoreEntityDetails, body) && body.entityId === entityId ? fromCoreEntity(body) : undefined));
}

export function fromCoreTransactionPage(answer: CoreAnswer, input: TransactionQuery): Classified<TransactionPage> {
  return classifyRead(answer, (body) => {
    if (!Value.Check(CoreTransactionPage, body) || body.entityId !== input.entityId || body.transactions.length > input.limit) return undefined;
    if (body.transactions.some((t) => t.entityId !== input.entityId || (input.cardId !== undefined && t.cardId !== input.cardId))) return undefined;
    return { transactions: body.transactions.map(fromCoreTransactionBody), next: body.next };
  });
}

/** Whether the hold's amounts are coherent: the held, cleared and reversed parts make up what was authorized, and no more is given back than was cleared. */
function holdAddsUp(h: CoreHold): boolean {
  try {
    const [authorized, held, cleared, reversed, refunded, credited] = [h.authorized, h.held, h.cleared, h.reversed, h.refunded, h.credited].map(toMinor) as [bigint, bigint, bigint, bigint, bigint, bigint];
    return held + cleared + reversed === authorized && refunded + credited <= cleared && (h.approved ? h.declineReason === null : h.declineReason !== null && authorized === 0n);
  } catch {
    return false;
  }
}

/** A hold answer of the authorization asked about, coherent, in the contract's words. */
export function fromCoreHold(answer: CoreAnswer, input: { authorizationId: string; cardId?: string }): Classified<HoldState> {
  return classify(answer, (body) => {
    if (!Value.Check(CoreHoldApplied, body)) return undefined;
    const h = body.hold;
    if (h.authorizationId !== input.authorizationId || (input.cardId !== undefined && h.cardId !== input.cardId) || !holdAddsUp(h)) return undefined;
    return {
      authorizationId: h.authorizationId,
      cardId: h.cardId,
      entityId: h.entityId,
      approved: h.approved,
      declineReason: h.approved ? null : h.declineReason,
      authorized: h.authorized,
      held: h.held,
      cleared: h.cleared,
      reversed: h.reversed,
      refunded: h.refunded,
      credited: h.credited,
      availableCredit: h.availableCredit,
    };
  });
}
