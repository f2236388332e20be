// Schemas of what follows an authorization: clearings, reversals and refunds of a card transaction (whose id is
// its authorization's, decision 0343), its amounts as they stand, and its disputes.
import { Type, type Static } from '@sinclair/typebox';
import { Identifier, Money, PlainText, cardEnvelopeOf, stringEnum } from './common.js';
import { AUTHORIZATION_STATUSES, CURRENCY_PATTERN } from './authorizations.js';

const Currency = Type.String({ pattern: CURRENCY_PATTERN, description: "ISO 4217; the authorization's currency" });
const Decimal = (description: string) => Type.String({ description: `${description}: a decimal string` });

/** POST /v1/authorizations/{authorizationId}/clear: the merchant's capture, all or part of what is held. */
export const ClearRequest = Type.Object(
  {
    amount: Money,
    currency: Currency,
    final: Type.Optional(Type.Boolean({ description: 'the last clearing: what stays held is released (default false)' })),
  },
  { additionalProperties: false },
);
export type ClearRequest = Static<typeof ClearRequest>;

/** POST /v1/authorizations/{authorizationId}/reverse: releases part of the hold, or (no amount) all of it. */
export const ReverseRequest = Type.Object(
  { amount: Type.Optional(Money), currency: Type.Optional(Currency) },
  { additionalProperties: false },
);
export type ReverseRequest = Static<typeof ReverseRequest>;

/** POST /v1/transactions/{transactionId}/refund: the merchant gives back part or all of what was cleared. */
export const RefundRequest = Type.Object({ amount: Money, currency: Currency }, { additionalProperties: false });
export type RefundRequest = Static<typeof RefundRequest>;

export const TransactionIdParams = Type.Object({ transactionId: Identifier }, { additionalProperties: false });
export type TransactionIdParams = Static<typeof TransactionIdParams>;

/** A card transaction's amounts as they stand: none below zero, held + cleared + reversed = authorized. */
export const TransactionStateView = Type.Object({
  transactionId: Type.String({ description: "the authorization's id" }),
  cardId: Type.String(),
  entityId: Type.Union([Type.String(), Type.Null()]),
  status: stringEnum(AUTHORIZATION_STATUSES, 'APPROVED or DECLINED'),
  currency: Type.String(),
  authorized: Decimal('approved and held at first'),
  held: Decimal('still held'),
  cleared: Decimal('cleared (captured) so far'),
  reversed: Decimal('released by reversals and final clearings'),
  refunded: Decimal('of what was cleared, given back by refunds'),
  credited: Decimal('of what was cleared, given back by disputes won'),
  disputed: Decimal('of what was cleared, claimed by open disputes'),
});
export type TransactionStateView = Static<typeof TransactionStateView>;

export const TransactionStateResponse = cardEnvelopeOf(TransactionStateView);

/** Why a cardholder disputes a transaction (the card networks' categories, condensed). */
export const DISPUTE_REASONS = ['FRAUD', 'DUPLICATE', 'INCORRECT_AMOUNT', 'NOT_RECEIVED', 'NOT_AS_DESCRIBED', 'CANCELLED', 'REFUND_NOT_PROCESSED', 'OTHER'] as const;
export type DisputeReason = (typeof DISPUTE_REASONS)[number];

export const DISPUTE_STATUSES = ['OPEN', 'RESOLVING', 'WON', 'LOST'] as const;
export type DisputeStatus = (typeof DISPUTE_STATUSES)[number];

export const DISPUTE_OUTCOMES = ['WON', 'LOST'] as const;
export type DisputeOutcome = (typeof DISPUTE_OUTCOMES)[number];

/** POST /v1/transactions/{transactionId}/disputes. */
export const OpenDisputeRequest = Type.Object(
  {
    reason: stringEnum(DISPUTE_REASONS, DISPUTE_REASONS.join(', ')),
    amount: Money,
    currency: Currency,
    note: Type.Optional(PlainText(1, 500)),
  },
  { additionalProperties: false },
);
export type OpenDisputeRequest = Static<typeof OpenDisputeRequest>;

/** POST /v1/disputes/{disputeId}/resolve. */
export const ResolveDisputeRequest = Type.Object(
  { outcome: stringEnum(DISPUTE_OUTCOMES, 'WON (the amount is credited back to the credit line) or LOST (nothing is)') },
  { additionalProperties: false },
);
export type ResolveDisputeRequest = Static<typeof ResolveDisputeRequest>;

export const DisputeIdParams = Type.Object({ disputeId: Identifier }, { additionalProperties: false });
export type DisputeIdParams = Static<typeof DisputeIdParams>;

export const DisputeView = Type.Object({
  disputeId: Type.String(),
  transactionId: Type.String(),
  cardId: Type.String(),
  entityId: Type.String(),
  amount: Decimal('disputed'),
  currency: Type.String(),
  reason: stringEnum(DISPUTE_REASONS, 'why it is disputed'),
  note: Type.Union([Type.String(), Type.Null()]),
  status: stringEnum(DISPUTE_STATUSES, 'OPEN, RESOLVING (a resolution under way), WON or LOST'),
  credited: Decimal('given back to the credit line: the amount once won, else 0.00'),
  openedBy: Type.Union([Type.String(), Type.Null()]),
  resolvedBy: Type.Union([Type.String(), Type.Null()]),
  openedAt: Type.String({ format: 'date-time' }),
  resolvedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});
export type DisputeView = Static<typeof DisputeView>;

export const DisputeResponse = cardEnvelopeOf(DisputeView);
