// The Cardline core REST protocol v1's table, written once: each operation's path, method, bodies and answers
// (the wire shapes are schemas/core-protocol.ts), from which the REST connector builds its requests, the mock
// core registers its routes and the protocol's OpenAPI document (./protocol-document.ts) is generated.
import type { Static, TObject, TSchema } from '@sinclair/typebox';
import { CONTRACT, type CardSummary, type ContractOperation, type OperationInput, type OperationValue } from '../contract.js';
import { Identifier } from '../../schemas/common.js';
import {
  CardResolutionQuery,
  CoreAccepted,
  CoreAuthorizationRequest,
  CoreBlockRequest,
  CoreCardApplied,
  CoreCardDetails,
  CoreCardList,
  CoreCardReplaced,
  CoreCardResolution,
  CoreCreditLimit,
  CoreCreditLimitApplied,
  CoreCreditLimitRequest,
  CoreEntity,
  CoreEntityDetails,
  CoreEntityRegistered,
  CoreEntityRegistrationRequest,
  CoreEntityUpdateRequest,
  CoreEntityUpdated,
  CoreError,
  CoreHealth,
  CorePhysicalUpgradeApplied,
  CorePhysicalUpgradeRequest,
  CorePinApplied,
  CorePinRequest,
  CorePreferences,
  CorePreferencesApplied,
  CorePreferencesRequest,
  CoreRepaymentApplied,
  CoreRepaymentRequest,
  CoreReplacementRequest,
  CoreTransactionApplied,
  CoreTransactionPage,
  CoreTransactionQuery,
} from '../../schemas/core-protocol.js';
// ── The operations, once ──────────────────────────────────────────────────────────────────────────

/** What an operation carries out in the core: a contract operation, or the card lookup that precedes a change. */
export type CoreRule = ContractOperation | 'resolveCard';
export type RuleInput<R extends CoreRule> = R extends ContractOperation ? OperationInput<R> : CardResolutionQuery;
type RuleValue<R extends CoreRule> = R extends ContractOperation ? OperationValue<R> : CoreCardResolution;

/** One answer of an operation: its body schema, what it means, and whether it echoes X-Request-Id. */
interface CoreAnswerSpec {
  schema: TSchema;
  description: string;
  echoesRequestId?: true;
}

interface CoreEndpoint {
  /** The OpenAPI operationId: the entry's key in CORE_PROTOCOL. */
  operationId: string;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH';
  /** Relative to the connector's baseUrl; each `{name}` is filled from the input's field of that name. */
  path: `/v1/${string}`;
  /** The schema of each `{name}` of the path. */
  params: Record<string, TSchema>;
  /** The query string, validated as a whole (unknown parameters refused). */
  query?: TObject;
  body?: TSchema;
  /** Every answer the protocol defines, by HTTP status. */
  answers: Record<number, CoreAnswerSpec>;
  summary: string;
  description?: string;
}

/** An operation: a `write` takes an Idempotency-Key (200 APPLIED, 202 taken, 422 refused); a `read` changes nothing. */
export interface CoreOperation<R extends CoreRule = CoreRule> extends CoreEndpoint {
  kind: 'write' | 'read';
  /** The rule it applies, by the contract operation's name (the mock core calls CoreBank's method of that name). */
  serves: R;
  /** Whether the caller's Idempotency-Key is part of the request (every write; the card resolution). */
  keyed: boolean;
  /** How a core answers the rule's value (the 200 body), in the protocol's words. */
  answer(value: RuleValue<R>, input: RuleInput<R>): unknown;
  /** How a server reads a request into the rule's input; default: path identifiers over query and body. */
  input?(fields: Record<string, unknown>): RuleInput<R>;
}

/** A path of the protocol that is not an operation (bank health, entity inspection): no faults drawn, no key. */
export interface CoreProbe extends CoreEndpoint {
  kind: 'probe';
}

export type CoreEndpointSpec = CoreOperation | CoreProbe;

const LIFECYCLE_RULE =
  'The change obeys the card transition table (schemas/card-lifecycle.ts); an illegal one is refused with 422 ' +
  'CARD_STATE_INVALID, an unknown card with 422 CARD_NOT_FOUND.';

const echoed = (schema: TSchema, description: string): CoreAnswerSpec => ({ schema, description, echoesRequestId: true });

const writeAnswers = (applied: TSchema): Record<number, CoreAnswerSpec> => ({
  200: echoed(applied, 'Applied (or, with status ACCEPTED/PENDING, taken but not yet applied).'),
  202: echoed(CoreAccepted, 'Taken but not applied yet; the outcome is confirmed later.'),
  400: { schema: CoreError, description: 'The request does not follow the protocol; nothing was applied.' },
  401: { schema: CoreError, description: 'Missing or wrong credentials; nothing was applied.' },
  422: { schema: CoreError, description: 'Business refusal; nothing was applied. error.code is a business code (PPCUST_018, ENTITY_NOT_FOUND, ...).' },
  503: { schema: CoreError, description: 'The core is unavailable (CORE_UNAVAILABLE); nothing was applied.' },
});

/** Reads answer 200 with the value or 422 with a business code; no 202: there is no pending read. */
const readAnswers = (value: TSchema): Record<number, CoreAnswerSpec> => ({
  200: echoed(value, 'The value.'),
  400: { schema: CoreError, description: 'The request does not follow the protocol.' },
  401: { schema: CoreError, description: 'Missing or wrong credentials.' },
  422: { schema: CoreError, description: 'Business refusal: error.code is CARD_NOT_FOUND, ENTITY_NOT_FOUND, CARD_AMBIGUOUS, ...' },
  503: { schema: CoreError, description: 'The core is unavailable (CORE_UNAVAILABLE).' },
});

type Spec<R extends CoreRule, A extends TSchema> = Omit<CoreOperation<R>, 'operationId' | 'kind' | 'serves' | 'keyed' | 'answers' | 'params' | 'answer' | 'input'> & {
  input?(fields: Record<string, unknown>): RuleInput<R>;
  params?: Record<string, TSchema>;
  value: A;
  answer(value: RuleValue<R>, input: RuleInput<R>): Static<A>;
};

const write = <R extends CoreRule, A extends TSchema>(serves: R, { value, ...spec }: Spec<R, A>): Omit<CoreOperation<R>, 'operationId'> => ({
  kind: 'write',
  serves,
  keyed: true,
  params: {},
  ...spec,
  answers: writeAnswers(value),
});

const read = <R extends CoreRule, A extends TSchema>(serves: R, { value, keyed = false, ...spec }: Spec<R, A> & { keyed?: boolean }): Omit<CoreOperation<R>, 'operationId'> => ({
  kind: 'read',
  serves,
  keyed,
  params: {},
  ...spec,
  answers: readAnswers(value),
});

/** A contract operation's entry: a write or a read as the contract table says, never restated here. */
const operation = <R extends ContractOperation, A extends TSchema>(serves: R, spec: Spec<R, A>): Omit<CoreOperation<R>, 'operationId'> =>
  CONTRACT[serves].kind === 'write' ? write(serves, spec) : read(serves, spec);

const probe = (spec: Omit<CoreProbe, 'operationId' | 'kind' | 'params'> & { params?: Record<string, TSchema> }): Omit<CoreProbe, 'operationId'> => ({
  kind: 'probe',
  params: {},
  ...spec,
});

/** A contract card (summary or details) in the protocol's words: `maskedPan` for `panMasked`. */
function coreCardSummary<C extends CardSummary>(card: C): Omit<C, 'panMasked'> & { maskedPan: string } {
  const { panMasked, ...rest } = card;
  return { ...rest, maskedPan: panMasked };
}

const cardId = { cardId: Identifier };
const entityId = { entityId: Identifier };

/** POST /v1/cards/{cardId}/<suffix>: a lifecycle change answered with the card as it is now. */
const cardChange = <R extends 'activateCard' | 'lockCard' | 'unlockCard' | 'blockCard' | 'advanceFulfilment'>(
  serves: R,
  suffix: string,
  summary: string,
  body?: TSchema,
) =>
  operation(serves, {
    method: 'POST',
    path: `/v1/cards/{cardId}/${suffix}`,
    params: cardId,
    ...(body ? { body } : {}),
    value: CoreCardApplied,
    summary,
    description: LIFECYCLE_RULE,
    answer: (card) => ({ status: 'APPLIED' as const, ...coreCardSummary(card) }),
  });

const operations = {
  getCreditLimit: operation('getCreditLimit', {
    method: 'GET',
    path: '/v1/entities/{entityId}/credit-limit',
    params: entityId,
    value: CoreCreditLimit,
    summary: "Read an entity's credit limit",
    answer: (limit) => limit,
  }),
  setCreditLimit: operation('upgradeLimit', {
    method: 'POST',
    path: '/v1/entities/{entityId}/credit-limit',
    params: entityId,
    body: CoreCreditLimitRequest,
    value: CoreCreditLimitApplied,
    summary: "Set an entity's credit limit",
    answer: (applied) => ({ status: 'APPLIED' as const, ...applied }),
  }),
  upgradeToPhysical: operation('upgradeToPhysical', {
    method: 'POST',
    path: '/v1/cards/physical-upgrades',
    body: CorePhysicalUpgradeRequest,
    value: CorePhysicalUpgradeApplied,
    summary: 'Map a virtual card to a physical kit',
    description:
      'Card identification: cardId names the card; else entityId names the entity whose single virtual card is ' +
      'upgraded; else the kit must already be allocated to an entity. An unknown, mapped or foreign kit is PPCUST_018.',
    answer: (v) => ({ status: 'APPLIED' as const, cardId: v.cardId, entityId: v.entityId, kitNo: v.kitNo, cardState: v.state }),
  }),
  resolveCard: read('resolveCard', {
    method: 'GET',
    path: '/v1/card-resolution',
    query: CardResolutionQuery,
    keyed: true,
    value: CoreCardResolution,
    summary: 'Which card a lifecycle action names, from an entity or a kit',
    description:
      'For callers that name a card by entityId or kitNo instead of cardId (the lifecycle paths take a cardId). ' +
      'Every identifier given must name the same card. cardId names it; else entityId names the entity\'s single ' +
      'card the action applies to (for activate the PENDING_ACTIVATION one; an entity with one card resolves to it ' +
      'whatever its state, so that the change itself explains a refusal); else kitNo names the card mapped to the kit. ' +
      'Refusals: ENTITY_NOT_FOUND, CARD_NOT_FOUND, CARD_AMBIGUOUS (several cards qualify: send cardId). With the ' +
      'Idempotency-Key of a change that already succeeded, it answers the card that change applied to, so that a ' +
      'retry resolves as the first attempt did.',
    answer: (resolved) => resolved,
  }),
  getCard: operation('getCard', {
    method: 'GET',
    path: '/v1/cards/{cardId}',
    params: cardId,
    value: CoreCardDetails,
    summary: 'Read a card in full, with its PAN and CVV under sensitive',
    answer: (card) => coreCardSummary(card),
  }),
  activateCard: cardChange('activateCard', 'activation', 'Activate a card issued PENDING_ACTIVATION'),
  lockCard: cardChange('lockCard', 'lock', 'Lock an ACTIVE card (temporary)'),
  unlockCard: cardChange('unlockCard', 'unlock', 'Unlock a LOCKED card'),
  blockCard: cardChange('blockCard', 'block', 'Block a card permanently, recording the reason', CoreBlockRequest),
  advanceFulfilment: cardChange(
    'advanceFulfilment',
    'fulfilment/advance',
    'Sandbox: move a physical card to its next fulfilment step (ORDERED → EMBOSSED → DISPATCHED → DELIVERED)',
  ),
  getPreferences: operation('getPreferences', {
    method: 'GET',
    path: '/v1/cards/{cardId}/preferences',
    params: cardId,
    value: CorePreferences,
    summary: "Read a card's transaction preferences ({} when none were set)",
    answer: (preferences, input) => ({ cardId: input.cardId, preferences }),
  }),
  updatePreferences: operation('updatePreferences', {
    method: 'PUT',
    path: '/v1/cards/{cardId}/preferences',
    params: cardId,
    body: CorePreferencesRequest,
    value: CorePreferencesApplied,
    summary: "Replace a card's transaction preferences; refused on a BLOCKED card",
    answer: (preferences, input) => ({ status: 'APPLIED' as const, cardId: input.cardId, preferences }),
  }),
  setPin: operation('setPin', {
    method: 'PUT',
    path: '/v1/cards/{cardId}/pin',
    params: cardId,
    body: CorePinRequest,
    value: CorePinApplied,
    summary: "Set the PIN of a physical card from a PIN block under the core's key",
    description: 'The block is never echoed, logged or kept by the core; the answer names the card only.',
    // Only the card: the block stays out of every answer.
    answer: (v) => ({ status: 'APPLIED' as const, cardId: v.cardId }),
  }),
  listCards: operation('listCards', {
    method: 'GET',
    path: '/v1/entities/{entityId}/cards',
    params: entityId,
    value: CoreCardList,
    summary: "An entity's cards, with masked numbers only",
    answer: (cards, input) => ({ entityId: input.entityId, cards: cards.map(coreCardSummary) }),
  }),
  registerEntity: operation('registerEntity', {
    method: 'POST',
    path: '/v1/entities',
    body: CoreEntityRegistrationRequest,
    value: CoreEntityRegistered,
    summary: 'Register a customer (business entity), with its first virtual card unless issueVirtualCard is false',
    description: 'An entityId already taken is refused with 422 ENTITY_EXISTS; a non-positive credit limit with LIMIT_NOT_POSITIVE.',
    answer: (r) => ({ status: 'APPLIED' as const, entity: r.entity, ...(r.card ? { card: coreCardSummary(r.card) } : {}) }),
  }),
  getEntityProfile: operation('getEntity', {
    method: 'GET',
    path: '/v1/entities/{entityId}/profile',
    params: entityId,
    value: CoreEntityDetails,
    summary: "Read an entity's profile, contact, primary address and credit line",
    answer: (entity) => entity,
  }),
  updateEntity: operation('updateEntity', {
    method: 'PATCH',
    path: '/v1/entities/{entityId}',
    params: entityId,
    body: CoreEntityUpdateRequest,
    value: CoreEntityUpdated,
    summary: "Replace an entity's contact or primary address (the address usePrimaryAddress uses from then on)",
    answer: (entity) => ({ status: 'APPLIED' as const, entity }),
  }),
  issueCard: operation('issueCard', {
    method: 'POST',
    path: '/v1/entities/{entityId}/cards',
    params: entityId,
    value: CoreCardApplied,
    summary: 'Issue another virtual card (ACTIVE) to an entity',
    answer: (card) => ({ status: 'APPLIED' as const, ...coreCardSummary(card) }),
  }),
  replaceCard: operation('replaceCard', {
    method: 'POST',
    path: '/v1/cards/{cardId}/replacement',
    params: cardId,
    body: CoreReplacementRequest,
    value: CoreCardReplaced,
    summary: 'Replace a BLOCKED card: a virtual card, or a physical one (fulfilment ORDERED) on kitNo',
    description:
      'Only a BLOCKED card is replaced (422 CARD_NOT_BLOCKED otherwise), and only once (CARD_ALREADY_REPLACED). The new card keeps ' +
      "the entity and the old card's preferences; a kit must be free (PPCUST_018).",
    answer: (r) => ({ status: 'APPLIED' as const, replacedCardId: r.replacedCardId, card: coreCardSummary(r.card) }),
  }),
  authorize: operation('authorize', {
    method: 'POST',
    path: '/v1/cards/{cardId}/authorizations',
    params: cardId,
    body: CoreAuthorizationRequest,
    value: CoreTransactionApplied,
    summary: 'Sandbox: decide an authorization as the issuer host would (approved, or declined with its reason)',
    description:
      'A decline is a transaction (200, status DECLINED with declineReason), not a refusal; 422 is for a card the core does not know. ' +
      'Checks in order: CARD_NOT_ACTIVE, INTERNATIONAL_DISABLED, CHANNEL_DISABLED, DAILY_LIMIT_EXCEEDED, DAILY_COUNT_EXCEEDED, INSUFFICIENT_CREDIT.',
    answer: (transaction) => ({ status: 'APPLIED' as const, transaction }),
  }),
  repay: operation('repay', {
    method: 'POST',
    path: '/v1/entities/{entityId}/repayments',
    params: entityId,
    body: CoreRepaymentRequest,
    value: CoreRepaymentApplied,
    summary: "Sandbox: a repayment lowers the entity's outstanding balance",
    description: 'More than is outstanding is refused with 422 REPAYMENT_EXCEEDS_OUTSTANDING.',
    answer: (r) => ({ status: 'APPLIED' as const, ...r }),
  }),
  listTransactions: operation('listTransactions', {
    method: 'GET',
    path: '/v1/entities/{entityId}/transactions',
    params: entityId,
    query: CoreTransactionQuery,
    value: CoreTransactionPage,
    summary: "An entity's transactions, newest first, a page at a time",
    description:
      'from (inclusive) and to (exclusive) are instants; before is the next of the previous page (transactions made while a client ' +
      'pages land above it). An unknown before is 422 TRANSACTION_NOT_FOUND; a cardId of another entity CARD_NOT_FOUND.',
    input: ({ limit, ...rest }) => ({ ...(rest as Omit<OperationInput<'listTransactions'>, 'limit'>), limit: Number(limit) }),
    answer: (page, input) => ({ entityId: input.entityId, transactions: page.transactions, next: page.next }),
  }),
  getEntity: probe({
    method: 'GET',
    path: '/v1/entities/{entityId}',
    params: entityId,
    summary: 'Read an entity (credit limit, cards with masked numbers)',
    answers: {
      200: { schema: CoreEntity, description: 'The entity.' },
      404: { schema: CoreError, description: 'No such entity (ENTITY_NOT_FOUND).' },
    },
  }),
  bankHealth: probe({
    method: 'GET',
    path: '/v1/health',
    summary: 'The bank can take calls',
    answers: { 200: { schema: CoreHealth, description: 'Up.' } },
  }),
};

type Operations = typeof operations;
/** The protocol's paths that are not operations. */
export type CoreProbeId = { [K in keyof Operations]: Operations[K] extends Omit<CoreProbe, 'operationId'> ? K : never }[keyof Operations];

/** The core REST protocol v1, one entry per operation keyed by operationId (adding one: docs/connectors.md). */
export const CORE_PROTOCOL = Object.fromEntries(Object.entries(operations).map(([operationId, spec]) => [operationId, { operationId, ...spec }])) as {
  [K in keyof Operations]: Operations[K] & { operationId: K };
};
