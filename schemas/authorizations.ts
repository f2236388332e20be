// Schemas of card authorizations from a processor (POST /v1/authorizations): what a card network sends, the
// decision with the trail of the pipeline's steps, and the catalogue of decline reasons.
import { Type, type Static } from '@sinclair/typebox';
import { RuleEvaluation } from './auth-rules.js';
import { Identifier, Money, PlainText, cardEnvelopeOf } from './common.js';
import { CHANNELS, COUNTRY_PATTERN, DECLINE_REASONS, MCC_PATTERN } from './transactions.js';

const stringEnum = <T extends readonly string[]>(values: T, description: string) =>
  Type.Unsafe<T[number]>({ type: 'string', enum: [...values], description });

/** ISO 4217 alphabetic code. */
export const CURRENCY_PATTERN = '^[A-Z]{3}$';

/** The pipeline's steps, in the order they run. */
export const AUTHORIZATION_STEPS = ['card-state', 'spend-controls', 'decision-endpoint', 'core'] as const;
export type AuthorizationStep = (typeof AUTHORIZATION_STEPS)[number];

/** What a step concluded: `skipped` when it has nothing to decide (no rule, no endpoint configured). */
export const STEP_OUTCOMES = ['approved', 'declined', 'skipped'] as const;
export type StepOutcome = (typeof STEP_OUTCOMES)[number];

export const AUTHORIZATION_STATUSES = ['APPROVED', 'DECLINED'] as const;
export type AuthorizationStatus = (typeof AUTHORIZATION_STATUSES)[number];

export const AuthorizationMerchant = Type.Object(
  {
    name: PlainText(1, 128),
    id: Type.Optional(PlainText(1, 64)),
    mcc: Type.String({ pattern: MCC_PATTERN, description: 'ISO 18245 merchant category code: four digits' }),
    country: Type.String({ pattern: COUNTRY_PATTERN, description: 'ISO 3166-1 alpha-2' }),
  },
  { additionalProperties: false },
);
export type AuthorizationMerchant = Static<typeof AuthorizationMerchant>;

/** POST /v1/authorizations: an authorization as a card processor forwards it from the network. */
export const AuthorizationRequest = Type.Object(
  {
    cardId: Identifier,
    amount: Money,
    currency: Type.String({ pattern: CURRENCY_PATTERN, description: "ISO 4217; the card's currency (the tenant's `currency`)" }),
    merchant: AuthorizationMerchant,
    channel: stringEnum(CHANNELS, 'ATM, POS, ECOM (e-commerce) or CONTACTLESS'),
    networkReference: Type.Optional(PlainText(1, 64)),
  },
  { additionalProperties: false },
);
export type AuthorizationRequest = Static<typeof AuthorizationRequest>;

/** One step of the pipeline as it ran. */
export const StepRecord = Type.Object({
  step: stringEnum(AUTHORIZATION_STEPS, 'card-state, spend-controls, decision-endpoint or core'),
  outcome: stringEnum(STEP_OUTCOMES, 'approved, declined or skipped'),
  declineReason: Type.Optional(stringEnum(DECLINE_REASONS, 'why the step declined')),
  detail: Type.Optional(Type.String({ maxLength: 200 })),
  /** Spend controls: the rule whose active version declined. */
  ruleId: Type.Optional(Type.String()),
  /** Spend controls: each rule version evaluated, active and shadow, with its verdict. */
  rules: Type.Optional(Type.Array(RuleEvaluation)),
});
export type StepRecord = Static<typeof StepRecord>;

export const AuthorizationView = Type.Object({
  authorizationId: Type.String(),
  cardId: Type.String(),
  entityId: Type.Union([Type.String(), Type.Null()]),
  status: stringEnum(AUTHORIZATION_STATUSES, 'APPROVED or DECLINED'),
  declineReason: Type.Union([stringEnum(DECLINE_REASONS, 'why it was declined'), Type.Null()]),
  /** The step that declined it, or `core` for an approval (every step passed). */
  decidedBy: stringEnum(AUTHORIZATION_STEPS, 'the step whose answer stands'),
  amount: Type.String({ description: 'asked for: a decimal string' }),
  /** Held on the credit line: the amount, less on a partial approval, 0.00 when declined. */
  approvedAmount: Type.String({ description: 'held: a decimal string' }),
  currency: Type.String(),
  merchant: Type.Object({ name: Type.String(), id: Type.Optional(Type.String()), mcc: Type.String(), country: Type.String() }),
  channel: stringEnum(CHANNELS, 'ATM, POS, ECOM or CONTACTLESS'),
  networkReference: Type.Union([Type.String(), Type.Null()]),
  trail: Type.Array(StepRecord),
  at: Type.String({ format: 'date-time' }),
});
export type AuthorizationView = Static<typeof AuthorizationView>;

export const AuthorizationResponse = cardEnvelopeOf(AuthorizationView);

export const AuthorizationIdParams = Type.Object({ authorizationId: Identifier }, { additionalProperties: false });
export type AuthorizationIdParams = Static<typeof AuthorizationIdParams>;
