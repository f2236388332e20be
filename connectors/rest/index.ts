// The REST connector: drives a core that speaks the Cardline core REST protocol v1
// (schemas/core-protocol.openapi.json) with deadlines, safe retries and a circuit breaker per core.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Dispatcher } from 'undici';
import {
  ConnectorTimeoutError,
  ConnectorUnavailableError,
  defineConnector,
  type Connector,
  type ConnectorContext,
  type ConnectorDeps,
  type OperationResult,
  type PhysicalUpgradeInput,
  type PhysicalUpgradeResult,
  type UpgradeLimitInput,
  type UpgradeLimitResult,
} from '../contract.js';
import { acquireBreaker, type BreakerSnapshot, type CircuitBreaker } from './breaker.js';
import { CoreClient, type CoreRequest } from './client.js';
import { RestOptions, RestOptionsError, resolveRestOptions, type ResolvedRestOptions } from './options.js';
import {
  HEALTH_PATH,
  PHYSICAL_UPGRADE_PATH,
  backoffDelay,
  classifyTransportError,
  creditLimitPath,
  fromCoreCreditLimit,
  fromCorePhysicalUpgrade,
  toCoreCreditLimit,
  toCorePhysicalUpgrade,
  type Classified,
  type CoreAnswer,
} from './transformers.js';

export const REST_CONNECTOR_VERSION = '1.0.0';

/** Counters since the instance was created, for the metrics endpoint. */
export interface RestConnectorStats {
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
export interface RestConnectorHooks {
  dispatcher?: Dispatcher;
  random?: () => number;
}

type Operation = 'upgradeLimit' | 'upgradeToPhysical';

export class RestConnector implements Connector {
  private readonly client: CoreClient;
  private readonly breaker: CircuitBreaker;
  private readonly releaseBreaker: () => void;
  private readonly random: () => number;
  private readonly counters = { calls: 0, succeeded: 0, rejected: 0, pending: 0, failures: 0, timeouts: 0, retries: 0, shortCircuits: 0 };

  constructor(
    private readonly opts: ResolvedRestOptions,
    private readonly deps: ConnectorDeps,
    hooks: RestConnectorHooks = {},
  ) {
    this.client = new CoreClient(opts, hooks.dispatcher);
    this.random = hooks.random ?? Math.random;
    const origin = opts.baseUrl.origin;
    const shared = acquireBreaker(origin, opts.breaker, (state) => {
      const log = state === 'open' ? deps.logger.warn.bind(deps.logger) : deps.logger.info.bind(deps.logger);
      log({ core: origin, breaker: state }, `circuit breaker for ${origin} is ${state}`);
    });
    this.breaker = shared.breaker;
    this.releaseBreaker = shared.release;
  }

  /** Rejects when the client certificate files cannot be read. */
  ready(): Promise<void> {
    return this.client.ready();
  }

  upgradeLimit(input: UpgradeLimitInput, ctx: ConnectorContext): Promise<OperationResult<UpgradeLimitResult>> {
    return this.execute(
      'upgradeLimit',
      { method: 'POST', path: creditLimitPath(input.entityId), body: toCoreCreditLimit(input) },
      ctx,
      (answer) => fromCoreCreditLimit(answer, input),
    );
  }

  upgradeToPhysical(input: PhysicalUpgradeInput, ctx: ConnectorContext): Promise<OperationResult<PhysicalUpgradeResult>> {
    return this.execute(
      'upgradeToPhysical',
      { method: 'POST', path: PHYSICAL_UPGRADE_PATH, body: toCorePhysicalUpgrade(input) },
      ctx,
      (answer) => fromCorePhysicalUpgrade(answer, input),
    );
  }

  /** Ready when the breaker lets calls through and the bank answers its health path. */
  async health(): Promise<void> {
    if (this.breaker.snapshot().state === 'open') throw new ConnectorUnavailableError(`the circuit breaker for ${this.client.origin} is open`);
    const timeoutMs = Math.min(this.opts.timeoutMs, 5_000);
    const signal = AbortSignal.timeout(timeoutMs);
    let answer: CoreAnswer;
    try {
      answer = await this.client.send({ method: 'GET', path: HEALTH_PATH, headers: {}, signal, timeoutMs });
    } catch (err) {
      const failure = classifyTransportError(err, signal.aborted);
      throw failure.kind === 'timeout'
        ? new ConnectorTimeoutError(`the core did not answer its health check within ${timeoutMs} ms`)
        : new ConnectorUnavailableError(`the core's health check failed (${failure.code})`);
    }
    if (answer.status !== 200) throw new ConnectorUnavailableError(`the core's health check answered ${answer.status}`);
  }

  stats(): RestConnectorStats {
    return { ...this.counters, breaker: this.breaker.snapshot() };
  }

  async close(): Promise<void> {
    this.releaseBreaker();
    await this.client.close();
  }

  /**
   * One operation: attempts under the breaker until an answer maps to a result, or the failure is final.
   * Retries only when a repeat cannot apply the operation twice: the request certainly never left
   * (connection refused), or the core dedupes it by the caller's idempotency key.
   */
  private async execute<T>(
    op: Operation,
    request: Omit<CoreRequest, 'headers' | 'signal' | 'timeoutMs'>,
    ctx: ConnectorContext,
    map: (answer: CoreAnswer) => Classified<T>,
  ): Promise<OperationResult<T>> {
    this.counters.calls++;
    const log = ctx.logger;
    // The request's deadline, capped by timeoutMs; undici gets the combined signal.
    const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(this.opts.timeoutMs)]);
    const deadlineAt = Date.now() + this.opts.timeoutMs;
    const headers: Record<string, string> = { 'x-request-id': ctx.requestId };
    if (ctx.idempotencyKey) headers['idempotency-key'] = ctx.idempotencyKey;
    const keyed = Boolean(ctx.idempotencyKey);
    const { max, baseDelayMs, maxDelayMs } = this.opts.retries;

    const timedOut = (detail: string): never => {
      this.counters.timeouts++;
      throw new ConnectorTimeoutError(
        ctx.signal.aborted
          ? `the request's deadline passed ${detail}; the outcome is unknown`
          : `the core did not answer within ${this.opts.timeoutMs} ms ${detail}; the outcome is unknown`,
      );
    };
    const unavailable = (reason: string): never => {
      this.counters.failures++;
      throw new ConnectorUnavailableError(`core ${this.client.origin}: ${reason}`);
    };
    const retryOrFail = async (attempt: number, safe: boolean, reason: string, detail: Record<string, unknown>) => {
      if (!safe || attempt >= max) {
        log.warn({ op, attempt, ...detail }, 'core call failed');
        return unavailable(reason);
      }
      const delayMs = backoffDelay(attempt, baseDelayMs, maxDelayMs, this.random);
      log.info({ op, attempt, delayMs, ...detail }, 'core call failed; retrying');
      this.counters.retries++;
      try {
        await sleep(delayMs, undefined, { signal });
      } catch {
        timedOut('while waiting to retry');
      }
    };

    for (let attempt = 0; ; attempt++) {
      if (signal.aborted) timedOut('before the core was called');
      const permit = this.breaker.acquire();
      if (!permit) {
        this.counters.shortCircuits++;
        log.warn({ op, core: this.client.origin }, 'circuit breaker open; failing fast');
        return unavailable('the circuit breaker is open after repeated failures; failing fast');
      }

      let answer: CoreAnswer;
      try {
        answer = await this.client.send({ ...request, headers, signal, timeoutMs: Math.max(1, deadlineAt - Date.now()) });
      } catch (err) {
        permit.failure();
        const failure = classifyTransportError(err, signal.aborted);
        if (failure.kind === 'timeout') return timedOut('(no answer)');
        await retryOrFail(attempt, failure.kind === 'not-sent' || keyed, `connection failed (${failure.code})`, { code: failure.code });
        continue;
      }

      if (answer.status >= 500) permit.failure();
      else permit.success();
      const outcome = map(answer);
      if (outcome.kind === 'result') {
        const result = outcome.result;
        this.counters[result.status]++;
        log.debug({ op, attempt, status: answer.status, outcome: result.status }, 'core answered');
        return result;
      }
      await retryOrFail(attempt, outcome.retryable && keyed, outcome.reason, { status: answer.status });
    }
  }
}

/** Builds an instance; the seams in `hooks` are for tests. */
export async function createRestConnector(options: RestOptions, deps: ConnectorDeps, hooks: RestConnectorHooks = {}): Promise<RestConnector> {
  const connector = new RestConnector(resolveRestOptions(options), deps, hooks);
  try {
    await connector.ready();
  } catch (err) {
    await connector.close();
    const code = (err as { code?: unknown }).code;
    throw new RestOptionsError(`/auth: the client certificate files could not be read (${typeof code === 'string' ? code : 'error'})`);
  }
  return connector;
}

export default defineConnector({
  id: 'rest',
  version: REST_CONNECTOR_VERSION,
  optionsSchema: RestOptions,
  create: (options, deps) => createRestConnector(options, deps),
});
