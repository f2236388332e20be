// Idempotency-Key on every mutating route: a duplicate gets the first response back instead of a second
// application. Runs after validation (the fingerprint is of the validated body) and before the handler; the
// hold is kept in the request's context, and the key is settled (response stored, or released) by the
// recorder, in the statement of the request's record, when the answering step calls it.
import fp from 'fastify-plugin';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { Errors } from '../errors.js';
import { IDEMPOTENCY_KEY_PATTERN, fingerprintOf, scopeHash } from '../services/infrastructure/idempotency.js';
import { declareErrors, errorCase, isWrite, settle, takesBody } from '../step-errors.js';
import type { Operation } from '../operations/define.js';
import { inStep } from './tracing.js';

/** Whether an operation takes an Idempotency-Key: every write that has a caller (a token or an operator key). */
export const takesIdempotencyKey = (op: Operation): boolean => takesBody(op) && op.idempotent !== false && op.access !== 'public';

/** What this step answers: on every operation that takes an Idempotency-Key. */
export const idempotencyErrors = declareErrors('idempotency', (op) =>
  takesIdempotencyKey(op)
    ? [
        errorCase('idempotency-key-invalid', 'The Idempotency-Key header is malformed', Errors.idempotencyKeyInvalid()),
        errorCase('idempotency-key-reused', 'The Idempotency-Key was used for another request', Errors.idempotencyKeyReused()),
        errorCase('idempotency-in-flight', "The Idempotency-Key's first request is still running", Errors.idempotencyInFlight()),
      ]
    : [],
);

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
  const { tenant, principal } = request.ctx;
  if (request.routeOptions.config.auth === false || tenant === null) return null;
  return { tenantId: tenant.id, caller: principal?.sub ?? '' };
}

const idempotencyPlugin: FastifyPluginAsync<IdempotencyOptions> = async (app, opts) => {
  const store = app.cardline.idempotency;
  const ownerOf = opts.owner ?? tenantOwner;

  /** The stored answer, sent again: recorded first (a replay, changing nothing), like every answer. */
  const replay = async (request: FastifyRequest, reply: FastifyReply, status: number, contentType: string | null, body: string, location?: string | null): Promise<FastifyReply> => {
    reply.code(status).header('idempotent-replayed', 'true');
    if (contentType) reply.header('content-type', contentType);
    if (location) reply.header('location', location);
    await app.recorder.record(request, reply, body);
    return reply.send(body);
  };

  // Without a key there is nothing to wait for: the hook takes `done` and goes async only to claim one.
  app.addHook('preHandler', (request, reply, done) => {
    const config = request.routeOptions.config;
    if (!isWrite(request.method) || config.idempotency === false || request.is404) return done();
    const owner = ownerOf(request);
    if (!owner) return done();
    const header = request.headers['idempotency-key'];
    if (header === undefined) return done();
    settle(claimKey(request, reply, owner, header), done);
  });

  const claimKey = async (request: FastifyRequest, reply: FastifyReply, owner: KeyOwner, header: string | string[]): Promise<unknown> => {
    const config = request.routeOptions.config;
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
    const claim = await inStep(request, 'idempotency', () => store.claim(owner.tenantId, scope, fingerprint, request.ctx.trace?.step));
    // Field by field, not a spread followed by more fields (decision 0422).
    switch (claim.kind) {
      case 'owner':
        request.ctx.idempotency = { key: header, tenantId: owner.tenantId, scope, sealed, connectorKey: claim.connectorKey, token: claim.token, replayed: false };
        return;
      case 'replay':
        request.ctx.idempotency = { key: header, tenantId: owner.tenantId, scope, sealed, connectorKey: null, token: null, replayed: true };
        request.log.info({ status: claim.response.status }, 'idempotent replay');
        return replay(request, reply, claim.response.status, claim.response.contentType, claim.response.body, claim.response.location);
      case 'mismatch':
        throw Errors.idempotencyKeyReused();
      case 'in_flight':
        throw Errors.idempotencyInFlight();
    }
  };
};

// Registered after validation (the management listener validates before any preHandler).
export default fp(idempotencyPlugin, { name: 'idempotency', dependencies: ['request-context', 'errors', 'audit'], decorators: { fastify: ['cardline'] } });
