// What an operator reads and fixes for a tenant without its credentials, and what the console shows of the
// gateway (decision 0165). A tenant's channel and delivery entries are its Admin's own, served by forTenant.
import { Type } from '@sinclair/typebox';
import { AuditChainHead, AuditPage, AuditQuery } from '../../schemas/audit.js';
import { AuthorizationIdParams, AuthorizationView } from '../../schemas/authorizations.js';
import { CardDetailsView, CardIdParams, CardView, EntityIdParams } from '../../schemas/card-lifecycle-routes.js';
import { EntityView } from '../../schemas/entities.js';
import { TenantIdParams } from '../../schemas/management.js';
import { TransactionView } from '../../schemas/transactions.js';
import { cursorAt } from '../audit/log.js';
import { verifyChain } from '../audit/verify.js';
import { Figures, requestFigures } from '../services/infrastructure/figures.js';
import { Errors } from '../errors.js';
import { reasonOf } from '../services/connectors/connector-registry.js';
import { PLATFORM_TENANT } from '../services/tenancy/tenants.js';
import { toCardDetailsView, toCardView } from '../views/cards.js';
import { toEntityView, toTransactionView } from '../views/entities.js';
import { toAuthorizationView } from './authorizations.js';
import { auditLimitOf, checkAuditQuery } from './audit.js';
import { channelOperations } from './channels.js';
import { coreRoutingOperations } from './core-routing.js';
import { defineOperation } from './define.js';
import { forTenant } from './for-tenant.js';

const CHANNELS_TAG = "A tenant's channels";
const AUDIT_TAG = 'Audit trails';
const LOOKUP_TAG = 'Lookup';
const GATEWAY_TAG = 'Gateway';
const envelope = <T>(result: T) => ({ result, pagination: null });
const tenantNotFound = Errors.tenantNotFound('acme');

/** A trail: a tenant's, or the platform's own (`_platform`: operators' actions that concern no tenant). */
const TrailParams = Type.Object({ tenantId: Type.Union([TenantIdParams.properties.tenantId, Type.Literal(PLATFORM_TENANT)]) }, { additionalProperties: false });
const VerifyResponse = Type.Object({
  // src/audit/verify.ts's VerifyResult: the trail is one hash chain per writer (decision 0200).
  result: Type.Union([
    Type.Object({
      ok: Type.Literal(true),
      records: Type.Integer(),
      chains: Type.Array(AuditChainHead),
      root: Type.String(),
    }),
    Type.Object({
      ok: Type.Literal(false),
      chain: Type.String(),
      position: Type.Integer(),
      seq: Type.Union([Type.Integer(), Type.Null()]),
      reason: Type.String(),
      detail: Type.String(),
      records: Type.Integer(),
      cursor: Type.Union([Type.String(), Type.Null()], { description: "the trail's page (`cursor` of `GET …/audit`) that starts at the broken record; null when no record is named" }),
    }),
  ]),
  pagination: Type.Null(),
});
const CoreState = Type.Object({
  tenantId: Type.String(),
  connector: Type.String(),
  connectorId: Type.String(),
  breaker: Type.Union([Type.Literal('closed'), Type.Literal('half-open'), Type.Literal('open'), Type.Null()]),
  breakerSharedWith: Type.Array(Type.String(), {
    description: "the other tenants whose started core goes through the same breaker (one core, same settings): their failed calls open it for this one too",
  }),
  recent: Type.Object({
    windowSeconds: Type.Integer(),
    calls: Type.Integer(),
    failures: Type.Integer(),
    errorRate: Type.Number(),
    latencyMs: Type.Object({ avg: Type.Number(), max: Type.Number() }),
  }),
});
// The public views without `sensitive`: lookups show masked values only.
const CustomerLookupResponse = Type.Object({
  result: Type.Object({ entity: Type.Omit(EntityView, ['sensitive']), cards: Type.Array(CardView), transactions: Type.Array(TransactionView) }),
  pagination: Type.Null(),
});
const CardLookupResponse = Type.Object({
  result: Type.Object({ card: Type.Omit(CardDetailsView, ['sensitive']), transactions: Type.Array(TransactionView) }),
  pagination: Type.Null(),
});
const AuthorizationLookupResponse = Type.Object({
  result: Type.Object({
    authorization: AuthorizationView,
    decidingRule: Type.Union(
      [
        Type.Object({
          ruleId: Type.String(),
          version: Type.Union([Type.Integer(), Type.Null()], { description: 'the active version that declined' }),
          name: Type.Union([Type.String(), Type.Null()], { description: "the rule's name now; null when the rule was removed since" }),
        }),
        Type.Null(),
      ],
      { description: 'the spend-control rule that declined the authorization; null when no rule did' },
    ),
  }),
  pagination: Type.Null(),
});
const ConnectorCheckBody = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }), options: Type.Optional(Type.Unknown()) }, { additionalProperties: false });
/** How many of a customer's or card's transactions a lookup shows. */
const RECENT_TRANSACTIONS = 10;

/** The trail's owner: the platform, or a tenant that exists (whatever its status). */
async function trailOf(services: { tenants: { get(id: string): Promise<{ id: string } | null> } }, tenantId: string): Promise<string> {
  if (tenantId === PLATFORM_TENANT) return tenantId;
  const tenant = await services.tenants.get(tenantId);
  if (!tenant) throw Errors.tenantNotFound(tenantId);
  return tenant.id;
}

export const managementConsoleOperations = [
  forTenant('channel.list', 'tenant-channel.list', channelOperations, { tag: CHANNELS_TAG }),
  forTenant('channel.deliveries', 'tenant-channel.deliveries', channelOperations, { tag: CHANNELS_TAG }),
  forTenant('delivery.retry', 'tenant-delivery.retry', channelOperations, { tag: CHANNELS_TAG }),
  forTenant('channel.rotate-secret', 'tenant-channel.rotate-secret', channelOperations, { tag: CHANNELS_TAG }),
  forTenant('channel.replay', 'tenant-channel.replay', channelOperations, { tag: CHANNELS_TAG }),
  forTenant('shadow.summary', 'tenant-shadow.summary', coreRoutingOperations, { url: '/v1/tenants/:tenantId/shadow', tag: 'Cores' }),

  defineOperation({
    id: 'tenant-audit.read',
    listener: 'management',
    method: 'GET',
    url: '/v1/tenants/:tenantId/audit',
    summary: "A tenant's audit trail, or the platform's own (`_platform`), newest first",
    description:
      'The filters and pages of `GET /v1/audit` (`from`/`to`, `actor`, `action`, `outcome`, `route`, `requestId`, `targetId`, `kind`; `limit` ' +
      "1..500, default 50, and `cursor`). A disabled tenant's trail is read too. An operator's reads are recorded only where they " +
      'show a customer\'s or a card\'s data (the lookups); every change is.',
    tag: AUDIT_TAG,
    dialect: 'problem',
    access: 'operator',
    objectName: 'auditQuery',
    params: TrailParams,
    query: AuditQuery,
    response: AuditPage,
    errors: [tenantNotFound],
    check: ({ query }) => checkAuditQuery(query),
    execute: async ({ params, query, services }) => services.auditLog.page(await trailOf(services, params.tenantId), { ...query, limit: auditLimitOf(query) }),
    view: ({ records, next }, { query }) => ({ result: records, pagination: { nextCursor: next, next, limit: auditLimitOf(query) } }),
    // An operator's reads are recorded only where they show a customer's or a card's data (decision 0292).
    audit: false,
  }),

  defineOperation({
    id: 'tenant-audit.verify',
    listener: 'management',
    method: 'GET',
    url: '/v1/tenants/:tenantId/audit/verify',
    summary: "Whether a trail's hash chain verifies, and where it first breaks",
    description: 'As `cardline audit verify`: every chain (one per writer) recomputed in order; `chain`, `position`, `seq`, `reason` and `detail` name the first break.',
    tag: AUDIT_TAG,
    dialect: 'problem',
    access: 'operator',
    objectName: 'request',
    params: TrailParams,
    response: VerifyResponse,
    errors: [tenantNotFound],
    execute: async ({ params, services }) => verifyChain(services.db, await trailOf(services, params.tenantId)),
    view: (result) => envelope(result.ok ? result : { ...result, cursor: result.seq === null ? null : cursorAt(result.seq) }),
    audit: false,
  }),

  defineOperation({
    id: 'tenant-customer.lookup',
    listener: 'management',
    method: 'GET',
    url: '/v1/tenants/:tenantId/customers/:entityId',
    summary: "A tenant's customer from its core, with its cards and recent transactions (masked views only)",
    description: `No sealed block is built: contact details stay masked and card numbers appear masked. The ${RECENT_TRANSACTIONS} newest transactions.`,
    tag: LOOKUP_TAG,
    dialect: 'problem',
    access: 'operator',
    objectName: 'request',
    params: Type.Object({ tenantId: TenantIdParams.properties.tenantId, entityId: EntityIdParams.properties.entityId }, { additionalProperties: false }),
    tenantParam: 'tenantId',
    response: CustomerLookupResponse,
    callsCore: true,
    refusals: ['ENTITY_NOT_FOUND'],
    errors: [tenantNotFound],
    execute: async ({ params, core }) => {
      const { entityId } = params;
      const entity = await core('getEntity', { entityId });
      const cards = await core('listCards', { entityId });
      const page = await core('listTransactions', { entityId, limit: RECENT_TRANSACTIONS });
      return { entity: toEntityView(entity, undefined), cards: cards.map(toCardView), transactions: page.transactions.map(toTransactionView) };
    },
    view: envelope,
    // A customer's data, read: recorded in the tenant's trail (decision 0292).
    audit: { action: 'console.customer-lookup', target: { tenantId: 'params', entityId: 'params' } },
  }),

  defineOperation({
    id: 'tenant-card.lookup',
    listener: 'management',
    method: 'GET',
    url: '/v1/tenants/:tenantId/cards/:cardId',
    summary: "A tenant's card from its core, masked, with its recent transactions",
    tag: LOOKUP_TAG,
    dialect: 'problem',
    access: 'operator',
    objectName: 'request',
    params: Type.Object({ tenantId: TenantIdParams.properties.tenantId, cardId: CardIdParams.properties.cardId }, { additionalProperties: false }),
    tenantParam: 'tenantId',
    response: CardLookupResponse,
    callsCore: true,
    refusals: ['CARD_NOT_FOUND'],
    errors: [tenantNotFound],
    execute: async ({ params, core }) => {
      const card = await core('getCard', { cardId: params.cardId });
      const page = await core('listTransactions', { entityId: card.entityId, cardId: card.cardId, limit: RECENT_TRANSACTIONS });
      return { card: toCardDetailsView(card), transactions: page.transactions.map(toTransactionView) };
    },
    view: envelope,
    audit: { action: 'console.card-lookup', target: { tenantId: 'params', cardId: 'params' } },
  }),

  defineOperation({
    id: 'tenant-authorization.lookup',
    listener: 'management',
    method: 'GET',
    url: '/v1/tenants/:tenantId/authorizations/:authorizationId',
    summary: "A tenant's authorization with its decision trail: which step decided, the rule that declined it, the decision endpoint's outcome",
    description:
      "The authorization as `GET /v1/authorizations/{authorizationId}` answers it (each step's outcome, a decision endpoint's stand-in and why), " +
      'and the spend-control rule that declined it with its version and name. No card number is in it.',
    tag: LOOKUP_TAG,
    dialect: 'problem',
    access: 'operator',
    objectName: 'request',
    params: Type.Object({ tenantId: TenantIdParams.properties.tenantId, authorizationId: AuthorizationIdParams.properties.authorizationId }, { additionalProperties: false }),
    tenantParam: 'tenantId',
    response: AuthorizationLookupResponse,
    errors: [tenantNotFound, Errors.authorizationNotFound('auth_…')],
    execute: async ({ params, tenant, services }) => {
      const found = await services.authorizations.get(tenant.id, params.authorizationId);
      if (!found) throw Errors.authorizationNotFound(params.authorizationId);
      const declinedBy = found.trail.find((s) => s.step === 'spend-controls' && s.outcome === 'declined' && s.ruleId);
      if (!declinedBy?.ruleId) return { authorization: toAuthorizationView(found), decidingRule: null };
      const ruleId = declinedBy.ruleId;
      const version = declinedBy.rules?.find((r) => r.ruleId === ruleId && r.mode === 'active' && r.outcome === 'declined')?.version ?? null;
      const name = await services.authRules.get(tenant.id, ruleId).then(
        (r) => r.name,
        () => null,
      );
      return { authorization: toAuthorizationView(found), decidingRule: { ruleId, version, name } };
    },
    view: envelope,
    // A card's spending, read: recorded in the tenant's trail as the other lookups are (decision 0292).
    audit: { action: 'console.authorization-lookup', target: { tenantId: 'params', authorizationId: 'params' } },
  }),

  defineOperation({
    id: 'gateway.cores',
    listener: 'management',
    method: 'GET',
    url: '/v1/console/cores',
    summary: "Every started core of this process: its breaker and its last five minutes' calls, errors and latency",
    tag: GATEWAY_TAG,
    dialect: 'problem',
    access: 'operator',
    objectName: 'request',
    response: Type.Object({ result: Type.Array(CoreState), pagination: Type.Null() }),
    execute: async ({ services }) => {
      const started = [...services.connectors.started()].map((c) => ({ ...c, scope: c.connector.breakerScope?.() }));
      const sharing = (tenantId: string, scope: string | undefined) =>
        scope === undefined ? [] : [...new Set(started.filter((o) => o.scope === scope && o.tenantId !== tenantId).map((o) => o.tenantId))].sort();
      return started
        .map(({ tenantId, name, connectorId, connector, scope }) => ({
          tenantId,
          connector: name,
          connectorId,
          breaker: connector.breakerState?.() ?? null,
          breakerSharedWith: sharing(tenantId, scope),
          recent: services.core.health.window(tenantId, name),
        }))
        .sort((a, b) => (a.tenantId === b.tenantId ? (a.connector < b.connector ? -1 : 1) : a.tenantId < b.tenantId ? -1 : 1));
    },
    view: envelope,
    // Polled by the tenants list: not recorded (decision 0292).
    audit: false,
  }),

  defineOperation({
    id: 'gateway.figures',
    listener: 'management',
    method: 'GET',
    url: '/v1/console/figures',
    summary: "Request counters and latency buckets of the whole gateway, overall and per tenant (from the gateway's metrics)",
    description:
      'Two readings make rates and percentiles: the console charts requests per second, p50/p99 latency and the error rate. ' +
      'Read from the exposition `GET /metrics` answers: under CARDLINE_WORKERS=N, every worker\'s counters added up, whichever worker answers.',
    tag: GATEWAY_TAG,
    dialect: 'problem',
    access: 'operator',
    objectName: 'request',
    response: Type.Object({ result: Figures, pagination: Type.Null() }),
    execute: ({ services }) => requestFigures(services.metrics),
    view: envelope,
    // Read every few seconds by the figures page: not an action worth a record.
    audit: false,
  }),

  defineOperation({
    id: 'gateway.connectors',
    listener: 'management',
    method: 'GET',
    url: '/v1/console/connectors',
    summary: "The built-in connectors, each with its options' JSON Schema (what a tenant's configuration may name)",
    tag: GATEWAY_TAG,
    dialect: 'problem',
    access: 'operator',
    objectName: 'request',
    response: Type.Object({ result: Type.Array(Type.Object({ id: Type.String(), optionsSchema: Type.Unknown() })), pagination: Type.Null() }),
    execute: async ({ services }) =>
      services.connectorRegistry.ids().sort().map((id) => ({ id, optionsSchema: services.connectorRegistry.definition(id)?.optionsSchema ?? null })),
    view: envelope,
    audit: false,
  }),

  defineOperation({
    id: 'gateway.connector-check',
    listener: 'management',
    method: 'POST',
    url: '/v1/console/connectors/check',
    summary: "Check a connector's options against its own validation, the one tenant creation applies (nothing is stored)",
    tag: GATEWAY_TAG,
    dialect: 'problem',
    access: 'operator',
    objectName: 'connectorCheckRequest',
    body: ConnectorCheckBody,
    response: Type.Object({ result: Type.Object({ ok: Type.Boolean(), problem: Type.Union([Type.String(), Type.Null()]) }), pagination: Type.Null() }),
    // A read sent as POST: nothing changes, a retry answers the same.
    idempotent: false,
    execute: async ({ body, services }) => {
      try {
        services.connectorRegistry.validate('(new tenant)', body.id, body.options ?? {});
        return { ok: true, problem: null };
      } catch (err) {
        return { ok: false, problem: reasonOf(err) };
      }
    },
    view: envelope,
    // A POST: audited like every one (which operator checked what), though nothing changes.
    audit: { action: 'console.connector-check', target: { connector: 'body.id' } },
    examples: { body: { id: 'mock', options: {} } },
  }),
];
