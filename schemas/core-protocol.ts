// The Cardline core REST protocol v1, written once: its bodies and the table of its operations, from which
// the REST connector builds its requests, the mock core registers its routes and the OpenAPI document
// (schemas/core-protocol.openapi.json) is generated.
import { Type, type Static, type TObject, type TSchema } from '@sinclair/typebox';
import { CONTRACT, type CardSummary, type ContractOperation, type OperationInput, type OperationValue } from '../connectors/contract.js';
import { BLOCK_REASONS, CARD_FORMS, CARD_STATES, FULFILMENT_STEPS } from './card-lifecycle.js';
import { CommunicationAddress, PlasticCode, Preferences } from './cards.js';
import { hoister } from '../src/openapi/hoist.js';
import { AMOUNT_PATTERN, Identifier, PlainText } from './common.js';
import { Contact, ENTITY_TYPES, PrimaryAddress, REPLACEMENT_REASONS } from './entities.js';
import { CHANNELS, COUNTRY_PATTERN, DECLINE_REASONS, Merchant, TRANSACTION_STATUSES } from './transactions.js';

export const CORE_PROTOCOL_VERSION = '1.0.0';

/** A bank's path segment; also a file name in the mock core's data dir, hence the narrow alphabet. */
export const BANK_ID_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$';
export const BankId = Type.String({ pattern: BANK_ID_PATTERN, description: 'the bank (core instance) addressed' });

const Decimal = Type.String({ pattern: AMOUNT_PATTERN, description: 'a decimal string with at most two decimals; never a float' });
const SignedDecimal = Type.String({ pattern: '^-?\\d{1,17}\\.\\d{2}$', description: 'a signed decimal string with two decimals' });

/** Business codes are identifiers such as PPCUST_018; anything else is not a recognisable refusal. */
export const BUSINESS_CODE_PATTERN = '^[A-Za-z0-9_.-]{1,64}$';

// ── Requests ────────────────────────────────────────────────────────────────────────────────────────

export const CoreCreditLimitRequest = Type.Object(
  {
    amount: Decimal,
    /** Product rule: when false, an amount below the current limit is refused (LIMIT_DECREASE_NOT_ALLOWED). */
    allowDecrease: Type.Boolean(),
  },
  { additionalProperties: false },
);
export type CoreCreditLimitRequest = Static<typeof CoreCreditLimitRequest>;

export const CorePhysicalUpgradeRequest = Type.Object(
  {
    kitNo: PlainText(1, 64),
    entityId: Type.Optional(Identifier),
    cardId: Type.Optional(Identifier),
    communicationAddress: Type.Optional(CommunicationAddress),
    plasticCode: Type.Optional(PlasticCode),
    lockOnUpgrade: Type.Boolean(),
    preferences: Type.Optional(Preferences),
  },
  { additionalProperties: false },
);
export type CorePhysicalUpgradeRequest = Static<typeof CorePhysicalUpgradeRequest>;

const literals = <T extends string>(values: readonly T[]) => Type.Union(values.map((v) => Type.Literal(v)));
const BlockReason = literals(BLOCK_REASONS);

export const CoreBlockRequest = Type.Object({ reasonCode: BlockReason }, { additionalProperties: false });
export type CoreBlockRequest = Static<typeof CoreBlockRequest>;

/** Replaces the card's preferences as a whole. */
export const CorePreferencesRequest = Type.Object({ preferences: Preferences }, { additionalProperties: false });
export type CorePreferencesRequest = Static<typeof CorePreferencesRequest>;

/**
 * An ISO 9564-1 PIN block (format 0 or 3: 8 bytes; format 4: 16 bytes, in hex) under the core's PIN
 * key `keyId`, already translated by the gateway's HSM. Never logged, never stored by the core.
 */
export const CorePinRequest = Type.Object(
  {
    pinBlock: Type.String({ pattern: '^([0-9A-Fa-f]{16}|[0-9A-Fa-f]{32})$' }),
    format: Type.Union([Type.Literal(0), Type.Literal(3), Type.Literal(4)]),
    keyId: Identifier,
  },
  { additionalProperties: false },
);
export type CorePinRequest = Static<typeof CorePinRequest>;

/** The lifecycle actions a card can be looked up for by entity or kit. */
export const CARD_RESOLUTION_ACTIONS = ['activate', 'lock', 'unlock', 'block'] as const;

/** GET /v1/card-resolution: which card an action names, from any of cardId, entityId and kitNo. */
export const CardResolutionQuery = Type.Object(
  {
    action: literals(CARD_RESOLUTION_ACTIONS),
    cardId: Type.Optional(Identifier),
    entityId: Type.Optional(Identifier),
    kitNo: Type.Optional(PlainText(1, 64)),
  },
  { additionalProperties: false },
);
export type CardResolutionQuery = Static<typeof CardResolutionQuery>;

const EntityTypeValue = literals(ENTITY_TYPES);
const Instant = Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,9})?(Z|[+-]\\d{2}:\\d{2})$', description: 'an ISO 8601 instant' });
const KitNo = PlainText(1, 64);

/** A new customer; without entityId the core assigns one. */
export const CoreEntityRegistrationRequest = Type.Object(
  {
    entityId: Type.Optional(Identifier),
    name: PlainText(1, 256),
    type: EntityTypeValue,
    contact: Contact,
    primaryAddress: PrimaryAddress,
    creditLimit: Decimal,
    issueVirtualCard: Type.Boolean(),
  },
  { additionalProperties: false },
);
export type CoreEntityRegistrationRequest = Static<typeof CoreEntityRegistrationRequest>;

/** Each part given replaces that part whole. */
export const CoreEntityUpdateRequest = Type.Object(
  { contact: Type.Optional(Contact), primaryAddress: Type.Optional(PrimaryAddress) },
  { additionalProperties: false },
);
export type CoreEntityUpdateRequest = Static<typeof CoreEntityUpdateRequest>;

export const CoreReplacementRequest = Type.Object(
  { reason: literals(REPLACEMENT_REASONS), kitNo: Type.Optional(KitNo) },
  { additionalProperties: false },
);
export type CoreReplacementRequest = Static<typeof CoreReplacementRequest>;

/**
 * An authorization to decide. `at` is when it was asked; `homeCountry` and `timeZone` are the bank's
 * product configuration: what is international, and which day "daily" limits count.
 */
export const CoreAuthorizationRequest = Type.Object(
  {
    amount: Decimal,
    merchant: Merchant,
    channel: literals(CHANNELS),
    at: Instant,
    homeCountry: Type.String({ pattern: COUNTRY_PATTERN }),
    timeZone: Type.String({ minLength: 1, maxLength: 64, description: 'an IANA time zone' }),
  },
  { additionalProperties: false },
);
export type CoreAuthorizationRequest = Static<typeof CoreAuthorizationRequest>;

export const CoreRepaymentRequest = Type.Object({ amount: Decimal, at: Instant }, { additionalProperties: false });
export type CoreRepaymentRequest = Static<typeof CoreRepaymentRequest>;

/** GET /v1/entities/{entityId}/transactions: newest first; `before` is the `next` of the previous page. */
export const CoreTransactionQuery = Type.Object(
  {
    from: Type.Optional(Instant),
    to: Type.Optional(Instant),
    cardId: Type.Optional(Identifier),
    status: Type.Optional(literals(TRANSACTION_STATUSES)),
    limit: Type.String({ pattern: '^[1-9]\\d{0,3}$', description: 'page size, 1..9999' }),
    before: Type.Optional(Identifier),
  },
  { additionalProperties: false },
);
export type CoreTransactionQuery = Static<typeof CoreTransactionQuery>;

// ── Answers (open objects: a client ignores fields it does not know) ──────────────────────────────

export const CoreCreditLimitApplied = Type.Object({
  status: Type.Literal('APPLIED'),
  entityId: Identifier,
  previousLimit: Decimal,
  newLimit: Decimal,
});
export type CoreCreditLimitApplied = Static<typeof CoreCreditLimitApplied>;

export const CoreCardState = Type.Union([Type.Literal('ACTIVE'), Type.Literal('PENDING_ACTIVATION')]);

export const CorePhysicalUpgradeApplied = Type.Object({
  status: Type.Literal('APPLIED'),
  cardId: Identifier,
  entityId: Identifier,
  kitNo: PlainText(1, 64),
  cardState: CoreCardState,
});
export type CorePhysicalUpgradeApplied = Static<typeof CorePhysicalUpgradeApplied>;

const MaskedPan = Type.String({ pattern: '^\\d{6}\\*+\\d{4}$', description: 'first six and last four digits only' });

/** A card without its secrets: what list and lifecycle answers carry. */
export const CoreCardSummary = Type.Object({
  cardId: Identifier,
  entityId: Identifier,
  form: literals(CARD_FORMS),
  state: literals(CARD_STATES),
  fulfilment: Type.Optional(literals(FULFILMENT_STEPS)),
  kitNo: Type.Optional(PlainText(1, 64)),
  maskedPan: MaskedPan,
  expiry: Type.String({ pattern: '^(0[1-9]|1[0-2])/\\d{2}$', description: 'MM/YY' }),
  blockReason: Type.Optional(BlockReason),
});
export type CoreCardSummary = Static<typeof CoreCardSummary>;

/** A lifecycle change applied: the card as it is now. */
export const CoreCardApplied = Type.Composite([Type.Object({ status: Type.Literal('APPLIED') }), CoreCardSummary]);
export type CoreCardApplied = Static<typeof CoreCardApplied>;

export const CoreCardList = Type.Object({ entityId: Identifier, cards: Type.Array(CoreCardSummary) });
export type CoreCardList = Static<typeof CoreCardList>;

/** One card in full. `sensitive` carries the full PAN and CVV: the gateway encrypts them to the client or drops them. */
export const CoreCardDetails = Type.Composite([
  CoreCardSummary,
  Type.Object({
    plasticCode: Type.Optional(PlasticCode),
    preferences: Type.Optional(Preferences),
    sensitive: Type.Object({
      pan: Type.String({ pattern: '^\\d{12,19}$' }),
      cvv: Type.Optional(Type.String({ pattern: '^\\d{3,4}$' })),
    }),
  }),
]);
export type CoreCardDetails = Static<typeof CoreCardDetails>;

export const CorePreferences = Type.Object({ cardId: Identifier, preferences: Preferences });
export type CorePreferences = Static<typeof CorePreferences>;

export const CorePreferencesApplied = Type.Object({ status: Type.Literal('APPLIED'), cardId: Identifier, preferences: Preferences });
export type CorePreferencesApplied = Static<typeof CorePreferencesApplied>;

export const CoreCreditLimit = Type.Object({ entityId: Identifier, creditLimit: Decimal, outstanding: Decimal, availableCredit: Decimal });
export type CoreCreditLimit = Static<typeof CoreCreditLimit>;

/** An entity's profile and credit line. Contact and address lines are personal data: the gateway masks them. */
export const CoreEntityDetails = Type.Object({
  entityId: Identifier,
  name: Type.String(),
  type: EntityTypeValue,
  contact: Type.Object({ email: Type.String(), mobile: Type.String() }),
  primaryAddress: Type.Object({
    address1: Type.String(),
    address2: Type.Optional(Type.String()),
    city: Type.String(),
    state: Type.String(),
    country: Type.String(),
    pin: Type.String(),
  }),
  creditLimit: Decimal,
  outstanding: Decimal,
  availableCredit: Decimal,
  cardCount: Type.Integer({ minimum: 0 }),
});
export type CoreEntityDetails = Static<typeof CoreEntityDetails>;

export const CoreEntityRegistered = Type.Object({ status: Type.Literal('APPLIED'), entity: CoreEntityDetails, card: Type.Optional(CoreCardSummary) });
export type CoreEntityRegistered = Static<typeof CoreEntityRegistered>;

export const CoreEntityUpdated = Type.Object({ status: Type.Literal('APPLIED'), entity: CoreEntityDetails });
export type CoreEntityUpdated = Static<typeof CoreEntityUpdated>;

export const CoreCardReplaced = Type.Object({ status: Type.Literal('APPLIED'), replacedCardId: Identifier, card: CoreCardSummary });
export type CoreCardReplaced = Static<typeof CoreCardReplaced>;

/** An authorization as the core decided it; a decline is a transaction too. */
export const CoreTransaction = Type.Object({
  transactionId: Identifier,
  cardId: Identifier,
  entityId: Identifier,
  amount: Decimal,
  channel: literals(CHANNELS),
  merchant: Merchant,
  international: Type.Boolean(),
  status: literals(TRANSACTION_STATUSES),
  declineReason: Type.Union([literals(DECLINE_REASONS), Type.Null()]),
  at: Instant,
});
export type CoreTransaction = Static<typeof CoreTransaction>;

export const CoreTransactionApplied = Type.Object({ status: Type.Literal('APPLIED'), transaction: CoreTransaction });
export type CoreTransactionApplied = Static<typeof CoreTransactionApplied>;

export const CoreRepaymentApplied = Type.Object({
  status: Type.Literal('APPLIED'),
  repaymentId: Identifier,
  entityId: Identifier,
  amount: Decimal,
  outstanding: Decimal,
  availableCredit: Decimal,
  at: Instant,
});
export type CoreRepaymentApplied = Static<typeof CoreRepaymentApplied>;

export const CoreTransactionPage = Type.Object({
  entityId: Identifier,
  transactions: Type.Array(CoreTransaction),
  next: Type.Union([Identifier, Type.Null()]),
});
export type CoreTransactionPage = Static<typeof CoreTransactionPage>;

/** A PIN change applied. The answer never carries the block. */
export const CorePinApplied = Type.Object({ status: Type.Literal('APPLIED'), cardId: Identifier });
export type CorePinApplied = Static<typeof CorePinApplied>;

export const CoreCardResolution = Type.Object({ cardId: Identifier });
export type CoreCardResolution = Static<typeof CoreCardResolution>;

/** The core took the request but has not applied it yet (HTTP 202, or 200 with this status). */
export const CoreAccepted = Type.Object({
  status: Type.Union([Type.Literal('ACCEPTED'), Type.Literal('PENDING')]),
  reference: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
});
export type CoreAccepted = Static<typeof CoreAccepted>;

export const CoreError = Type.Object({
  error: Type.Object({
    code: Type.String({ minLength: 1 }),
    message: Type.String(),
  }),
});
export type CoreError = Static<typeof CoreError>;

export const CoreCard = Type.Object({
  cardId: Identifier,
  form: Type.Union([Type.Literal('VIRTUAL'), Type.Literal('PHYSICAL')]),
  state: Type.Union([Type.Literal('ACTIVE'), Type.Literal('LOCKED'), Type.Literal('PENDING_ACTIVATION'), Type.Literal('BLOCKED')]),
  /** First six and last four digits only; the full number never leaves the core on this protocol. */
  maskedPan: Type.String({ pattern: '^\\d{6}\\*+\\d{4}$' }),
  kitNo: Type.Optional(Type.String()),
  fulfilment: Type.Optional(
    Type.Union([Type.Literal('ORDERED'), Type.Literal('EMBOSSED'), Type.Literal('DISPATCHED'), Type.Literal('DELIVERED')]),
  ),
  balance: SignedDecimal,
});

export const CoreEntity = Type.Object({
  entityId: Identifier,
  name: Type.String(),
  creditLimit: Decimal,
  cards: Type.Array(CoreCard),
});
export type CoreEntity = Static<typeof CoreEntity>;

export const CoreHealth = Type.Object({ status: Type.Literal('UP') });

// ── Mock core administration (not part of what a real core implements) ───────────────────────────

const Rate = Type.Number({ minimum: 0, maximum: 1 });

export const FaultConfig = Type.Object(
  {
    /** Added before every operation is applied. */
    latencyMs: Type.Integer({ minimum: 0, maximum: 60_000 }),
    /** Share of operations answered 503 CORE_UNAVAILABLE without being applied. */
    errorRate: Rate,
    /** Share of operations held without an answer (and not applied) until the client gives up. */
    timeoutRate: Rate,
    /** Share of operations whose connection is reset (not applied). */
    resetRate: Rate,
    /** Seed of the PRNG that draws the random faults; the same seed replays the same faults. */
    seed: Type.Integer({ minimum: 0, maximum: 4_294_967_295 }),
  },
  { additionalProperties: false },
);
export type FaultConfig = Static<typeof FaultConfig>;

/** PUT /__admin/faults: fields left out take their defaults (no latency, no faults, seed 1). */
export const FaultConfigUpdate = Type.Partial(FaultConfig, { additionalProperties: false });
export type FaultConfigUpdate = Static<typeof FaultConfigUpdate>;

export const ResetRequest = Type.Object({ bankId: Type.Optional(BankId) }, { additionalProperties: false });
export const ResetResult = Type.Object({ reset: Type.Array(Type.String()) });

// ── Headers ─────────────────────────────────────────────────────────────────────────────────────────

export const MOCK_FAULT_PATTERN = '^(error|timeout|reset|latency=\\d{1,5})$';

export const OperationHeaders = Type.Object({
  'idempotency-key': Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  'x-request-id': Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })),
  'x-mock-fault': Type.Optional(Type.String({ pattern: MOCK_FAULT_PATTERN })),
});

// ── The operations, once ──────────────────────────────────────────────────────────────────────────

/** What an operation carries out in the core: a contract operation, or the card lookup that precedes a change. */
export type CoreRule = ContractOperation | 'resolveCard';
export type RuleInput<R extends CoreRule> = R extends ContractOperation ? OperationInput<R> : CardResolutionQuery;
export type RuleValue<R extends CoreRule> = R extends ContractOperation ? OperationValue<R> : CoreCardResolution;

/** One answer of an operation: its body schema, what it means, and whether it echoes X-Request-Id. */
export interface CoreAnswerSpec {
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

/**
 * An operation of the protocol.
 * - `write` changes state: it takes an Idempotency-Key, answers 200 APPLIED, 202 when only taken, 422 for a
 *   business refusal; the configured faults and latency apply.
 * - `read` changes nothing: 200 with the value or 422; a client retries it freely.
 */
export interface CoreOperation<R extends CoreRule = CoreRule> extends CoreEndpoint {
  kind: 'write' | 'read';
  /** The rule it applies, by the contract operation's name (the mock core calls CoreBank's method of that name). */
  serves: R;
  /** Whether the caller's Idempotency-Key is part of the request (every write; the card resolution). */
  keyed: boolean;
  /** How a core answers the rule's value (the 200 body), in the protocol's words. */
  answer(value: RuleValue<R>, input: RuleInput<R>): unknown;
  /**
   * How a server reads a request into the rule's input, where the query's strings are not the input's
   * types (a page size); default: the path's identifiers over the query and the body, as they are.
   */
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
  /** The 200 body. */
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
export function coreCardSummary<C extends CardSummary>(card: C): Omit<C, 'panMasked'> & { maskedPan: string } {
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

/**
 * The core REST protocol v1, one entry per operation, keyed by operationId and in the order of the
 * document. Adding an operation: its entry in the contract table (connectors/contract.ts), an entry here, and
 * a line in the REST connector; the mock, file and mock-core server follow the table (docs/connectors.md).
 */
export const CORE_PROTOCOL = Object.fromEntries(Object.entries(operations).map(([operationId, spec]) => [operationId, { operationId, ...spec }])) as {
  [K in keyof Operations]: Operations[K] & { operationId: K };
};

// ── OpenAPI 3.1 document, generated from the table ────────────────────────────────────────────────

/** Schemas published under components.schemas, by name. */
export const coreProtocolComponents: Record<string, TSchema> = {
  CreditLimitRequest: CoreCreditLimitRequest,
  CreditLimitApplied: CoreCreditLimitApplied,
  PhysicalUpgradeRequest: CorePhysicalUpgradeRequest,
  PhysicalUpgradeApplied: CorePhysicalUpgradeApplied,
  BlockRequest: CoreBlockRequest,
  PreferencesRequest: CorePreferencesRequest,
  PinRequest: CorePinRequest,
  CardSummary: CoreCardSummary,
  CardApplied: CoreCardApplied,
  CardList: CoreCardList,
  CardDetails: CoreCardDetails,
  Preferences: CorePreferences,
  PreferencesApplied: CorePreferencesApplied,
  CreditLimit: CoreCreditLimit,
  EntityRegistrationRequest: CoreEntityRegistrationRequest,
  EntityUpdateRequest: CoreEntityUpdateRequest,
  ReplacementRequest: CoreReplacementRequest,
  AuthorizationRequest: CoreAuthorizationRequest,
  RepaymentRequest: CoreRepaymentRequest,
  EntityDetails: CoreEntityDetails,
  EntityRegistered: CoreEntityRegistered,
  EntityUpdated: CoreEntityUpdated,
  CardReplaced: CoreCardReplaced,
  TransactionApplied: CoreTransactionApplied,
  RepaymentApplied: CoreRepaymentApplied,
  TransactionPage: CoreTransactionPage,
  PinApplied: CorePinApplied,
  CardResolution: CoreCardResolution,
  Accepted: CoreAccepted,
  Error: CoreError,
  Entity: CoreEntity,
  Health: CoreHealth,
};

/** Schemas of the mock core's own paths (not the protocol): shown under `x-mock-core`, not components. */
const mockCoreSchemas: Record<string, TSchema> = { FaultConfig, FaultConfigUpdate, ResetRequest, ResetResult };

const componentNames = new Map(Object.entries(coreProtocolComponents).map(([name, schema]) => [schema, name]));
function ref(schema: TSchema) {
  const name = componentNames.get(schema);
  if (!name) throw new Error('a schema of the core protocol table is not listed in coreProtocolComponents');
  return { $ref: `#/components/schemas/${name}` };
}
/** TypeBox marks schemas with symbol keys; JSON keeps only the standard keywords. */
const plain = (schema: TSchema): unknown => JSON.parse(JSON.stringify(schema));

/** Tags: the sections of the protocol, by the first segment of the path. */
const TAGS: Record<string, { name: string; description: string }> = {
  entities: { name: 'Entities', description: 'Business entities (customers): registration, credit limits, repayments, transactions.' },
  cards: { name: 'Cards', description: 'Cards: issue, lifecycle changes, preferences, PIN, authorizations.' },
  'card-resolution': { name: 'Cards', description: '' },
  health: { name: 'Health', description: 'Whether the bank can take calls.' },
};
const tagOf = (path: string) => {
  const tag = TAGS[path.split('/')[2]!];
  if (!tag) throw new Error(`no tag for the core protocol path ${path}`);
  return tag.name;
};

/** What every path of the protocol may answer when the core requires credentials (security). */
const UNAUTHENTICATED = {
  description: 'Credentials missing or wrong, where the core requires them (bearer, basic or mutual TLS); nothing was applied.',
  headers: { 'WWW-Authenticate': { description: 'The scheme to use: Bearer or Basic.', schema: { type: 'string' } } },
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
};

const HEADER_PARAMS = [
  {
    name: 'Idempotency-Key',
    in: 'header',
    required: false,
    description: 'A retry with the same key returns the first outcome without applying the operation again.',
    schema: plain(OperationHeaders.properties['idempotency-key']),
  },
  {
    name: 'X-Request-Id',
    in: 'header',
    required: false,
    description: "The caller's request id; echoed in the answer so both sides' logs can be joined.",
    schema: plain(OperationHeaders.properties['x-request-id']),
  },
  {
    name: 'X-Mock-Fault',
    in: 'header',
    required: false,
    description: 'Mock core only: inject a fault into this request (error, timeout, reset, latency=<ms>).',
    schema: plain(OperationHeaders.properties['x-mock-fault']),
  },
];
const requestIdHeader = { 'X-Request-Id': { description: 'Echo of the request id.', schema: { type: 'string' } } };

function openApiOperation(entry: CoreEndpointSpec): Record<string, unknown> {
  const headers = entry.kind === 'probe' ? [] : HEADER_PARAMS.filter((h) => entry.keyed || h.name !== 'Idempotency-Key');
  const query = entry.query
    ? Object.entries(entry.query.properties).map(([name, schema]) => ({ name, in: 'query', required: entry.query!.required?.includes(name) ?? false, schema: plain(schema) }))
    : [];
  const parameters = [
    ...Object.entries(entry.params).map(([name, schema]) => ({ name, in: 'path', required: true, schema: plain(schema) })),
    ...query,
    ...headers,
  ];
  const responses: Record<string, unknown> = Object.fromEntries(
    Object.entries(entry.answers).map(([status, a]) => [
      status,
      { description: a.description, content: { 'application/json': { schema: ref(a.schema) } }, ...(a.echoesRequestId ? { headers: requestIdHeader } : {}) },
    ]),
  );
  responses['401'] ??= UNAUTHENTICATED;
  const kind = { write: 'A write: applied once per Idempotency-Key.', read: 'A read: changes nothing; retried freely.', probe: 'A probe: no fault drawn, no key.' }[entry.kind];
  return {
    operationId: entry.operationId,
    summary: entry.summary,
    description: entry.description ? `${entry.description}\n\n${kind}` : kind,
    tags: [tagOf(entry.path)],
    ...(parameters.length ? { parameters } : {}),
    ...(entry.body ? { requestBody: { required: true, content: { 'application/json': { schema: ref(entry.body) } } } } : {}),
    responses,
  };
}

/** The protocol as an OpenAPI 3.1 document; the committed JSON file is this, pretty-printed. */
export function coreProtocolOpenApi(): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const entry of Object.values(CORE_PROTOCOL) as CoreEndpointSpec[]) {
    (paths[entry.path] ??= {})[entry.method.toLowerCase()] = openApiOperation(entry);
  }
  const named = hoister(Object.fromEntries(Object.entries(coreProtocolComponents).map(([name, schema]) => [name, plain(schema)])));
  const schemas = Object.fromEntries(Object.keys(coreProtocolComponents).map((name) => [name, named.bodyOf(name)]));
  return {
    openapi: '3.1.0',
    info: {
      title: 'Cardline core REST protocol',
      version: CORE_PROTOCOL_VERSION,
      contact: { name: 'The Cardline gateway team' },
      // package.json: UNLICENSED. SPDX writes a licence of one's own as LicenseRef-<name>.
      license: { name: 'Proprietary: no licence is granted', identifier: 'LicenseRef-Cardline-Proprietary' },
      description:
        'What a core-banking system implements so that the Cardline REST connector (connector id `rest`) can drive it. ' +
        'Paths are relative to the connector\'s baseUrl; the mock core (`npm run mock-core`) serves several banks at ' +
        '`/banks/{bankId}`. Money is a decimal string. A retried request carries the same Idempotency-Key and must be ' +
        'applied once. A 200 is read as success only with status APPLIED and the fields below; any other answer the ' +
        'client does not recognise is treated as pending, never as success. 4xx other than 422 and every 5xx mean ' +
        'nothing was applied. Reads (GET) change nothing, so the client retries them freely; a read answer it does not ' +
        'recognise is a failure of the core, never pending. Card lifecycle changes name the card by cardId in the path; ' +
        'a caller that knows only the entity or the kit asks GET /v1/card-resolution first.',
    },
    tags: [...new Map(Object.values(TAGS).filter((t) => t.description).map((t) => [t.name, t])).values()],
    servers: [{ url: 'http://127.0.0.1:9090/banks/{bankId}', variables: { bankId: { default: 'demo' } } }],
    security: [{}, { bearer: [] }, { basic: [] }, { mtls: [] }],
    paths,
    'x-mock-core': {
      description: 'Paths of the mock core server itself, relative to its root (not part of what a real core implements).',
      paths: {
        'GET /health': 'liveness of the server: {"status":"UP"}',
        'GET /openapi.json': 'this document',
        'GET /__admin/faults': 'the fault configuration (FaultConfig)',
        'PUT /__admin/faults': 'replace the fault configuration (FaultConfigUpdate; missing fields take defaults)',
        'POST /__admin/reset': 'restore the fixtures of one bank (ResetRequest.bankId) or of every bank',
      },
      schemas: Object.fromEntries(Object.entries(mockCoreSchemas).map(([name, schema]) => [name, plain(schema)])),
    },
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer' },
        basic: { type: 'http', scheme: 'basic' },
        mtls: { type: 'mutualTLS' },
      },
      schemas,
    },
  };
}

/** The committed file's exact text. */
export const coreProtocolOpenApiText = (): string => `${JSON.stringify(coreProtocolOpenApi(), null, 2)}\n`;
