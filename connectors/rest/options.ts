// Options of the REST connector, validated at boot against this schema (errors name the field): the core's
// baseUrl plus the shared HTTP transport's options (auth, connections, timeoutMs, retries, breaker).
import { Type, type Static } from '@sinclair/typebox';
import { BaseUrl, HttpOptionsError, HttpTransportOptions, resolveHttpOptions, type ResolvedHttpOptions } from '../http/options.js';

export const RestOptions = Type.Object(
  {
    baseUrl: BaseUrl("the bank's root on the core, e.g. http://127.0.0.1:9090/banks/demo; operations are under <baseUrl>/v1"),
    ...HttpTransportOptions,
  },
  { additionalProperties: false },
);
export type RestOptions = Static<typeof RestOptions>;

export type ResolvedRestOptions = ResolvedHttpOptions;

/** Options the REST connector cannot use (`connector 'rest': /field: ...`). */
export const RestOptionsError = HttpOptionsError;

/** Fills defaults (for callers that skipped the gateway's validation) and checks what the schema cannot. */
export const resolveRestOptions = (options: RestOptions): ResolvedRestOptions => resolveHttpOptions('rest', options);
