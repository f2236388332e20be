// Schemas of spend controls as data (/v1/admin/auth-rules): a rule applies to the tenant, an entity or a card and
// is either conditions that decline when all hold, or a velocity limit; its versions, and a backtest's report.
import { Type, type Static } from '@sinclair/typebox';
import { Identifier, Money, PlainText, cardEnvelopeOf, stringEnum } from './common.js';
import { PageQuery, pageOf } from './page.js';
import { DECLINE_REASONS } from './transactions.js';

/** What a condition may look at: the authorization's merchant, channel, amount, currency and the tenant's local time. */
export const RULE_ATTRIBUTES = ['mcc', 'merchantCountry', 'merchantId', 'channel', 'amount', 'currency', 'localTime'] as const;
export type RuleAttribute = (typeof RULE_ATTRIBUTES)[number];

export const RULE_OPERATIONS = ['is-one-of', 'is-not-one-of', 'above', 'below'] as const;
export type RuleOperation = (typeof RULE_OPERATIONS)[number];

/** Sliding windows of a velocity limit. */
export const VELOCITY_WINDOWS = ['1h', '24h', '7d', '30d'] as const;
export type VelocityWindow = (typeof VELOCITY_WINDOWS)[number];

/** Whose spending a velocity limit counts: the card's, or every card of its entity together. */
export const VELOCITY_SCOPES = ['card', 'entity'] as const;
export type VelocityScope = (typeof VELOCITY_SCOPES)[number];

export const RULE_LEVELS = ['tenant', 'entity', 'card'] as const;
export type RuleLevel = (typeof RULE_LEVELS)[number];

/** `active`: enforced; `shadow`: evaluated and recorded on the trail, never enforced. */
export const RULE_MODES = ['active', 'shadow'] as const;
export type RuleMode = (typeof RULE_MODES)[number];

/** The most rules one card, one entity or the tenant itself may have. */
export const RULES_PER_TARGET = 50;
export const CONDITIONS_MAX = 20;
export const VALUES_MAX = 500;

/**
 * One test on the authorization. `values` (a list) goes with is-one-of / is-not-one-of, `value` (one) with
 * above / below; which attribute takes which operation and spelling is checked after the schema.
 */
export const RuleCondition = Type.Object(
  {
    attribute: stringEnum(RULE_ATTRIBUTES, 'mcc, merchantCountry, merchantId, channel, amount, currency or localTime'),
    operation: stringEnum(RULE_OPERATIONS, 'is-one-of, is-not-one-of, above or below'),
    values: Type.Optional(Type.Array(PlainText(1, 64), { minItems: 1, maxItems: VALUES_MAX })),
    value: Type.Optional(PlainText(1, 64)),
  },
  { additionalProperties: false },
);
export type RuleCondition = Static<typeof RuleCondition>;

export const RuleVelocity = Type.Object(
  {
    scope: stringEnum(VELOCITY_SCOPES, 'card or entity'),
    window: stringEnum(VELOCITY_WINDOWS, '1h, 24h, 7d or 30d'),
    limitAmount: Type.Optional(Money),
    limitCount: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
    /** Only authorizations for which every filter holds are counted and limited. */
    filters: Type.Optional(Type.Array(RuleCondition, { minItems: 1, maxItems: CONDITIONS_MAX })),
  },
  { additionalProperties: false },
);
export type RuleVelocity = Static<typeof RuleVelocity>;

const Conditions = Type.Array(RuleCondition, { minItems: 1, maxItems: CONDITIONS_MAX, description: 'declines when every condition holds' });
const Reason = stringEnum(DECLINE_REASONS, 'the decline reason the rule answers (default SPEND_CONTROL_DECLINED, or VELOCITY_AMOUNT_EXCEEDED / VELOCITY_COUNT_EXCEEDED)');
const Mode = stringEnum(RULE_MODES, 'active (enforced) or shadow (evaluated and recorded, never enforced)');
const RuleName = PlainText(1, 128);

/** POST /v1/admin/auth-rules: `cardId` or `entityId` (neither: the whole tenant); `conditions` or `velocity`. */
export const AuthRuleCreateBody = Type.Object(
  {
    name: RuleName,
    cardId: Type.Optional(Identifier),
    entityId: Type.Optional(Identifier),
    mode: Type.Optional(Mode),
    declineReason: Type.Optional(Reason),
    conditions: Type.Optional(Conditions),
    velocity: Type.Optional(RuleVelocity),
  },
  { additionalProperties: false },
);
export type AuthRuleCreateBody = Static<typeof AuthRuleCreateBody>;

/** PATCH: a new definition is a new version (shadow unless `mode` says active); `mode` alone promotes or demotes. */
export const AuthRulePatchBody = Type.Object(
  {
    name: Type.Optional(RuleName),
    mode: Type.Optional(Mode),
    declineReason: Type.Optional(Reason),
    conditions: Type.Optional(Conditions),
    velocity: Type.Optional(RuleVelocity),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type AuthRulePatchBody = Static<typeof AuthRulePatchBody>;

/** What a version decides: stored as given, never changed. */
export const RuleDefinition = Type.Object({
  declineReason: Type.Optional(Reason),
  conditions: Type.Optional(Type.Array(RuleCondition)),
  velocity: Type.Optional(RuleVelocity),
});
export type RuleDefinition = Static<typeof RuleDefinition>;

export const RuleVersionView = Type.Object({
  version: Type.Integer(),
  /** `retired`: neither enforced nor shadowed any more. */
  mode: stringEnum(['active', 'shadow', 'retired'] as const, 'active, shadow or retired'),
  definition: RuleDefinition,
  createdBy: Type.Union([Type.String(), Type.Null()]),
  createdAt: Type.String({ format: 'date-time' }),
});
export type RuleVersionView = Static<typeof RuleVersionView>;

export const AuthRuleView = Type.Object({
  ruleId: Type.String(),
  name: Type.String(),
  level: stringEnum(RULE_LEVELS, 'tenant, entity or card'),
  /** The card it applies to (level `card`), else null. */
  cardId: Type.Union([Type.String(), Type.Null()]),
  /** The entity it applies to (level `entity`), else null. */
  entityId: Type.Union([Type.String(), Type.Null()]),
  kind: stringEnum(['conditions', 'velocity'] as const, 'conditions or velocity'),
  activeVersion: Type.Union([Type.Integer(), Type.Null()]),
  shadowVersion: Type.Union([Type.Integer(), Type.Null()]),
  active: Type.Union([RuleDefinition, Type.Null()]),
  shadow: Type.Union([RuleDefinition, Type.Null()]),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
});
export type AuthRuleView = Static<typeof AuthRuleView>;

export const AuthRuleDetail = Type.Composite([AuthRuleView, Type.Object({ versions: Type.Array(RuleVersionView) })]);
export type AuthRuleDetail = Static<typeof AuthRuleDetail>;

export const AuthRuleResponse = cardEnvelopeOf(AuthRuleView);
export const AuthRuleDetailResponse = cardEnvelopeOf(AuthRuleDetail);
export const AuthRulePageResponse = pageOf(AuthRuleView);

const UUID_PATTERN = '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';
/** A rule id as the store writes it (a lower-case UUIDv7: ids sort in creation order). */
export const isRuleId = (value: string): boolean => new RegExp(UUID_PATTERN).test(value);
export const AuthRuleIdParams = Type.Object({ ruleId: Type.String({ pattern: UUID_PATTERN }) }, { additionalProperties: false });
export type AuthRuleIdParams = Static<typeof AuthRuleIdParams>;

/** GET /v1/admin/auth-rules: pages, optionally only one card's or one entity's rules. */
export const AuthRuleListQuery = Type.Object(
  {
    ...PageQuery.properties,
    cardId: Type.Optional(Identifier),
    entityId: Type.Optional(Identifier),
  },
  { additionalProperties: false },
);
export type AuthRuleListQuery = Static<typeof AuthRuleListQuery>;

/** The longest range a backtest replays. */
export const BACKTEST_MAX_DAYS = 92;

/** POST …/backtest: a range of days (YYYY-MM-DD, the tenant's zone) or instants with an offset; a version. */
export const BacktestBody = Type.Object(
  {
    from: Type.String({ minLength: 10, maxLength: 40 }),
    to: Type.String({ minLength: 10, maxLength: 40 }),
    version: Type.Optional(Type.Integer({ minimum: 1 })),
  },
  { additionalProperties: false },
);
export type BacktestBody = Static<typeof BacktestBody>;

const Tally = Type.Object({ count: Type.Integer(), amount: Type.String({ description: 'a decimal string' }) });

export const BacktestReport = Type.Object({
  ruleId: Type.String(),
  version: Type.Integer(),
  from: Type.String({ format: 'date-time' }),
  to: Type.String({ format: 'date-time' }),
  /** Authorizations of the rule's card, entity or tenant in the range. */
  evaluated: Type.Integer(),
  /** What the version would have declined... */
  declined: Tally,
  /** ...of which the pipeline had approved (the decisions it would have changed). */
  approvedThenDeclined: Tally,
  byReason: Type.Array(Type.Composite([Type.Object({ declineReason: Reason }), Tally])),
  /** Up to ten of the authorizations it would have declined, oldest first. */
  sampleAuthorizationIds: Type.Array(Type.String()),
});
export type BacktestReport = Static<typeof BacktestReport>;
export const BacktestResponse = cardEnvelopeOf(BacktestReport);

/** One rule's verdict on an authorization, as the trail records it. */
export const RuleEvaluation = Type.Object({
  ruleId: Type.String(),
  version: Type.Integer(),
  mode: Mode,
  outcome: stringEnum(['approved', 'declined'] as const, 'approved or declined'),
  declineReason: Type.Optional(Reason),
});
export type RuleEvaluation = Static<typeof RuleEvaluation>;
