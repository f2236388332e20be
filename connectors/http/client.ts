// HTTP client of the shared transport: one undici Pool per core (shared by the tenants that use it), JSON
// in and out, bounded bodies, the call's AbortSignal honoured at every step, and close().
import { readFile } from 'node:fs/promises';
import type { Dispatcher, Pool } from 'undici';
import { UNREADABLE, type CoreAnswer } from './failures.js';
import type { HttpAuth, ResolvedHttpOptions } from './options.js';

/** A core answer larger than this is not a protocol answer; it is read as unreadable (→ pending). */
const MAX_BODY_BYTES = 1024 * 1024;

/** One request as a connector describes it. */
export interface CoreRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Relative to the baseUrl, e.g. /v1/cards/physical-upgrades. */
  path: string;
  body?: unknown;
}

/** One attempt of it on the wire. */
export interface CoreAttempt extends CoreRequest {
  /** Per-call headers (request id, idempotency key). */
  headers: Record<string, string>;
  signal: AbortSignal;
  /** Headers and body timeouts of this attempt. */
  timeoutMs: number;
}

/** The Authorization header for bearer and basic; built once, never logged. */
export function authorizationHeader(auth: HttpAuth): string | undefined {
  if (auth.type === 'bearer') return `Bearer ${auth.token}`;
  if (auth.type === 'basic') return `Basic ${Buffer.from(`${auth.username}:${auth.password}`, 'utf8').toString('base64')}`;
  return undefined;
}

const pools = new Map<string, { pool: Promise<Pool>; refs: number }>();

/** The shared Pool for this core and TLS identity: the same origin with another client certificate gets its own. */
function acquirePool(opts: ResolvedHttpOptions): { pool: Promise<Pool>; release: () => Promise<void> } {
  const tls = opts.auth.type === 'mtls' ? [opts.auth.cert, opts.auth.key, opts.auth.ca ?? ''] : [];
  const key = JSON.stringify([opts.baseUrl.origin, opts.connections, opts.timeoutMs, ...tls]);
  let entry = pools.get(key);
  if (!entry) {
    const pool = (async () => {
      const auth = opts.auth;
      const clientTls =
        auth.type === 'mtls'
          ? {
              cert: await readFile(auth.cert),
              key: await readFile(auth.key),
              ...(auth.ca ? { ca: await readFile(auth.ca) } : {}),
            }
          : {};
      // undici is loaded with the first pool (a process that never calls a REST core never loads it: the CLI).
      const { Pool } = await import('undici');
      return new Pool(opts.baseUrl.origin, {
        connections: opts.connections,
        connect: { timeout: opts.timeoutMs, ...clientTls },
        headersTimeout: opts.timeoutMs,
        bodyTimeout: opts.timeoutMs,
      });
    })();
    entry = { pool, refs: 0 };
    pools.set(key, entry);
    // A pool that cannot start (unreadable certificate) is not kept for the next instance.
    pool.catch(() => {
      if (pools.get(key) === entry) pools.delete(key);
    });
  }
  const e = entry;
  e.refs++;
  let released = false;
  return {
    pool: e.pool,
    release: async () => {
      if (released) return;
      released = true;
      if (--e.refs > 0) return;
      if (pools.get(key) === e) pools.delete(key);
      await e.pool.then((p) => p.close()).catch(() => undefined);
    },
  };
}

/** Rejects as soon as the signal fires, even while undici still waits for a connection. */
function raceAbort<T extends Dispatcher.ResponseData>(pending: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    void pending.then((r) => r.body.destroy(), () => undefined);
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      // A late answer is discarded; its socket is released.
      void pending.then((r) => r.body.destroy(), () => undefined);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    pending.then(
      (r) => {
        signal.removeEventListener('abort', onAbort);
        if (signal.aborted) r.body.destroy();
        else resolve(r);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}

async function readJson(body: Dispatcher.ResponseData['body'], signal: AbortSignal): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      size += (chunk as Buffer).length;
      if (size > MAX_BODY_BYTES) {
        body.destroy();
        return UNREADABLE;
      }
      chunks.push(chunk as Buffer);
    }
  } catch (err) {
    // A deadline or a body timeout is a timeout; any other break in the body leaves it unreadable.
    const code = (err as { code?: unknown }).code;
    if (signal.aborted || code === 'UND_ERR_BODY_TIMEOUT') throw err;
    return UNREADABLE;
  }
  if (size === 0) return UNREADABLE;
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
  } catch {
    return UNREADABLE;
  }
}

export class HttpClient {
  readonly origin: string;
  private readonly prefix: string;
  private readonly fixedHeaders: Record<string, string>;
  private readonly dispatcher: Promise<Dispatcher>;
  private readonly releasePool: () => Promise<void>;

  /** `dispatcher` replaces the shared Pool (tests pass an undici MockAgent). */
  constructor(opts: ResolvedHttpOptions, userAgent: string, dispatcher?: Dispatcher) {
    this.origin = opts.baseUrl.origin;
    this.prefix = opts.baseUrl.pathname.replace(/\/+$/, '');
    const authorization = authorizationHeader(opts.auth);
    this.fixedHeaders = {
      accept: 'application/json',
      'user-agent': userAgent,
      ...(authorization ? { authorization } : {}),
    };
    if (dispatcher) {
      this.dispatcher = Promise.resolve(dispatcher);
      this.releasePool = async () => undefined;
    } else {
      const { pool, release } = acquirePool(opts);
      this.dispatcher = pool;
      this.releasePool = release;
      // An unreadable certificate surfaces on the first call; this only keeps it from being unhandled here.
      pool.catch(() => undefined);
    }
  }

  /** Resolves once the pool exists (client certificate files read); rejects when they cannot be read. */
  async ready(): Promise<void> {
    await this.dispatcher;
  }

  /** Sends one request; throws undici's (or the signal's) error when no answer arrives. */
  async send(req: CoreAttempt): Promise<CoreAnswer> {
    const dispatcher = await this.dispatcher;
    const payload = req.body === undefined ? undefined : JSON.stringify(req.body);
    const response = await raceAbort(
      dispatcher.request({
        origin: this.origin,
        path: `${this.prefix}${req.path}`,
        method: req.method,
        headers: {
          ...this.fixedHeaders,
          ...(payload !== undefined ? { 'content-type': 'application/json' } : {}),
          ...req.headers,
        },
        ...(payload !== undefined ? { body: payload } : {}),
        signal: req.signal,
        headersTimeout: req.timeoutMs,
        bodyTimeout: req.timeoutMs,
      }),
      req.signal,
    );
    return { status: response.statusCode, body: await readJson(response.body, req.signal) };
  }

  close(): Promise<void> {
    return this.releasePool();
  }
}
