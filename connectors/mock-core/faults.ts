// Fault injection of the mock core: configured rates drawn from a seeded PRNG, or one fault per request by header.
import type { FaultConfig, FaultConfigUpdate } from '../../schemas/core-protocol.js';

export type Fault = { kind: 'error' } | { kind: 'timeout' } | { kind: 'reset' } | { kind: 'latency'; ms: number };

const DEFAULT_FAULTS: FaultConfig = { latencyMs: 0, errorRate: 0, timeoutRate: 0, resetRate: 0, seed: 1 };

/** The longest a request is delayed or held, so that nothing waits forever. */
export const MAX_HOLD_MS = 60_000;

/** A small, fast 32-bit PRNG: the same seed gives the same sequence on every run and platform. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** Reads `X-Mock-Fault: error|timeout|reset|latency=<ms>`; the route schema has already checked the shape. */
export function parseFaultHeader(value: string | undefined): Fault | undefined {
  if (!value) return undefined;
  if (value === 'error' || value === 'timeout' || value === 'reset') return { kind: value };
  const m = /^latency=(\d{1,5})$/.exec(value);
  return m ? { kind: 'latency', ms: Math.min(Number(m[1]), MAX_HOLD_MS) } : undefined;
}

export class FaultInjector {
  private config: FaultConfig = { ...DEFAULT_FAULTS };
  private random: () => number = mulberry32(DEFAULT_FAULTS.seed);

  constructor(initial: FaultConfigUpdate = {}) {
    this.configure(initial);
  }

  /** Replaces the configuration (missing fields take defaults) and restarts the PRNG from the seed. */
  configure(update: FaultConfigUpdate): FaultConfig {
    this.config = { ...DEFAULT_FAULTS, ...update };
    this.random = mulberry32(this.config.seed);
    return this.current();
  }

  current(): FaultConfig {
    return { ...this.config };
  }

  /** The configured latency every operation waits out before it is applied (or faulted). */
  get latencyMs(): number {
    return this.config.latencyMs;
  }

  /** One fault draw per operation, so the sequence depends only on the seed and the count. */
  draw(): Fault | undefined {
    const r = this.random();
    const { errorRate, timeoutRate, resetRate } = this.config;
    if (r < errorRate) return { kind: 'error' };
    if (r < errorRate + timeoutRate) return { kind: 'timeout' };
    if (r < errorRate + timeoutRate + resetRate) return { kind: 'reset' };
    return undefined;
  }
}
