// The timers of one call: an overall deadline and a timeout per attempt, each an abort of what is in flight.
// Plain AbortControllers and setTimeout, so that the SDK runs alike in Node, a browser and an edge runtime.

/** setTimeout's longest delay; a longer one would fire at once. */
const LONGEST = 2 ** 31 - 1;

/** A timeout option as given: a positive number of milliseconds, or Infinity for none. */
export function checkTimeout(name: string, ms: number): number {
  if (ms === Infinity || (Number.isFinite(ms) && ms > 0 && ms <= LONGEST)) return ms;
  throw new TypeError(`${name} must be a number of milliseconds from 1 to ${LONGEST}, or Infinity: got ${String(ms)}`);
}

const clock = () => globalThis.performance.now();

/** One attempt's signal: aborted by the caller's signal, the call's deadline or the attempt's own timeout. */
export interface AttemptSignal {
  readonly signal: AbortSignal;
  /** Whether the attempt's own timeout aborted it. */
  timedOut(): boolean;
  /** Stops the attempt's timer and lets go of the signals it listened to. */
  done(): void;
}

export class CallTimers {
  readonly attemptMs: number;
  readonly deadlineMs: number;
  readonly #endsAt: number;
  readonly #deadline = new AbortController();
  readonly #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    attemptMs: number,
    deadlineMs: number,
    private readonly caller: AbortSignal | undefined,
  ) {
    this.attemptMs = checkTimeout('attemptTimeoutMs', attemptMs);
    this.deadlineMs = checkTimeout('deadlineMs', deadlineMs);
    this.#endsAt = clock() + this.deadlineMs;
    if (this.deadlineMs !== Infinity) this.#timer = setTimeout(() => this.#deadline.abort(), this.deadlineMs);
  }

  /** Whether the deadline has passed. */
  expired(): boolean {
    return this.#deadline.signal.aborted;
  }

  /** Whether an attempt could still start after waiting `delayMs`. */
  allows(delayMs: number): boolean {
    return !this.expired() && clock() + delayMs < this.#endsAt;
  }

  attempt(): AttemptSignal {
    const controller = new AbortController();
    const sources = [this.caller, this.#deadline.signal].filter((s): s is AbortSignal => s !== undefined);
    const forward = () => controller.abort(sources.find((s) => s.aborted)?.reason);
    for (const s of sources) {
      if (s.aborted) forward();
      else s.addEventListener('abort', forward, { once: true });
    }
    let timedOut = false;
    const timer =
      this.attemptMs === Infinity
        ? undefined
        : setTimeout(() => {
            timedOut = true;
            controller.abort(new Error(`no answer within ${this.attemptMs} ms`));
          }, this.attemptMs);
    return {
      signal: controller.signal,
      timedOut: () => timedOut,
      done: () => {
        if (timer !== undefined) clearTimeout(timer);
        for (const s of sources) s.removeEventListener('abort', forward);
      },
    };
  }

  close(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
  }
}
