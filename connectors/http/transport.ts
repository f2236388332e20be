// The transport every HTTP connector shares: one call is attempts under the retry policy, each through the
// core's circuit breaker, on the shared Pool, within the request's deadline; the connector brings only the
// request and the mapping of an answer to an outcome.
import { isBrokenCircuitError, isTaskCancelledError, type IRetryContext, type RetryPolicy } from 'cockatiel';
import type { Dispatcher } from 'undici';
import { ConnectorTimeoutError, ConnectorUnavailableError, type ConnectorContext, type ConnectorDeps, type OperationResult } from '../contract.js';
import { HttpClient, type CoreRequest } from './client.js';
import { classifyTransportError, type Classified, type CoreAnswer, type TransportFailure } from './failures.js';
import { HttpOptionsError, type ResolvedHttpOptions } from './options.js';
import { acquireBreaker, retryPolicy, type BreakerSnapshot, type CoreBreaker } from './policies.js';

/** Counters since the instance was created, for the metrics endpoint. */
export interface HttpTransportStats {
  calls: number;
  succeeded: number;
  rejected: number;
  pending: number;
  /** Calls that ended in ConnectorUnavailableError (fail-fast included). */
  failures: number;
  /** Calls that ended in ConnectorTimeoutError. */
  timeouts: number;
  /** Attempts made after a first one failed. */
  retries: number;
  /** Calls refused at once because the breaker was open. */
  shortCircuits: number;
  breaker: BreakerSnapshot;
}

/** Seams for tests: a dispatcher instead of the shared Pool (undici MockAgent), and the jitter source. */
export interface HttpTransportHooks {
  dispatcher?: Dispatcher;
  random?: () => number;
}

/** Maps the core's answer to an outcome. Pure: every rule belongs in the connector's transformers. */
export type AnswerMapper<T> = (answer: CoreAnswer) => Classified<T>;

// ── Why an attempt or a call ended, inside the transport ───────────────────────────────────────────

/** The request did not complete on the wire. */
class SendFailed extends Error {
  constructor(readonly failure: TransportFailure) {
    super(failure.code);
  }
}

/** The deadline passed; `detail` says where. */
class DeadlinePassed extends Error {}

/** An attempt that ended without a result; retried when `retryable`. Carries what the retry log needs. */
class AttemptFailed extends Error {
  constructor(
    readonly retryable: boolean,
    readonly reason: string,
    readonly log: ConnectorContext['logger'],
    readonly detail: Record<string, unknown>,
  ) {
    super(reason);
  }
}

/** The breaker counts transport failures and 5xx answers; 4xx and 422 are the core answering. */
const BREAKER_FAILURES = {
  error: (err: unknown) => err instanceof SendFailed,
  answer: (value: unknown) => (value as CoreAnswer).status >= 500,
};

/** Rejects with `onAbort()` as soon as the signal fires; a later outcome of `work` is discarded. */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal, onAbort: () => Error): Promise<T> {
  work.catch(() => undefined);
  if (signal.aborted) return Promise.reject(onAbort());
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(onAbort());
    signal.addEventListener('abort', abort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}

export class HttpTransport {
  readonly origin: string;
  private readonly client: HttpClient;
  private readonly breaker: CoreBreaker;
  private readonly releaseBreaker: () => void;
  /** Which breaker this transport goes through: transports with the same scope share it (one core, same settings). */
  readonly breakerScope: string;
  private readonly retry: RetryPolicy;
  private readonly counters = { calls: 0, succeeded: 0, rejected: 0, pending: 0, failures: 0, timeouts: 0, retries: 0, shortCircuits: 0 };

  /** A transport whose client certificate files have been read; a connector's `create` awaits this. */
  static async open(opts: ResolvedHttpOptions, userAgent: string, deps: ConnectorDeps, hooks: HttpTransportHooks = {}): Promise<HttpTransport> {
    const transport = new HttpTransport(opts, userAgent, deps, hooks);
    try {
      await transport.client.ready();
    } catch (err) {
      await transport.close();
      const code = (err as { code?: unknown }).code;
      throw new HttpOptionsError(opts.connectorId, `/auth: the client certificate files could not be read (${typeof code === 'string' ? code : 'error'})`);
    }
    return transport;
  }

  constructor(
    private readonly opts: ResolvedHttpOptions,
    userAgent: string,
    deps: ConnectorDeps,
    hooks: HttpTransportHooks = {},
  ) {
    this.origin = opts.baseUrl.origin;
    this.client = new HttpClient(opts, userAgent, hooks.dispatcher);
    const shared = acquireBreaker(this.origin, opts.breaker, BREAKER_FAILURES, (state) => {
      const log = state === 'open' ? deps.logger.warn.bind(deps.logger) : deps.logger.info.bind(deps.logger);
      log({ core: this.origin, breaker: state }, `circuit breaker for ${this.origin} is ${state}`);
    });
    this.breaker = shared.breaker;
    this.releaseBreaker = shared.release;
    this.breakerScope = shared.scope;
    this.retry = retryPolicy((err) => err instanceof AttemptFailed && err.retryable, opts.retries, hooks.random);
    this.retry.onRetry(({ delay, ...reason }) => {
      if (!('error' in reason) || !(reason.error instanceof AttemptFailed)) return;
      this.counters.retries++;
      reason.error.log.info({ ...reason.error.detail, delayMs: delay }, 'core call failed; retrying');
    });
  }

  /**
   * One operation, retried only when a repeat cannot apply it twice (never sent, deduped by key, or a GET).
   * Throws ConnectorTimeoutError past the deadline, ConnectorUnavailableError when the core cannot be used.
   */
  async call<T>(op: string, request: CoreRequest, ctx: ConnectorContext, map: AnswerMapper<T>): Promise<OperationResult<T>> {
    this.counters.calls++;
    const log = ctx.logger;
    // The request's deadline, capped by timeoutMs; undici gets the combined signal.
    const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(this.opts.timeoutMs)]);
    const deadlineAt = Date.now() + this.opts.timeoutMs;
    const headers: Record<string, string> = { 'x-request-id': ctx.requestId };
    if (ctx.idempotencyKey) headers['idempotency-key'] = ctx.idempotencyKey;
    if (ctx.traceparent) headers.traceparent = ctx.traceparent;
    // A read changes nothing, so repeating it is always safe.
    const repeatable = Boolean(ctx.idempotencyKey) || request.method === 'GET';
    // Where the call stands when the deadline passes, for the error's wording.
    let phase: 'before the core was called' | '(no answer)' | 'while waiting to retry' = 'before the core was called';

    const send = () => {
      phase = '(no answer)';
      return this.client
        .send({ ...request, headers, signal, timeoutMs: Math.max(1, deadlineAt - Date.now()) })
        .catch((err: unknown) => Promise.reject(new SendFailed(classifyTransportError(err, signal.aborted))));
    };

    const attempt = async ({ attempt }: IRetryContext): Promise<OperationResult<T>> => {
      if (signal.aborted) throw new DeadlinePassed(phase);
      let answer: CoreAnswer;
      try {
        answer = await this.breaker.policy.execute(send, signal);
      } catch (err) {
        if (err instanceof SendFailed && err.failure.kind === 'timeout') throw new DeadlinePassed('(no answer)');
        if (err instanceof SendFailed) {
          phase = 'while waiting to retry';
          const { kind, code } = err.failure;
          throw new AttemptFailed(kind === 'not-sent' || repeatable, `connection failed (${code})`, log, { op, attempt, code });
        }
        if (isTaskCancelledError(err)) throw new DeadlinePassed(phase);
        throw err;
      }
      phase = 'while waiting to retry';
      const outcome = map(answer);
      if (outcome.kind === 'unavailable') {
        throw new AttemptFailed(outcome.retryable && repeatable, outcome.reason, log, { op, attempt, status: answer.status });
      }
      log.debug({ op, attempt, status: answer.status, outcome: outcome.result.status }, 'core answered');
      return outcome.result;
    };

    try {
      // The retry's backoff and a wait for a half-open probe do not watch the signal: the deadline ends them here.
      const result = await untilAborted(this.retry.execute(attempt, signal), signal, () => new DeadlinePassed(phase));
      this.counters[result.status]++;
      return result;
    } catch (err) {
      if (err instanceof DeadlinePassed) {
        this.counters.timeouts++;
        throw new ConnectorTimeoutError(
          ctx.signal.aborted
            ? `the request's deadline passed ${err.message}; the outcome is unknown`
            : `the core did not answer within ${this.opts.timeoutMs} ms ${err.message}; the outcome is unknown`,
        );
      }
      if (isBrokenCircuitError(err)) {
        this.counters.failures++;
        this.counters.shortCircuits++;
        log.warn({ op, core: this.origin }, 'circuit breaker open; failing fast');
        throw new ConnectorUnavailableError(`core ${this.origin}: the circuit breaker is open after repeated failures; failing fast`);
      }
      if (err instanceof AttemptFailed) {
        this.counters.failures++;
        log.warn(err.detail, 'core call failed');
        throw new ConnectorUnavailableError(`core ${this.origin}: ${err.reason}`);
      }
      throw err;
    }
  }

  /** Ready when the breaker lets calls through and `GET path` answers 200 (a connector's `health()`). */
  async health(path: string): Promise<void> {
    if (this.breaker.snapshot().state === 'open') throw new ConnectorUnavailableError(`the circuit breaker for ${this.origin} is open`);
    const timeoutMs = Math.min(this.opts.timeoutMs, 5_000);
    const signal = AbortSignal.timeout(timeoutMs);
    let answer: CoreAnswer;
    try {
      answer = await this.client.send({ method: 'GET', path, headers: {}, signal, timeoutMs });
    } catch (err) {
      const failure = classifyTransportError(err, signal.aborted);
      throw failure.kind === 'timeout'
        ? new ConnectorTimeoutError(`the core did not answer its health check within ${timeoutMs} ms`)
        : new ConnectorUnavailableError(`the core's health check failed (${failure.code})`);
    }
    if (answer.status !== 200) throw new ConnectorUnavailableError(`the core's health check answered ${answer.status}`);
  }

  stats(): HttpTransportStats {
    return { ...this.counters, breaker: this.breaker.snapshot() };
  }

  async close(): Promise<void> {
    this.releaseBreaker();
    await this.client.close();
  }
}
