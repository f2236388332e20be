// Idempotency-Key on every mutating route: a duplicate gets the first response back instead of a second
// application. Runs after validation (the fingerprint is of the validated body) and before the handler; the
// key is settled (response stored, or released) by the audit step, in the statement of the request's record.
import fp from 'fastify-plugin';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { Errors } from '../errors.js';
import { IDEMPOTENCY_KEY_PATTERN, fingerprintOf, scopeHash, type IdempotencyStore } from '../services/idempotency.js';

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** A request's hold on its Idempotency-Key; null when it sent none or the route does not take one. */
interface IdempotencyState {
  /** The key the client sent. */
  key: string;
  /** The tenant the key's row belongs to (the operators' keys: the platform's). */
  tenantId: string;
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
  /** The answer is stored sealed (the route's `idempotency: 'sealed'`). */
  sealed: boolean;
}

declare module 'fastify' {
  interface FastifyInstance {
    idempotency: IdempotencyStore;
  }
  interface FastifyRequest {
    idempotency: IdempotencyState | null;
  }
}

/** Whose key a request's Idempotency-Key is: the row's tenant and the caller; null when there is no caller. */
interface KeyOwner {
  tenantId: string;
  caller: string;
}

interface IdempotencyOptions {
  /** The owner of a request's key; defaults to the public API's: its tenant and the token's user. */
  owner?: (request: FastifyRequest) => KeyOwner | null;
}

/** The public API: a tenant's route with a token (a route without a caller, auth: false, never takes a key). */
function tenantOwner(request: FastifyRequest): KeyOwner | null {
  if (request.routeOptions.config.auth === false || request.tenant === null) return null;
  return { tenantId: request.tenant.id, caller: request.principal?.sub ?? '' };
}

async function replay(reply: FastifyReply, status: number, contentType: string | null, body: string): Promise<FastifyReply> {
  reply.code(status).header('idempotent-replayed', 'true');
  if (contentType) reply.header('content-type', contentType);
  return reply.send(body);
}

const idempotencyPlugin: FastifyPluginAsync<IdempotencyOptions> = async (app, opts) => {
  const store = app.cardline.idempotency;
  const ownerOf = opts.owner ?? tenantOwner;
  if (!app.hasDecorator('idempotency')) app.decorate('idempotency', store);
  app.decorateRequest('idempotency', null);

  app.addHook('preHandler', async (request, reply) => {
    const config = request.routeOptions.config;
    if (!MUTATING.has(request.method) || config.idempotency === false || request.is404) return;
    const owner = ownerOf(request);
    if (!owner) return;
    const header = request.headers['idempotency-key'];
    if (header === undefined) return;
    if (typeof header !== 'string' || !IDEMPOTENCY_KEY_PATTERN.test(header)) throw Errors.idempotencyKeyInvalid();
    const sealed = config.idempotency === 'sealed';
    const scope = scopeHash({
      tenantId: owner.tenantId,
      caller: owner.caller,
      method: request.method,
      route: request.routeOptions.url ?? request.url,
      params: request.params,
      key: header,
    });
    // A body holding a secret is fingerprinted under the gateway's key, never as a plain digest (decision 0175).
    const fingerprint = sealed ? store.secretFingerprint(request.body, request.params) : fingerprintOf(request.body, request.params);
    const claim = await store.claim(owner.tenantId, scope, fingerprint);
    const held = { key: header, tenantId: owner.tenantId, scope, sealed };
    switch (claim.kind) {
      case 'owner':
        request.idempotency = { ...held, connectorKey: claim.connectorKey, token: claim.token, replayed: false };
        return;
      case 'replay':
        request.idempotency = { ...held, connectorKey: null, token: null, replayed: true };
        request.log.info({ status: claim.response.status }, 'idempotent replay');
        return replay(reply, claim.response.status, claim.response.contentType, claim.response.body);
      case 'mismatch':
        throw Errors.idempotencyKeyReused();
      case 'in_flight':
        throw Errors.idempotencyInFlight();
    }
  });
};

// Registered after validation (the public API's validate plugin; the management listener validates with
// Fastify's own schemas, before any preHandler), over the services' store.
export default fp(idempotencyPlugin, { name: 'idempotency', dependencies: ['errors'], decorators: { fastify: ['cardline'] } });
