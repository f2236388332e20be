// Schemas of the credit line's transactions: sandbox authorizations and repayments (what a card network and
// a bank transfer would bring), and the entity's transaction list, paged by an opaque cursor.
import { Type, type Static } from '@sinclair/typebox';
import { DAY_PATTERN, Identifier, Money, PageLimit, PlainText, cardEnvelopeOf, documentedAs, stringEnum } from './common.js';

export const CHANNELS = ['ATM', 'POS', 'ECOM', 'CONTACTLESS'] as const;
export type Channel = (typeof CHANNELS)[number];

/** Why an authorization is declined: the issuer host's reasons in the order it checks (decision 0052), then the spend controls', then the decision endpoint's. */
export const DECLINE_REASONS = [
  'CARD_NOT_ACTIVE',
  'INTERNATIONAL_DISABLED',
  'CHANNEL_DISABLED',
  'DAILY_LIMIT_EXCEEDED',
  'DAILY_COUNT_EXCEEDED',
  'INSUFFICIENT_CREDIT',
  'SPEND_CONTROL_DECLINED',
  'VELOCITY_AMOUNT_EXCEEDED',
  'VELOCITY_COUNT_EXCEEDED',
  // The tenant's decision endpoint said no without a reason of its own (ISO 8583's 05), or did not answer and its
  // stand-in is `decline` (91): decision 0339.
  'DO_NOT_HONOUR',
  'ISSUER_UNAVAILABLE',
] as const;
export type DeclineReason = (typeof DECLINE_REASONS)[number];

/** Why a core declines a hold: the gateway's pipeline decided everything else before it. */
export const HOLD_DECLINE_REASONS = ['CARD_NOT_ACTIVE', 'INSUFFICIENT_CREDIT'] as const satisfies readonly DeclineReason[];

export const TRANSACTION_STATUSES = ['APPROVED', 'DECLINED'] as const;
export type TransactionStatus = (typeof TRANSACTION_STATUSES)[number];

/**
 * What an entry of the transaction list is: an issuer host's decision posted at once (the sandbox's), or an
 * authorization's hold and what followed it, each entry naming the authorization (decision 0343).
 */
export const TRANSACTION_TYPES = ['AUTHORIZATION', 'HOLD', 'CLEARING', 'REVERSAL', 'REFUND', 'DISPUTE_CREDIT'] as const;
export type TransactionType = (typeof TRANSACTION_TYPES)[number];

/** ISO 3166-1 alpha-2. */
export const COUNTRY_PATTERN = '^[A-Z]{2}$';
/** ISO 18245 merchant category code. */
export const MCC_PATTERN = '^\\d{4}$';

export const Merchant = Type.Object(
  {
    name: PlainText(1, 128),
    mcc: Type.String({ pattern: MCC_PATTERN, description: 'ISO 18245 merchant category code' }),
    country: Type.String({ pattern: COUNTRY_PATTERN, description: 'ISO 3166-1 alpha-2' }),
  },
  { additionalProperties: false },
);
export type Merchant = Static<typeof Merchant>;

export const ChannelSchema = stringEnum(CHANNELS, 'ATM, POS, ECOM or CONTACTLESS');

/** POST /v1/sandbox/cards/{cardId}/authorizations. */
export const AuthorizationBody = Type.Object({ amount: Money, merchant: Merchant, channel: ChannelSchema }, { additionalProperties: false });
export type AuthorizationBody = Static<typeof AuthorizationBody>;

/** POST /v1/sandbox/entities/{entityId}/repayments. */
export const RepaymentBody = Type.Object({ amount: Money }, { additionalProperties: false });
export type RepaymentBody = Static<typeof RepaymentBody>;

export const TransactionView = Type.Object({
  transactionId: Type.String(),
  cardId: Type.String(),
  entityId: Type.String(),
  amount: Type.String({ description: 'a decimal string' }),
  channel: ChannelSchema,
  merchant: Type.Object({ name: Type.String(), mcc: Type.String(), country: Type.String() }),
  international: Type.Boolean({ description: "the merchant's country is not the tenant's home country" }),
  status: stringEnum(TRANSACTION_STATUSES, 'APPROVED or DECLINED'),
  declineReason: Type.Union([stringEnum(DECLINE_REASONS, 'why it was declined'), Type.Null()]),
  at: Type.String({ format: 'date-time' }),
});
export type TransactionView = Static<typeof TransactionView>;

export const TransactionResponse = cardEnvelopeOf(TransactionView);

/** An entry of the transaction list: a transaction and, for what follows an authorization, which one. */
export const TransactionListItem = Type.Composite([
  TransactionView,
  Type.Object({
    type: stringEnum(TRANSACTION_TYPES, 'AUTHORIZATION (decided and posted at once), HOLD, CLEARING, REVERSAL, REFUND or DISPUTE_CREDIT'),
    authorizationId: Type.Union([Type.String(), Type.Null()], { description: 'the authorization a hold and what followed it belong to' }),
  }),
]);
export type TransactionListItem = Static<typeof TransactionListItem>;

export const RepaymentView = Type.Object({
  repaymentId: Type.String(),
  entityId: Type.String(),
  amount: Type.String(),
  outstanding: Type.String({ description: 'after the repayment' }),
  availableCredit: Type.String({ description: 'after the repayment' }),
  at: Type.String({ format: 'date-time' }),
});
export const RepaymentResponse = cardEnvelopeOf(RepaymentView);

export const TRANSACTION_PAGE_MAX = 200;
export const TRANSACTION_PAGE_DEFAULT = 50;

/** What `boundOf` (src/domain/days.ts) reads: a real day, or a date-time with an offset of at most ±15:59. */
const INSTANT_PATTERN = '^\\d{4}-\\d{2}-\\d{2}[Tt]\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?([Zz]|[+-](0\\d|1[0-5]):\\d{2})$';
/** A date filter: checked by the operation (a field error `Invalid`), documented as the two forms it accepts. */
const DayOrInstant = (description: string) =>
  documentedAs(Type.String({ minLength: 10, maxLength: 40, description }), {
    description,
    anyOf: [
      { type: 'string', format: 'date', pattern: DAY_PATTERN },
      { type: 'string', format: 'date-time', pattern: INSTANT_PATTERN, maxLength: 40 },
    ],
  });

/** Transactions' query: days or offset date-times, digit `limit`, opaque cursor (no coercion). */
export const TransactionQuery = Type.Object(
  {
    from: Type.Optional(DayOrInstant('inclusive: YYYY-MM-DD (tenant time zone) or a date-time with an offset')),
    to: Type.Optional(DayOrInstant('YYYY-MM-DD inclusive, or a date-time with an offset (exclusive)')),
    cardId: Type.Optional(Identifier),
    status: Type.Optional(stringEnum(TRANSACTION_STATUSES, 'APPROVED or DECLINED')),
    limit: Type.Optional(PageLimit(TRANSACTION_PAGE_MAX, TRANSACTION_PAGE_DEFAULT)),
    cursor: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_-]{1,200}$', description: '`pagination.nextCursor` of the previous page' })),
  },
  { additionalProperties: false },
);
export type TransactionQuery = Static<typeof TransactionQuery>;

/** Newest first; `nextCursor` names the next (older) page, null on the last. */
export const TransactionPageResponse = Type.Object({
  result: Type.Array(TransactionListItem),
  pagination: Type.Object({ nextCursor: Type.Union([Type.String(), Type.Null()]) }),
});
