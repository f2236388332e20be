// The operations console on the management listener (issue 19): its files under /console, its session
// (sign in with an operator key, read the CSRF token, sign out), and the few reads and actions its pages need
// that the management API did not offer: a tenant's channels, deliveries and audit trail with the chain's
// verification, every core's breaker and recent calls, and request figures from the gateway's metrics. Each
// /v1 route here is an operator's call like any other: operator key or console session, audited.
import { Type } from '@sinclair/typebox';
import { type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { AUDIT_PAGE_DEFAULT, AuditPage, AuditQuery } from '../../schemas/audit.js';
import {
  ChannelIdParams,
  ChannelPageResponse,
  ChannelSecretResponse,
  DELIVERY_PAGE_MAX,
  DeliveryIdParams,
  DeliveryPageResponse,
  DeliveryQuery,
  DeliveryResponse,
  ReplayBody,
  ReplayResponse,
  RotateSecretBody,
  isChannelId,
} from '../../schemas/channels.js';
import { CardIdParams, EntityIdParams } from '../../schemas/card-lifecycle-routes.js';
import { ShadowSummaryResponse } from '../../schemas/core-routing.js';
import { TenantIdParams } from '../../schemas/management.js';
import { PageQuery } from '../../schemas/page.js';
import { verifyChain } from '../audit/verify.js';
import { decodeCursor } from '../audit/log.js';
import { Errors } from '../errors.js';
import { reasonOf } from '../services/connector-registry.js';
import { PLATFORM_TENANT, type Tenant } from '../services/tenants.js';
import { decodeSeqCursor } from '../store/seq-cursor.js';
import { toCardDetailsView, toCardView } from '../views/cards.js';
import { toEntityView, toTransactionView } from '../views/entities.js';
import { keyCursorOf, pageBounds, pageQueryErrors } from '../store/key-cursor.js';
import { ConsoleErrors } from './auth.js';
import { Figures, requestFigures } from './figures.js';
import { ConsoleSessions, sessionCookie } from './sessions.js';
import { consoleFiles } from './static.js';

const SignInBody = Type.Object({ key: Type.String({ minLength: 1, maxLength: 512 }) }, { additionalProperties: false });
const SessionResponse = Type.Object({
  result: Type.Object({ operator: Type.String(), csrfToken: Type.String(), idleTimeoutSeconds: Type.Integer() }),
  pagination: Type.Null(),
});
const MessageResponse = Type.Object({ result: Type.Object({ message: Type.String() }), pagination: Type.Null() });
const TenantChannelParams = Type.Object({ tenantId: TenantIdParams.properties.tenantId, channelId: ChannelIdParams.properties.channelId }, { additionalProperties: false });
const TenantDeliveryParams = Type.Object({ tenantId: TenantIdParams.properties.tenantId, deliveryId: DeliveryIdParams.properties.deliveryId }, { additionalProperties: false });
/** A trail: a tenant's, or the platform's own (`_platform`: operators' actions that concern no tenant). */
const TrailParams = Type.Object({ tenantId: Type.Union([TenantIdParams.properties.tenantId, Type.Literal(PLATFORM_TENANT)]) }, { additionalProperties: false });
const VerifyResponse = Type.Object({
  // src/audit/verify.ts's VerifyResult: the trail is one hash chain per writer (decision 0200).
  result: Type.Union([
    Type.Object({
      ok: Type.Literal(true),
      records: Type.Integer(),
      chains: Type.Array(Type.Object({ chain: Type.String(), size: Type.Integer(), head: Type.String() })),
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
    }),
  ]),
  pagination: Type.Null(),
});

const envelope = <T>(result: T) => ({ result, pagination: null });

interface ConsoleRoutesOptions {
  sessions: ConsoleSessions;
}

const consoleRoutes: FastifyPluginAsync<ConsoleRoutesOptions> = async (plain, opts) => {
  const app = plain.withTypeProvider<TypeBoxTypeProvider>();
  const services = app.cardline;
  const { sessions } = opts;

  const tenantOr404 = async (tenantId: string): Promise<Tenant> => {
    const tenant = await services.tenants.get(tenantId);
    if (!tenant) throw Errors.tenantNotFound(tenantId);
    return tenant;
  };
  /** The trail's owner: the platform, or a tenant that exists. */
  const trailOf = async (tenantId: string): Promise<string> => (tenantId === PLATFORM_TENANT ? tenantId : (await tenantOr404(tenantId)).id);

  await app.register(consoleFiles);

  // ── The session ───────────────────────────────────────────────────────────────────────────────────

  app.post('/console/session', {
    schema: { body: SignInBody, response: { 201: SessionResponse } },
    config: { operator: false, objectName: 'signInRequest', idempotency: false, audit: { action: 'console.sign-in' } },
    handler: async (request, reply) => {
      const opened = await sessions.signIn(request.body.key);
      if (!opened) throw ConsoleErrors.badKey();
      // Audited as the operator it names, like any call made with the key.
      request.operator = opened.operator;
      reply.header('set-cookie', sessionCookie(opened.sessionId, request.protocol === 'https'));
      reply.header('cache-control', 'no-store');
      reply.code(201);
      return envelope(sessions.info(opened.sessionId, opened.operator.name));
    },
  });

  // A page that reloads asks again for the CSRF token it keeps only in memory (never in storage).
  app.get('/console/session', {
    schema: { response: { 200: SessionResponse } },
    handler: async (request, reply) => {
      if (!request.consoleSession || !request.operator) throw ConsoleErrors.noSession();
      reply.header('cache-control', 'no-store');
      return envelope(sessions.info(request.consoleSession, request.operator.name));
    },
  });

  app.delete('/console/session', {
    schema: { response: { 200: MessageResponse } },
    config: { idempotency: false, audit: { action: 'console.sign-out' } },
    handler: async (request, reply) => {
      if (!request.consoleSession) throw ConsoleErrors.noSession();
      await sessions.signOut(request.consoleSession);
      reply.header('set-cookie', sessionCookie(null, request.protocol === 'https'));
      return envelope({ message: 'Signed out' });
    },
  });

  // ── A tenant's channels and deliveries, as its Admin sees them under /v1/admin ────────────────────

  app.get('/v1/tenants/:tenantId/channels', {
    schema: { params: TenantIdParams, querystring: PageQuery, response: { 200: ChannelPageResponse } },
    config: { objectName: 'channelListRequest', audit: { action: 'channel.list', target: { tenantId: 'params.tenantId' } } },
    handler: async (request) => {
      const errors = pageQueryErrors(request.query, 'channelListRequest', keyCursorOf(isChannelId));
      if (errors.length) throw Errors.validation(errors);
      const page = await services.channels.page((await tenantOr404(request.params.tenantId)).id, pageBounds(request.query));
      return { result: page.items, pagination: { nextCursor: page.nextCursor } };
    },
  });

  app.get('/v1/tenants/:tenantId/channels/:channelId/deliveries', {
    schema: { params: TenantChannelParams, querystring: DeliveryQuery, response: { 200: DeliveryPageResponse } },
    config: { objectName: 'deliveryListRequest', audit: { action: 'channel.deliveries', target: { tenantId: 'params.tenantId', channelId: 'params.channelId' } } },
    handler: async (request) => {
      const errors = pageQueryErrors(request.query, 'deliveryListRequest', (cursor) => decodeSeqCursor(cursor) !== null, DELIVERY_PAGE_MAX);
      if (errors.length) throw Errors.validation(errors);
      const tenant = await tenantOr404(request.params.tenantId);
      const { deliveries, nextCursor } = await services.deliveries.list(tenant.id, request.params.channelId, request.query);
      return { result: deliveries, pagination: { nextCursor } };
    },
  });

  app.post('/v1/tenants/:tenantId/deliveries/:deliveryId/retry', {
    schema: { params: TenantDeliveryParams, response: { 200: DeliveryResponse } },
    config: { audit: { action: 'delivery.retry', target: { tenantId: 'params.tenantId', deliveryId: 'params.deliveryId' } } },
    handler: async (request) => envelope(await services.deliveries.retryNow((await tenantOr404(request.params.tenantId)).id, request.params.deliveryId)),
  });

  app.post('/v1/tenants/:tenantId/channels/:channelId/rotate-secret', {
    schema: { params: TenantChannelParams, body: RotateSecretBody, response: { 200: ChannelSecretResponse } },
    // The new secret, shown once: a retry with the Idempotency-Key gets it again, stored sealed (decision 0175).
    config: { objectName: 'rotateSecretRequest', idempotency: 'sealed', audit: { action: 'channel.rotate-secret', target: { tenantId: 'params.tenantId', channelId: 'params.channelId' } } },
    handler: async (request) =>
      envelope(await services.channels.rotateSecret((await tenantOr404(request.params.tenantId)).id, request.params.channelId, request.body?.overlapSeconds)),
  });

  app.post('/v1/tenants/:tenantId/channels/:channelId/replay', {
    schema: { params: TenantChannelParams, body: ReplayBody, response: { 200: ReplayResponse } },
    config: { objectName: 'replayRequest', audit: { action: 'channel.replay', target: { tenantId: 'params.tenantId', channelId: 'params.channelId' } } },
    handler: async (request) => {
      const from = new Date(request.body.from);
      const to = new Date(request.body.to);
      if (!(from < to)) throw Errors.validation([{ field: 'to', message: 'Invalid', objectName: 'replayRequest' }]);
      const requeued = await services.deliveries.replay((await tenantOr404(request.params.tenantId)).id, request.params.channelId, from, to);
      return envelope({ message: `${requeued} event(s) queued again`, requeued });
    },
  });

  // ── Audit: a trail, filtered, and whether its chain verifies ──────────────────────────────────────

  app.get('/v1/tenants/:tenantId/audit', {
    schema: { params: TrailParams, querystring: AuditQuery, response: { 200: AuditPage } },
    config: { objectName: 'auditQuery', audit: { action: 'audit.read', target: { tenantId: 'params.tenantId' } } },
    handler: async (request) => {
      const q = request.query;
      const limit = q.limit === undefined ? AUDIT_PAGE_DEFAULT : Number(q.limit);
      const errors = [];
      if (limit < 1) errors.push({ field: 'limit', message: 'Min', objectName: 'auditQuery' });
      else if (limit > 500) errors.push({ field: 'limit', message: 'Max', objectName: 'auditQuery' });
      if (q.cursor !== undefined && decodeCursor(q.cursor) === null) errors.push({ field: 'cursor', message: 'Invalid', objectName: 'auditQuery' });
      if (q.from !== undefined && q.to !== undefined && Date.parse(q.to) <= Date.parse(q.from)) errors.push({ field: 'to', message: 'Invalid', objectName: 'auditQuery' });
      if (errors.length) throw Errors.validation(errors);
      const { records, next } = await services.auditLog.page(await trailOf(request.params.tenantId), { ...q, limit });
      return { result: records, pagination: { next, limit } };
    },
  });

  app.get('/v1/tenants/:tenantId/audit/verify', {
    schema: { params: TrailParams, response: { 200: VerifyResponse } },
    config: { audit: { action: 'audit.verify', target: { tenantId: 'params.tenantId' } } },
    handler: async (request) => envelope(await verifyChain(services.db, await trailOf(request.params.tenantId))),
  });

  // ── Cores and figures for the whole gateway process ───────────────────────────────────────────────

  const CoreState = Type.Object({
    tenantId: Type.String(),
    connector: Type.String(),
    connectorId: Type.String(),
    breaker: Type.Union([Type.Literal('closed'), Type.Literal('half-open'), Type.Literal('open'), Type.Null()]),
    recent: Type.Object({ windowSeconds: Type.Integer(), calls: Type.Integer(), failures: Type.Integer(), errorRate: Type.Number(), latencyMs: Type.Object({ avg: Type.Number(), max: Type.Number() }) }),
  });
  app.get('/v1/console/cores', {
    schema: { response: { 200: Type.Object({ result: Type.Array(CoreState), pagination: Type.Null() }) } },
    config: { audit: { action: 'console.cores' } },
    // Every started core of this process: its breaker and its last five minutes (what marks a failing core).
    handler: async () =>
      envelope(
        [...services.connectors.started()]
          .map(({ tenantId, name, connectorId, connector }) => ({
            tenantId,
            connector: name,
            connectorId,
            breaker: connector.breakerState?.() ?? null,
            recent: services.core.health.window(tenantId, name),
          }))
          .sort((a, b) => (a.tenantId === b.tenantId ? (a.connector < b.connector ? -1 : 1) : a.tenantId < b.tenantId ? -1 : 1)),
      ),
  });

  app.get('/v1/tenants/:tenantId/shadow', {
    schema: { params: TenantIdParams, response: { 200: ShadowSummaryResponse } },
    config: { audit: { action: 'shadow.summary', target: { tenantId: 'params.tenantId' } } },
    // Per shadowed operation: calls by outcome and the match rate (as its Admin reads GET /v1/admin/shadow/summary).
    handler: async (request) => envelope(await services.shadow.summary((await tenantOr404(request.params.tenantId)).id)),
  });

  // ── Lookup: a customer or a card of a tenant, from its core, masked as the public API shows them ───

  const coreCtx = (request: FastifyRequest) => ({ requestId: request.id, logger: request.log });
  const RECENT_TRANSACTIONS = 10;
  const LookupResponse = Type.Object({ result: Type.Record(Type.String(), Type.Unknown()), pagination: Type.Null() });

  app.get('/v1/tenants/:tenantId/customers/:entityId', {
    schema: { params: Type.Object({ tenantId: TenantIdParams.properties.tenantId, entityId: EntityIdParams.properties.entityId }, { additionalProperties: false }), response: { 200: LookupResponse } },
    config: { audit: { action: 'console.customer-lookup', target: { tenantId: 'params.tenantId', entityId: 'params.entityId' } } },
    handler: async (request) => {
      const tenant = await tenantOr404(request.params.tenantId);
      const { entityId } = request.params;
      const entity = await services.core.invoke(tenant, 'getEntity', { entityId }, coreCtx(request));
      const cards = await services.core.invoke(tenant, 'listCards', { entityId }, coreCtx(request));
      const page = await services.core.invoke(tenant, 'listTransactions', { entityId, limit: RECENT_TRANSACTIONS }, coreCtx(request));
      // No sealed block: contact details stay masked, and no card number appears but masked.
      return envelope({ entity: toEntityView(entity, undefined), cards: cards.map(toCardView), transactions: page.transactions.map(toTransactionView) });
    },
  });

  app.get('/v1/tenants/:tenantId/cards/:cardId', {
    schema: { params: Type.Object({ tenantId: TenantIdParams.properties.tenantId, cardId: CardIdParams.properties.cardId }, { additionalProperties: false }), response: { 200: LookupResponse } },
    config: { audit: { action: 'console.card-lookup', target: { tenantId: 'params.tenantId', cardId: 'params.cardId' } } },
    handler: async (request) => {
      const tenant = await tenantOr404(request.params.tenantId);
      const card = await services.core.invoke(tenant, 'getCard', { cardId: request.params.cardId }, coreCtx(request));
      const page = await services.core.invoke(tenant, 'listTransactions', { entityId: card.entityId, cardId: card.cardId, limit: RECENT_TRANSACTIONS }, coreCtx(request));
      return envelope({ card: toCardDetailsView(card), transactions: page.transactions.map(toTransactionView) });
    },
  });

  // What the tenant form offers and checks before it sends: each built-in connector's options schema, and a
  // check of options against it (the connector's own validation, the one tenant creation applies).
  app.get('/v1/console/connectors', {
    schema: { response: { 200: Type.Object({ result: Type.Array(Type.Object({ id: Type.String(), optionsSchema: Type.Unknown() })), pagination: Type.Null() }) } },
    handler: async () =>
      envelope(services.connectorRegistry.ids().sort().map((id) => ({ id, optionsSchema: services.connectorRegistry.definition(id)?.optionsSchema ?? null }))),
  });

  app.post('/v1/console/connectors/check', {
    schema: {
      body: Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }), options: Type.Optional(Type.Unknown()) }, { additionalProperties: false }),
      response: { 200: Type.Object({ result: Type.Object({ ok: Type.Boolean(), problem: Type.Union([Type.String(), Type.Null()]) }), pagination: Type.Null() }) },
    },
    config: { objectName: 'connectorCheckRequest', idempotency: false },
    handler: async (request) => {
      try {
        services.connectorRegistry.validate('(new tenant)', request.body.id, request.body.options ?? {});
        return envelope({ ok: true, problem: null });
      } catch (err) {
        return envelope({ ok: false, problem: reasonOf(err) });
      }
    },
  });

  app.get('/v1/console/figures', {
    schema: { response: { 200: Type.Object({ result: Figures, pagination: Type.Null() }) } },
    // Counters since the process started; the page turns two readings into rates and percentiles.
    handler: async () => envelope(await requestFigures(services.metrics)),
  });
};

export default consoleRoutes;
