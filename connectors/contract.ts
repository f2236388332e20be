// The connector contract: what every core-banking connector implements. These doc comments are the
// authoring guide for connector writers.
import type { Static, TSchema } from '@sinclair/typebox';
import type { FastifyBaseLogger } from 'fastify';
import type { CommunicationAddress, Preferences } from '../schemas/cards.js';
import type { BlockReason, CardForm, CardState, Fulfilment } from '../schemas/card-lifecycle.js';
import type { Contact, EntityType, PrimaryAddress, ReplacementReason } from '../schemas/entities.js';
import type { Channel, DeclineReason, Merchant, TransactionStatus } from '../schemas/transactions.js';

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

/** Input of `upgradeLimit`: set the entity's credit limit to `amount`. */
export interface UpgradeLimitInput {
  entityId: string;
  /** The new limit: a positive decimal string with at most two decimals. Never convert it to a float. */
  amount: string;
  /**
   * Product rule from the tenant's configuration: when false, an amount below the current limit must
   * be rejected with LIMIT_DECREASE_NOT_ALLOWED. Check it against the current limit atomically. Even
   * when true, an amount below the outstanding balance is LIMIT_BELOW_OUTSTANDING.
   */
  allowDecrease: boolean;
}

export interface UpgradeLimitResult {
  entityId: string;
  previousLimit: string;
  newLimit: string;
}

/**
 * Input of `upgradeToPhysical`: map an existing virtual card to the physical kit `kitNo`.
 * Card identification (DESIGN §3): `cardId` names the card; else `entityId` names the entity whose single
 * virtual card is upgraded; else the kit must already be allocated to an entity in the core.
 * Refuse an unknown kit, a kit already mapped or a kit allocated to another entity with PPCUST_018.
 */
export interface PhysicalUpgradeInput {
  kitNo: string;
  entityId?: string | undefined;
  cardId?: string | undefined;
  /** Omitted or `{ usePrimaryAddress: true }` means the entity's primary address on file. */
  communicationAddress?: CommunicationAddress | undefined;
  plasticCode?: { code: string; description?: string | undefined } | undefined;
  /** When true the card is issued PENDING_ACTIVATION until the customer activates it. */
  lockOnUpgrade: boolean;
  preferences?: Preferences | undefined;
}

export interface PhysicalUpgradeResult {
  cardId: string;
  entityId: string;
  kitNo: string;
  state: 'ACTIVE' | 'PENDING_ACTIVATION';
}

/**
 * Names a card for a lifecycle operation: `cardId`; else the entity's single matching card; else the
 * physical card mapped to `kitNo`. At least one is given. Unknown → CARD_NOT_FOUND; an entity with
 * several candidate cards and no cardId → CARD_AMBIGUOUS.
 */
export interface CardRef {
  cardId?: string | undefined;
  entityId?: string | undefined;
  kitNo?: string | undefined;
}

/** A card as the gateway may show it: never the full PAN, CVV or PIN. */
export interface CardSummary {
  cardId: string;
  entityId: string;
  form: CardForm;
  state: CardState;
  fulfilment?: Fulfilment | undefined;
  kitNo?: string | undefined;
  /** First six and last four digits, the rest masked: `400000******3011`. */
  panMasked: string;
  /** `MM/YY`. */
  expiry: string;
  blockReason?: BlockReason | undefined;
}

/** A card read in full: the summary plus what only leaves the gateway encrypted (or not at all). */
export interface CardDetails extends CardSummary {
  plasticCode?: { code: string; description?: string | undefined } | undefined;
  preferences?: Preferences | undefined;
  /** Sensitive: the gateway encrypts these to the tenant's client key or omits them; never logged. */
  sensitive: { pan: string; cvv?: string | undefined };
}

export interface BlockCardInput extends CardRef {
  reasonCode: BlockReason;
}

export interface PreferencesInput {
  cardId: string;
  preferences: Preferences;
}

export interface CreditLimitResult {
  entityId: string;
  creditLimit: string;
  /** What the entity owes on its credit line (approved authorizations less repayments). */
  outstanding: string;
  /** creditLimit − outstanding. */
  availableCredit: string;
}

/** A business entity (customer) as the core holds it. Contact and address lines are personal data: never log them. */
export interface EntityDetails {
  entityId: string;
  name: string;
  type: EntityType;
  contact: Contact;
  primaryAddress: PrimaryAddress;
  creditLimit: string;
  outstanding: string;
  availableCredit: string;
  /** Every card of the entity, blocked ones included. */
  cardCount: number;
}

/**
 * Input of `registerEntity`. Without `entityId` the core assigns one; an id already taken is
 * ENTITY_EXISTS. `creditLimit` already passed the tenant's product rules; a core still refuses a
 * non-positive one (LIMIT_NOT_POSITIVE). With `issueVirtualCard` the entity gets its first card,
 * VIRTUAL and ACTIVE, in the same change.
 */
export interface RegisterEntityInput {
  entityId?: string | undefined;
  name: string;
  type: EntityType;
  contact: Contact;
  primaryAddress: PrimaryAddress;
  creditLimit: string;
  issueVirtualCard: boolean;
}

export interface EntityRegistration {
  entity: EntityDetails;
  /** The first virtual card, when one was asked for. */
  card?: CardSummary | undefined;
}

/** Input of `updateEntity`: each part given replaces that part whole; the primary address is what `usePrimaryAddress` uses from then on. */
export interface UpdateEntityInput {
  entityId: string;
  contact?: Contact | undefined;
  primaryAddress?: PrimaryAddress | undefined;
}

/**
 * Input of `replaceCard`: only a BLOCKED card is replaced (else CARD_NOT_BLOCKED), and only once
 * (CARD_ALREADY_REPLACED). The new card keeps the entity and the old card's preferences; it is VIRTUAL
 * and ACTIVE, or, with `kitNo` (a free kit, PPCUST_018 otherwise), PHYSICAL, ACTIVE, fulfilment ORDERED,
 * sent to the entity's primary address.
 */
export interface ReplaceCardInput {
  cardId: string;
  reason: ReplacementReason;
  kitNo?: string | undefined;
}

export interface CardReplacement {
  replacedCardId: string;
  card: CardSummary;
}

/**
 * Input of `authorize` (sandbox: what a card network would send). `at` is the instant of the request
 * (ISO 8601, UTC); `homeCountry` (ISO 3166-1 alpha-2) and `timeZone` (IANA) are the tenant's: a merchant in
 * another country is international, and "daily" limits count the day of `at` in that zone.
 */
export interface AuthorizationInput {
  cardId: string;
  amount: string;
  merchant: Merchant;
  channel: Channel;
  at: string;
  homeCountry: string;
  timeZone: string;
}

/**
 * An authorization as the core decided it. A decline is a transaction too (status DECLINED with its
 * reason), answered as `succeeded`: a refusal (`rejected`) is only for a request the core cannot take,
 * such as an unknown card. The full PAN never appears.
 */
export interface Transaction {
  transactionId: string;
  cardId: string;
  entityId: string;
  amount: string;
  channel: Channel;
  merchant: Merchant;
  international: boolean;
  status: TransactionStatus;
  declineReason: DeclineReason | null;
  at: string;
}

/** Input of `repay`: lowers the outstanding balance; more than is outstanding is REPAYMENT_EXCEEDS_OUTSTANDING. */
export interface RepaymentInput {
  entityId: string;
  amount: string;
  at: string;
}

export interface Repayment {
  repaymentId: string;
  entityId: string;
  amount: string;
  /** After the repayment. */
  outstanding: string;
  availableCredit: string;
  at: string;
}

/**
 * Input of `listTransactions`: the entity's transactions, newest first (the core's own order of
 * arrival). `from` (inclusive) and `to` (exclusive) are ISO 8601 instants. `before` is the
 * `next` of the previous page: the page holds only transactions made before it, so transactions made
 * while a client pages land above and a walk never repeats or skips one. An unknown `before` is
 * TRANSACTION_NOT_FOUND; a `cardId` of another entity is CARD_NOT_FOUND.
 */
export interface TransactionQuery {
  entityId: string;
  from?: string | undefined;
  to?: string | undefined;
  cardId?: string | undefined;
  status?: TransactionStatus | undefined;
  limit: number;
  before?: string | undefined;
}

export interface TransactionPage {
  transactions: Transaction[];
  /** The transactionId to pass as `before` for the next (older) page; null on the last. */
  next: string | null;
}

/**
 * A PIN change: `pinBlock` is an ISO 9564-1 block (hex) already translated by the gateway's HSM to the
 * core's PIN key (`keyId`). A connector forwards it and never logs or stores it.
 */
export interface SetPinInput {
  cardId: string;
  pinBlock: string;
  format: 0 | 3 | 4;
  keyId: string;
}

/**
 * One async method per operation the gateway routes. Card state changes obey the transition table of
 * `schemas/card-lifecycle.ts` (call `transition()`); an illegal one is `rejected('CARD_STATE_INVALID', …)`.
 */
export interface Connector {
  upgradeLimit(input: UpgradeLimitInput, ctx: ConnectorContext): Promise<OperationResult<UpgradeLimitResult>>;
  upgradeToPhysical(input: PhysicalUpgradeInput, ctx: ConnectorContext): Promise<OperationResult<PhysicalUpgradeResult>>;
  /** PENDING_ACTIVATION → ACTIVE. */
  activateCard(input: CardRef, ctx: ConnectorContext): Promise<OperationResult<CardSummary>>;
  /** ACTIVE → LOCKED (temporary). */
  lockCard(input: CardRef, ctx: ConnectorContext): Promise<OperationResult<CardSummary>>;
  /** LOCKED → ACTIVE. */
  unlockCard(input: CardRef, ctx: ConnectorContext): Promise<OperationResult<CardSummary>>;
  /** Any state but BLOCKED → BLOCKED (permanent), with the reason recorded. */
  blockCard(input: BlockCardInput, ctx: ConnectorContext): Promise<OperationResult<CardSummary>>;
  /** The entity's cards; ENTITY_NOT_FOUND for an unknown entity. */
  listCards(input: { entityId: string }, ctx: ConnectorContext): Promise<OperationResult<CardSummary[]>>;
  getCard(input: { cardId: string }, ctx: ConnectorContext): Promise<OperationResult<CardDetails>>;
  getPreferences(input: { cardId: string }, ctx: ConnectorContext): Promise<OperationResult<Preferences>>;
  /** Replaces the card's preferences; refused on a BLOCKED card. */
  updatePreferences(input: PreferencesInput, ctx: ConnectorContext): Promise<OperationResult<Preferences>>;
  getCreditLimit(input: { entityId: string }, ctx: ConnectorContext): Promise<OperationResult<CreditLimitResult>>;
  /** Sandbox helper: ORDERED → EMBOSSED → DISPATCHED → DELIVERED. A production core may reject it. */
  advanceFulfilment(input: { cardId: string }, ctx: ConnectorContext): Promise<OperationResult<CardSummary>>;
  setPin(input: SetPinInput, ctx: ConnectorContext): Promise<OperationResult<{ cardId: string }>>;
  /** A new customer, with its first virtual card unless asked otherwise; ENTITY_EXISTS for a taken id. */
  registerEntity(input: RegisterEntityInput, ctx: ConnectorContext): Promise<OperationResult<EntityRegistration>>;
  /** The entity's profile, contact, primary address and credit line; ENTITY_NOT_FOUND for an unknown one. */
  getEntity(input: { entityId: string }, ctx: ConnectorContext): Promise<OperationResult<EntityDetails>>;
  updateEntity(input: UpdateEntityInput, ctx: ConnectorContext): Promise<OperationResult<EntityDetails>>;
  /** Another virtual card (ACTIVE) for the entity. */
  issueCard(input: { entityId: string }, ctx: ConnectorContext): Promise<OperationResult<CardSummary>>;
  /** A BLOCKED card's replacement (see ReplaceCardInput). */
  replaceCard(input: ReplaceCardInput, ctx: ConnectorContext): Promise<OperationResult<CardReplacement>>;
  /** Sandbox helper: decide an authorization as an issuer's host would; approvals raise the outstanding balance. */
  authorize(input: AuthorizationInput, ctx: ConnectorContext): Promise<OperationResult<Transaction>>;
  /** Sandbox helper: a repayment lowers the outstanding balance. */
  repay(input: RepaymentInput, ctx: ConnectorContext): Promise<OperationResult<Repayment>>;
  listTransactions(input: TransactionQuery, ctx: ConnectorContext): Promise<OperationResult<TransactionPage>>;
  /** Optional readiness probe: resolve when the core can take calls, throw when it cannot. */
  health?(): Promise<void>;
  /** Release pools, files and timers. Called on shutdown and when a tenant's configuration changes. */
  close?(): Promise<void>;
}

/** The operations the gateway routes: every method of `Connector` except the lifecycle hooks. */
export type ContractOperation = Exclude<keyof Connector, 'health' | 'close'>;
/** What an operation takes. */
export type OperationInput<O extends ContractOperation> = Parameters<Connector[O]>[0];
/** What an operation's `succeeded` result carries. */
export type OperationValue<O extends ContractOperation> = Awaited<ReturnType<Connector[O]>> extends OperationResult<infer T> ? T : never;

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
  create(options: Static<S>, deps: ConnectorDeps): Connector | Promise<Connector>;
}

export function defineConnector<S extends TSchema>(def: ConnectorDefinition<S>): ConnectorDefinition<S> {
  return def;
}
