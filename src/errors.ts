// One error catalogue: every error a route can answer, rendered in the route's dialect by one handler.
import { STATUS_CODES } from 'node:http';
import type { FieldError } from '../schemas/common.js';
import { BUSINESS_CODES, type BusinessCodeId } from '../schemas/business-codes.js';

export type Dialect = 'envelope' | 'problem';

export interface CardlineErrorInit {
  status: number;
  /** Human explanation: `detailMessage` in the envelope, `detail` in a problem. */
  detail?: string;
  /** Problem title; defaults to the status's reason phrase. */
  title?: string;
  fieldErrors?: FieldError[];
  businessCode?: string;
  /** Problem `message`; defaults to error.http.<status>. */
  message?: string;
  /** Envelope status when it differs from the problem status (business refusals). */
  envelopeStatus?: number;
  /** Extra response headers (WWW-Authenticate, Retry-After). */
  headers?: Record<string, string>;
}

export class CardlineError extends Error {
  readonly code: string;
  readonly init: CardlineErrorInit;
  constructor(code: string, init: CardlineErrorInit) {
    super(init.detail ?? code);
    this.name = 'CardlineError';
    this.code = code;
    this.init = init;
  }
}

const reasonPhrase = (status: number): string => STATUS_CODES[status] ?? 'Error';

/** The longest path parameter the router reads (Fastify's maxParamLength); a longer one answers 414. */
export const MAX_PARAM_LENGTH = 100;

/** Longest path an answer repeats back: a long one is no help to read, and could be anything. */
const MAX_ECHOED_PATH = 128;
const echoPath = (url: string, instead: string): string => {
  const path = url.split('?')[0]!;
  return path.length <= MAX_ECHOED_PATH ? path : instead;
};

/** The public 401's WWW-Authenticate (RFC 6750, decision 0171): the realm, or `invalid_token` naming only expiry. */
const BEARER_CHALLENGES = {
  missing: 'Bearer realm="cardline"',
  invalid: 'Bearer error="invalid_token"',
  expired: 'Bearer error="invalid_token", error_description="The access token expired"',
} as const;
export type BearerChallenge = keyof typeof BEARER_CHALLENGES;

/** The catalogue: each code (CL_*) with its status and a message telling the caller how to fix it. */
export const Errors = {
  tenantHeaderMissing: () =>
    new CardlineError('CL_TENANT_HEADER', {
      status: 400,
      // Credit-line routes answer a missing or invalid tenant with 401 (spec 7.2, DESIGN §3).
      envelopeStatus: 401,
      message: 'tenant.header.missing',
      detail: 'Send the TENANT or X-TENANT-ID header with the identifier assigned at onboarding.',
    }),
  /** The header names a tenant that does not exist or is disabled (the two are not told apart). */
  tenantUnknown: () =>
    new CardlineError('CL_TENANT_HEADER', {
      status: 400,
      envelopeStatus: 401,
      message: 'tenant.header.missing',
      detail: 'The tenant named by the TENANT or X-TENANT-ID header is unknown; send the identifier assigned at onboarding.',
    }),
  tenantHeaderConflict: () =>
    new CardlineError('CL_TENANT_HEADER_CONFLICT', {
      status: 400,
      message: 'tenant.header.missing',
      detail: 'The TENANT and X-TENANT-ID headers name different tenants; send one, or the same value in both.',
    }),
  /** No bearer token, or one refused; the challenge says which (BEARER_CHALLENGES), the body is the same. */
  unauthorized: (challenge: BearerChallenge = 'missing') =>
    new CardlineError('CL_UNAUTHORIZED', {
      status: 401,
      detail: 'A valid bearer token for this tenant is required; obtain one from POST /api/authenticate.',
      headers: { 'www-authenticate': BEARER_CHALLENGES[challenge] },
    }),
  badCredentials: () => new CardlineError('CL_BAD_CREDENTIALS', { status: 401, detail: 'Bad credentials' }),
  forbidden: (role: string) =>
    new CardlineError('CL_FORBIDDEN', { status: 403, detail: `The role '${role}' may not call this operation.` }),
  notFound: (method: string, url: string) =>
    new CardlineError('CL_NOT_FOUND', { status: 404, detail: `No route ${method} ${echoPath(url, 'for this path (too long to repeat)')}.` }),
  /** A known path called with a method it does not answer; `allowed` is what the Allow header lists. */
  methodNotAllowed: (method: string, url: string, allowed: readonly string[]) =>
    new CardlineError('CL_METHOD_NOT_ALLOWED', {
      status: 405,
      detail: `${method} is not allowed on ${echoPath(url, 'this path')}; it answers ${allowed.join(', ')}.`,
      headers: { allow: allowed.join(', ') },
    }),
  /** The path's percent-encoding is malformed or not UTF-8 (Fastify's FST_ERR_BAD_URL): no route can read it. */
  malformedUrl: () =>
    new CardlineError('CL_MALFORMED_URL', {
      status: 400,
      detail: 'The URL is not valid: its path holds a malformed percent-encoding, or one that does not decode to UTF-8 text.',
    }),
  /** A path parameter longer than the router reads (Fastify's FST_ERR_MAX_PARAM_LENGTH); the URL is not echoed. */
  pathParameterTooLong: (limit: number) =>
    new CardlineError('CL_URI_TOO_LONG', {
      status: 414,
      detail: `A path parameter is longer than ${limit} characters; identifiers in paths are at most 64 characters.`,
    }),
  /** A request that arrives while the gateway drains (SIGTERM): the load balancer should send it elsewhere. */
  shuttingDown: () =>
    new CardlineError('CL_SHUTTING_DOWN', {
      status: 503,
      detail: 'The gateway is shutting down; retry the request, another instance will answer it.',
      headers: { connection: 'close' },
    }),
  validation: (fieldErrors: FieldError[]) =>
    new CardlineError('CL_VALIDATION', {
      status: 400,
      title: 'Method argument not valid',
      message: 'error.validation',
      fieldErrors,
      detail: fieldErrors.map((e) => `${e.field}: ${e.message}`).join('; '),
    }),
  badRequest: (detail: string) => new CardlineError('CL_BAD_REQUEST', { status: 400, detail }),
  /** Refused by the HTTP parser itself, before any route: the framing is not HTTP/1.1 as it must be. */
  malformedRequest: () => new CardlineError('CL_BAD_REQUEST', { status: 400, detail: 'The request is not well-formed HTTP/1.1 (request line, headers or framing).' }),
  requestTimeout: () =>
    new CardlineError('CL_REQUEST_TIMEOUT', {
      status: 408,
      detail: 'The request did not arrive in time (its headers, or the whole request: CARDLINE_REQUEST_TIMEOUT_MS); send it again.',
    }),
  headersTooLarge: (limitBytes: number) =>
    new CardlineError('CL_HEADERS_TOO_LARGE', { status: 431, detail: `The request's headers are larger than ${limitBytes} bytes; send fewer or shorter headers.` }),
  /** One generic answer for every JWE failure, so the answer is no oracle. */
  encryptedPayload: () =>
    new CardlineError('CL_ENCRYPTED_PAYLOAD', { status: 400, detail: 'The encrypted payload could not be processed.' }),
  /** The tenant requires this route's body encrypted (encryption.requireEncryptedBody, decision 0019). */
  encryptedBodyRequired: (route: string) =>
    new CardlineError('CL_ENCRYPTED_BODY_REQUIRED', {
      status: 400,
      detail: `This tenant requires the body of ${route} to be encrypted: send it with Content-Type: application/jose, as a compact JWE (ECDH-ES+A256KW, A256GCM) to the tenant's key (GET /api/keys).`,
    }),
  /** A field that must arrive as a JWE arrived in plain text (the password has its own message below). */
  plaintextField: (field: string) =>
    new CardlineError('CL_PLAINTEXT_FIELD', {
      status: 400,
      detail: `The field ${field} must be a compact JWE encrypted to the tenant's key (GET /api/keys).`,
    }),
  /** The management listener: no operator key, or one that is unknown or revoked. */
  /** `adminUrl`: the management listener as the caller reached it, for the CLI's --admin-url. */
  operatorUnauthorized: (adminUrl = "<this listener's URL>") =>
    new CardlineError('CL_OPERATOR_UNAUTHORIZED', {
      status: 401,
      // The store command cannot run beside a gateway on the embedded store: the running gateway's way comes first.
      detail:
        'A valid operator key is required: Authorization: Bearer <key>. While the gateway runs, an operator with a key creates yours: ' +
        `\`CARDLINE_OPERATOR_KEY=<their key> npx cardline --admin-url ${adminUrl} operator-key create --name <name>\`; ` +
        'with no operator key yet, `npx cardline operator-key create --name <name>` on the store (the embedded store only while the gateway is stopped).',
      headers: { 'www-authenticate': 'Bearer' },
    }),
  operatorThrottled: (retryAfterSeconds: number, scope: 'address' | 'all addresses') =>
    new CardlineError('CL_OPERATOR_THROTTLED', {
      status: 429,
      detail:
        scope === 'address'
          ? `Too many wrong operator keys from this address; retry in ${retryAfterSeconds} s.`
          : `Too many wrong operator keys from many addresses; this address, which sent a wrong one too, may retry in ${retryAfterSeconds} s.`,
      headers: { 'retry-after': String(retryAfterSeconds) },
    }),
  tenantNotFound: (tenantId: string) => new CardlineError('CL_TENANT_NOT_FOUND', { status: 404, detail: `There is no tenant '${tenantId}'.` }),
  /** A configuration that cannot be used, with the reason (the field, the module, the option). */
  invalidConfiguration: (reason: string) => new CardlineError('CL_INVALID_CONFIGURATION', { status: 400, detail: reason }),
  operatorKeyNotFound: (name: string) => new CardlineError('CL_OPERATOR_KEY_NOT_FOUND', { status: 404, detail: `There is no operator key named '${name}'.` }),
  userNotFound: (username: string) =>
    new CardlineError('CL_USER_NOT_FOUND', { status: 404, detail: `This tenant has no user '${username}'.` }),
  channelNotFound: (channelId: string) =>
    new CardlineError('CL_CHANNEL_NOT_FOUND', { status: 404, detail: `This tenant has no notification channel '${channelId}'.` }),
  deliveryNotFound: (deliveryId: string) =>
    new CardlineError('CL_DELIVERY_NOT_FOUND', { status: 404, detail: `This tenant has no delivery '${deliveryId}'.` }),
  authorizationNotFound: (authorizationId: string) =>
    new CardlineError('CL_AUTHORIZATION_NOT_FOUND', { status: 404, detail: `This tenant has no authorization '${authorizationId}'.` }),
  authRuleNotFound: (ruleId: string) =>
    new CardlineError('CL_AUTH_RULE_NOT_FOUND', { status: 404, detail: `This tenant has no auth rule '${ruleId}'.` }),
  transactionNotFound: (transactionId: string) =>
    new CardlineError('CL_TRANSACTION_NOT_FOUND', { status: 404, detail: `This tenant has no card transaction '${transactionId}'.` }),
  disputeNotFound: (disputeId: string) => new CardlineError('CL_DISPUTE_NOT_FOUND', { status: 404, detail: `This tenant has no dispute '${disputeId}'.` }),
  approvalNotFound: (approvalId: string) =>
    new CardlineError('CL_APPROVAL_NOT_FOUND', { status: 404, detail: `This tenant has no approval '${approvalId}'.` }),
  /**
   * A write held for approval (four eyes): answered 202 in the route's own dialect, naming the approval that
   * holds the request, with its Location; nothing was executed.
   */
  approvalPending: (approvalId: string, operation: string) =>
    new CardlineError('CL_APPROVAL_PENDING', {
      status: 202,
      detail: `The request needs approval (${operation}): it waits as approval ${approvalId} and is executed once approved; see GET /v1/approvals/${approvalId}.`,
      headers: { location: `/v1/approvals/${approvalId}` },
    }),
  keyNotFound: (kid: string) => new CardlineError('CL_KEY_NOT_FOUND', { status: 404, detail: `This tenant has no gateway key '${kid}'.` }),
  clientKeyMissing: () =>
    new CardlineError('CL_CLIENT_KEY_MISSING', {
      status: 404,
      detail: 'No client key is registered for this tenant; register one with PUT /v1/admin/client-key.',
    }),
  /** A new tenant's first Admin password in clear: the tenant has no key yet, the onboarding key stands in. */
  plaintextOnboardingPassword: () =>
    new CardlineError('CL_PLAINTEXT_PASSWORD', {
      status: 400,
      detail: "The first Admin's password must be a compact JWE encrypted to the onboarding key (GET /v1/onboarding/keys).",
    }),
  plaintextPassword: () =>
    new CardlineError('CL_PLAINTEXT_PASSWORD', {
      status: 400,
      detail: "The password must be a compact JWE encrypted to the tenant's key (GET /api/keys).",
    }),
  unsupportedMediaType: (type: string) =>
    new CardlineError('CL_MEDIA_TYPE', { status: 415, detail: `Content-Type '${type}' is not accepted; send application/json.` }),
  payloadTooLarge: (limitBytes: number) =>
    new CardlineError('CL_PAYLOAD_TOO_LARGE', { status: 413, detail: `The request body is larger than ${limitBytes} bytes (CARDLINE_BODY_LIMIT).` }),
  business: (code: BusinessCodeId | string, detail: string) => {
    const entry = (BUSINESS_CODES as Record<string, (typeof BUSINESS_CODES)[BusinessCodeId]>)[code];
    return new CardlineError('CL_BUSINESS', {
      status: entry?.status ?? 409,
      envelopeStatus: entry?.envelopeStatus ?? 409,
      title: entry?.title ?? 'Business Rule Violated',
      message: 'error.business',
      businessCode: code,
      detail,
    });
  },
  coreUnavailable: () =>
    new CardlineError('CL_CORE_UNAVAILABLE', { status: 502, detail: 'The core-banking system is unavailable; retry later.' }),
  coreTimeout: () =>
    new CardlineError('CL_CORE_TIMEOUT', {
      status: 504,
      detail: 'The core-banking system did not answer in time; the outcome is unknown, check before retrying.',
    }),
  corePending: () =>
    new CardlineError('CL_CORE_PENDING', {
      status: 202,
      detail: 'The core-banking system accepted the request but has not confirmed it yet.',
    }),
  /** The operation's connector does not offer it (decision 0110): answered without calling the core. */
  operationNotSupported: (operation: string, connector: string) =>
    new CardlineError('CL_NOT_SUPPORTED', {
      status: 501,
      title: 'Not Implemented',
      businessCode: 'OPERATION_NOT_SUPPORTED',
      detail: `The operation ${operation} is not offered by the core-banking connector '${connector}' this tenant routes it to; nothing was sent to the core.`,
    }),
  internal: () => new CardlineError('CL_INTERNAL', { status: 500, detail: 'An unexpected error occurred.' }),
  unavailable: (detail: string) => new CardlineError('CL_UNAVAILABLE', { status: 503, detail }),
  /** A per-tenant or per-user rate limit was reached (DESIGN §7); Retry-After says when the window resets. */
  tooManyRequests: (detail: string, retryAfterSeconds: number) =>
    new CardlineError('CL_RATE_LIMITED', {
      status: 429,
      detail,
      headers: { 'retry-after': String(Math.max(1, Math.ceil(retryAfterSeconds))) },
    }),
  idempotencyKeyInvalid: () =>
    new CardlineError('CL_IDEMPOTENCY_KEY_INVALID', {
      status: 400,
      detail: 'The Idempotency-Key header must be 1 to 255 printable ASCII characters; send one key per request, e.g. a UUID.',
    }),
  idempotencyKeyReused: () =>
    new CardlineError('CL_IDEMPOTENCY_KEY_REUSED', {
      status: 422,
      detail:
        'This Idempotency-Key was already used for a different request to this operation; send the original request unchanged to get its response, or use a new key for a new request.',
    }),
  idempotencyInFlight: () =>
    new CardlineError('CL_IDEMPOTENCY_IN_FLIGHT', {
      status: 409,
      detail: 'A request with this Idempotency-Key is still being processed; retry shortly to receive its response.',
      headers: { 'retry-after': '1' },
    }),
} as const;

/** A 5xx says nothing of its cause: it names the request id, by which support finds its logs and record. */
export function quotingRequestId(err: CardlineError, status: number, requestId: string): CardlineError {
  return new CardlineError(err.code, { ...err.init, detail: `${err.init.detail ?? reasonPhrase(status)} Quote request id ${requestId} to support.` });
}

export interface Envelope {
  result: unknown;
  exception: { errorCode: string; shortMessage: string; detailMessage: string } | null;
  pagination: null;
}

export function renderEnvelope(err: CardlineError): { status: number; body: Envelope } {
  const status = err.init.envelopeStatus ?? err.init.status;
  return {
    status,
    body: {
      result: null,
      exception: {
        errorCode: `ERR_${status}`,
        shortMessage: reasonPhrase(status),
        detailMessage: err.init.detail ?? reasonPhrase(status),
      },
      pagination: null,
    },
  };
}

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  message: string;
  fieldErrors?: FieldError[];
  detail?: string;
  businessCode?: string;
}

export function renderProblem(err: CardlineError, baseUrl: string): { status: number; body: ProblemBody } {
  const { status, fieldErrors, businessCode } = err.init;
  const body: ProblemBody = {
    type: `${baseUrl}/${fieldErrors ? 'constraint-violation' : 'problem-with-message'}`,
    title: err.init.title ?? reasonPhrase(status),
    status,
    message: err.init.message ?? `error.http.${status}`,
  };
  if (fieldErrors) body.fieldErrors = fieldErrors;
  else if (err.init.detail) body.detail = err.init.detail;
  if (businessCode) body.businessCode = businessCode;
  return { status, body };
}
