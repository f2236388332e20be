// The Cardline core REST protocol v1's wire shapes: its bodies, headers and the schemas its OpenAPI document
// (schemas/core-protocol.openapi.json) publishes. The table of its operations is connectors/rest/protocol.ts.
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { BLOCK_REASONS, CARD_FORMS, CARD_STATES, FULFILMENT_STEPS } from './card-lifecycle.js';
import { CommunicationAddress, PlasticCode, Preferences } from './cards.js';
import { AMOUNT_PATTERN, Identifier, PlainText } from './common.js';
import { Contact, ENTITY_TYPES, PrimaryAddress, REPLACEMENT_REASONS } from './entities.js';
import { CHANNELS, COUNTRY_PATTERN, DECLINE_REASONS, HOLD_DECLINE_REASONS, Merchant, TRANSACTION_STATUSES, TRANSACTION_TYPES } from './transactions.js';

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

/** An ISO 9564-1 PIN block under the core's key `keyId`, translated by the gateway's HSM; never logged or stored. */
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

/** An authorization to decide; `homeCountry` and `timeZone` say what is international and which day is "daily". */
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

/** POST /v1/cards/{cardId}/holds: the core's own decision on an authorization (credit available), and its hold. */
export const CoreHoldRequest = Type.Object(
  {
    authorizationId: Identifier,
    amount: Decimal,
    merchant: Merchant,
    channel: literals(CHANNELS),
    partialAllowed: Type.Boolean({ description: 'when the amount is above the available credit, hold what is available instead of declining' }),
    at: Instant,
    homeCountry: Type.Optional(Type.String({ pattern: COUNTRY_PATTERN, description: "the tenant's: a merchant elsewhere is international" })),
  },
  { additionalProperties: false },
);
export type CoreHoldRequest = Static<typeof CoreHoldRequest>;

export const CoreClearingRequest = Type.Object(
  { amount: Decimal, final: Type.Boolean({ description: 'release what stays held after this clearing' }), at: Instant },
  { additionalProperties: false },
);
export type CoreClearingRequest = Static<typeof CoreClearingRequest>;

export const CoreReversalRequest = Type.Object({ amount: Type.Optional(Decimal), at: Instant }, { additionalProperties: false });
export type CoreReversalRequest = Static<typeof CoreReversalRequest>;

export const CoreRefundRequest = Type.Object({ amount: Decimal, at: Instant }, { additionalProperties: false });
export type CoreRefundRequest = Static<typeof CoreRefundRequest>;

export const CoreDisputeCreditRequest = Type.Object({ disputeId: Identifier, amount: Decimal, at: Instant }, { additionalProperties: false });
export type CoreDisputeCreditRequest = Static<typeof CoreDisputeCreditRequest>;

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
  type: Type.Optional(literals(TRANSACTION_TYPES)),
  authorizationId: Type.Optional(Identifier),
});
export type CoreTransaction = Static<typeof CoreTransaction>;

export const CoreTransactionApplied = Type.Object({ status: Type.Literal('APPLIED'), transaction: CoreTransaction });
export type CoreTransactionApplied = Static<typeof CoreTransactionApplied>;

/** An authorization's hold and what followed it; none of the amounts is ever below zero. */
export const CoreHold = Type.Object({
  authorizationId: Identifier,
  cardId: Identifier,
  entityId: Identifier,
  approved: Type.Boolean(),
  declineReason: Type.Union([literals(HOLD_DECLINE_REASONS), Type.Null()]),
  authorized: Decimal,
  held: Decimal,
  cleared: Decimal,
  reversed: Decimal,
  refunded: Decimal,
  credited: Decimal,
  availableCredit: Decimal,
});
export type CoreHold = Static<typeof CoreHold>;

export const CoreHoldApplied = Type.Object({ status: Type.Literal('APPLIED'), hold: CoreHold });
export type CoreHoldApplied = Static<typeof CoreHoldApplied>;

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

// ── Components of the OpenAPI document ────────────────────────────────────────────────────────────

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
  HoldRequest: CoreHoldRequest,
  ClearingRequest: CoreClearingRequest,
  ReversalRequest: CoreReversalRequest,
  RefundRequest: CoreRefundRequest,
  DisputeCreditRequest: CoreDisputeCreditRequest,
  Hold: CoreHold,
  HoldApplied: CoreHoldApplied,
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
