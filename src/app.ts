// The root plugin: the request pipeline (tenant → auth → rate limit → decrypt → validate → idempotency →
// operation, which answers through the recorder; the error path records failures the same way) and the routes:
// the operation table's, and the few that need no tenant. A request's state is its context (src/request-context.ts).
import { compilersFactory } from './schema-compilers.js';
import type { Server } from 'node:http';
import type { FastifyHttpOptions, FastifyInstance, FastifyPluginAsync, FastifyServerOptions } from 'fastify';
import Fastify, { LogController } from 'fastify';
import fp from 'fastify-plugin';
import { STATUS_CODES, maxHeaderSize, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import helmet, { type HelmetOptions } from 'helmet';
import pino, { type Logger } from 'pino';
import type { Config } from './config.js';
import type { ConnectorDefinition } from '../connectors/contract.js';
import type { Db } from './store/db.js';
import type { PasswordHashing } from './services/identity/users.js';
import { lazyChildLogger, loggerOptions, scrubBindings } from './logging.js';
import './route-config.js';
import { requestContext } from './request-context.js';
import services from './plugins/services.js';
import errors, { frameworkErrors } from './plugins/errors.js';
import { Errors, MAX_PARAM_LENGTH, renderProblem } from './errors.js';
import routeIndex from './plugins/route-index.js';
import tenant from './plugins/tenant.js';
import auth from './plugins/auth.js';
import decrypt from './plugins/decrypt.js';
import validate from './plugins/validate.js';
import audit, { refuseUnrecorded } from './plugins/audit.js';
import idempotency from './plugins/idempotency.js';
import operation from './plugins/operation.js';
import strictJson from './plugins/strict-json.js';
import rateLimit from './plugins/rate-limit.js';
import tracingStep from './plugins/tracing.js';
import healthRoutes from './routes/health.js';
import wellKnownRoutes from './routes/well-known.js';
import registrar from './plugins/register.js';
import { operations as gatewayOperations } from './operations/index.js';
import type { Operation } from './operations/define.js';

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;
/** Twelve or more digits, alone or grouped by single separators (`4111-1111-1111-1111`): it could be a card number. */
const DIGIT_RUN = /\d(?:[ ._:-]?\d){11}/;

interface AppOptions {
  config: Config;
  db: Db;
  masterKey: string;
  connectors?: ConnectorDefinition[];
  /** The operation table; defaults to the gateway's (src/operations/index.ts). */
  operations?: readonly Operation[];
  ownsDb?: boolean;
  /** The argon2id cost of new password hashes; the library's defaults unless the test suite asks for less (decision 0378). */
  passwordHashing?: PasswordHashing;
}

const app: FastifyPluginAsync<AppOptions> = async (fastify, opts) => {
  const operations = opts.operations ?? gatewayOperations;
  // JSON bodies only: Fastify's text/plain parser would turn a 415 into a validator's 400.
  fastify.removeContentTypeParser('text/plain');
  // First of all hooks, so every answer names its request whatever refuses it afterwards.
  await fastify.register(requestContext);
  await fastify.register(securityHeaders);
  // Before any route: it indexes every route for 405 answers and for the dialect of a refused URL.
  await fastify.register(routeIndex);
  await fastify.register(services, opts);
  // The recorder: the operation step, the error path and a replay call it to record their answer.
  await fastify.register(audit);
  // A route that declares audit but would answer without the recorder does not start.
  fastify.addHook('onRoute', refuseUnrecorded);
  await fastify.register(errors, { problemBaseUrl: opts.config.problemBaseUrl });
  // Before the first route, so it describes them all; imported here so the CLI does not load @fastify/swagger.
  const docs = await import('./plugins/docs.js');
  await fastify.register(docs.openapiCollector, { operations });
  await fastify.register(strictJson);
  await fastify.register(tenant);
  // After the tenant (it decides whether a caller's trace is continued); nothing when tracing is off.
  await fastify.register(tracingStep);
  await fastify.register(auth);
  // After auth: limits count authenticated callers only (per tenant, per user).
  await fastify.register(rateLimit);
  await fastify.register(decrypt);
  await fastify.register(validate);
  // After validate: it fingerprints the validated body.
  await fastify.register(idempotency);
  await fastify.register(operation);

  // One line per request on completion, nothing from headers or bodies; counted by route pattern, never the URL.
  const { metrics } = fastify.cardline;
  fastify.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url;
    // On the root logger with the request id as a field: no request child is made for this line.
    const trace = request.ctx.trace?.span.spanContext();
    fastify.log.info(
      {
        requestId: request.id, method: request.method, route, status: reply.statusCode, ms: Math.round(reply.elapsedTime), tenant: request.ctx.tenant?.id,
        ...(trace ? { trace_id: trace.traceId, span_id: trace.spanId } : {}),
      },
      'request completed',
    );
    // A sampled request's trace is its latency bucket's exemplar (OpenMetrics scrapes, while tracing is on).
    const exemplar = trace && trace.traceFlags & 1 ? trace : undefined;
    metrics.request(route ?? 'unmatched', request.method, reply.statusCode, request.ctx.tenant?.id ?? null, reply.elapsedTime / 1000, exemplar);
    done();
  });

  await fastify.register(healthRoutes);
  await fastify.register(wellKnownRoutes);
  await fastify.register(registrar, { operations });
  await fastify.register(docs.docsRoutes, { listener: 'public' });
};

/** JSON API security headers: a CSP forbidding everything, no shared caching, X-Request-Id on every answer. */
export const securityHeaders = fp(
  async (fastify) => {
    fastify.addHook('onRequest', (request, reply, done) => {
      reply.headers(SECURITY_HEADERS);
      reply.header('x-request-id', request.id);
      done();
    });
  },
  { name: 'security-headers' },
);

/** What Node's HTTP parser refuses before any request exists: the problem record with the security headers. */
function clientErrorHandler(problemBaseUrl: string) {
  return function (this: FastifyInstance, err: Error & { code?: string }, socket: Duplex): void {
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    const error =
      err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? Errors.requestTimeout()
        : err.code === 'HPE_HEADER_OVERFLOW'
          ? Errors.headersTooLarge(maxHeaderSize)
          : Errors.malformedRequest();
    const { status, body } = renderProblem(error, problemBaseUrl);
    const text = JSON.stringify(body);
    this.log.debug({ code: err.code, status }, 'client error');
    if (socket.writable) {
      const headers: Record<string, string> = {
        ...SECURITY_HEADERS,
        'x-request-id': crypto.randomUUID(),
        'content-type': 'application/problem+json; charset=utf-8',
        'content-length': String(Buffer.byteLength(text)),
        connection: 'close',
      };
      const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
      socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${lines.join('')}\r\n${text}`);
    }
    socket.destroy(err);
  };
}

/** The headers helmet sets for these options, read once from its middleware. */
function helmetHeaders(options: HelmetOptions): Record<string, string> {
  const headers: Record<string, string> = {};
  const res = {
    setHeader: (name: string, value: string | number | readonly string[]) => void (headers[name.toLowerCase()] = String(value)),
    removeHeader: (name: string) => void delete headers[name.toLowerCase()],
  };
  let failure: unknown = null;
  helmet(options)({} as IncomingMessage, res as unknown as ServerResponse, (err?: unknown) => void (failure = err ?? null));
  if (failure) throw failure instanceof Error ? failure : new Error(String(failure));
  // Nothing here may sit in a shared cache (the public key sets override this per route).
  headers['cache-control'] = 'no-store';
  return headers;
}

/** Computed once, by helmet itself, instead of rebuilding its configuration on every request. */
const SECURITY_HEADERS = helmetHeaders({
  contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
  crossOriginOpenerPolicy: false,
  originAgentCluster: false,
  xDnsPrefetchControl: false,
  xDownloadOptions: false,
  xPermittedCrossDomainPolicies: false,
  frameguard: { action: 'deny' },
  referrerPolicy: { policy: 'no-referrer' },
});

const cardlineApp = fp(app, { name: 'cardline' });
export default cardlineApp;

/** Longest wait for a request's headers; Node checks the header and request timeouts every second. */
const HEADERS_TIMEOUT_MS = 10_000;
const CONNECTIONS_CHECKING_INTERVAL_MS = 1_000;

/** Fastify's own options: strict ajv (reject, never strip or coerce), body limits, request ids. */
export function serverOptions(config: Config, logger?: FastifyServerOptions['loggerInstance']): FastifyHttpOptions<Server> {
  return {
    // Every logger, the caller's included, scrubs what its children bind (src/logging.ts).
    loggerInstance: scrubBindings((logger as Logger | undefined) ?? pino(loggerOptions(config.logLevel))),
    // Fastify's own per-request lines are replaced by one completion line (see app.ts onResponse).
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'requestId' }),
    // No pino child per request unless something logs through request.log (src/logging.ts).
    childLoggerFactory: lazyChildLogger,
    bodyLimit: config.bodyLimit,
    // No per-plugin start timeout: the process bounds the whole start and names its step (decision 0101).
    pluginTimeout: 0,
    // request.ip is the client behind the TRUST_PROXY proxies; anyone else's X-Forwarded-For is ignored (0047).
    trustProxy: config.trustProxy,
    // Slow clients (decision 0015): whole request within requestTimeout, headers within 10 s; keep-alive
    // outlives a load balancer's usual 60 s.
    requestTimeout: config.requestTimeoutMs,
    connectionTimeout: config.requestTimeoutMs + config.connectorTimeoutMs,
    keepAliveTimeout: config.keepAliveTimeoutMs,
    http: {
      headersTimeout: Math.min(HEADERS_TIMEOUT_MS, config.requestTimeoutMs),
      connectionsCheckingInterval: CONNECTIONS_CHECKING_INTERVAL_MS,
    },
    // A caller's X-Request-Id reaches logs, audit and the core, so only a plain short token is kept (nothing
    // that could hold a card number or a token); anything else is replaced by a fresh UUID.
    requestIdHeader: false,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && SAFE_REQUEST_ID.test(given) && !DIGIT_RUN.test(given) && !given.includes('eyJ') ? given : crypto.randomUUID();
    },
    // Answered in the route's dialect by src/plugins/errors.ts, like every other answer.
    return503OnClosing: false,
    frameworkErrors,
    clientErrorHandler: clientErrorHandler(config.problemBaseUrl),
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    // Each operation's schemas compiled once per process, whichever app registers them (src/schema-compilers.ts).
    schemaController: { compilersFactory },
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
