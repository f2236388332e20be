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
  result: Type.Object({
    ok: Type.Boolean(),
    records: Type.Integer(),
    head: Type.Optional(Type.String()),
    seq: Type.Optional(Type.Integer()),
    reason: Type.Optional(Type.String()),
    detail: Type.Optional(Type.String()),
  }),
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
};

export default consoleRoutes;
