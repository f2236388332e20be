// Spend controls as data (decision 0332): a tenant's Admin keeps the rules the pipeline's spend-control step
// evaluates, their versions (active or shadow), promotes a shadow version and backtests one on stored history.
import {
  AuthRuleCreateBody,
  AuthRuleDetailResponse,
  AuthRuleIdParams,
  AuthRuleListQuery,
  AuthRulePageResponse,
  AuthRulePatchBody,
  AuthRuleResponse,
  BACKTEST_MAX_DAYS,
  BacktestBody,
  BacktestResponse,
  RULES_PER_TARGET,
  isRuleId,
  type AuthRuleDetail,
} from '../../schemas/auth-rules.js';
import type { FieldError } from '../../schemas/common.js';
import { MessageResponse } from '../../schemas/management.js';
import { DEFAULT_TIME_ZONE } from '../../schemas/tenant.js';
import { definitionErrors } from '../domain/auth-rules.js';
import { boundOf } from '../domain/days.js';
import { Errors } from '../errors.js';
import { keyCursorOf, pageBounds, pageQueryErrors } from '../paging/key-cursor.js';
import type { Services } from '../services/index.js';
import type { Tenant } from '../services/tenancy/tenants.js';
import { defineOperation } from './define.js';

const TAG = 'Spend controls';
const zoneOf = (tenant: Tenant) => tenant.config.timeZone ?? DEFAULT_TIME_ZONE;
const notFound = Errors.authRuleNotFound('0192f1e2-7a3b-7c4d-8e5f-6a7b8c9d0e1f');

const GRAMMAR_DOC =
  'A condition is `{attribute, operation, values | value}`: `mcc` (four digits; all four operations), `merchantCountry` ' +
  '(ISO 3166-1 alpha-2), `merchantId`, `channel` (ATM, POS, ECOM, CONTACTLESS), `currency` (ISO 4217) take `is-one-of` / ' +
  '`is-not-one-of` with `values`; `amount` (a decimal string) takes `above` / `below` with `value`; `localTime`, the ' +
  "tenant's wall clock (`timeZone`), takes `above` / `below` with `value` \"HH:MM\" or the list operations with ranges " +
  '"HH:MM-HH:MM" (start included, end excluded, "22:00-06:00" crosses midnight).';

const ONE_TARGET: FieldError[] = [{ field: 'entityId', message: 'Invalid', objectName: 'authRuleRequest' }];

function backtestRange(body: { from: string; to: string }, tenant: Tenant, objectName: string): { from: Date | null; to: Date | null; errors: FieldError[] } {
  const from = boundOf(body.from, zoneOf(tenant), false);
  const to = boundOf(body.to, zoneOf(tenant), true);
  const errors: FieldError[] = [];
  if (!from) errors.push({ field: 'from', message: 'Invalid', objectName });
  if (!to) errors.push({ field: 'to', message: 'Invalid', objectName });
  if (from && to && (to <= from || to.getTime() - from.getTime() > (BACKTEST_MAX_DAYS + 1) * 86_400_000)) errors.push({ field: 'to', message: 'Invalid', objectName });
  return { from, to, errors };
}

const hasDefinition = (body: AuthRulePatchBody): boolean => body.conditions !== undefined || body.velocity !== undefined || body.declineReason !== undefined;

/** The rule a PATCH changes, once its definition is checked against the rule's kind. */
async function ruleToChange(services: Services, tenant: Tenant, ruleId: string, body: AuthRulePatchBody): Promise<AuthRuleDetail> {
  const current = await services.authRules.get(tenant.id, ruleId);
  const kindErrors = definitionErrors(body, 'authRulePatch', current.kind);
  if (kindErrors.length) throw Errors.validation(kindErrors);
  return current;
}

export const authRuleOperations = [
  defineOperation({
    id: 'auth-rules.list',
    method: 'GET',
    url: '/v1/admin/auth-rules',
    summary: "The tenant's spend-control rules, with their active and shadow definitions",
    description:
      'Oldest first. `cardId` or `entityId` lists only that card\'s or entity\'s rules. Pages: `limit` (1..200, default 50) and `cursor` ' +
      '(`pagination.nextCursor` of the previous page).',
    tag: TAG,
    dialect: 'problem',
    access: 'admin',
    objectName: 'authRuleListRequest',
    query: AuthRuleListQuery,
    response: AuthRulePageResponse,
    check: ({ query }) => [
      ...pageQueryErrors(query, 'authRuleListRequest', keyCursorOf(isRuleId)),
      ...(query.cardId !== undefined && query.entityId !== undefined ? [{ field: 'entityId', message: 'Invalid', objectName: 'authRuleListRequest' }] : []),
    ],
    execute: ({ tenant, query, services }) => services.authRules.page(tenant.id, { ...pageBounds(query), cardId: query.cardId, entityId: query.entityId }),
    view: ({ items, nextCursor }) => ({ result: items, pagination: { nextCursor } }),
    audit: {},
  }),

  defineOperation({
    id: 'auth-rules.create',
    method: 'POST',
    url: '/v1/admin/auth-rules',
    status: 201,
    summary: 'Add a spend-control rule: conditions that decline when all hold, or a velocity limit',
    description:
      'It applies to one card (`cardId`), one entity\'s cards (`entityId`) or, with neither, every card of the tenant. `conditions` ' +
      'decline an authorization when every one holds; `velocity` declines one that would take the amount (`limitAmount`) or the ' +
      'number (`limitCount`) of approved authorizations over the sliding `window` (1h, 24h, 7d, 30d) above the limit, counted per card ' +
      'or per entity (`scope`), only those its `filters` match. ' +
      GRAMMAR_DOC +
      ` \`mode\`: \`shadow\` (default: evaluated and recorded on each authorization's trail, never enforced) or \`active\`. ` +
      `\`declineReason\` from the catalogue; default SPEND_CONTROL_DECLINED, or VELOCITY_AMOUNT_EXCEEDED / VELOCITY_COUNT_EXCEEDED. ` +
      `At most ${RULES_PER_TARGET} rules per card, per entity and for the tenant itself.`,
    tag: TAG,
    dialect: 'problem',
    access: 'admin',
    objectName: 'authRuleRequest',
    body: AuthRuleCreateBody,
    response: AuthRuleResponse,
    refusals: ['AUTH_RULE_LIMIT'],
    check: ({ body }) => [
      ...(body.cardId !== undefined && body.entityId !== undefined ? ONE_TARGET : []),
      ...(body.conditions === undefined && body.velocity === undefined ? [{ field: 'conditions', message: 'NotNull', objectName: 'authRuleRequest' }] : []),
      ...definitionErrors(body, 'authRuleRequest'),
    ],
    // Created already enforced: the tenant's policy on promotions holds it (a shadow rule declines nobody).
    approval: { policy: 'auth-rules.promote', facts: ({ body }) => (body.mode === 'active' ? {} : null) },
    execute: ({ tenant, body, principal, services }) => services.authRules.create(tenant.id, body, principal?.sub ?? null),
    view: (rule) => ({ result: rule, pagination: null }),
    audit: { target: { cardId: 'body', entityId: 'body' } },
    examples: {
      body: { name: 'No gambling', cardId: 'CARD-3001', mode: 'active', conditions: [{ attribute: 'mcc', operation: 'is-one-of', values: ['7995', '7801', '7802'] }] },
    },
  }),

  defineOperation({
    id: 'auth-rules.read',
    method: 'GET',
    url: '/v1/admin/auth-rules/:ruleId',
    summary: 'One rule with every version it had: active, shadow or retired',
    tag: TAG,
    dialect: 'problem',
    access: 'admin',
    objectName: 'authRuleQuery',
    params: AuthRuleIdParams,
    response: AuthRuleDetailResponse,
    errors: [notFound],
    execute: ({ tenant, params, services }) => services.authRules.get(tenant.id, params.ruleId),
    view: (rule) => ({ result: rule, pagination: null }),
    audit: { target: { ruleId: 'params' } },
  }),

  defineOperation({
    id: 'auth-rules.update',
    method: 'PATCH',
    url: '/v1/admin/auth-rules/:ruleId',
    summary: 'Rename a rule, give it a new version, or change which version is enforced',
    description:
      'A new `conditions`, `velocity` or `declineReason` is a new version, built on the newest one (shadow, else active): shadowed beside ' +
      'the active version, or enforced at once with `mode: active`. `mode` alone: `active` promotes the shadow version, `shadow` stops ' +
      'enforcing the active one (it is shadowed, unless a shadow version is there already). A rule keeps its kind and its target.',
    tag: TAG,
    dialect: 'problem',
    access: 'admin',
    objectName: 'authRulePatch',
    params: AuthRuleIdParams,
    body: AuthRulePatchBody,
    response: AuthRuleResponse,
    refusals: ['AUTH_RULE_NO_SHADOW', 'AUTH_RULE_CHANGED'],
    errors: [notFound],
    check: ({ body }) => definitionErrors(body, 'authRulePatch'),
    // A PATCH that enforces a version (a new one with `mode: active`, or `mode: active` over a shadow one) is a promotion.
    approval: {
      policy: 'auth-rules.promote',
      facts: async ({ tenant, params, body, services }) => {
        if (body.mode !== 'active') return null;
        const current = await ruleToChange(services, tenant, params.ruleId, body);
        if (hasDefinition(body) || current.shadowVersion !== null) return {};
        if (current.activeVersion === null) throw Errors.business('AUTH_RULE_NO_SHADOW', `Rule ${params.ruleId} has no version to enforce.`);
        return null;
      },
    },
    execute: async ({ tenant, params, body, principal, services, heldAt }) => {
      await ruleToChange(services, tenant, params.ruleId, body);
      return services.authRules.update(tenant.id, params.ruleId, body, principal?.sub ?? null, heldAt);
    },
    view: (rule) => ({ result: rule, pagination: null }),
    audit: { target: { ruleId: 'params' } },
    examples: { body: { conditions: [{ attribute: 'mcc', operation: 'is-one-of', values: ['7995'] }] } },
  }),

  defineOperation({
    id: 'auth-rules.remove',
    method: 'DELETE',
    url: '/v1/admin/auth-rules/:ruleId',
    summary: 'Remove a rule, its versions and its velocity counters',
    tag: TAG,
    dialect: 'problem',
    access: 'admin',
    objectName: 'authRuleRemoveRequest',
    params: AuthRuleIdParams,
    response: MessageResponse,
    errors: [notFound],
    execute: ({ tenant, params, services }) => services.authRules.remove(tenant.id, params.ruleId),
    view: (_done, { params }) => ({ result: { message: `Auth rule ${params.ruleId} removed` }, pagination: null }),
    audit: { target: { ruleId: 'params' } },
  }),

  defineOperation({
    id: 'auth-rules.promote',
    method: 'POST',
    url: '/v1/admin/auth-rules/:ruleId/promote',
    summary: 'Enforce the shadow version: it becomes the active one, the one it replaces is retired',
    description: 'A velocity version counts from the moment it was shadowed or enforced, so a shadow period warms its counters up.',
    tag: TAG,
    dialect: 'problem',
    access: 'admin',
    objectName: 'authRulePromoteRequest',
    params: AuthRuleIdParams,
    response: AuthRuleResponse,
    refusals: ['AUTH_RULE_NO_SHADOW', 'AUTH_RULE_CHANGED'],
    errors: [notFound],
    // What the gateway refuses alone (no such rule, nothing to promote) is refused now, not after a checker's approval.
    approval: {
      facts: async ({ tenant, params, services }) => {
        const rule = await services.authRules.get(tenant.id, params.ruleId);
        if (rule.shadowVersion === null) throw Errors.business('AUTH_RULE_NO_SHADOW', `Rule ${params.ruleId} has no shadow version to promote.`);
        return {};
      },
    },
    execute: ({ tenant, params, services, heldAt }) => services.authRules.promote(tenant.id, params.ruleId, heldAt),
    view: (rule) => ({ result: rule, pagination: null }),
    audit: { target: { ruleId: 'params' } },
  }),

  defineOperation({
    id: 'auth-rules.backtest',
    method: 'POST',
    url: '/v1/admin/auth-rules/:ruleId/backtest',
    summary: 'Replay the stored authorizations of a range through a version of the rule: what it would have declined',
    description:
      `\`from\` and \`to\`: days (YYYY-MM-DD of the tenant's time zone, both inclusive) or date-times with an offset (\`to\` exclusive), ` +
      `at most ${BACKTEST_MAX_DAYS} days. \`version\`: default the shadow version, else the active one. The authorizations of the rule's ` +
      'card, entity or tenant are replayed in time order, velocity limits counting what was approved (and not declined by the ' +
      'version) from the window before `from` on. The report: counts and amounts declined, by reason, those the pipeline had ' +
      'approved, and up to ten authorization ids. Nothing is changed: not the rule, not a counter, not an authorization.',
    tag: TAG,
    dialect: 'problem',
    access: 'admin',
    objectName: 'backtestRequest',
    params: AuthRuleIdParams,
    body: BacktestBody,
    response: BacktestResponse,
    errors: [notFound],
    check: ({ body, tenant }) => backtestRange(body, tenant, 'backtestRequest').errors,
    execute: async ({ tenant, params, body, services }) => {
      const rule = await services.authRules.get(tenant.id, params.ruleId);
      const version = body.version ?? rule.shadowVersion ?? rule.activeVersion;
      const definition = version === null ? null : rule.versions.find((v) => v.version === version)?.definition;
      if (!definition || version === null) throw Errors.validation([{ field: 'version', message: 'Invalid', objectName: 'backtestRequest' }]);
      const { from, to } = backtestRange(body, tenant, 'backtestRequest');
      const target = { ruleId: rule.ruleId, version, level: rule.level, targetId: rule.cardId ?? rule.entityId ?? '', definition };
      return services.authRules.backtest(tenant.id, zoneOf(tenant), target, from!, to!);
    },
    view: (report) => ({ result: report, pagination: null }),
    audit: { target: { ruleId: 'params' } },
    examples: { body: { from: '2026-11-01', to: '2026-11-28' } },
  }),
];
