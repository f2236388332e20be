// The management listener's authentication step: an operator key is that listener's principal, checked
// before anything else (a tenant's token is never one). Then, for a route whose operation names its tenant in
// the path (`tenantParam`), the tenant that path names: found whatever its status (an operator enables a
// disabled one), 404 when there is none. The decrypt step opens password fields to that tenant's key.
import { createHash, timingSafeEqual } from 'node:crypto';
import fp from 'fastify-plugin';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { Errors } from '../errors.js';
import type { Operator } from '../services/identity/operator-keys.js';
import { isTenantId } from '../services/tenancy/tenants.js';
import type { Services } from '../services/index.js';

import { declareErrors, errorCase, isManagement } from '../step-errors.js';

/** What this step answers: on every management operation (the probe, the metrics and the documents are not operations). */
export const operatorAuthErrors = declareErrors('operator-auth', (op) =>
  isManagement(op)
    ? [
        errorCase('operator-unauthorized', 'No operator key, or an unknown or revoked one (a tenant token is never one)', Errors.operatorUnauthorized()),
        errorCase('operator-throttled', 'Too many wrong operator keys from this address (or from many)', Errors.operatorThrottled(42, 'address')),
      ]
    : [],
);

/** A plain host (name or address, and port) as the caller sent it; anything else is not echoed back. */
const PLAIN_HOST = /^(?:[A-Za-z0-9.-]{1,253}|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$/;

/** This listener as the caller reached it: where the CLI's --admin-url points. */
const listenerUrl = (request: FastifyRequest): string | undefined =>
  PLAIN_HOST.test(request.host) ? `${request.protocol}://${request.host}` : undefined;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** false: no operator key needed (the management listener's probe and metrics, its documents). */
    operator?: false;
  }
}

const BEARER = /^Bearer (\S{1,512})$/;

interface OperatorAuthOptions {
  /** Without a key: the operator of another credential (the console's session), or null; may throw its own refusal. */
  session?: (request: FastifyRequest) => Promise<Operator | null>;
  /**
   * The CLI's in-process principal (decision 0198): honoured only while the app is not listening,
   * so no network request can present it.
   */
  inProcess?: { secret: string; operator: Operator };
}

/** The header carrying the CLI's per-process secret on an injected request (never honoured from a socket). */
export const IN_PROCESS_HEADER = 'x-cardline-in-process';

/** Checks a presented operator key unless its address is throttled (429 unchecked); a wrong one is counted. */
export async function throttledCheck<T>(services: Services, request: FastifyRequest, check: () => Promise<T | null>): Promise<T | null> {
  const throttle = services.operatorKeyThrottle;
  const refused = await throttle.refusal(request.ip);
  if (refused) throw Errors.operatorThrottled(refused.retryAfterSeconds, refused.scope);
  const found = await check();
  if (found === null) await throttle.failed({ address: request.ip, method: request.method, route: request.routeOptions.url ?? request.url, requestId: String(request.id) });
  return found;
}

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();

const operatorAuthPlugin: FastifyPluginAsync<OperatorAuthOptions> = async (app, opts) => {
  // The tenant step of the public listener is not registered here: the request's tenant is the path's.
  app.addHook('onRequest', async (request) => {
    const config = request.routeOptions.config;
    if (request.is404 || config.operator === false) return;
    const ctx = request.ctx;
    const match = BEARER.exec(request.headers.authorization ?? '');
    const inProcess = request.headers[IN_PROCESS_HEADER];
    let operator: Operator | null;
    if (inProcess !== undefined) {
      // Only an injected request of the CLI's own app; a listening app refuses it like a wrong key.
      const given = opts.inProcess && !app.server.listening && typeof inProcess === 'string' ? inProcess : null;
      operator = given !== null && timingSafeEqual(digest(given), digest(opts.inProcess!.secret)) ? opts.inProcess!.operator : null;
      ctx.inProcess = operator !== null;
    } else if (match) {
      operator = await throttledCheck(app.cardline, request, () => app.cardline.operatorKeys.verify(match[1]!));
    } else {
      operator = (await opts.session?.(request)) ?? null;
    }
    if (!operator) {
      request.log.info('operator key refused');
      throw Errors.operatorUnauthorized(listenerUrl(request));
    }
    ctx.operator = operator;

    if (!config.tenantParam) return;
    const tenantId = (request.params as Record<string, unknown>)[config.tenantParam];
    // Not a tenant id at all: the parameter's schema answers (400 with the field).
    if (typeof tenantId !== 'string' || !isTenantId(tenantId)) return;
    const tenant = await app.cardline.tenants.get(tenantId);
    if (!tenant) throw Errors.tenantNotFound(tenantId);
    ctx.tenant = tenant;
  });
};

export default fp(operatorAuthPlugin, { name: 'operator-auth', dependencies: ['request-context', 'errors'], decorators: { fastify: ['cardline'] } });
