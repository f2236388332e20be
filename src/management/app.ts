// The management listener (CARDLINE_ADMIN_HOST:CARDLINE_ADMIN_PORT, loopback by default): the platform
// operator's API — tenants, their first users, operator keys — authenticated by operator keys, never by a
// tenant's token. Its own Fastify instance over the gateway's services; problem dialect; every call audited.
import type { Server } from 'node:http';
import Fastify, { type FastifyInstance, type FastifyPluginAsync, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import fp from 'fastify-plugin';
import { securityHeaders, serverOptions } from '../app.js';
import type { Config } from '../config.js';
import { Errors } from '../errors.js';
import audit, { stringAt, type AuditSubject } from '../plugins/audit.js';
import errors from '../plugins/errors.js';
import idempotency from '../plugins/idempotency.js';
import routeIndex from '../plugins/route-index.js';
import type { Services } from '../plugins/services.js';
import strictJson from '../plugins/strict-json.js';
import type { AuditSpec } from '../route-config.js';
import type { Operator } from '../services/operator-keys.js';
import { PLATFORM_TENANT, isTenantId } from '../services/tenants.js';
import managementRoutes from './routes.js';
import { consoleOperator } from '../console/auth.js';
import consoleRoutes from '../console/routes.js';
import { ConsoleSessions } from '../console/sessions.js';


declare module 'fastify' {
  interface FastifyRequest {
    /** The operator whose key authenticated the request (management listener). */
    operator: Operator | null;
  }
  interface FastifyInstance {
    /** The operations console's sessions (src/console): a session counts as its operator key. */
    consoleSessions: ConsoleSessions;
  }
  interface FastifyContextConfig {
    /** false: no operator key needed (the management listener's liveness probe). */
    operator?: false;
  }
}

const BEARER = /^Bearer (\S{1,512})$/;

/** Operator keys, checked before anything else; a tenant's token is never one. */
const operatorAuth = fp(
  async (app) => {
    app.decorateRequest('operator', null);
    app.decorateRequest('consoleSession', null);
    app.addHook('onRequest', async (request) => {
      if (request.is404 || request.routeOptions.config.operator === false) return;
      const match = BEARER.exec(request.headers.authorization ?? '');
      // Without a key, the operations console's session cookie (with its CSRF token on a change).
      const operator = match ? await app.cardline.operatorKeys.verify(match[1]!) : await consoleOperator(app.consoleSessions, request);
      if (!operator) {
        request.log.info('operator key refused');
        throw Errors.operatorUnauthorized();
      }
      request.operator = operator;
    });
  },
  { name: 'operator-auth', dependencies: ['errors'] },
);

export interface ManagementOptions {
  services: Services;
  config: Config;
}

const managementApp: FastifyPluginAsync<ManagementOptions> = async (app, opts) => {
  app.decorate('cardline', opts.services);
  app.removeContentTypeParser('text/plain');
  await app.register(securityHeaders);
  // Before any route: 405 with Allow for a known path called with another method, as on the public listener.
  await app.register(routeIndex);
  await app.register(errors, { problemBaseUrl: opts.config.problemBaseUrl });
  await app.register(strictJson);
  app.decorate('consoleSessions', new ConsoleSessions(opts.services.db, opts.services.operatorKeys, opts.config.consoleIdleMinutes));
  await app.register(operatorAuth);
  // An operator's action joins the trail of the tenant it concerns (its Admins read it in GET /v1/audit);
  // anything else, the platform's own chain.
  const subject = async (request: FastifyRequest, _spec: AuditSpec): Promise<AuditSubject> => {
    const named = stringAt(request, 'params.tenantId') ?? stringAt(request, 'body.id');
    const tenant = named && isTenantId(named) ? await opts.services.tenants.get(named) : null;
    return { tenantId: tenant?.id ?? PLATFORM_TENANT, actor: request.operator?.name ?? null, role: request.operator ? 'Operator' : null };
  };
  // Every write takes Idempotency-Key, as on the public API: an operator's keys are the platform's, scoped to
  // the operator (Fastify has validated the body before this preHandler runs).
  await app.register(idempotency, {
    owner: (request) => (request.operator ? { tenantId: PLATFORM_TENANT, caller: `operator:${request.operator.name}` } : null),
  });
  // An operator's change to a tenant carries its security event, committed with the audit record (src/management/routes.ts).
  app.decorateRequest('outcome', null);
  await app.register(audit, { subject });
  app.addHook('onResponse', async (request, reply) => {
    request.log.info(
      { method: request.method, route: request.routeOptions.url, status: reply.statusCode, ms: Math.round(reply.elapsedTime), operator: request.operator?.name },
      'management request completed',
    );
  });
  await app.register(managementRoutes);
  await app.register(consoleRoutes, { sessions: app.consoleSessions });
};

export const managementPlugin = fp(managementApp, { name: 'cardline-management' });

export interface BuildManagementOptions extends ManagementOptions {
  logger?: FastifyServerOptions['loggerInstance'];
}

/** A ready management app over a gateway's services: used by server.ts, the tests and the CLI's tests. */
export async function buildManagementApp(opts: BuildManagementOptions): Promise<FastifyInstance<Server>> {
  const app = Fastify(serverOptions(opts.config, opts.logger));
  await app.register(managementPlugin, opts);
  await app.ready();
  return app;
}
