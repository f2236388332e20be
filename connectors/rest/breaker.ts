// Circuit breaker per core: after N consecutive transport failures calls fail fast for a while, then a
// few probes decide whether the core is back. Shared by every connector instance pointing at that core.

export type BreakerState = 'closed' | 'open' | 'half-open';

export interface BreakerOptions {
  failureThreshold: number;
  openMs: number;
  halfOpenProbes: number;
}

export interface BreakerSnapshot {
  state: BreakerState;
  consecutiveFailures: number;
  /** How many times it has opened since it was created. */
  opens: number;
}

/** One call's pass through the breaker: report exactly one outcome. */
export interface Permit {
  success(): void;
  failure(): void;
}

export class CircuitBreaker {
  private state: BreakerState = 'closed';
  private consecutiveFailures = 0;
  private openedAt = 0;
  private probesInFlight = 0;
  private opens = 0;

  constructor(
    private readonly opts: BreakerOptions,
    private readonly now: () => number = Date.now,
    /** Told of every state change, for logs. */
    private readonly onChange: (state: BreakerState) => void = () => undefined,
  ) {}

  /** A permit to call the core, or null when the call must fail fast. */
  acquire(): Permit | null {
    if (this.state === 'open' && this.now() - this.openedAt >= this.opts.openMs) {
      this.transition('half-open');
      this.probesInFlight = 0;
    }
    if (this.state === 'open') return null;
    if (this.state === 'half-open') {
      if (this.probesInFlight >= this.opts.halfOpenProbes) return null;
      this.probesInFlight++;
      return this.permit(true);
    }
    return this.permit(false);
  }

  snapshot(): BreakerSnapshot {
    // Report half-open as soon as it is due, even before the next call arrives.
    const due = this.state === 'open' && this.now() - this.openedAt >= this.opts.openMs;
    return { state: due ? 'half-open' : this.state, consecutiveFailures: this.consecutiveFailures, opens: this.opens };
  }

  private permit(probe: boolean): Permit {
    let settled = false;
    const settle = (ok: boolean) => {
      if (settled) return;
      settled = true;
      if (probe) {
        this.probesInFlight--;
        if (this.state !== 'half-open') return;
        if (ok) this.close();
        else this.open();
        return;
      }
      // Outcomes of calls let through while closed; once it has opened, only probes decide.
      if (this.state !== 'closed') return;
      if (ok) {
        this.consecutiveFailures = 0;
      } else if (++this.consecutiveFailures >= this.opts.failureThreshold) {
        this.open();
      }
    };
    return { success: () => settle(true), failure: () => settle(false) };
  }

  private open(): void {
    this.openedAt = this.now();
    this.opens++;
    this.transition('open');
  }

  private close(): void {
    this.consecutiveFailures = 0;
    this.transition('closed');
  }

  private transition(state: BreakerState): void {
    if (this.state === state) return;
    this.state = state;
    this.onChange(state);
  }
}

/**
 * Breakers by core, reference-counted: connector instances of tenants that point at the same origin with
 * the same settings share one breaker, so a dead core trips once for all of them.
 */
const shared = new Map<string, { breaker: CircuitBreaker; refs: number; listeners: Set<(s: BreakerState) => void> }>();

export function acquireBreaker(
  origin: string,
  opts: BreakerOptions,
  onChange: (state: BreakerState) => void,
): { breaker: CircuitBreaker; release: () => void } {
  const key = `${origin}|${opts.failureThreshold}|${opts.openMs}|${opts.halfOpenProbes}`;
  let entry = shared.get(key);
  if (!entry) {
    const listeners = new Set<(s: BreakerState) => void>();
    entry = { breaker: new CircuitBreaker(opts, Date.now, (s) => listeners.forEach((l) => l(s))), refs: 0, listeners };
    shared.set(key, entry);
  }
  const e = entry;
  e.refs++;
  e.listeners.add(onChange);
  let released = false;
  return {
    breaker: e.breaker,
    release: () => {
      if (released) return;
      released = true;
      e.listeners.delete(onChange);
      if (--e.refs === 0 && shared.get(key) === e) shared.delete(key);
    },
  };
}
