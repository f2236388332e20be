// One call's deadline and per-attempt timeout, on plain AbortControllers and setTimeout (any runtime).

const LONGEST = 2 ** 31 - 1;

export function checkTimeout(name: string, ms: number): number {
  if (ms === Infinity || (Number.isFinite(ms) && ms > 0 && ms <= LONGEST)) return ms;
  throw new TypeError(`${name} must be a number of milliseconds from 1 to ${LONGEST}, or Infinity: got ${String(ms)}`);
}

const clock = () => globalThis.performance.now();

/** One attempt's signal: aborted by the caller's signal, the call's deadline or the attempt's own timeout. */
export interface AttemptSignal {
  readonly signal: AbortSignal;
  timedOut(): boolean;
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
