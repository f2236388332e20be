// Idempotency-Key on every mutating route: a duplicate gets the first response back instead of a second
// application. Runs after validation (the fingerprint is of the validated body) and before the handler; the
// key is settled (response stored, or released) by the audit step, in the statement of the request's record.
import fp from 'fastify-plugin';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { Errors } from '../errors.js';
import { IDEMPOTENCY_KEY_PATTERN, IdempotencyStore, fingerprintOf, scopeHash } from '../services/idempotency.js';

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** An in-flight claim older than this is taken over; never shorter than twice a connector call's deadline. */
const MIN_LEASE_SECONDS = 60;

/** A request's hold on its Idempotency-Key; null when it sent none or the route does not take one. */
interface IdempotencyState {
  /** The key the client sent. */
  key: string;
  scope: string;
  /**
   * The idempotency key handed to the connector (`ctx.idempotencyKey`): not the client's key but one the gateway
   * derives per tenant, caller, route and key (and renews when the key expires), so that two callers choosing
   * the same key never share an outcome in the core, while a retry after a 5xx reaches the core with the key
   * of the attempt it repeats.
   */
  connectorKey: string | null;
  /** Set while this request holds the key; the audit step settles it with the request's record. */
  token: string | null;
  /** The response is a stored one, answered again. */
  replayed: boolean;
}

declare module 'fastify' {
  interface FastifyInstance {
    idempotency: IdempotencyStore;
  }
  interface FastifyRequest {
    idempotency: IdempotencyState | null;
  }
}

/** Whether the route honours Idempotency-Key: mutating, with a caller to scope the key to, not opted out. */
function applies(request: FastifyRequest): boolean {
  const config = request.routeOptions.config;
  return MUTATING.has(request.method) && config.auth !== false && config.idempotency !== false && !request.is404 && request.tenant !== null;
}

async function replay(reply: FastifyReply, status: number, contentType: string | null, body: string): Promise<FastifyReply> {
  reply.code(status).header('idempotent-replayed', 'true');
  if (contentType) reply.header('content-type', contentType);
  return reply.send(body);
}

const idempotencyPlugin: FastifyPluginAsync = async (app) => {
  const { config, db } = app.cardline;
  const store = new IdempotencyStore(db, {
    ttlHours: config.idempotencyTtlHours,
    leaseSeconds: Math.max(MIN_LEASE_SECONDS, Math.ceil((2 * config.connectorTimeoutMs) / 1000)),
  });
  app.decorate('idempotency', store);
  app.decorateRequest('idempotency', null);
  app.addHook('onClose', async () => store.stop());

  app.addHook('preHandler', async (request, reply) => {
    if (!applies(request)) return;
    const header = request.headers['idempotency-key'];
    if (header === undefined) return;
    if (typeof header !== 'string' || !IDEMPOTENCY_KEY_PATTERN.test(header)) throw Errors.idempotencyKeyInvalid();
    const tenant = request.tenant!;
    const scope = scopeHash({
      tenantId: tenant.id,
      caller: request.principal?.sub ?? '',
      method: request.method,
      route: request.routeOptions.url ?? request.url,
      params: request.params,
      key: header,
    });
    const claim = await store.claim(tenant.id, scope, fingerprintOf(request.body, request.params));
    switch (claim.kind) {
      case 'owner':
        request.idempotency = { key: header, scope, connectorKey: claim.connectorKey, token: claim.token, replayed: false };
        return;
      case 'replay':
        request.idempotency = { key: header, scope, connectorKey: null, token: null, replayed: true };
        request.log.info({ status: claim.response.status }, 'idempotent replay');
        return replay(reply, claim.response.status, claim.response.contentType, claim.response.body);
      case 'mismatch':
        throw Errors.idempotencyKeyReused();
      case 'in_flight':
        throw Errors.idempotencyInFlight();
    }
  });
};

export default fp(idempotencyPlugin, { name: 'idempotency', dependencies: ['services', 'validate'] });
