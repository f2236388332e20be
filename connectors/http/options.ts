// Options of the shared HTTP transport (auth, sockets, timeout, retries, breaker) as TypeBox schemas an
// HTTP connector composes into its own options schema, and their resolution with defaults filled in.
import { FormatRegistry, Type, type Static, type TObject, type TSchema } from '@sinclair/typebox';
import { sensitive } from '../../schemas/common.js';

// TypeBox's checker knows no formats by itself; without this, every baseUrl would fail as "unknown format".
if (!FormatRegistry.Has('uri')) {
  FormatRegistry.Set('uri', (value) => URL.canParse(value));
}

const FilePath = Type.String({ minLength: 1, maxLength: 4096, description: 'path of a PEM file, read when the connector starts' });

export const HttpAuth = Type.Union(
  [
    Type.Object({ type: Type.Literal('none') }, { additionalProperties: false }),
    Type.Object({ type: Type.Literal('bearer'), token: sensitive(Type.String({ minLength: 1 })) }, { additionalProperties: false }),
    Type.Object(
      {
        type: Type.Literal('basic'),
        username: Type.String({ minLength: 1, pattern: '^[^:]*$', description: 'RFC 7617: a user-id cannot contain a colon' }),
        password: sensitive(Type.String()),
      },
      { additionalProperties: false },
    ),
    // File paths rather than PEM text: a private key belongs in a mounted secret, not in the tenant row.
    Type.Object(
      { type: Type.Literal('mtls'), cert: FilePath, key: FilePath, ca: Type.Optional(FilePath) },
      { additionalProperties: false },
    ),
  ],
  { default: { type: 'none' }, description: 'how the connector authenticates to the core' },
);
export type HttpAuth = Static<typeof HttpAuth>;

/** The core's root URL: http(s), no credentials in the authority (they would end up in logs), no query or fragment. */
export const BaseUrl = (description: string) =>
  Type.String({ format: 'uri', pattern: '^https?://[^/@\\s?#]+(/[^\\s?#]*)?$', description });

/** Spread into a connector's `Type.Object({...})`: every option the transport takes besides `baseUrl`. */
export const HttpTransportOptions = {
  auth: Type.Optional(HttpAuth),
  connections: Type.Optional(Type.Integer({ minimum: 1, maximum: 256, default: 10, description: 'sockets per core' })),
  timeoutMs: Type.Optional(
    Type.Integer({
      minimum: 10,
      maximum: 600_000,
      default: 10_000,
      description: "cap on one operation (all attempts); the request's own deadline applies when it is sooner",
    }),
  ),
  retries: Type.Optional(
    Type.Object(
      {
        max: Type.Integer({ minimum: 0, maximum: 10, default: 2, description: 'retries after the first attempt' }),
        baseDelayMs: Type.Integer({ minimum: 1, maximum: 60_000, default: 50 }),
        maxDelayMs: Type.Integer({ minimum: 1, maximum: 60_000, default: 1_000 }),
      },
      { additionalProperties: false, default: {} },
    ),
  ),
  breaker: Type.Optional(
    Type.Object(
      {
        failureThreshold: Type.Integer({ minimum: 1, maximum: 1_000, default: 5, description: 'consecutive transport failures that open it' }),
        openMs: Type.Integer({ minimum: 1, maximum: 3_600_000, default: 30_000, description: 'how long it stays open' }),
        // Only 1 predates decision 0040; cockatiel probes one call at a time, so any other count is refused.
        halfOpenProbes: Type.Optional(
          Type.Literal(1, { description: 'only 1: a half-open breaker probes with one call and holds the others until it answers (decision 0040)' }),
        ),
      },
      { additionalProperties: false, default: {} },
    ),
  ),
} satisfies Record<string, TSchema>;

/** The options as a connector's schema delivers them (defaults may be missing when it skipped validation). */
export type HttpTransportOptions = { baseUrl: string } & Static<TObject<typeof HttpTransportOptions>>;

/** The options with every default filled in, as the transport uses them. */
export interface ResolvedHttpOptions {
  /** The connector's id: errors and logs name it. */
  connectorId: string;
  baseUrl: URL;
  auth: HttpAuth;
  connections: number;
  timeoutMs: number;
  retries: { max: number; baseDelayMs: number; maxDelayMs: number };
  breaker: { failureThreshold: number; openMs: number };
}

/** Options a connector cannot use; the message names the field. */
export class HttpOptionsError extends Error {
  constructor(connectorId: string, message: string) {
    super(`connector '${connectorId}': ${message}`);
    this.name = 'HttpOptionsError';
  }
}

/** Fills defaults (for callers that skipped the gateway's validation) and checks what the schema cannot. */
export function resolveHttpOptions(connectorId: string, options: HttpTransportOptions): ResolvedHttpOptions {
  const fail = (message: string) => new HttpOptionsError(connectorId, message);
  let baseUrl: URL;
  try {
    baseUrl = new URL(options.baseUrl);
  } catch {
    throw fail(`/baseUrl: '${options.baseUrl}' is not a URL`);
  }
  if (baseUrl.protocol !== 'http:' && baseUrl.protocol !== 'https:') throw fail('/baseUrl: must be http:// or https://');
  if (baseUrl.username || baseUrl.password) throw fail('/baseUrl: put credentials in /auth, not in the URL');
  const auth = options.auth ?? { type: 'none' };
  if (auth.type === 'mtls' && baseUrl.protocol !== 'https:') throw fail('/auth: mtls needs an https:// baseUrl');
  const retries = { max: 2, baseDelayMs: 50, maxDelayMs: 1_000, ...options.retries };
  if (retries.maxDelayMs < retries.baseDelayMs) throw fail('/retries/maxDelayMs: must not be below baseDelayMs');
  return {
    connectorId,
    baseUrl,
    auth,
    connections: options.connections ?? 10,
    timeoutMs: options.timeoutMs ?? 10_000,
    retries,
    breaker: breakerOptions(fail, options.breaker),
  };
}

/** The breaker's settings; a probe count other than 1 (not enforced by a caller that skipped validation) is named. */
function breakerOptions(fail: (message: string) => HttpOptionsError, given: HttpTransportOptions['breaker']): ResolvedHttpOptions['breaker'] {
  const { halfOpenProbes, failureThreshold, openMs } = (given ?? {}) as Partial<NonNullable<HttpTransportOptions['breaker']>> & { halfOpenProbes?: unknown };
  if (halfOpenProbes !== undefined && halfOpenProbes !== 1) {
    throw fail(`/breaker/halfOpenProbes: ${String(halfOpenProbes)} is not supported; a half-open breaker probes with exactly one call (decision 0040): remove the option`);
  }
  return { failureThreshold: failureThreshold ?? 5, openMs: openMs ?? 30_000 };
}
