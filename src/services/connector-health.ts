// Each named connector's recent calls, for the connectors view: calls, core failures and latency over the
// last five minutes, in ten-second buckets that age out (what an operator compares cores by, decision 0113).

/** How a call ended; `business` and `pending` are answers of a working core, the rest its failures. */
export type CallKind = 'succeeded' | 'business' | 'pending' | 'unavailable' | 'timeout' | 'internal';
const FAILURES: ReadonlySet<CallKind> = new Set(['unavailable', 'timeout', 'internal']);

const BUCKET_MS = 10_000;
const BUCKETS = 30;
const WINDOW_SECONDS = (BUCKET_MS * BUCKETS) / 1000;

interface Bucket {
  /** Which ten seconds it counts (a stale one is reset before use). */
  slot: number;
  calls: number;
  failures: number;
  latencySumMs: number;
  latencyMaxMs: number;
}

export interface ConnectorWindow {
  windowSeconds: number;
  calls: number;
  failures: number;
  /** failures / calls, 0 without calls. */
  errorRate: number;
  latencyMs: { avg: number; max: number };
}

export class ConnectorHealth {
  private readonly rings = new Map<string, Bucket[]>();

  constructor(private readonly now: () => number = Date.now) {}

  record(tenantId: string, name: string, kind: CallKind, latencyMs: number): void {
    const key = `${tenantId}\u0000${name}`;
    let ring = this.rings.get(key);
    if (!ring) {
      ring = Array.from({ length: BUCKETS }, () => ({ slot: -1, calls: 0, failures: 0, latencySumMs: 0, latencyMaxMs: 0 }));
      this.rings.set(key, ring);
    }
    const slot = Math.floor(this.now() / BUCKET_MS);
    const b = ring[slot % BUCKETS]!;
    if (b.slot !== slot) Object.assign(b, { slot, calls: 0, failures: 0, latencySumMs: 0, latencyMaxMs: 0 });
    b.calls++;
    if (FAILURES.has(kind)) b.failures++;
    b.latencySumMs += latencyMs;
    b.latencyMaxMs = Math.max(b.latencyMaxMs, latencyMs);
  }

  /** The last five minutes of one connector of a tenant. */
  window(tenantId: string, name: string): ConnectorWindow {
    const slot = Math.floor(this.now() / BUCKET_MS);
    const live = (this.rings.get(`${tenantId}\u0000${name}`) ?? []).filter((b) => b.slot > slot - BUCKETS);
    const calls = live.reduce((n, b) => n + b.calls, 0);
    const failures = live.reduce((n, b) => n + b.failures, 0);
    const sum = live.reduce((n, b) => n + b.latencySumMs, 0);
    return {
      windowSeconds: WINDOW_SECONDS,
      calls,
      failures,
      errorRate: calls ? Math.round((failures / calls) * 10_000) / 10_000 : 0,
      latencyMs: { avg: calls ? Math.round((sum / calls) * 10) / 10 : 0, max: Math.round(Math.max(0, ...live.map((b) => b.latencyMaxMs)) * 10) / 10 },
    };
  }
}
