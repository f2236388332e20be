// Renders every error in the route's dialect: envelope (ERR_<status>) or problem record. No stack leaves.
// Also what answers when no route runs: a malformed URL, an over-long path parameter, another method on a
// known path (405), an unknown path, a request while the gateway shuts down.
import type { IncomingMessage } from 'node:http';
import fp from 'fastify-plugin';
import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { MONEY_PATTERN, AMOUNT_PATTERN, type FieldError } from '../../schemas/common.js';
import { CardlineError, Errors, MAX_PARAM_LENGTH, quotingRequestId, renderEnvelope, renderProblem, type Dialect } from '../errors.js';
import { declareErrors, errorCase } from '../step-errors.js';

/** What the router answers before a route with path parameters runs, in that route's dialect (see frameworkErrors). */
export const routingErrors = declareErrors('routing', (op) =>
  op.params
    ? [
        errorCase('malformed-url', 'The path holds a malformed percent-encoding, or one that is not UTF-8', Errors.malformedUrl()),
        errorCase('uri-too-long', `A path parameter is longer than ${MAX_PARAM_LENGTH} characters`, Errors.pathParameterTooLong(MAX_PARAM_LENGTH)),
      ]
    : [],
);

/** What this step answers for anything unexpected, on every operation. */
export const internalErrors = declareErrors('errors', () => [errorCase('internal', 'An unexpected error', Errors.internal())]);

interface AjvError {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
}

const pathToField = (instancePath: string): string =>
  instancePath.replace(/^\//, '').split('/').filter(Boolean).join('.');

const join = (base: string, leaf: string) => (base ? `${base}.${leaf}` : leaf);

/** Maps ajv errors to the constraint names that clients of this interface already read. */
function toFieldErrors(errors: AjvError[], objectName: string): FieldError[] {
  const out: FieldError[] = [];
  const seen = new Set<string>();
  for (const e of errors) {
    let field = pathToField(e.instancePath);
    let message: string;
    switch (e.keyword) {
      case 'required':
        field = join(field, String(e.params.missingProperty));
        message = 'NotNull';
        break;
      case 'additionalProperties':
        field = join(field, String(e.params.additionalProperty));
        message = 'UnknownProperty';
        break;
      case 'type':
        message = 'TypeMismatch';
        break;
      case 'minLength':
        message = e.params.limit === 1 ? 'NotBlank' : 'Size';
        break;
      case 'maxLength':
      case 'minItems':
      case 'maxItems':
      case 'minProperties':
      case 'maxProperties':
        message = 'Size';
        break;
      case 'pattern':
        message = e.params.pattern === MONEY_PATTERN || e.params.pattern === AMOUNT_PATTERN ? 'DecimalAmount' : 'Pattern';
        break;
      case 'minimum':
      case 'exclusiveMinimum':
        message = 'Min';
        break;
      case 'maximum':
      case 'exclusiveMaximum':
        message = 'Max';
        break;
      default:
        message = 'Invalid';
    }
    field ||= 'body';
    const key = `${field}\u0000${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ field, message, objectName });
  }
  return out;
}

const DESCRIPTIONS: Record<string, string> = {
  NotNull: 'is required',
  UnknownProperty: 'is not a known field',
  TypeMismatch: 'has the wrong type',
  NotBlank: 'must not be empty',
  Size: 'has the wrong length',
  DecimalAmount: 'must be a positive decimal string with at most two decimals',
  Pattern: 'has the wrong format',
  Min: 'is too small',
  Max: 'is too large',
  Invalid: 'is invalid',
};

/** The envelope's detailMessage for a validation failure: one sentence a developer can act on. */
/** Money travels as a decimal string: a client that sent a number is told what to send instead. */
const DECIMAL_FIELDS = new Set(['amount']);
const describe = (e: FieldError): string =>
  e.message === 'TypeMismatch' && DECIMAL_FIELDS.has(e.field)
    ? 'has the wrong type: send a decimal string such as "75000.00", not a number'
    : (DESCRIPTIONS[e.message] ?? 'is invalid');

const describeFieldErrors = (errors: FieldError[]): string => errors.map((e) => `${e.field} ${describe(e)}`).join('; ');

/** Turns whatever was thrown into a catalogue error; unknown errors become a bare 500. */
function toCardlineError(err: unknown, request: FastifyRequest): CardlineError {
  if (err instanceof CardlineError) return err;
  // A configuration an operator or an Admin sent that cannot be used: the reason names the field or module.
  if (err instanceof Error && (err.name === 'TenantConfigError' || err.name === 'ConnectorConfigError')) {
    return Errors.invalidConfiguration(err.message);
  }
  const e = err as FastifyError & { validation?: AjvError[] };
  if (e.validation) {
    const fieldErrors = toFieldErrors(e.validation, request.routeOptions.config.objectName ?? 'request');
    return Errors.validation(fieldErrors);
  }
  switch (e.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return Errors.unsupportedMediaType(String(request.headers['content-type'] ?? ''));
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return Errors.payloadTooLarge(request.routeOptions.bodyLimit ?? request.server.initialConfig.bodyLimit ?? 0);
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return Errors.badRequest('The request body is empty; send a JSON object.');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return Errors.badRequest('The request body is not valid JSON.');
  }
  if (e instanceof SyntaxError || e.code === 'FST_ERR_CTP_INVALID_CONTENT_LENGTH') {
    return Errors.badRequest('The request body is not valid JSON.');
  }
  const status = typeof e.statusCode === 'number' ? e.statusCode : 500;
  if (status >= 400 && status < 500) return Errors.badRequest(`The request could not be processed (${status}).`);
  return Errors.internal();
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Renders a catalogue error in the route's dialect and returns the body: the one renderer. */
    renderError(err: CardlineError, request: FastifyRequest, reply: FastifyReply): string;
  }
}

function renderError(error: CardlineError, request: FastifyRequest, reply: FastifyReply, problemBaseUrl: string, dialectOfPath?: Dialect): string {
  const dialect: Dialect = dialectOfPath ?? request.routeOptions.config?.dialect ?? 'problem';
  request.ctx.errorCode = error.code;
  const status = dialect === 'envelope' ? (error.init.envelopeStatus ?? error.init.status) : error.init.status;
  const err = status >= 500 ? quotingRequestId(error, status, String(request.id)) : error;
  if (err.init.headers) reply.headers(err.init.headers);
  if (dialect === 'envelope') {
    const rendered = renderEnvelope(err);
    if (err.init.fieldErrors) rendered.body.exception!.detailMessage = describeFieldErrors(err.init.fieldErrors);
    reply.code(rendered.status).type('application/json; charset=utf-8');
    return JSON.stringify(rendered.body);
  }
  const rendered = renderProblem(err, problemBaseUrl);
  reply.code(rendered.status).type('application/problem+json');
  return JSON.stringify(rendered.body);
}

/** Where a request the router refused (a framework error) is sent again, to reach the not-found handler. */
const FRAMEWORK_ERROR_PATH = '/.cardline/framework-error';
const FRAMEWORK_ERROR = Symbol('cardline.frameworkError');
type Refused = IncomingMessage & { [FRAMEWORK_ERROR]?: { code: string; url: string } };

/**
 * Fastify's `frameworkErrors` (an unreadable URL) bypass every hook, so the request is routed again to the
 * not-found handler, which answers after the hooks every answer goes through.
 */
export function frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const raw = request.raw as Refused;
  raw[FRAMEWORK_ERROR] = { code: error.code, url: raw.url ?? '/' };
  raw.url = FRAMEWORK_ERROR_PATH;
  request.server.routing(raw, reply.raw);
}

/** The path with every segment that does not decode replaced, so that it can name the route it was meant for. */
const readablePath = (path: string): string =>
  path
    .split('/')
    .map((segment) => {
      try {
        decodeURIComponent(segment);
        return segment;
      } catch {
        return '_';
      }
    })
    .join('/');

const errorsPlugin: FastifyPluginAsync<{ problemBaseUrl: string }> = async (app, opts) => {
  app.decorate('renderError', (err: CardlineError, request: FastifyRequest, reply: FastifyReply) => renderError(err, request, reply, opts.problemBaseUrl));
  // The error path: rendered, then recorded in one statement; an answer that could not be recorded becomes a 500.
  app.setErrorHandler(async (err, request, reply) => {
    const error = toCardlineError(err, request);
    if (error.init.status >= 500 && !(err instanceof CardlineError)) {
      request.log.error({ err }, 'unhandled error');
    }
    const body = renderError(error, request, reply, opts.problemBaseUrl);
    try {
      await app.recorder.record(request, reply, body);
      return body;
    } catch (failure) {
      return renderError(failure instanceof CardlineError ? failure : Errors.internal(), request, reply, opts.problemBaseUrl);
    }
  });

  /** Why no route ran, and the dialect of the route the path belongs to (undefined: none, the problem record). */
  const unrouted = (request: FastifyRequest): { error: CardlineError; dialect?: Dialect | undefined } => {
    const raw = request.raw as Refused;
    const refused = raw[FRAMEWORK_ERROR];
    // From here on the request is seen with the URL it came with (logs, hooks).
    if (refused) raw.url = refused.url;
    const path = (refused?.url ?? request.url).split('?')[0]!;
    switch (refused?.code) {
      case undefined:
        break;
      case 'FST_ERR_BAD_URL':
        return { error: Errors.malformedUrl(), dialect: app.routeIndex.match(readablePath(path))?.dialect };
      case 'FST_ERR_MAX_PARAM_LENGTH': {
        const match = app.routeIndex.match(path);
        // A route has this shape, and the router would not read its parameter; otherwise there is no such route.
        return match ? { error: Errors.pathParameterTooLong(MAX_PARAM_LENGTH), dialect: match.dialect } : { error: Errors.notFound(request.method, path) };
      }
      default:
        return { error: Errors.internal() };
    }
    const match = app.routeIndex.match(path);
    if (match && !match.methods.includes(request.method)) return { error: Errors.methodNotAllowed(request.method, path, match.methods), dialect: match.dialect };
    return { error: Errors.notFound(request.method, path) };
  };
  app.setNotFoundHandler((request, reply) => {
    const { error, dialect } = unrouted(request);
    return reply.send(renderError(error, request, reply, opts.problemBaseUrl, dialect));
  });

  // While draining, requests on open connections are refused in their route's dialect, not Fastify's.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  // Hooks with nothing to wait for take `done`: an async one costs a promise and a turn per request.
  app.addHook('onRequest', (_request, _reply, done) => {
    done(closing ? Errors.shuttingDown() : undefined);
  });
};

export default fp(errorsPlugin, { name: 'errors', dependencies: ['route-index', 'request-context', 'audit'] });
