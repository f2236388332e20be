// The connector contract: the core operations as one data table (input, result, read or write, group),
// the Connector type derived from it, and what a connector module exports. These doc comments are the
// authoring guide for connector writers.
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import type { FastifyBaseLogger } from 'fastify';
import { CommunicationAddress, PlasticCode, Preferences } from '../schemas/cards.js';
import { BLOCK_REASONS, CARD_FORMS, CARD_STATES, FULFILMENT_STEPS } from '../schemas/card-lifecycle.js';
import { sensitive } from '../schemas/common.js';
import { Contact, ENTITY_TYPES, PrimaryAddress, REPLACEMENT_REASONS } from '../schemas/entities.js';
import { CHANNELS, DECLINE_REASONS, HOLD_DECLINE_REASONS, Merchant, TRANSACTION_STATUSES, TRANSACTION_TYPES } from '../schemas/transactions.js';

/**
 * Everything a connector learns about the request it serves. Connectors are stateless between calls;
 * whatever they need per tenant comes from their options at `create` time.
 */
export interface ConnectorContext {
  /** The tenant the call is made for. A connector instance serves exactly one tenant. */
  tenantId: string;
  /** The gateway's request id: forward it to the core so that both sides' logs can be joined. */
  requestId: string;
  /** A child logger bound to the request. Never log card numbers, CVVs, PIN blocks or keys. */
  logger: FastifyBaseLogger;
  /**
   * Aborts when the request's deadline passes. Pass it to every I/O call (undici takes `signal`).
   * After it fires the gateway answers 504 whatever the connector returns, so stop work promptly.
   */
  signal: AbortSignal;
  /** The caller's Idempotency-Key when it sent one: forward it so that the core applies a retry once. */
  idempotencyKey?: string | undefined;
  /**
   * Set only on writes to a connector whose instance says `dryRun: true` (a shadow core, decision 0112):
   * validate and answer as the write would be answered, and change nothing.
   */
  dryRun?: boolean | undefined;
  /**
   * While the gateway traces (OpenTelemetry), the W3C `traceparent` of its span for this call: forward it so that
   * the core's spans join the request's trace (the REST connector sends it as the `traceparent` header).
   */
  traceparent?: string | undefined;
}

/**
 * The outcome of an operation the core understood.
 * - `succeeded`: the core confirmed the change; `value` describes the new state.
 * - `pending`: the core accepted the request but has not confirmed it (or the connector cannot tell).
 *   Report anything uncertain as pending, never as success.
 * - `rejected`: the core refused for a business reason. `code` is a business code from
 *   `schemas/business-codes.ts` (or one your core documents); `message` is shown to the caller.
 */
export type OperationResult<T> =
  | { status: 'succeeded'; value: T }
  | { status: 'pending'; reference?: string }
  | { status: 'rejected'; code: string; message: string };

export const succeeded = <T>(value: T): OperationResult<T> => ({ status: 'succeeded', value });
export const pending = <T>(reference?: string): OperationResult<T> =>
  reference === undefined ? { status: 'pending' } : { status: 'pending', reference };
export const rejected = <T>(code: string, message: string): OperationResult<T> => ({ status: 'rejected', code, message });

/** Throw when the core cannot be reached or answers with a failure it did not explain (→ 502). */
export class ConnectorUnavailableError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ConnectorUnavailableError';
  }
}

/** Throw when the core did not answer before the deadline (→ 504). The outcome is unknown. */
export class ConnectorTimeoutError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ConnectorTimeoutError';
  }
}

/** True for a ConnectorUnavailableError, also one thrown by a plugin that bundles its own copy of this file. */
export const isConnectorUnavailableError = (err: unknown): boolean =>
  err instanceof ConnectorUnavailableError || (err instanceof Error && err.name === 'ConnectorUnavailableError');

/** True for a ConnectorTimeoutError, also one thrown by a plugin that bundles its own copy of this file. */
export const isConnectorTimeoutError = (err: unknown): boolean =>
  err instanceof ConnectorTimeoutError || (err instanceof Error && err.name === 'ConnectorTimeoutError');


const literals = <T extends string>(values: readonly T[]) => Type.Union(values.map((v) => Type.Literal(v)));
/** A decimal string with at most two decimals. Never convert it to a float. */
const Amount = Type.String();
const Optional = <T extends TSchema>(schema: T) => Type.Optional(schema);

// ── Inputs and results ────────────────────────────────────────────────────────────────────────────────

/** Input of `upgradeLimit`: set the entity's credit limit to `amount`. */
export const UpgradeLimitInput = Type.Object({
  entityId: Type.String(),
  /** The new limit: a positive decimal string with at most two decimals. Never convert it to a float. */
  amount: Amount,
  /**
   * Product rule from the tenant's configuration: when false, an amount below the current limit must
   * be rejected with LIMIT_DECREASE_NOT_ALLOWED. Check it against the current limit atomically. Even
   * when true, an amount below the outstanding balance is LIMIT_BELOW_OUTSTANDING.
   */
  allowDecrease: Type.Boolean(),
});
export type UpgradeLimitInput = Static<typeof UpgradeLimitInput>;

export const UpgradeLimitResult = Type.Object({ entityId: Type.String(), previousLimit: Amount, newLimit: Amount });
export type UpgradeLimitResult = Static<typeof UpgradeLimitResult>;

/**
 * Input of `upgradeToPhysical`: map an existing virtual card to the physical kit `kitNo`.
 * Card identification (DESIGN §3): `cardId` names the card; else `entityId` names the entity whose single
 * virtual card is upgraded; else the kit must already be allocated to an entity in the core.
 * Refuse an unknown kit, a kit already mapped or a kit allocated to another entity with PPCUST_018.
 */
export const PhysicalUpgradeInput = Type.Object({
  kitNo: Type.String(),
  entityId: Optional(Type.String()),
  cardId: Optional(Type.String()),
  /** Omitted or `{ usePrimaryAddress: true }` means the entity's primary address on file. */
  communicationAddress: Optional(CommunicationAddress),
  plasticCode: Optional(PlasticCode),
  /** When true the card is issued PENDING_ACTIVATION until the customer activates it. */
  lockOnUpgrade: Type.Boolean(),
  preferences: Optional(Preferences),
});
export type PhysicalUpgradeInput = Static<typeof PhysicalUpgradeInput>;

export const PhysicalUpgradeResult = Type.Object({
  cardId: Type.String(),
  entityId: Type.String(),
  kitNo: Type.String(),
  state: literals(['ACTIVE', 'PENDING_ACTIVATION'] as const),
});
export type PhysicalUpgradeResult = Static<typeof PhysicalUpgradeResult>;

/**
 * Names a card for a lifecycle operation: `cardId`; else the entity's single matching card; else the
 * physical card mapped to `kitNo`. At least one is given. Unknown → CARD_NOT_FOUND; an entity with
 * several candidate cards and no cardId → CARD_AMBIGUOUS.
 */
export const CardRef = Type.Object({ cardId: Optional(Type.String()), entityId: Optional(Type.String()), kitNo: Optional(Type.String()) });
export type CardRef = Static<typeof CardRef>;

/** A card as the gateway may show it: never the full PAN, CVV or PIN. */
export const CardSummary = Type.Object({
  cardId: Type.String(),
  entityId: Type.String(),
  form: literals(CARD_FORMS),
  state: literals(CARD_STATES),
  fulfilment: Optional(literals(FULFILMENT_STEPS)),
  kitNo: Optional(Type.String()),
  /** First six and last four digits, the rest masked: `400000******3011`. */
  panMasked: Type.String(),
  /** `MM/YY`. */
  expiry: Type.String(),
  blockReason: Optional(literals(BLOCK_REASONS)),
});
export type CardSummary = Static<typeof CardSummary>;

/** A card read in full: the summary plus what only leaves the gateway encrypted (or not at all). */
export const CardDetails = Type.Composite([
  CardSummary,
  Type.Object({
    plasticCode: Optional(PlasticCode),
    preferences: Optional(Preferences),
    /** Sensitive: the gateway encrypts these to the tenant's client key or omits them; never logged. */
    sensitive: Type.Object({ pan: sensitive(Type.String()), cvv: Optional(sensitive(Type.String())) }),
  }),
]);
export type CardDetails = Static<typeof CardDetails>;

export const BlockCardInput = Type.Composite([CardRef, Type.Object({ reasonCode: literals(BLOCK_REASONS) })]);
export type BlockCardInput = Static<typeof BlockCardInput>;

export const PreferencesInput = Type.Object({ cardId: Type.String(), preferences: Preferences });
export type PreferencesInput = Static<typeof PreferencesInput>;

export const CreditLimitResult = Type.Object({
  entityId: Type.String(),
  creditLimit: Amount,
  /** What the entity owes on its credit line (approved authorizations less repayments). */
  outstanding: Amount,
  /** creditLimit − outstanding. */
  availableCredit: Amount,
});
export type CreditLimitResult = Static<typeof CreditLimitResult>;

/** A business entity (customer) as the core holds it. Contact and address lines are personal data: never log them. */
export const EntityDetails = Type.Object({
  entityId: Type.String(),
  name: Type.String(),
  type: literals(ENTITY_TYPES),
  contact: Contact,
  primaryAddress: PrimaryAddress,
  creditLimit: Amount,
  outstanding: Amount,
  availableCredit: Amount,
  /** Every card of the entity, blocked ones included. */
  cardCount: Type.Integer(),
});
export type EntityDetails = Static<typeof EntityDetails>;

/**
 * Input of `registerEntity`. Without `entityId` the core assigns one; an id already taken is
 * ENTITY_EXISTS. `creditLimit` already passed the tenant's product rules; a core still refuses a
 * non-positive one (LIMIT_NOT_POSITIVE). With `issueVirtualCard` the entity gets its first card,
 * VIRTUAL and ACTIVE, in the same change.
 */
export const RegisterEntityInput = Type.Object({
  entityId: Optional(Type.String()),
  name: Type.String(),
  type: literals(ENTITY_TYPES),
  contact: Contact,
  primaryAddress: PrimaryAddress,
  creditLimit: Amount,
  issueVirtualCard: Type.Boolean(),
});
export type RegisterEntityInput = Static<typeof RegisterEntityInput>;

export const EntityRegistration = Type.Object({
  entity: EntityDetails,
  /** The first virtual card, when one was asked for. */
  card: Optional(CardSummary),
});
export type EntityRegistration = Static<typeof EntityRegistration>;

/** Input of `updateEntity`: each part given replaces that part whole; the primary address is what `usePrimaryAddress` uses from then on. */
export const UpdateEntityInput = Type.Object({ entityId: Type.String(), contact: Optional(Contact), primaryAddress: Optional(PrimaryAddress) });
export type UpdateEntityInput = Static<typeof UpdateEntityInput>;

/**
 * Input of `replaceCard`: only a BLOCKED card is replaced (else CARD_NOT_BLOCKED), and only once
 * (CARD_ALREADY_REPLACED). The new card keeps the entity and the old card's preferences; it is VIRTUAL
 * and ACTIVE, or, with `kitNo` (a free kit, PPCUST_018 otherwise), PHYSICAL, ACTIVE, fulfilment ORDERED,
 * sent to the entity's primary address.
 */
export const ReplaceCardInput = Type.Object({ cardId: Type.String(), reason: literals(REPLACEMENT_REASONS), kitNo: Optional(Type.String()) });
export type ReplaceCardInput = Static<typeof ReplaceCardInput>;

export const CardReplacement = Type.Object({ replacedCardId: Type.String(), card: CardSummary });
export type CardReplacement = Static<typeof CardReplacement>;

/**
 * Input of `authorize` (sandbox: what a card network would send). `at` is the instant of the request
 * (ISO 8601, UTC); `homeCountry` (ISO 3166-1 alpha-2) and `timeZone` (IANA) are the tenant's: a merchant in
 * another country is international, and "daily" limits count the day of `at` in that zone.
 */
export const AuthorizationInput = Type.Object({
  cardId: Type.String(),
  amount: Amount,
  merchant: Merchant,
  channel: literals(CHANNELS),
  at: Type.String(),
  homeCountry: Type.String(),
  timeZone: Type.String(),
});
export type AuthorizationInput = Static<typeof AuthorizationInput>;

/**
 * An authorization as the core decided it. A decline is a transaction too (status DECLINED with its
 * reason), answered as `succeeded`: a refusal (`rejected`) is only for a request the core cannot take,
 * such as an unknown card. The full PAN never appears.
 */
export const Transaction = Type.Object({
  transactionId: Type.String(),
  cardId: Type.String(),
  entityId: Type.String(),
  amount: Amount,
  channel: literals(CHANNELS),
  merchant: Merchant,
  international: Type.Boolean(),
  status: literals(TRANSACTION_STATUSES),
  declineReason: Type.Union([literals(DECLINE_REASONS), Type.Null()]),
  at: Type.String(),
  /**
   * What the entry is; absent means AUTHORIZATION (the sandbox's host decision). A core offering holds lists each
   * hold (HOLD, its transactionId the authorizationId, DECLINED when declined) and each clearing, reversal (a final
   * clearing's release too), refund and dispute credit (APPROVED), each with `authorizationId`.
   */
  type: Optional(literals(TRANSACTION_TYPES)),
  authorizationId: Optional(Type.String()),
});
export type Transaction = Static<typeof Transaction>;

/** Input of `repay`: lowers the outstanding balance; more than is outstanding is REPAYMENT_EXCEEDS_OUTSTANDING. */
export const RepaymentInput = Type.Object({ entityId: Type.String(), amount: Amount, at: Type.String() });
export type RepaymentInput = Static<typeof RepaymentInput>;

export const Repayment = Type.Object({
  repaymentId: Type.String(),
  entityId: Type.String(),
  amount: Amount,
  /** After the repayment. */
  outstanding: Amount,
  availableCredit: Amount,
  at: Type.String(),
});
export type Repayment = Static<typeof Repayment>;

/**
 * Input of `listTransactions`: the entity's transactions, newest first (the core's own order of
 * arrival). `from` (inclusive) and `to` (exclusive) are ISO 8601 instants. `before` is the
 * `next` of the previous page: the page holds only transactions made before it, so transactions made
 * while a client pages land above and a walk never repeats or skips one. An unknown `before` is
 * TRANSACTION_NOT_FOUND; a `cardId` of another entity is CARD_NOT_FOUND.
 */
export const TransactionQuery = Type.Object({
  entityId: Type.String(),
  from: Optional(Type.String()),
  to: Optional(Type.String()),
  cardId: Optional(Type.String()),
  status: Optional(literals(TRANSACTION_STATUSES)),
  limit: Type.Integer(),
  before: Optional(Type.String()),
});
export type TransactionQuery = Static<typeof TransactionQuery>;

export const TransactionPage = Type.Object({
  transactions: Type.Array(Transaction),
  /** The transactionId to pass as `before` for the next (older) page; null on the last. */
  next: Type.Union([Type.String(), Type.Null()]),
});
export type TransactionPage = Static<typeof TransactionPage>;

/**
 * A PIN change: `pinBlock` is an ISO 9564-1 block (hex) already translated by the gateway's HSM to the
 * core's PIN key (`keyId`). A connector forwards it and never logs or stores it.
 */
export const SetPinInput = Type.Object({
  cardId: Type.String(),
  pinBlock: sensitive(Type.String()),
  format: Type.Union([Type.Literal(0), Type.Literal(3), Type.Literal(4)]),
  keyId: Type.String(),
});
export type SetPinInput = Static<typeof SetPinInput>;

/**
 * Input of `holdFunds`: the core's own decision on an authorization the gateway's pipeline let through (card
 * state, spend controls, the tenant's decision endpoint): is there credit for it? A card that is not ACTIVE is
 * declined CARD_NOT_ACTIVE, an amount above the available credit INSUFFICIENT_CREDIT, unless `partialAllowed`:
 * then what is available (above zero) is held. `authorizationId` is the gateway's and names the hold from then
 * on; a second hold under an id in use is AUTHORIZATION_EXISTS. A decline is answered as `succeeded` with
 * `approved: false`, like `authorize`; an unknown card is CARD_NOT_FOUND. The held amount counts as
 * outstanding until it is reversed or, for what was cleared, repaid.
 */
export const HoldInput = Type.Object({
  authorizationId: Type.String(),
  cardId: Type.String(),
  amount: Amount,
  merchant: Merchant,
  channel: literals(CHANNELS),
  partialAllowed: Type.Boolean(),
  at: Type.String(),
  /** The tenant's home country: a merchant elsewhere makes the transaction list's entries `international`. */
  homeCountry: Optional(Type.String()),
});
export type HoldInput = Static<typeof HoldInput>;

/**
 * An authorization's amounts as the core keeps them, after the change that answers it. None is ever below
 * zero: `held` = `authorized` − what was cleared − what was reversed or released by a final clearing;
 * `refunded` + `credited` ≤ `cleared`. `availableCredit` is the entity's after the change.
 */
export const HoldState = Type.Object({
  authorizationId: Type.String(),
  cardId: Type.String(),
  entityId: Type.String(),
  approved: Type.Boolean(),
  declineReason: Type.Union([literals(HOLD_DECLINE_REASONS), Type.Null()]),
  /** What was approved (the amount asked for, or less on a partial approval); 0.00 when declined. */
  authorized: Amount,
  held: Amount,
  cleared: Amount,
  reversed: Amount,
  refunded: Amount,
  /** Dispute credits: what disputes won gave back. */
  credited: Amount,
  availableCredit: Amount,
});
export type HoldState = Static<typeof HoldState>;

/**
 * Input of `clearFunds`: a clearing (the merchant's capture) of `amount` from what is held; several clearings
 * may follow one authorization. More than is held is CLEAR_EXCEEDS_HELD; with `final` the rest of the hold is
 * released. An unknown authorization is AUTHORIZATION_NOT_FOUND.
 */
export const ClearInput = Type.Object({ authorizationId: Type.String(), amount: Amount, final: Type.Boolean(), at: Type.String() });
export type ClearInput = Static<typeof ClearInput>;

/** Input of `reverseHold`: releases `amount` of the hold (all that is held when omitted); more than is held (or nothing held) is REVERSAL_EXCEEDS_HELD. */
export const ReverseInput = Type.Object({ authorizationId: Type.String(), amount: Optional(Amount), at: Type.String() });
export type ReverseInput = Static<typeof ReverseInput>;

/** Input of `refund`: gives back `amount` of what was cleared; more than cleared less refunded and credited is REFUND_EXCEEDS_CLEARED. */
export const RefundInput = Type.Object({ authorizationId: Type.String(), amount: Amount, at: Type.String() });
export type RefundInput = Static<typeof RefundInput>;

/** Input of `creditDispute`: a dispute won gives `amount` back to the credit line; more than cleared less refunded and credited is DISPUTE_EXCEEDS_CLEARED. */
export const DisputeCreditInput = Type.Object({ authorizationId: Type.String(), disputeId: Type.String(), amount: Amount, at: Type.String() });
export type DisputeCreditInput = Static<typeof DisputeCreditInput>;

const EntityKey = Type.Object({ entityId: Type.String() });
const CardKey = Type.Object({ cardId: Type.String() });

// ── The table ─────────────────────────────────────────────────────────────────────────────────────────

/** The groups a tenant's routing names instead of single operations. */
export const OPERATION_GROUPS = ['cards', 'pin', 'credit-line', 'customers', 'transactions'] as const;
export type OperationGroup = (typeof OPERATION_GROUPS)[number];

/** One core operation: what it takes, what its `succeeded` result carries, whether it changes state. */
export interface ContractEntry<I extends TSchema = TSchema, R extends TSchema = TSchema, K extends 'read' | 'write' = 'read' | 'write'> {
  group: OperationGroup;
  /** `write` changes state: it takes an idempotency key, may be pending, and is never retried blindly. */
  kind: K;
  input: I;
  result: R;
  summary: string;
}

const entry = <K extends 'read' | 'write', I extends TSchema, R extends TSchema>(group: OperationGroup, kind: K, input: I, result: R, summary: string): ContractEntry<I, R, K> => ({
  group,
  kind,
  input,
  result,
  summary,
});

/**
 * Every core operation the gateway routes, once. Card state changes obey the transition table of
 * `schemas/card-lifecycle.ts` (call `transition()`); an illegal one is `rejected('CARD_STATE_INVALID', …)`.
 * Adding an operation: an entry here, its entry in the core REST protocol (connectors/rest/protocol.ts), and
 * the connectors that offer it (docs/connectors.md).
 */
export const CONTRACT = {
  upgradeLimit: entry('credit-line', 'write', UpgradeLimitInput, UpgradeLimitResult, "Set the entity's credit limit"),
  getCreditLimit: entry('credit-line', 'read', EntityKey, CreditLimitResult, "The entity's credit limit, outstanding balance and available credit"),
  upgradeToPhysical: entry('cards', 'write', PhysicalUpgradeInput, PhysicalUpgradeResult, 'Map a virtual card to a physical kit'),
  activateCard: entry('cards', 'write', CardRef, CardSummary, 'PENDING_ACTIVATION → ACTIVE'),
  lockCard: entry('cards', 'write', CardRef, CardSummary, 'ACTIVE → LOCKED (temporary)'),
  unlockCard: entry('cards', 'write', CardRef, CardSummary, 'LOCKED → ACTIVE'),
  blockCard: entry('cards', 'write', BlockCardInput, CardSummary, 'Any state but BLOCKED → BLOCKED (permanent), with the reason recorded'),
  listCards: entry('cards', 'read', EntityKey, Type.Array(CardSummary), "The entity's cards; ENTITY_NOT_FOUND for an unknown entity"),
  getCard: entry('cards', 'read', CardKey, CardDetails, 'One card in full'),
  getPreferences: entry('cards', 'read', CardKey, Preferences, "The card's transaction preferences ({} when none were set)"),
  updatePreferences: entry('cards', 'write', PreferencesInput, Preferences, "Replaces the card's preferences; refused on a BLOCKED card"),
  advanceFulfilment: entry('cards', 'write', CardKey, CardSummary, 'Sandbox helper: ORDERED → EMBOSSED → DISPATCHED → DELIVERED; a production core may reject it'),
  issueCard: entry('cards', 'write', EntityKey, CardSummary, 'Another virtual card (ACTIVE) for the entity'),
  replaceCard: entry('cards', 'write', ReplaceCardInput, CardReplacement, "A BLOCKED card's replacement (see ReplaceCardInput)"),
  setPin: entry('pin', 'write', SetPinInput, CardKey, "Set a card's PIN from a block under the core's key"),
  registerEntity: entry('customers', 'write', RegisterEntityInput, EntityRegistration, 'A new customer, with its first virtual card unless asked otherwise; ENTITY_EXISTS for a taken id'),
  getEntity: entry('customers', 'read', EntityKey, EntityDetails, "The entity's profile, contact, primary address and credit line; ENTITY_NOT_FOUND for an unknown one"),
  updateEntity: entry('customers', 'write', UpdateEntityInput, EntityDetails, "Replace an entity's contact or primary address"),
  authorize: entry('transactions', 'write', AuthorizationInput, Transaction, 'Sandbox helper: decide an authorization as an issuer host would; approvals raise the outstanding balance'),
  repay: entry('transactions', 'write', RepaymentInput, Repayment, 'Sandbox helper: a repayment lowers the outstanding balance'),
  listTransactions: entry('transactions', 'read', TransactionQuery, TransactionPage, "The entity's transactions, newest first, a page at a time"),
  holdFunds: entry('transactions', 'write', HoldInput, HoldState, "The core's decision on an authorization: hold the amount on the credit line, or decline"),
  clearFunds: entry('transactions', 'write', ClearInput, HoldState, 'Clear (capture) an amount of a hold; a final clearing releases the rest'),
  reverseHold: entry('transactions', 'write', ReverseInput, HoldState, 'Release all or part of a hold'),
  refund: entry('transactions', 'write', RefundInput, HoldState, 'Give back an amount of what was cleared'),
  creditDispute: entry('transactions', 'write', DisputeCreditInput, HoldState, 'Credit a won dispute back to the credit line'),
} as const satisfies Record<string, ContractEntry>;

type Contract = typeof CONTRACT;
/** The operations the gateway routes. */
export type ContractOperation = keyof Contract;
export const CONTRACT_OPERATIONS = Object.keys(CONTRACT) as ContractOperation[];
/** What an operation takes. */
export type OperationInput<O extends ContractOperation> = Static<Contract[O]['input']>;
/** What an operation's `succeeded` result carries. */
export type OperationValue<O extends ContractOperation> = Static<Contract[O]['result']>;
/** The writes: what a core journals and keys by idempotency key. */
export type WriteOperation = { [O in ContractOperation]: Contract[O]['kind'] extends 'write' ? O : never }[ContractOperation];
export const WRITE_OPERATIONS = CONTRACT_OPERATIONS.filter((o): o is WriteOperation => CONTRACT[o].kind === 'write');
export const isWriteOperation = (op: string): op is WriteOperation => (CONTRACT as Record<string, ContractEntry>)[op]?.kind === 'write';
export const isContractOperation = (op: string): op is ContractOperation => Object.hasOwn(CONTRACT, op);

/** The method a connector offers for an operation. */
export type OperationMethod<O extends ContractOperation> = (input: OperationInput<O>, ctx: ConnectorContext) => Promise<OperationResult<OperationValue<O>>>;
/** Every operation implemented: what a built-in connector over a full core provides. */
export type ConnectorOperations = { [O in ContractOperation]: OperationMethod<O> };

/**
 * A connector instance: the operations its core has (every one is optional: the gateway answers an operation
 * routed to a connector without it 501 Not Implemented, without calling it), plus lifecycle hooks.
 */
export type Connector = Partial<ConnectorOperations> & {
  /** Optional readiness probe: resolve when the core can take calls, throw when it cannot. */
  health?(): Promise<void>;
  /** Release pools, files and timers. Called on shutdown and when a tenant's configuration changes. */
  close?(): Promise<void>;
  /** True when writes honour `ctx.dryRun` (validate, answer, change nothing): the instance can shadow writes. */
  dryRun?: boolean;
  /** The circuit breaker's state, for connectors that have one (readiness reports an open one as degraded). */
  breakerState?(): 'closed' | 'open' | 'half-open';
  /**
   * Which breaker `breakerState` reports, for a breaker shared by instances (the HTTP transport keeps one per core
   * and settings): instances answering the same value share it, so one tenant's failed calls open it for all.
   */
  breakerScope?(): string;
};

/** The operations an instance offers: the contract's operations it has a method for, in table order. */
export const offeredBy = (connector: Connector): ContractOperation[] => CONTRACT_OPERATIONS.filter((o) => typeof connector[o] === 'function');

/**
 * Builds the operations of a connector from one function: for built-ins that map over the table instead of
 * writing one delegating method per operation. `offers` defaults to every operation.
 */
export function operationsOf(
  run: <O extends ContractOperation>(operation: O, input: OperationInput<O>, ctx: ConnectorContext) => Promise<OperationResult<OperationValue<O>>>,
  offers: readonly ContractOperation[] = CONTRACT_OPERATIONS,
): Partial<ConnectorOperations> {
  return Object.fromEntries(offers.map((o) => [o, (input: never, ctx: ConnectorContext) => run(o, input, ctx)])) as Partial<ConnectorOperations>;
}

/**
 * Seals what a connector keeps at rest that must not be readable from its files or tables alone (card
 * numbers, CVVs): AES-256-GCM under a key the gateway derives from its master key for this tenant and
 * connectors only. `context` binds a sealed value to its place (e.g. `card/CARD-3001/pan`): opened with
 * another context, another tenant's secrets or another master key, `open` throws.
 */
export interface ConnectorSecrets {
  seal(plaintext: string, context: string): string;
  open(sealed: string, context: string): string;
}

export interface ConnectorDeps {
  tenantId: string;
  logger: FastifyBaseLogger;
  /** For values kept at rest; the same tenant and master key give the same secrets across restarts. */
  secrets: ConnectorSecrets;
}

/**
 * A connector module's default export. `optionsSchema` validates the tenant's options at boot (errors
 * name the field); `create` builds one instance per tenant. A built-in connector is one line in
 * `connectors/index.ts`; a plugin elsewhere is named in a tenant's configuration as
 * `{ "id": "acme-core", "module": "./plugins/acme-core/index.js", "options": {...} }` and must pass
 * `npm run connector:check -- <module>` (the conformance suite in `connectors/conformance/`).
 */
export interface ConnectorDefinition<S extends TSchema = TSchema> {
  /** Stable id that tenants name in their configuration, such as `mock` or `acme-core`. */
  id: string;
  /** Semantic version of the connector; a breaking change of behaviour gets a new id. */
  version: string;
  optionsSchema: S;
  /**
   * The operations it offers (with these options). Declared, a tenant's routing of another operation to it
   * is refused when the configuration is saved; left out, it is what each instance has methods for, known
   * once it started (an operation it lacks answers 501 then).
   */
  offers?: readonly ContractOperation[] | OffersOf<Static<S>>;
  create(options: Static<S>, deps: ConnectorDeps): Connector | Promise<Connector>;
}

/** A function of the options, declared as a method so that a definition of any options is a ConnectorDefinition. */
type OffersOf<O> = { of(options: O): readonly ContractOperation[] }['of'];

export function defineConnector<S extends TSchema>(def: ConnectorDefinition<S>): ConnectorDefinition<S> {
  return def;
}
