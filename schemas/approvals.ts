// Four eyes: the approval policies a tenant declares in its configuration, and the pending approvals its
// writes wait in (GET /v1/approvals and the approve, reject and cancel actions).
import { Type, type Static } from '@sinclair/typebox';
import { Money, PageLimit, PlainText, ROLES, cardEnvelopeOf } from './common.js';
import { PAGE_MAX, PageQuery, pageOf } from './page.js';

/**
 * The operations a policy may name, each with the conditions it understands. A policy without `when` holds
 * every call of its operation; with `when`, only the calls its conditions select.
 */
export const APPROVABLE_OPERATIONS = {
  'credit-limit.upgrade': ['newLimitAbove', 'increaseAbove', 'increasePercentAbove'],
  'user.create': ['roles'],
  'user.update': ['roles'],
  'keys.rotate': [],
  'tenant.config-update': [],
  // Every write that makes a rule version enforced: the promotion, and a rule created or updated with `mode: active`.
  'auth-rules.promote': [],
} as const satisfies Record<string, readonly (keyof ApprovalCondition)[]>;
export type ApprovableOperation = keyof typeof APPROVABLE_OPERATIONS;

/** Who may approve besides a tenant's roles: the platform operator, on the management listener and its console. */
export const OPERATOR_APPROVER = 'Operator';
export const APPROVER_ROLES = [...ROLES, OPERATOR_APPROVER] as const;
export type ApproverRole = (typeof APPROVER_ROLES)[number];

const ApprovalCondition = Type.Object(
  {
    /** credit-limit.upgrade: the new limit is above this amount. */
    newLimitAbove: Type.Optional(Money),
    /** credit-limit.upgrade: the new limit exceeds the current one by more than this amount. */
    increaseAbove: Type.Optional(Money),
    /** credit-limit.upgrade: the new limit exceeds the current one by more than this percentage of it. */
    increasePercentAbove: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
    /** user.create, user.update: the role the request gives is one of these (`["Admin"]`). */
    roles: Type.Optional(Type.Array(Type.Union(ROLES.map((r) => Type.Literal(r))), { minItems: 1, uniqueItems: true })),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type ApprovalCondition = Static<typeof ApprovalCondition>;

export const APPROVAL_EXPIRY_DEFAULT = 86_400;
const APPROVAL_EXPIRY_MAX = 30 * 86_400;

export const ApprovalPolicy = Type.Object(
  {
    operation: Type.String({
      minLength: 1,
      maxLength: 64,
      description: `the operation it holds, one of ${Object.keys(APPROVABLE_OPERATIONS).map((o) => `\`${o}\``).join(', ')}`,
    }),
    /** Any condition that holds puts the call under the policy; none given: every call. */
    when: Type.Optional(ApprovalCondition),
    approvers: Type.Array(Type.Union(APPROVER_ROLES.map((r) => Type.Literal(r))), { minItems: 1, uniqueItems: true }),
    // Optional in what a client sends; filled in as stored (one approval, a day).
    approvals: Type.Optional(Type.Integer({ minimum: 1, maximum: 2, default: 1 })),
    expiresAfterSeconds: Type.Optional(Type.Integer({ minimum: 60, maximum: APPROVAL_EXPIRY_MAX, default: APPROVAL_EXPIRY_DEFAULT })),
  },
  { additionalProperties: false },
);
export type ApprovalPolicy = Static<typeof ApprovalPolicy>;
export const ApprovalPolicies = Type.Array(ApprovalPolicy, { maxItems: 32 });

/** What a tenant's configuration says beyond its schema: each policy names an approvable operation once, with its own conditions. */
export function approvalPolicyProblems(policies: readonly ApprovalPolicy[] | undefined): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  (policies ?? []).forEach((policy, i) => {
    const conditions = (APPROVABLE_OPERATIONS as Record<string, readonly string[]>)[policy.operation];
    if (!conditions) {
      problems.push(`/approvals/${i}/operation: '${policy.operation}' is not an operation that can wait for approval (${Object.keys(APPROVABLE_OPERATIONS).join(', ')})`);
      return;
    }
    if (seen.has(policy.operation)) problems.push(`/approvals/${i}/operation: '${policy.operation}' has a policy already; one policy per operation`);
    seen.add(policy.operation);
    for (const name of Object.keys(policy.when ?? {})) {
      if (!conditions.includes(name)) {
        problems.push(`/approvals/${i}/when/${name}: not a condition of ${policy.operation}${conditions.length ? ` (${conditions.join(', ')})` : ' (it has none)'}`);
      }
    }
  });
  return problems;
}

export const APPROVAL_STATUSES = ['pending', 'executing', 'executed', 'rejected', 'cancelled', 'expired'] as const;
export type ApprovalStatus = (typeof APPROVAL_STATUSES)[number];

const Instant = Type.String({ description: 'an RFC 3339 instant' });

export const ApprovalIdParams = Type.Object(
  { approvalId: Type.String({ pattern: '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$', description: 'the id of the 202 answer' }) },
  { additionalProperties: false },
);

export const ApprovalView = Type.Object({
  approvalId: Type.String(),
  operation: Type.String(),
  status: Type.Union(APPROVAL_STATUSES.map((s) => Type.Literal(s))),
  maker: Type.Object({ username: Type.String(), role: Type.String() }),
  /** Exactly what the approval executes: the route, its path parameters and its validated body (secret fields shown as "[encrypted]"). */
  request: Type.Object({
    method: Type.String(),
    path: Type.String(),
    params: Type.Record(Type.String(), Type.String()),
    body: Type.Unknown(),
  }),
  approvers: Type.Array(Type.String()),
  approvalsNeeded: Type.Integer(),
  approvals: Type.Array(Type.Object({ by: Type.String(), role: Type.String(), at: Instant })),
  rejection: Type.Union([Type.Object({ by: Type.String(), reason: Type.String(), at: Instant }), Type.Null()]),
  createdAt: Instant,
  expiresAt: Instant,
  /** The executed request's answer, as its route would have given it: a success or a refusal. Null until it ran. */
  outcome: Type.Union([Type.Object({ status: Type.Integer(), body: Type.Unknown() }), Type.Null()]),
});
export type ApprovalView = Static<typeof ApprovalView>;
export const ApprovalResponse = cardEnvelopeOf(ApprovalView);
export const ApprovalPageResponse = pageOf(ApprovalView);

export const ApprovalListQuery = Type.Object(
  {
    status: Type.Optional(Type.Union(APPROVAL_STATUSES.map((s) => Type.Literal(s)))),
    operation: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    maker: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    limit: Type.Optional(PageLimit(PAGE_MAX, 50)),
    cursor: PageQuery.properties.cursor,
  },
  { additionalProperties: false },
);
export type ApprovalListQuery = Static<typeof ApprovalListQuery>;

export const RejectBody = Type.Object({ reason: PlainText(1, 500) }, { additionalProperties: false });
