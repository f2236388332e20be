// Bearer-token authentication and the role table, enforced in one place from each route's config.
import fp from 'fastify-plugin';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { Errors } from '../errors.js';
import { rolesOf } from '../operations/access.js';
import { TokenError } from '../services/identity/tokens.js';
import { declareErrors, errorCase } from '../step-errors.js';
import { inStep } from './tracing.js';

/** What this step answers: on every public-API operation that needs a token. */
export const authErrors = declareErrors('auth', (op) => {
  if (op.access === 'public' || op.access === 'operator') return [];
  const roles = rolesOf(op.access) ?? [];
  const outsider = (['Read-Only', 'API Integration', 'Operations'] as const).find((r) => !roles.includes(r));
  return [
    errorCase('unauthorized', 'No valid token for this tenant', Errors.unauthorized()),
    ...(outsider ? [errorCase(`forbidden-${outsider.toLowerCase().replace(' ', '-')}`, "The token's role may not call this operation", Errors.forbidden(outsider))] : []),
  ];
});

const BEARER = /^Bearer ([\w-]+\.[\w-]+\.[\w-]*)$/i;
/** The Bearer scheme with something after it: a token, however malformed. */
const BEARER_SCHEME = /^Bearer\s+\S/i;

const authPlugin: FastifyPluginAsync = async (app) => {
  // A route that forgets to declare who may call it does not start: no route is open by accident.
  app.addHook('onRoute', (route) => {
    const config = route.config ?? {};
    if (config.auth !== false && !config.roles?.length) {
      throw new Error(`Route ${route.method} ${route.url} declares neither roles nor auth: false`);
    }
  });

  app.addHook('onRequest', async (request) => {
    const config = request.routeOptions.config;
    if (request.is404 || config.auth === false) return;
    return inStep(request, 'auth', () => authenticate(request));
  });

  const authenticate = async (request: FastifyRequest): Promise<void> => {
    const config = request.routeOptions.config;
    const ctx = request.ctx;
    const tenant = ctx.tenant;
    if (!tenant) throw Errors.tenantHeaderMissing();
    const authorization = request.headers.authorization ?? '';
    const match = BEARER.exec(authorization);
    // No bearer token at all (no header, another scheme, an empty one) is not a refused token (RFC 6750 §3.1).
    if (!match) throw Errors.unauthorized(BEARER_SCHEME.test(authorization) ? 'invalid' : 'missing');
    let principal;
    try {
      principal = await app.cardline.tokens.verify(match[1]!, tenant.id, ctx.trace?.step);
    } catch (err) {
      if (err instanceof TokenError) {
        request.log.info({ reason: err.reason }, 'token refused');
        throw Errors.unauthorized(err.reason === 'expired' ? 'expired' : 'invalid');
      }
      throw err;
    }
    ctx.principal = principal;
    if (!config.roles!.includes(principal.role)) throw Errors.forbidden(principal.role);
  };
};

export default fp(authPlugin, { name: 'auth', dependencies: ['tenant'] });
