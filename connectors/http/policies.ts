// Resilience policies of the shared HTTP transport, built from cockatiel: a circuit breaker per core
// (shared by every connector instance that points at it) and a retry with full-jitter exponential backoff.
import {
  CircuitState,
  ConsecutiveBreaker,
  ExponentialBackoff,
  circuitBreaker,
  handleWhen,
  noJitterGenerator,
  retry,
  type CircuitBreakerPolicy,
  type GeneratorFn,
  type RetryPolicy,
} from 'cockatiel';

export type BreakerState = 'closed' | 'open' | 'half-open';

export interface BreakerOptions {
  failureThreshold: number;
  openMs: number;
}

export interface BreakerSnapshot {
  state: BreakerState;
  consecutiveFailures: number;
  /** How many times it has opened since it was created. */
  opens: number;
}

/** What the breaker counts as a failure of the core: a thrown error, and an answer that failed. */
export interface FailureFilter {
  error: (err: unknown) => boolean;
  answer: (value: unknown) => boolean;
}

/** Full-jitter exponential backoff (AWS architecture blog): uniform in [0, min(maxDelay, initialDelay·2^attempt)). */
export const fullJitter =
  (random: () => number = Math.random): GeneratorFn<number> =>
  (attempt, options) => {
    const [ceiling, next] = noJitterGenerator(attempt, options);
    return [Math.floor(random() * ceiling), next];
  };

/** Retries what `retryable` accepts, at most `max` times, with full jitter; timers do not hold the process. */
export function retryPolicy(
  retryable: (err: unknown) => boolean,
  opts: { max: number; baseDelayMs: number; maxDelayMs: number },
  random?: () => number,
): RetryPolicy {
  const backoff = new ExponentialBackoff({ generator: fullJitter(random), initialDelay: opts.baseDelayMs, maxDelay: opts.maxDelayMs });
  return retry(handleWhen(retryable), { maxAttempts: opts.max, backoff }).dangerouslyUnref();
}

/** cockatiel's breaker, reporting failures, openings, and half-open as soon as `openMs` passed. */
export class CoreBreaker {
  readonly policy: CircuitBreakerPolicy;
  private readonly counter: ConsecutiveBreaker;
  private openedAt = 0;
  private opens = 0;

  constructor(
    private readonly opts: BreakerOptions,
    failures: FailureFilter,
  ) {
    this.counter = new ConsecutiveBreaker(opts.failureThreshold);
    this.policy = circuitBreaker(handleWhen(failures.error).orWhenResult(failures.answer), {
      halfOpenAfter: opts.openMs,
      breaker: this.counter,
    });
    this.policy.onBreak(() => {
      this.openedAt = Date.now();
      this.opens++;
    });
  }

  /** Subscribes to state changes; returns the unsubscribe. */
  onChange(listener: (state: BreakerState) => void): () => void {
    return this.policy.onStateChange((s) => listener(stateName(s))).dispose;
  }

  snapshot(): BreakerSnapshot {
    const state = this.policy.state;
    const due = state === CircuitState.Open && Date.now() - this.openedAt >= this.opts.openMs;
    return { state: due ? 'half-open' : stateName(state), consecutiveFailures: this.counter.state, opens: this.opens };
  }
}

const stateName = (s: CircuitState): BreakerState =>
  s === CircuitState.Closed ? 'closed' : s === CircuitState.HalfOpen ? 'half-open' : 'open';

/** Breakers by core, reference-counted: tenants on one origin share one, so a dead core trips once. */
const shared = new Map<string, { breaker: CoreBreaker; refs: number }>();

export function acquireBreaker(
  origin: string,
  opts: BreakerOptions,
  failures: FailureFilter,
  onChange: (state: BreakerState) => void,
): { breaker: CoreBreaker; release: () => void; scope: string } {
  const key = `${origin}|${opts.failureThreshold}|${opts.openMs}`;
  let entry = shared.get(key);
  if (!entry) {
    entry = { breaker: new CoreBreaker(opts, failures), refs: 0 };
    shared.set(key, entry);
  }
  const e = entry;
  e.refs++;
  const unsubscribe = e.breaker.onChange(onChange);
  let released = false;
  return {
    breaker: e.breaker,
    scope: key,
    release: () => {
      if (released) return;
      released = true;
      unsubscribe();
      if (--e.refs === 0 && shared.get(key) === e) shared.delete(key);
    },
  };
}
