// The connectors view's recent window (decision 0113) kept as one array of numbers per connector (decision
// 0214): the same figures as before, stale buckets left out, and rings without a call in five minutes dropped.
import { describe, expect, it } from 'vitest';
import { ConnectorHealth } from '../../src/services/connectors/connector-health.js';

describe('connector health window', () => {
  it('counts calls, core failures and latency over the last five minutes, by tenant and connector', () => {
    let now = 1_000_000_000_000;
    const health = new ConnectorHealth(() => now);
    health.record('t1', 'core', 'succeeded', 10);
    health.record('t1', 'core', 'business', 30);
    health.record('t1', 'core', 'timeout', 200.26);
    now += 15_000;
    health.record('t1', 'core', 'unavailable', 5);
    health.record('t2', 'core', 'succeeded', 1);
    expect(health.window('t1', 'core')).toEqual({ windowSeconds: 300, calls: 4, failures: 2, errorRate: 0.5, latencyMs: { avg: 61.3, max: 200.3 } });
    expect(health.window('t2', 'core')).toEqual({ windowSeconds: 300, calls: 1, failures: 0, errorRate: 0, latencyMs: { avg: 1, max: 1 } });
    expect(health.window('t3', 'core')).toEqual({ windowSeconds: 300, calls: 0, failures: 0, errorRate: 0, latencyMs: { avg: 0, max: 0 } });
    // Five minutes on, the first bucket is out of the window; the second (15 s later) still in.
    now += 300_000 - 15_000;
    expect(health.window('t1', 'core').calls).toBe(1);
    // A bucket reused a window later starts from zero.
    now += 15_000;
    health.record('t1', 'core', 'succeeded', 2);
    expect(health.window('t1', 'core')).toEqual({ windowSeconds: 300, calls: 1, failures: 0, errorRate: 0, latencyMs: { avg: 2, max: 2 } });
  });

  it('drops the ring of a connector without a call in five minutes', () => {
    let now = 1_000_000_000_000;
    const health = new ConnectorHealth(() => now);
    for (let i = 0; i < 100; i++) health.record(`tenant-${i}`, 'core', 'succeeded', 1);
    expect(health.size).toBe(100);
    now += 300_000;
    health.record('tenant-0', 'core', 'succeeded', 1);
    expect(health.size).toBe(1);
    expect(health.window('tenant-1', 'core').calls).toBe(0);
    expect(health.window('tenant-0', 'core').calls).toBe(1);
  });
});
