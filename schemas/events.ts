// Events of record: what the transactional outbox holds after each successful write, one payload schema a
// type. Payloads carry ids, states and amounts only: never a PAN, CVV, PIN block, address line or token.
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { BLOCK_REASONS, CARD_STATES, FULFILMENT_STEPS } from './card-lifecycle.js';
import { Preferences } from './cards.js';
import { ENTITY_PARTS, ENTITY_TYPES, REPLACEMENT_REASONS } from './entities.js';
import { CHANNELS, DECLINE_REASONS } from './transactions.js';
import { AUTHORIZATION_STEPS } from './authorizations.js';
import { DISPUTE_OUTCOMES, DISPUTE_REASONS } from './authorization-lifecycle.js';
import { ROLES } from './common.js';

const literals = <T extends readonly string[]>(values: T) => Type.Union(values.map((v) => Type.Literal(v)));

const Id = Type.String({ minLength: 1, maxLength: 128 });
const Amount = Type.String({ pattern: '^\\d{1,15}(\\.\\d{1,2})?$' });
const CardState = literals(CARD_STATES);
const Currency = Type.String({ pattern: '^[A-Z]{3}$' });
const closed = { additionalProperties: false } as const;

/** A card changed state (activated, locked, unlocked): the card and where it is now. */
const CardStateChanged = Type.Object({ cardId: Id, entityId: Id, state: CardState }, closed);

/** An authorization the core decided: the card, the amount and where, never the card number. */
const Transaction = <S extends TSchema, R extends TSchema>(status: S, declineReason: R) =>
  Type.Object(
    {
      transactionId: Id,
      cardId: Id,
      entityId: Id,
      amount: Amount,
      channel: literals(CHANNELS),
      mcc: Type.String({ pattern: '^\\d{4}$' }),
      merchantCountry: Type.String({ pattern: '^[A-Z]{2}$' }),
      international: Type.Boolean(),
      status,
      declineReason,
    },
    closed,
  );

/** An authorization the pipeline decided: which step decided, the amounts, never the card number. */
const Authorization = <S extends TSchema, R extends TSchema>(status: S, declineReason: R) =>
  Type.Object(
    {
      authorizationId: Id,
      cardId: Id,
      entityId: Type.Union([Id, Type.Null()]),
      amount: Amount,
      approvedAmount: Amount,
      currency: Type.String({ pattern: '^[A-Z]{3}$' }),
      channel: literals(CHANNELS),
      mcc: Type.String({ pattern: '^\\d{4}$' }),
      merchantCountry: Type.String({ pattern: '^[A-Z]{2}$' }),
      status,
      declineReason,
      decidedBy: literals(AUTHORIZATION_STEPS),
    },
    closed,
  );

/** Event type → payload schema. The aggregate is the entity (credit limits, customers, repayments) or the card (everything else). */
export const EVENT_PAYLOADS = {
  'credit-limit.upgraded': Type.Object({ entityId: Id, previousLimit: Type.Optional(Amount), newLimit: Amount }, closed),
  'card.upgraded-to-physical': Type.Object(
    { cardId: Id, entityId: Id, kitNo: Id, state: literals(['ACTIVE', 'PENDING_ACTIVATION'] as const) },
    closed,
  ),
  'card.activated': CardStateChanged,
  'card.locked': CardStateChanged,
  'card.unlocked': CardStateChanged,
  'card.blocked': Type.Object({ cardId: Id, entityId: Id, state: Type.Literal('BLOCKED'), reason: literals(BLOCK_REASONS) }, closed),
  'card.fulfilment-advanced': Type.Object({ cardId: Id, entityId: Id, fulfilment: literals(FULFILMENT_STEPS) }, closed),
  'card.preferences-updated': Type.Object({ cardId: Id, preferences: Preferences }, closed),
  'card.pin-set': Type.Object({ cardId: Id }, closed),
  // Customers: ids, types and amounts; never the name, contact or address (personal data stays in the core).
  'entity.registered': Type.Object({ entityId: Id, type: literals(ENTITY_TYPES), creditLimit: Amount, cardId: Type.Optional(Id) }, closed),
  'entity.updated': Type.Object({ entityId: Id, changed: Type.Array(literals(ENTITY_PARTS), { minItems: 1, uniqueItems: true }) }, closed),
  'card.issued': Type.Object({ cardId: Id, entityId: Id, form: Type.Literal('VIRTUAL'), state: Type.Literal('ACTIVE') }, closed),
  'card.replaced': Type.Object(
    { cardId: Id, replacedCardId: Id, entityId: Id, reason: literals(REPLACEMENT_REASONS), form: literals(['VIRTUAL', 'PHYSICAL'] as const), kitNo: Type.Optional(Id) },
    closed,
  ),
  'transaction.approved': Transaction(Type.Literal('APPROVED'), Type.Null()),
  'transaction.declined': Transaction(Type.Literal('DECLINED'), literals(DECLINE_REASONS)),
  'repayment.received': Type.Object({ repaymentId: Id, entityId: Id, amount: Amount, outstanding: Amount }, closed),
  'authorization.approved': Authorization(Type.Literal('APPROVED'), Type.Null()),
  'authorization.declined': Authorization(Type.Literal('DECLINED'), literals(DECLINE_REASONS)),
  // The decision endpoint gave no answer within its deadline, so the stand-in decided (decision 0353). Recorded once
  // the authorization is stored, before its own approved or declined event; never the endpoint's URL or secret.
  'authorization.decision-timed-out': Type.Object(
    {
      authorizationId: Id,
      cardId: Id,
      amount: Amount,
      currency: Currency,
      status: literals(['APPROVED', 'DECLINED'] as const),
      standIn: literals(['approve', 'decline'] as const),
      deadlineMs: Type.Integer({ minimum: 1 }),
    },
    closed,
  ),
  // A decision endpoint's answer after its deadline that differs from the stand-in the pipeline applied: to reconcile.
  'authorization.decision-late': Type.Object(
    {
      authorizationId: Id,
      cardId: Id,
      status: literals(['APPROVED', 'DECLINED'] as const),
      standIn: literals(['approve', 'decline'] as const),
      approved: Type.Boolean(),
      declineReason: Type.Union([literals(DECLINE_REASONS), Type.Null()]),
      approvedAmount: Type.Union([Amount, Type.Null()]),
      lateByMs: Type.Integer({ minimum: 0 }),
    },
    closed,
  ),
  // What follows an authorization: the change's amount, and the amounts it leaves (decision 0343).
  'authorization.cleared': Type.Object(
    { authorizationId: Id, cardId: Id, entityId: Id, currency: Currency, amount: Amount, final: Type.Boolean(), released: Amount, held: Amount, cleared: Amount },
    closed,
  ),
  'authorization.reversed': Type.Object({ authorizationId: Id, cardId: Id, entityId: Id, currency: Currency, amount: Amount, held: Amount, reversed: Amount }, closed),
  'transaction.refunded': Type.Object({ transactionId: Id, cardId: Id, entityId: Id, currency: Currency, amount: Amount, refunded: Amount }, closed),
  'dispute.opened': Type.Object({ disputeId: Id, transactionId: Id, cardId: Id, entityId: Id, currency: Currency, amount: Amount, reason: literals(DISPUTE_REASONS) }, closed),
  'dispute.resolved': Type.Object(
    { disputeId: Id, transactionId: Id, cardId: Id, entityId: Id, currency: Currency, amount: Amount, outcome: literals(DISPUTE_OUTCOMES), credited: Amount },
    closed,
  ),
  // Security events (decision 0083): who and what changed, never a password, hash, token or key material.
  'user.created': Type.Object({ username: Id, role: literals(ROLES) }, closed),
  'user.disabled': Type.Object({ username: Id, by: Type.Union([Id, Type.Null()]) }, closed),
  'user.locked': Type.Object({ username: Id, failures: Type.Integer({ minimum: 1 }), lockedMinutes: Type.Integer({ minimum: 1 }) }, closed),
  'keys.rotated': Type.Object({ use: literals(['enc', 'sig'] as const), kid: Id, replaced: Type.Array(Id) }, closed),
  'keys.retired': Type.Object({ use: literals(['enc', 'sig'] as const), kid: Id }, closed),
  'tenant.config-changed': Type.Object({ tenantId: Id, changed: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { minItems: 1, uniqueItems: true }) }, closed),
  // Four eyes: the request's id and operation, who decided; never the request's body.
  'approval.requested': Type.Object({ approvalId: Id, operation: Id, maker: Id, approvalsNeeded: Type.Integer({ minimum: 1, maximum: 2 }), expiresAt: Id }, closed),
  'approval.approved': Type.Object({ approvalId: Id, operation: Id, by: Id, approvals: Type.Integer({ minimum: 1 }), approvalsNeeded: Type.Integer({ minimum: 1, maximum: 2 }) }, closed),
  'approval.rejected': Type.Object({ approvalId: Id, operation: Id, by: Id }, closed),
  'approval.expired': Type.Object({ approvalId: Id, operation: Id }, closed),
  'approval.executed': Type.Object(
    { approvalId: Id, operation: Id, status: Type.Integer(), outcome: literals(['succeeded', 'refused', 'failed'] as const) },
    closed,
  ),
} satisfies Record<string, TSchema>;

export type EventType = keyof typeof EVENT_PAYLOADS;
export const EVENT_TYPES = Object.keys(EVENT_PAYLOADS) as EventType[];
export type EventPayload<T extends EventType> = Static<(typeof EVENT_PAYLOADS)[T]>;

/** Which payload field names the aggregate (the outbox's aggregate_id). */
export const EVENT_AGGREGATE: { [T in EventType]: keyof EventPayload<T> & string } = {
  'credit-limit.upgraded': 'entityId',
  'card.upgraded-to-physical': 'cardId',
  'card.activated': 'cardId',
  'card.locked': 'cardId',
  'card.unlocked': 'cardId',
  'card.blocked': 'cardId',
  'card.fulfilment-advanced': 'cardId',
  'card.preferences-updated': 'cardId',
  'card.pin-set': 'cardId',
  'entity.registered': 'entityId',
  'entity.updated': 'entityId',
  'card.issued': 'cardId',
  'card.replaced': 'cardId',
  'transaction.approved': 'cardId',
  'transaction.declined': 'cardId',
  'repayment.received': 'entityId',
  'authorization.approved': 'cardId',
  'authorization.declined': 'cardId',
  'authorization.decision-timed-out': 'cardId',
  'authorization.decision-late': 'cardId',
  'authorization.cleared': 'cardId',
  'authorization.reversed': 'cardId',
  'transaction.refunded': 'cardId',
  'dispute.opened': 'cardId',
  'dispute.resolved': 'cardId',
  'user.created': 'username',
  'user.disabled': 'username',
  'user.locked': 'username',
  'keys.rotated': 'kid',
  'keys.retired': 'kid',
  'tenant.config-changed': 'tenantId',
  'approval.requested': 'approvalId',
  'approval.approved': 'approvalId',
  'approval.rejected': 'approvalId',
  'approval.expired': 'approvalId',
  'approval.executed': 'approvalId',
};

/** Sent to one channel by the channel test; never an event of record. */
export const CHANNEL_TEST_EVENT = 'channel.test';
export const ChannelTestPayload = Type.Object({ channelId: Type.String(), message: Type.String() }, closed);

/** What a channel may subscribe to: event types of record, or `*` for all of them. */
export const SUBSCRIBABLE_EVENT_TYPES: readonly string[] = EVENT_TYPES;
