// Each named connector's recent calls, for the connectors view: calls, core failures and latency over the
// last five minutes, in ten-second buckets that age out (what an operator compares cores by, decision 0113).

/** How a call ended; `business` and `pending` are answers of a working core, the rest its failures. */
export type CallKind = 'succeeded' | 'business' | 'pending' | 'unavailable' | 'timeout' | 'internal';
const FAILURES: ReadonlySet<CallKind> = new Set(['unavailable', 'timeout', 'internal']);

const BUCKET_MS = 10_000;
const BUCKETS = 30;
const WINDOW_SECONDS = (BUCKET_MS * BUCKETS) / 1000;

/** A ring of ten-second buckets in one unboxed array (calls, failures, latency sum and max): ~1.2 KB per connector (0214). */
type Ring = number[];
const SLOT = 0;
const CALLS = 1;
const FAILED = 2;
const SUM = 3;
const MAX = 4;
const FIELDS = 5;
const NEWEST = BUCKETS * FIELDS;

export interface ConnectorWindow {
  windowSeconds: number;
  calls: number;
  failures: number;
  /** failures / calls, 0 without calls. */
  errorRate: number;
  latencyMs: { avg: number; max: number };
}

export class ConnectorHealth {
  private readonly rings = new Map<string, Ring>();
  /** The slot of the last sweep of rings with no call in the window. */
  private swept = -1;

  constructor(private readonly now: () => number = Date.now) {}

  /** Connectors with a call in the window (tests, diagnostics). */
  get size(): number {
    return this.rings.size;
  }

  record(tenantId: string, name: string, kind: CallKind, latencyMs: number): void {
    const slot = Math.floor(this.now() / BUCKET_MS);
    // Once per bucket: rings without a call in the last five minutes go (tenants come and go).
    if (slot !== this.swept) {
      this.swept = slot;
      for (const [key, ring] of this.rings) if (ring[NEWEST]! <= slot - BUCKETS) this.rings.delete(key);
    }
    const key = `${tenantId}\u0000${name}`;
    let ring = this.rings.get(key);
    if (!ring) {
      // Every bucket stale (slot -1). Filled with a fraction first: the array's elements become doubles, kept unboxed.
      ring = new Array<number>(NEWEST + 1).fill(-0.5).fill(-1);
      this.rings.set(key, ring);
    }
    const at = (slot % BUCKETS) * FIELDS;
    if (ring[at + SLOT] !== slot) {
      ring[at + SLOT] = slot;
      ring[at + CALLS] = 0;
      ring[at + FAILED] = 0;
      ring[at + SUM] = 0;
      ring[at + MAX] = 0;
    }
    ring[at + CALLS]! += 1;
    if (FAILURES.has(kind)) ring[at + FAILED]! += 1;
    ring[at + SUM]! += latencyMs;
    ring[at + MAX] = Math.max(ring[at + MAX]!, latencyMs);
    ring[NEWEST] = slot;
  }

  /** The last five minutes of one connector of a tenant. */
  window(tenantId: string, name: string): ConnectorWindow {
    const slot = Math.floor(this.now() / BUCKET_MS);
    const ring = this.rings.get(`${tenantId}\u0000${name}`);
    let calls = 0;
    let failures = 0;
    let sum = 0;
    let max = 0;
    if (ring) {
      for (let at = 0; at < NEWEST; at += FIELDS) {
        if (ring[at + SLOT]! <= slot - BUCKETS) continue;
        calls += ring[at + CALLS]!;
        failures += ring[at + FAILED]!;
        sum += ring[at + SUM]!;
        max = Math.max(max, ring[at + MAX]!);
      }
    }
    return {
      windowSeconds: WINDOW_SECONDS,
      calls,
      failures,
      errorRate: calls ? Math.round((failures / calls) * 10_000) / 10_000 : 0,
      latencyMs: { avg: calls ? Math.round((sum / calls) * 10) / 10 : 0, max: Math.round(max * 10) / 10 },
    };
  }
}
