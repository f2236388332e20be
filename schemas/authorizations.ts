// Schemas of card authorizations from a processor (POST /v1/authorizations): what a card network sends, the
// decision with the trail of the pipeline's steps, and the catalogue of decline reasons.
import { Type, type Static } from '@sinclair/typebox';
import { RuleEvaluation } from './auth-rules.js';
import { AMOUNT_PATTERN, Identifier, Money, PlainText, cardEnvelopeOf, stringEnum } from './common.js';
import { CHANNELS, COUNTRY_PATTERN, DECLINE_REASONS, MCC_PATTERN, type Channel } from './transactions.js';

/** ISO 4217 alphabetic code. */
export const CURRENCY_PATTERN = '^[A-Z]{3}$';

/** Why a decision endpoint's step fell back to its stand-in: no answer within the deadline, an error, or every slot taken. */
export const STAND_IN_CAUSES = ['timeout', 'error', 'busy'] as const;
export type StandInCause = (typeof STAND_IN_CAUSES)[number];

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

/**
 * An authorization as the network asks it, whichever route brought it (the processor's or the sandbox's): what the
 * pipeline's steps, the tenant's decision endpoint and the core are asked about. The request as validated, with the
 * time it arrived.
 */
export interface AuthorizationAsk {
  cardId: string;
  amount: string;
  currency: string;
  merchant: AuthorizationMerchant;
  channel: Channel;
  networkReference: string | null;
  at: Date;
}

/** One step of the pipeline as it ran. */
export const StepRecord = Type.Object({
  step: stringEnum(AUTHORIZATION_STEPS, 'card-state, spend-controls, decision-endpoint or core'),
  outcome: stringEnum(STEP_OUTCOMES, 'approved, declined or skipped'),
  declineReason: Type.Optional(stringEnum(DECLINE_REASONS, 'why the step declined')),
  detail: Type.Optional(Type.String({ maxLength: 200 })),
  /** Spend controls: the rule whose active version declined. */
  ruleId: Type.Optional(Type.String()),
  evaluated: Type.Optional(Type.Integer({ minimum: 1, description: 'spend controls: how many rule versions were evaluated, active and shadow' })),
  rules: Type.Optional(
    Type.Array(RuleEvaluation, { description: 'spend controls: the versions that declined (active) or would have (shadow); those that approved are only counted in `evaluated`' }),
  ),
  /** The decision endpoint's step only: the outcome is the tenant's stand-in, and why. */
  standIn: Type.Optional(stringEnum(STAND_IN_CAUSES, 'timeout, error or busy: the outcome is the stand-in')),
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

/** What the gateway POSTs to the tenant's decision endpoint, signed per Standard Webhooks (`webhook-id` is the authorization id). */
export const DecisionRequest = Type.Object(
  {
    type: Type.Literal('authorization.decision'),
    authorizationId: Type.String(),
    cardId: Type.String(),
    amount: Type.String({ description: 'asked for: a decimal string' }),
    currency: Type.String(),
    merchant: Type.Object({ name: Type.String(), id: Type.Optional(Type.String()), mcc: Type.String(), country: Type.String() }),
    channel: stringEnum(CHANNELS, 'ATM, POS, ECOM or CONTACTLESS'),
    networkReference: Type.Union([Type.String(), Type.Null()]),
    /** Whether an `approvedAmount` below `amount` may be answered (the tenant's `authorization.partialApproval`). */
    partialApproval: Type.Boolean(),
    at: Type.String({ format: 'date-time' }),
    /** When the gateway stops waiting and applies the stand-in. */
    deadline: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false },
);
export type DecisionRequest = Static<typeof DecisionRequest>;

/** The largest answer read from a decision endpoint; a longer one is an error (the stand-in applies). */
export const DECISION_ANSWER_MAX_BYTES = 4096;

/**
 * The decision endpoint's answer (200, application/json, at most 4 KiB): `approved`; when declined, optionally a
 * reason of the catalogue (default DO_NOT_HONOUR); when approved, optionally `approvedAmount`, above zero and at
 * most the amount (below it only where partial approvals are on). Anything else is an error: the stand-in applies.
 */
export const DecisionAnswer = Type.Object(
  {
    approved: Type.Boolean(),
    // Literals, not an enum: the gateway checks answers with TypeBox's compiler, which knows no Unsafe kind.
    declineReason: Type.Optional(Type.Union(DECLINE_REASONS.map((r) => Type.Literal(r)), { description: 'why the endpoint declines; only when approved is false' })),
    approvedAmount: Type.Optional(Type.String({ pattern: AMOUNT_PATTERN, description: 'a decimal string; only when approved is true' })),
  },
  { additionalProperties: false },
);
export type DecisionAnswer = Static<typeof DecisionAnswer>;
