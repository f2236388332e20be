// Resolves the request's tenant from TENANT / X-TENANT-ID (DESIGN §3) before anything else runs.
import fp from 'fastify-plugin';
import type { FastifyPluginAsync } from 'fastify';
import { Errors } from '../errors.js';
import { TenantConfigError } from '../services/tenancy/tenants.js';
import { declareErrors, errorCase, isManagement } from '../step-errors.js';

/** What this step answers, on every public operation (the management listener's tenant is its path's). */
export const tenantErrors = declareErrors('tenant', (op) =>
  isManagement(op)
    ? []
    : [
        errorCase('tenant-header', 'The tenant header is missing, unknown or names a disabled tenant', Errors.tenantHeaderMissing()),
        errorCase('tenant-header-conflict', 'TENANT and X-TENANT-ID name different tenants', Errors.tenantHeaderConflict()),
      ],
);

/** The tenant's configuration cannot be used: listed after the operation's own answers in the document. */
export const tenantConfigErrors = declareErrors('tenant', (op) =>
  isManagement(op) ? [] : [errorCase('tenant-invalid', "The tenant's configuration is invalid", Errors.unavailable("The configuration of tenant 'demo' is invalid; an operator must correct it."))],
);

const headerValue = (v: string | string[] | undefined): string | undefined => {
  if (Array.isArray(v)) return v.length === 1 ? v[0] : '';
  return v;
};

const tenantPlugin: FastifyPluginAsync = async (app) => {
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
    request.ctx.tenant = tenant;
  });
};

export default fp(tenantPlugin, { name: 'tenant', dependencies: ['request-context', 'services', 'errors'] });
