// Resolves the request's tenant from TENANT / X-TENANT-ID (DESIGN §3) before anything else runs.
import fp from 'fastify-plugin';
import type { FastifyPluginAsync } from 'fastify';
import { Errors } from '../errors.js';
import { TenantConfigError, type Tenant } from '../services/tenants.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The tenant the request's header names; null on routes that take no tenant (health, documents). */
    tenant: Tenant | null;
  }
}

const headerValue = (v: string | string[] | undefined): string | undefined => {
  if (Array.isArray(v)) return v.length === 1 ? v[0] : '';
  return v;
};

const tenantPlugin: FastifyPluginAsync = async (app) => {
  app.decorateRequest('tenant', null);
  app.addHook('onRequest', async (request) => {
    if (request.is404 || request.routeOptions.config.tenant === false) return;
    const a = headerValue(request.headers['tenant'])?.trim();
    const b = headerValue(request.headers['x-tenant-id'])?.trim();
    if (a && b && a !== b) throw Errors.tenantHeaderConflict();
    const id = a || b;
    if (!id) throw Errors.tenantHeaderMissing();
    let tenant;
    try {
      tenant = await app.cardline.tenants.get(id);
    } catch (err) {
      if (!(err instanceof TenantConfigError)) throw err;
      request.log.error({ tenant: id, reason: err.message }, 'tenant configuration is invalid');
      throw Errors.unavailable(`The configuration of tenant '${id}' is invalid; an operator must correct it.`);
    }
    // A disabled tenant answers as an unknown one: an outsider learns nothing of which tenants exist.
    if (!tenant || tenant.status !== 'active') throw Errors.tenantUnknown();
    request.tenant = tenant;
  });
};

export default fp(tenantPlugin, { name: 'tenant', dependencies: ['services', 'errors'] });
