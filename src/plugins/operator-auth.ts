// The management listener's authentication step: an operator key is that listener's principal, checked
// before anything else (a tenant's token is never one). Then, for a route whose operation names its tenant in
// the path (`tenantParam`), the tenant that path names: found whatever its status (an operator enables a
// disabled one), 404 when there is none. The decrypt step opens password fields to that tenant's key.
import fp from 'fastify-plugin';
import type { FastifyPluginAsync } from 'fastify';
import { Errors } from '../errors.js';
import type { Operator } from '../services/operator-keys.js';
import { isTenantId } from '../services/tenants.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The operator whose key authenticated the request (management listener). */
    operator: Operator | null;
  }
  interface FastifyContextConfig {
    /** false: no operator key needed (the management listener's probe and metrics, its documents). */
    operator?: false;
  }
}

const BEARER = /^Bearer (\S{1,512})$/;

const operatorAuthPlugin: FastifyPluginAsync = async (app) => {
  app.decorateRequest('operator', null);
  // The tenant step of the public listener is not registered here: the request's tenant is the path's.
  if (!app.hasRequestDecorator('tenant')) app.decorateRequest('tenant', null);

  app.addHook('onRequest', async (request) => {
    const config = request.routeOptions.config;
    if (request.is404 || config.operator === false) return;
    const match = BEARER.exec(request.headers.authorization ?? '');
    const operator = match ? await app.cardline.operatorKeys.verify(match[1]!) : null;
    if (!operator) {
      request.log.info('operator key refused');
      throw Errors.operatorUnauthorized();
    }
    request.operator = operator;

    if (!config.tenantParam) return;
    const tenantId = (request.params as Record<string, unknown>)[config.tenantParam];
    // Not a tenant id at all: the parameter's schema answers (400 with the field).
    if (typeof tenantId !== 'string' || !isTenantId(tenantId)) return;
    const tenant = await app.cardline.tenants.get(tenantId);
    if (!tenant) throw Errors.tenantNotFound(tenantId);
    request.tenant = tenant;
  });
};

export default fp(operatorAuthPlugin, { name: 'operator-auth', dependencies: ['errors'], decorators: { fastify: ['cardline'] } });
