// The root plugin: the request pipeline (tenant → auth → decrypt → validate → connector → audit) and routes.
import type { FastifyInstance, FastifyPluginAsync, FastifyServerOptions } from 'fastify';
import Fastify, { LogController } from 'fastify';
import fp from 'fastify-plugin';
import helmet from '@fastify/helmet';
import type { Config } from './config.js';
import type { ConnectorDefinition } from '../connectors/contract.js';
import type { Db } from './store/db.js';
import { loggerOptions } from './logging.js';
import './route-config.js';
import services from './plugins/services.js';
import errors from './plugins/errors.js';
import tenant from './plugins/tenant.js';
import auth from './plugins/auth.js';
import decrypt from './plugins/decrypt.js';
import validate from './plugins/validate.js';
import audit from './plugins/audit.js';
import authRoutes from './routes/auth.js';
import creditLineRoutes from './routes/credit-line.js';
import cardRoutes from './routes/cards.js';
import healthRoutes from './routes/health.js';

export interface AppOptions {
  config: Config;
  db: Db;
  masterKey: string;
  connectors?: ConnectorDefinition[];
  ownsDb?: boolean;
}

const app: FastifyPluginAsync<AppOptions> = async (fastify, opts) => {
  // Bodies are JSON only: Fastify's built-in text/plain parser would hand a string to the validator
  // (400) where an unaccepted media type must answer 415.
  fastify.removeContentTypeParser('text/plain');
  await fastify.register(helmet, { global: true });
  await fastify.register(services, opts);
  await fastify.register(errors, { problemBaseUrl: opts.config.problemBaseUrl });
  await fastify.register(tenant);
  await fastify.register(auth);
  await fastify.register(decrypt);
  await fastify.register(validate);
  await fastify.register(audit);

  // One line per request, on completion, with nothing from headers or bodies.
  fastify.addHook('onResponse', async (request, reply) => {
    request.log.info(
      { method: request.method, route: request.routeOptions.url, status: reply.statusCode, ms: Math.round(reply.elapsedTime), tenant: request.tenant?.id },
      'request completed',
    );
  });

  await fastify.register(healthRoutes);
  await fastify.register(authRoutes);
  await fastify.register(creditLineRoutes);
  await fastify.register(cardRoutes);
};

const cardlineApp = fp(app, { name: 'cardline' });
export default cardlineApp;

/** Fastify's own options: strict ajv (reject, never strip or coerce), body limits, request ids. */
export function serverOptions(config: Config, logger?: FastifyServerOptions['loggerInstance']): FastifyServerOptions {
  return {
    ...(logger ? { loggerInstance: logger } : { logger: loggerOptions(config.logLevel) }),
    // Fastify's own per-request lines are replaced by one completion line (see app.ts onResponse).
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'requestId' }),
    bodyLimit: config.bodyLimit,
    requestTimeout: config.requestTimeoutMs,
    requestIdHeader: 'x-request-id',
    genReqId: () => crypto.randomUUID(),
    return503OnClosing: true,
    ajv: {
      customOptions: {
        removeAdditional: false,
        coerceTypes: false,
        useDefaults: false,
        allErrors: true,
      },
    },
  };
}

export interface BuildOptions extends AppOptions {
  logger?: FastifyServerOptions['loggerInstance'];
}

/** Builds a ready app: used by server.ts, the CLI, tests (app.inject) and benchmarks. */
export async function buildApp(opts: BuildOptions): Promise<FastifyInstance> {
  const fastify = Fastify(serverOptions(opts.config, opts.logger));
  await fastify.register(cardlineApp, opts);
  await fastify.ready();
  return fastify;
}
