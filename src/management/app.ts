// The management listener (CARDLINE_ADMIN_HOST:CARDLINE_ADMIN_PORT, loopback by default): the platform
// operator's API — tenants, their users, operator keys — authenticated by operator keys, never by a tenant's
// token. Its own Fastify instance over the gateway's services, assembled from the same pipeline steps as the
// public listener (decision 0190): operator key → decrypt → validate → idempotency → operation (recorded), its
// routes registered from the management operation table (src/operations/management-*.ts) by the one registrar.
import type { Server } from 'node:http';
import Fastify, { type FastifyInstance, type FastifyPluginAsync, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import fp from 'fastify-plugin';
import { securityHeaders, serverOptions } from '../app.js';
import type { Config } from '../config.js';
import type { Operation } from '../operations/define.js';
import type { Operator } from '../services/identity/operator-keys.js';
import { managementOperations } from '../operations/index.js';
import registrar from '../plugins/register.js';
import audit, { refuseUnrecorded, stringAt, type AuditSubject } from '../plugins/audit.js';
import decrypt from '../plugins/decrypt.js';
import errors from '../plugins/errors.js';
import idempotency from '../plugins/idempotency.js';
import operation from '../plugins/operation.js';
import operatorAuth from '../plugins/operator-auth.js';
import routeIndex from '../plugins/route-index.js';
import type { Services } from '../services/index.js';
import strictJson from '../plugins/strict-json.js';
import validate from '../plugins/validate.js';
import managementProbes from '../routes/management-probes.js';
import type { AuditSpec } from '../route-config.js';
import { PLATFORM_TENANT, isTenantId } from '../services/tenancy/tenants.js';
import { consoleOperator } from '../console/auth.js';
import { requestContext } from '../request-context.js';
import { ConsoleSessions } from '../console/sessions.js';
import tracingStep from '../plugins/tracing.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The operations console's sessions (src/console): a session counts as its operator key. */
    consoleSessions: ConsoleSessions;
  }
}

export interface ManagementOptions {
  services: Services;
  config: Config;
  /** The management operation table; defaults to the gateway's (src/operations/index.ts). */
  operations?: readonly Operation[];
  /** The CLI's in-process principal (src/cli/in-process.ts): never given by the gateway's server. */
  inProcess?: { secret: string; operator: Operator };
}

const managementApp: FastifyPluginAsync<ManagementOptions> = async (app, opts) => {
  const operations = opts.operations ?? managementOperations;
  app.decorate('cardline', opts.services);
  app.removeContentTypeParser('text/plain');
  await app.register(requestContext);
  await app.register(securityHeaders);
  // Before any route: 405 with Allow for a known path called with another method, as on the public listener.
  await app.register(routeIndex);
  // An operator's action joins the trail of the tenant it concerns, anything else the platform's.
  const subject = async (request: FastifyRequest, _spec: AuditSpec): Promise<AuditSubject> => {
    const { operator, inProcess } = request.ctx;
    const named = stringAt(request, 'params.tenantId') ?? stringAt(request, 'body.id');
    const tenant = named && isTenantId(named) ? await opts.services.tenants.get(named) : null;
    return {
      tenantId: tenant?.id ?? PLATFORM_TENANT,
      actor: operator?.name ?? null,
      role: operator ? 'Operator' : null,
      // The CLI's in-process requests come from no address.
      ...(inProcess ? { origin: null } : {}),
    };
  };
  // The recorder, which the operation step, the error path and a replay call to record their answer.
  await app.register(audit, { subject });
  // A route declaring audit but answering without the recorder does not start.
  app.addHook('onRoute', refuseUnrecorded);
  await app.register(errors, { problemBaseUrl: opts.config.problemBaseUrl });
  // Before the first route, so it describes them all; the CLI's in-process app loads neither document nor console.
  const docs = opts.inProcess ? null : await import('../plugins/docs.js');
  if (docs) await app.register(docs.openapiCollector, { operations, listener: 'management' });
  await app.register(strictJson);
  app.decorate('consoleSessions', new ConsoleSessions(opts.services.db, opts.services.operatorKeys, opts.config.consoleIdleMinutes));
  // The principal is the operator key (or the console session's); a path naming a tenant gets that tenant.
  await app.register(operatorAuth, {
    session: (request) => consoleOperator(app.consoleSessions, request),
    ...(opts.inProcess ? { inProcess: opts.inProcess } : {}),
  });
  // An operator's request is traced as the public API's are (nothing when tracing is off).
  await app.register(tracingStep);
  // Passwords for a tenant's users are opened to that tenant's key (its body policy is its own API's).
  await app.register(decrypt, { tenantPolicy: false, onboarding: true });
  await app.register(validate);
  // Every write takes Idempotency-Key, scoped to the operator.
  await app.register(idempotency, {
    owner: ({ ctx }) => (ctx.operator ? { tenantId: PLATFORM_TENANT, caller: `operator:${ctx.operator.name}` } : null),
  });
  await app.register(operation);
  app.addHook('onResponse', async (request, reply) => {
    request.log.info(
      { method: request.method, route: request.routeOptions.url, status: reply.statusCode, ms: Math.round(reply.elapsedTime), operator: request.ctx.operator?.name },
      'management request completed',
    );
  });
  await app.register(managementProbes);
  await app.register(registrar, { operations, listener: 'management' });
  if (!docs) return;
  await app.register(docs.docsRoutes, { listener: 'management' });
  await app.register((await import('../console/routes.js')).default, { sessions: app.consoleSessions });
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
