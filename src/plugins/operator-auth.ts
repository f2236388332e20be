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

import { declareErrors, errorCase, isManagement } from '../step-errors.js';

/** What this step answers: on every management operation (the probe, the metrics and the documents are not operations). */
export const operatorAuthErrors = declareErrors('operator-auth', (op) =>
  isManagement(op) ? [errorCase('operator-unauthorized', 'No operator key, or an unknown or revoked one (a tenant token is never one)', Errors.operatorUnauthorized())] : [],
);

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
    } else {
      operator = match ? await app.cardline.operatorKeys.verify(match[1]!) : ((await opts.session?.(request)) ?? null);
    }
    if (!operator) {
      request.log.info('operator key refused');
      throw Errors.operatorUnauthorized();
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
