// What both clients share (decision 0152): sending one operation of a generated table with its retries, its
// Idempotency-Key, its encrypted body or fields, and the answer in the route's dialect; and cursor paging.
// `Cardline` (a tenant's user, a token) and `CardlineAdmin` (the platform operator, an operator key) differ in
// who they say they are and which key a value is encrypted to.
import { randomUUID } from 'node:crypto';
import type { JWK } from 'jose';
import { encryptFields, openSealed } from './crypto.js';
import { CardlineConnectionError, CardlineEnvelopeError, CardlineProblemError, CardlineTimeoutError, type ProblemBody } from './errors.js';
import { CallTimers, checkTimeout } from './timers.js';
import { Paged, type CallOptions, type OperationMeta, type PageOptions, type PageShape, type Pending, type Transport } from './transport.js';

export interface RetryOptions {
  /** Attempts in all, the first included; default 4. */
  attempts?: number;
  /** The first backoff delay; default 200 ms, doubled at each retry, each spread by jitter (50-100 %). */
  baseDelayMs?: number;
  /** The longest delay, Retry-After included; default 30 s. */
  maxDelayMs?: number;
}

/** What both clients take besides who they are. */
export interface HttpOptions {
  /** The listener's origin: `http://localhost:8080` (public), `http://127.0.0.1:8081` (management). */
  baseUrl: string;
  retry?: RetryOptions;
  /**
   * The fetch every attempt is sent with (the global fetch by default): a test's recorder, a proxy's, or a
   * transport of one's own: the CLI's hands each request to the management app in its own process. It gets the
   * full URL and init (method, headers, body, signal) and answers a Response; a throw counts as no answer.
   */
  fetch?: typeof fetch;
  /**
   * How long one attempt may take, from sending the request to the last byte of the answer; default 40 s
   * (above the gateway's own request timeout, 30 s by default, so that a slow core answers as the gateway's
   * 503 or 504 rather than as no answer). An attempt that times out counts as no answer. `Infinity`: none.
   */
  attemptTimeoutMs?: number;
  /**
   * How long one call may take in all, its retries and the waits between them included; default 120 s. A retry
   * that could not start before it is not made; an attempt still running at it is aborted. `Infinity`: none.
   */
  deadlineMs?: number;
  /** Injectable for tests: how to wait, the clock, jitter. */
  sleep?: (ms: number) => Promise<void>;
  /** The clock Retry-After dates (and, in `Cardline`, the token's expiry) are compared with. */
  now?: () => number;
  random?: () => number;
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Retry-After in ms: seconds or an HTTP date; undefined when absent or unreadable. */
function retryAfterMs(value: string | null, now: number): number | undefined {
  if (value === null) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** Why an answer may be sent again, for an operation of that kind; undefined when it may not. */
function retryable(kind: OperationMeta['kind'], status: number, retryAfter: boolean, problem: Partial<ProblemBody> | undefined): boolean {
  if (kind === 'once') return false;
  // Rate limited, or the gateway draining: Retry-After says when.
  if ((status === 429 || status === 503) && retryAfter) return true;
  if (kind !== 'write') return false;
  // The core was not reached or failed before acting (CL_CORE_UNAVAILABLE): 5xx are not stored, so the same key goes through again.
  if (status === 502) return true;
  // The same key still in flight (CL_IDEMPOTENCY_IN_FLIGHT: a 409 with Retry-After, no business code): its answer comes next.
  if (status === 409 && retryAfter && problem?.businessCode === undefined) return true;
  return false;
}

/** The sending half of a client: the generated methods call `call` and `paged`. */
export abstract class CardlineHttp implements Transport {
  readonly baseUrl: string;
  protected readonly fetchFn: typeof fetch;
  protected readonly sleep: (ms: number) => Promise<void>;
  protected readonly now: () => number;
  protected readonly random: () => number;
  readonly #retry: RetryOptions;
  readonly #attemptTimeoutMs: number;
  readonly #deadlineMs: number;

  constructor(options: HttpOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    // Called as a function, not as this object's method: a browser's fetch refuses any other `this`.
    this.fetchFn = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.sleep = options.sleep ?? defaultSleep;
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
    this.#retry = options.retry ?? {};
    this.#attemptTimeoutMs = checkTimeout('attemptTimeoutMs', options.attemptTimeoutMs ?? 40_000);
    this.#deadlineMs = checkTimeout('deadlineMs', options.deadlineMs ?? 120_000);
  }

  /** Headers every request carries, before the call's own (`TENANT`). */
  protected abstract baseHeaders(): Record<string, string>;
  /** Who is asking, for one attempt of `op`: `Authorization`, after the call's own headers. */
  protected abstract authHeaders(op: OperationMeta): Promise<Record<string, string>>;
  /** After a 401 to `op`: whether to resend once (`Cardline` logs in again). */
  protected reauthenticate(_op: OperationMeta): boolean {
    return false;
  }
  /** Encrypts one value of `op`'s body (a field or the whole body) to the key the gateway opens it with. */
  protected abstract encryptFor(op: OperationMeta, params: readonly string[], plaintext: string): Promise<string>;
  /** The client's defaults for a call's `encryptBody` and `encryptFields`. */
  protected abstract encryptionDefaults(): { body: boolean; fields: boolean };
  /** The private client key that opens sealed fields (`decrypt: true`), if the client has one. */
  protected openingKey(): JWK | undefined {
    return undefined;
  }

  private urlOf(op: OperationMeta, params: readonly string[], query: unknown): string {
    let i = 0;
    const path = op.path.replace(/:(\w+)/g, () => encodeURIComponent(params[i++] ?? ''));
    const search = new URLSearchParams();
    for (const [k, v] of Object.entries((query ?? {}) as Record<string, unknown>)) if (v !== undefined && v !== null) search.set(k, String(v));
    const qs = search.toString();
    return `${this.baseUrl}${path}${qs ? `?${qs}` : ''}`;
  }

  private backoff(attempt: number, retryAfter: number | undefined): number {
    const max = this.#retry.maxDelayMs ?? 30_000;
    if (retryAfter !== undefined) return Math.min(max, retryAfter);
    const base = (this.#retry.baseDelayMs ?? 200) * 2 ** attempt;
    return Math.min(max, base * (0.5 + this.random() / 2));
  }

  /** Sends one operation; the generated methods call it. */
  async call(op: OperationMeta, params: readonly string[], body: unknown, query: unknown, options: CallOptions = {}): Promise<unknown> {
    const timers = new CallTimers(options.attemptTimeoutMs ?? this.#attemptTimeoutMs, options.deadlineMs ?? this.#deadlineMs, options.signal);
    try {
      return await this.send(op, params, body, query, options, timers);
    } finally {
      timers.close();
    }
  }

  private async send(op: OperationMeta, params: readonly string[], body: unknown, query: unknown, options: CallOptions, timers: CallTimers): Promise<unknown> {
    const url = this.urlOf(op, params, query);
    const idempotencyKey = op.kind === 'write' ? (options.idempotencyKey ?? randomUUID()) : undefined;
    const defaults = this.encryptionDefaults();
    const encryptBody = body !== undefined && (options.encryptBody ?? defaults.body);
    const encryptSome = body !== undefined && op.encryptedFields.length > 0 && (options.encryptFields ?? defaults.fields);
    const attempts = op.kind === 'once' ? 1 : Math.max(1, this.#retry.attempts ?? 4);
    const encrypt = (v: string) => this.encryptFor(op, params, v);
    let renewed = false;

    for (let attempt = 0; ; attempt++) {
      const headers: Record<string, string> = { ...this.baseHeaders(), accept: 'application/json', ...options.headers };
      if (op.auth) Object.assign(headers, await this.authHeaders(op));
      if (idempotencyKey) headers['idempotency-key'] = idempotencyKey;
      let payload: string | undefined;
      if (body !== undefined) {
        // A JWE is accepted once: every attempt encrypts anew; the key compares the decrypted body.
        const fields = encryptSome ? await encryptFields(body, op.encryptedFields, encrypt) : body;
        if (encryptBody) {
          payload = await encrypt(JSON.stringify(fields));
          headers['content-type'] = 'application/jose';
        } else {
          payload = JSON.stringify(fields);
          headers['content-type'] = 'application/json';
        }
      }

      const attemptSignal = timers.attempt();
      let res: Response;
      let text: string;
      try {
        res = await this.fetchFn(url, { method: op.method, headers, body: payload, signal: attemptSignal.signal });
        // The body is read under the same timers: an answer whose headers came and whose body never ends is no answer.
        text = await res.text();
      } catch (err) {
        const timedOut = timers.expired() ? 'deadline' : attemptSignal.timedOut() ? 'attempt' : undefined;
        const delay = this.backoff(attempt, undefined);
        // Retries stop at the deadline: one that could not start before it is not waited for.
        const last = attempt + 1 >= attempts || options.signal?.aborted || timedOut === 'deadline' || !timers.allows(delay);
        if (last) {
          throw timedOut
            ? new CardlineTimeoutError(op, timedOut, timedOut === 'deadline' ? timers.deadlineMs : timers.attemptMs, attempt + 1, idempotencyKey, { cause: err })
            : new CardlineConnectionError(`${op.method} ${op.path}: ${(err as Error).message}`, 0, undefined, { cause: err });
        }
        await this.sleep(delay);
        continue;
      } finally {
        attemptSignal.done();
      }

      const requestId = res.headers.get('x-request-id') ?? undefined;
      let json: unknown;
      try {
        json = text === '' ? undefined : JSON.parse(text);
      } catch {
        json = undefined;
      }
      const problem = (json ?? undefined) as Partial<ProblemBody> | undefined;

      if (res.status === 401 && op.auth && !renewed && this.reauthenticate(op)) {
        // The token was refused (revoked, a key rotated, a clock apart): log in again once and resend.
        renewed = true;
        attempt--;
        continue;
      }
      const after = retryAfterMs(res.headers.get('retry-after'), this.now());
      if (attempt + 1 < attempts && retryable(op.kind, res.status, after !== undefined, problem)) {
        const delay = this.backoff(attempt, after);
        if (timers.allows(delay)) {
          await this.sleep(delay);
          continue;
        }
      }

      if (res.status === 202) {
        const pending: Pending = {
          pending: true,
          status: 202,
          operation: op.id,
          detail: problem?.detail,
          requestId,
          idempotencyKey,
        };
        return pending;
      }
      if (res.ok) {
        if (json === undefined && text !== '') throw new CardlineConnectionError(`${op.method} ${op.path}: the answer is not JSON`, res.status, requestId);
        return options.decrypt ? this.open(json) : json;
      }
      throw this.errorOf(op, res.status, json, requestId);
    }
  }

  private async open(value: unknown): Promise<unknown> {
    const key = this.openingKey();
    if (!key) throw new Error('decrypt: true needs the client key: new Cardline({ clientKey })');
    return openSealed(value, key);
  }

  private errorOf(op: OperationMeta, status: number, json: unknown, requestId: string | undefined): Error {
    const body = json as Record<string, unknown> | undefined;
    const exception = body?.exception as { errorCode: string; shortMessage: string; detailMessage: string } | null | undefined;
    if (exception && typeof exception.errorCode === 'string') return new CardlineEnvelopeError(status, exception, requestId);
    if (body && typeof body.title === 'string' && typeof body.status === 'number') return new CardlineProblemError(status, body as unknown as ProblemBody, requestId);
    return new CardlineConnectionError(`${op.method} ${op.path}: answered ${status} without a ${op.dialect} body`, status, requestId);
  }

  /** A cursor-paged list; the generated list methods call it. */
  paged<T, R extends PageShape<T>>(
    op: OperationMeta,
    params: readonly string[],
    _body: unknown,
    query: unknown,
    options?: PageOptions,
  ): Paged<T, R> {
    return new Paged<T, R>(
      (cursor) => this.call(op, params, undefined, { ...(query as object | undefined), ...(cursor ? { cursor } : {}) }, options) as Promise<R | Pending>,
    );
  }
}
