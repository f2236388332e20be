// The client: one Cardline per tenant and user. It logs in with the password as a JWE, renews its token
// before it expires, sends each operation of the table with its retries, and answers in the route's dialect.
import { randomUUID } from 'node:crypto';
import { decodeJwt, type JWK } from 'jose';
import { CardlineConnectionError, CardlineEnvelopeError, CardlineProblemError, type ProblemBody } from './errors.js';
import { encryptFields, encryptTo, openSealed } from './crypto.js';
import { bindOperations, OPERATIONS, type Operations } from './generated/operations.js';
import { Paged, type CallOptions, type OperationMeta, type PageOptions, type PageShape, type Pending, type Transport } from './transport.js';
import { webhooks } from './webhooks.js';

export interface Credentials {
  username: string;
  password: string;
}

export interface RetryOptions {
  /** Attempts in all, the first included; default 4. */
  attempts?: number;
  /** The first backoff delay; default 200 ms, doubled at each retry, each spread by jitter (50-100 %). */
  baseDelayMs?: number;
  /** The longest delay, Retry-After included; default 30 s. */
  maxDelayMs?: number;
}

export interface CardlineOptions {
  /** The gateway's origin: `http://localhost:8080`. */
  baseUrl: string;
  /** The tenant id assigned at onboarding (sent as the TENANT header). */
  tenant: string;
  /**
   * Where renewal gets credentials: called whenever a new token is needed (before the current one expires, or
   * after a 401). Without it, renewal reuses the password given to `login`, kept in this object's memory.
   */
  credentials?: () => Credentials | Promise<Credentials>;
  /** Send every body as a JWE (`application/jose`): for tenants with `encryption.requireEncryptedBody`. */
  encryptBodies?: boolean;
  /** Encrypt the fields an operation accepts as JWEs (address lines, PIN blocks) in plain JSON bodies. */
  encryptFields?: boolean;
  /** The private half of the client key registered with PUT /v1/admin/client-key: opens sealed fields (`decrypt: true`). */
  clientKey?: JWK;
  /** Renew the token this long before it expires; default 60 s (a tenth of the lifetime for shorter ones). */
  renewBeforeSeconds?: number;
  retry?: RetryOptions;
  /** Injectable for tests: the fetch to send with (Node's global fetch by default), how to wait, the clock, jitter. */
  fetch?: typeof fetch;
  sleep?: (ms: number) => Promise<void>;
  /** The clock the token's expiry is compared with (JWEs carry the real time). */
  now?: () => number;
  random?: () => number;
}

interface Token {
  value: string;
  /** Seconds since the epoch. */
  exp: number;
  iat: number;
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

// The generated methods (bound in the constructor) as members of the class.
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging, @typescript-eslint/no-empty-object-type
export interface Cardline extends Operations {}

/**
 * A client of one tenant, logged in as one user:
 *
 *     const cl = new Cardline({ baseUrl: 'http://localhost:8080', tenant: 'demo' });
 *     await cl.login('integration', password);
 *     await cl.creditLimit.upgrade({ entityId: 'ENT-1001', amount: '75000.00' });
 */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export class Cardline implements Transport {
  /** Standard Webhooks verification and typed events of record. */
  static readonly webhooks = webhooks;

  readonly baseUrl: string;
  readonly tenantId: string;
  private readonly opts: CardlineOptions;
  private readonly fetchFn: typeof fetch;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly now: () => number;
  private readonly random: () => number;
  private token: Token | undefined;
  private renewing: Promise<void> | undefined;
  private remembered: Credentials | undefined;
  private gatewayKey: JWK | undefined;

  constructor(options: CardlineOptions) {
    this.opts = options;
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.tenantId = options.tenant;
    this.fetchFn = options.fetch ?? globalThis.fetch;
    this.sleep = options.sleep ?? defaultSleep;
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
    Object.assign(this, bindOperations(this));
  }

  /**
   * Logs in: fetches the tenant's gateway key (GET /api/keys), sends the password as a JWE to it and keeps the
   * token. Without a `credentials` callback the password is kept to log in again before the token expires.
   */
  async login(username: string, password: string): Promise<void> {
    if (!this.opts.credentials) this.remembered = { username, password };
    await this.authenticateWith({ username, password });
  }

  /** Forgets the token and the remembered password. */
  logout(): void {
    this.token = undefined;
    this.remembered = undefined;
  }

  /** When the current token expires (ms since the epoch), or undefined before login. */
  get tokenExpiresAt(): number | undefined {
    return this.token ? this.token.exp * 1000 : undefined;
  }

  /** Encrypts a value to the tenant's active gateway key: for a field the SDK does not encrypt itself. */
  async encrypt(plaintext: string): Promise<string> {
    // The JWE's iat is the real time: the gateway checks it to ±300 s.
    return encryptTo(await this.key(), plaintext);
  }

  private async key(refresh = false): Promise<JWK> {
    if (!this.gatewayKey || refresh) {
      const jwks = (await this.call(OPERATIONS['keys.public'], [], undefined, undefined)) as { keys: JWK[] };
      // The first key is the active one; the others are retiring after a rotation.
      this.gatewayKey = jwks.keys[0];
      if (!this.gatewayKey) throw new Error(`Tenant ${this.tenantId} publishes no encryption key`);
    }
    return this.gatewayKey;
  }

  private async authenticateWith(credentials: Credentials): Promise<void> {
    // Keys rotate: every login encrypts to the key published now.
    await this.key(true);
    const answer = (await this.call(OPERATIONS.authenticate, [], credentials, undefined, { encryptFields: true })) as { id_token: string };
    const claims = decodeJwt(answer.id_token);
    const iat = claims.iat ?? Math.floor(this.now() / 1000);
    this.token = { value: answer.id_token, exp: claims.exp ?? iat + 3600, iat };
  }

  /** Logs in again, once for all concurrent callers. */
  private renew(): Promise<void> {
    this.renewing ??= (async () => {
      const credentials = this.opts.credentials ? await this.opts.credentials() : this.remembered;
      if (!credentials) throw new CardlineConnectionError('Not logged in: call login() first', 0, undefined);
      await this.authenticateWith(credentials);
    })().finally(() => {
      this.renewing = undefined;
    });
    return this.renewing;
  }

  private async bearer(): Promise<string> {
    const t = this.token;
    const nowS = this.now() / 1000;
    const margin = this.opts.renewBeforeSeconds ?? Math.min(60, (t ? t.exp - t.iat : 600) / 10);
    if (!t || nowS >= t.exp - margin) await this.renew();
    return this.token!.value;
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
    const max = this.opts.retry?.maxDelayMs ?? 30_000;
    if (retryAfter !== undefined) return Math.min(max, retryAfter);
    const base = (this.opts.retry?.baseDelayMs ?? 200) * 2 ** attempt;
    return Math.min(max, base * (0.5 + this.random() / 2));
  }

  /** Sends one operation; the generated methods call it. */
  async call(op: OperationMeta, params: readonly string[], body: unknown, query: unknown, options: CallOptions = {}): Promise<unknown> {
    const url = this.urlOf(op, params, query);
    const idempotencyKey = op.kind === 'write' ? (options.idempotencyKey ?? randomUUID()) : undefined;
    const encryptBody = body !== undefined && (options.encryptBody ?? this.opts.encryptBodies ?? false);
    const encryptSome = body !== undefined && op.encryptedFields.length > 0 && (options.encryptFields ?? this.opts.encryptFields ?? false);
    const attempts = op.kind === 'once' ? 1 : Math.max(1, this.opts.retry?.attempts ?? 4);
    let renewed = false;

    for (let attempt = 0; ; attempt++) {
      const headers: Record<string, string> = { TENANT: this.tenantId, accept: 'application/json', ...options.headers };
      if (op.auth) headers.authorization = `Bearer ${await this.bearer()}`;
      if (idempotencyKey) headers['idempotency-key'] = idempotencyKey;
      let payload: string | undefined;
      if (body !== undefined) {
        // A JWE is accepted once: every attempt encrypts anew; the key compares the decrypted body.
        const fields = encryptSome ? await encryptFields(body, op.encryptedFields, (v) => this.encrypt(v)) : body;
        if (encryptBody) {
          payload = await this.encrypt(JSON.stringify(fields));
          headers['content-type'] = 'application/jose';
        } else {
          payload = JSON.stringify(fields);
          headers['content-type'] = 'application/json';
        }
      }

      let res: Response;
      try {
        res = await this.fetchFn(url, { method: op.method, headers, body: payload, signal: options.signal });
      } catch (err) {
        if (options.signal?.aborted || attempt + 1 >= attempts) {
          throw new CardlineConnectionError(`${op.method} ${op.path}: ${(err as Error).message}`, 0, undefined, { cause: err });
        }
        await this.sleep(this.backoff(attempt, undefined));
        continue;
      }

      const requestId = res.headers.get('x-request-id') ?? undefined;
      const text = await res.text();
      let json: unknown;
      try {
        json = text === '' ? undefined : JSON.parse(text);
      } catch {
        json = undefined;
      }
      const problem = (json ?? undefined) as Partial<ProblemBody> | undefined;

      if (res.status === 401 && op.auth && !renewed && (this.opts.credentials || this.remembered)) {
        // The token was refused (revoked, a key rotated, a clock apart): log in again once and resend.
        renewed = true;
        this.token = undefined;
        attempt--;
        continue;
      }
      const after = retryAfterMs(res.headers.get('retry-after'), this.now());
      if (attempt + 1 < attempts && retryable(op.kind, res.status, after !== undefined, problem)) {
        await this.sleep(this.backoff(attempt, after));
        continue;
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
    if (!this.opts.clientKey) throw new Error('decrypt: true needs the client key: new Cardline({ clientKey })');
    return openSealed(value, this.opts.clientKey);
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
