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
  type BlockCardInput,
  type CardDetails,
  type CardRef,
  type CardSummary,
  type CreditLimitResult,
  type OperationResult,
  type PhysicalUpgradeInput,
  type PhysicalUpgradeResult,
  type PreferencesInput,
  type SetPinInput,
  type UpgradeLimitInput,
  type UpgradeLimitResult,
} from '../contract.js';
import type { Preferences } from '../../schemas/cards.js';
import { acquireBreaker, type BreakerSnapshot, type CircuitBreaker } from './breaker.js';
import { CoreClient, type CoreRequest } from './client.js';
import { RestOptions, RestOptionsError, resolveRestOptions, type ResolvedRestOptions } from './options.js';
import {
  CARD_CHANGE_SUFFIX,
  HEALTH_PATH,
  PHYSICAL_UPGRADE_PATH,
  backoffDelay,
  cardPath,
  cardResolutionPath,
  classifyTransportError,
  creditLimitPath,
  entityCardsPath,
  fromCoreCard,
  fromCoreCardChange,
  fromCoreCardList,
  fromCoreCardResolution,
  fromCoreCreditLimit,
  fromCoreCreditLimitRead,
  fromCorePhysicalUpgrade,
  fromCorePin,
  fromCorePreferences,
  fromCorePreferencesApplied,
  isBareCardId,
  toCoreBlock,
  toCoreCreditLimit,
  toCorePhysicalUpgrade,
  toCorePin,
  toCorePreferences,
  type CardChange,
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

/** Contract operations, plus the card lookup some of them make first. */
type Operation = Exclude<keyof Connector, 'health' | 'close'> | 'resolveCard';

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

  activateCard(input: CardRef, ctx: ConnectorContext): Promise<OperationResult<CardSummary>> {
    return this.cardChange('activateCard', 'activate', input, ctx);
  }

  lockCard(input: CardRef, ctx: ConnectorContext): Promise<OperationResult<CardSummary>> {
    return this.cardChange('lockCard', 'lock', input, ctx);
  }

  unlockCard(input: CardRef, ctx: ConnectorContext): Promise<OperationResult<CardSummary>> {
    return this.cardChange('unlockCard', 'unlock', input, ctx);
  }

  blockCard(input: BlockCardInput, ctx: ConnectorContext): Promise<OperationResult<CardSummary>> {
    return this.cardChange('blockCard', 'block', input, ctx, toCoreBlock(input));
  }

  advanceFulfilment(input: { cardId: string }, ctx: ConnectorContext): Promise<OperationResult<CardSummary>> {
    return this.execute(
      'advanceFulfilment',
      { method: 'POST', path: cardPath(input.cardId, CARD_CHANGE_SUFFIX.advanceFulfilment) },
      ctx,
      (answer) => fromCoreCardChange(answer, 'advanceFulfilment', input.cardId),
    );
  }

  updatePreferences(input: PreferencesInput, ctx: ConnectorContext): Promise<OperationResult<Preferences>> {
    return this.execute(
      'updatePreferences',
      { method: 'PUT', path: cardPath(input.cardId, '/preferences'), body: toCorePreferences(input) },
      ctx,
      (answer) => fromCorePreferencesApplied(answer, input),
    );
  }

  /** The PIN block travels in the body only: never in a path, a header or a log line. */
  setPin(input: SetPinInput, ctx: ConnectorContext): Promise<OperationResult<{ cardId: string }>> {
    return this.execute('setPin', { method: 'PUT', path: cardPath(input.cardId, '/pin'), body: toCorePin(input) }, ctx, (answer) =>
      fromCorePin(answer, input.cardId),
    );
  }

  listCards(input: { entityId: string }, ctx: ConnectorContext): Promise<OperationResult<CardSummary[]>> {
    return this.execute('listCards', { method: 'GET', path: entityCardsPath(input.entityId) }, ctx, (answer) => fromCoreCardList(answer, input.entityId));
  }

  getCard(input: { cardId: string }, ctx: ConnectorContext): Promise<OperationResult<CardDetails>> {
    return this.execute('getCard', { method: 'GET', path: cardPath(input.cardId) }, ctx, (answer) => fromCoreCard(answer, input.cardId));
  }

  getPreferences(input: { cardId: string }, ctx: ConnectorContext): Promise<OperationResult<Preferences>> {
    return this.execute('getPreferences', { method: 'GET', path: cardPath(input.cardId, '/preferences') }, ctx, (answer) =>
      fromCorePreferences(answer, input.cardId),
    );
  }

  getCreditLimit(input: { entityId: string }, ctx: ConnectorContext): Promise<OperationResult<CreditLimitResult>> {
    return this.execute('getCreditLimit', { method: 'GET', path: creditLimitPath(input.entityId) }, ctx, (answer) =>
      fromCoreCreditLimitRead(answer, input.entityId),
    );
  }

  /**
   * A lifecycle change by CardRef. The protocol's change paths take a cardId; a reference by entity or kit
   * is resolved first (GET /v1/card-resolution, under the same idempotency key, so that a retry resolves
   * to the card the first attempt changed). A refusal of the lookup is the operation's refusal.
   */
  private async cardChange(op: Operation, change: CardChange, ref: CardRef, ctx: ConnectorContext, body?: unknown): Promise<OperationResult<CardSummary>> {
    let cardId: string;
    if (isBareCardId(ref)) {
      cardId = ref.cardId;
    } else {
      const resolved = await this.execute('resolveCard', { method: 'GET', path: cardResolutionPath(ref, change) }, ctx, fromCoreCardResolution);
      if (resolved.status !== 'succeeded') return resolved as OperationResult<never>;
      cardId = resolved.value.cardId;
    }
    return this.execute(
      op,
      { method: 'POST', path: cardPath(cardId, CARD_CHANGE_SUFFIX[change]), ...(body === undefined ? {} : { body }) },
      ctx,
      (answer) => fromCoreCardChange(answer, change, cardId, body as Partial<BlockCardInput> | undefined),
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
   * (connection refused), the core dedupes it by the caller's idempotency key, or it is a read (GET).
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
    // A read changes nothing, so repeating it is always safe.
    const repeatable = Boolean(ctx.idempotencyKey) || request.method === 'GET';
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
        await retryOrFail(attempt, failure.kind === 'not-sent' || repeatable, `connection failed (${failure.code})`, { code: failure.code });
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
      await retryOrFail(attempt, outcome.retryable && repeatable, outcome.reason, { status: answer.status });
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
