// The live figures' readings (issue 19): the gateway's request counters and latency histogram as prom-client
// holds them, summed over route, method and status, overall and per tenant. They count from the process's
// start; the console reads them every few seconds and turns two readings into requests per second, error
// rate and p50/p99 (figures.ts in the page). No second set of counters: the same ones Prometheus scrapes.
import { Type, type Static } from '@sinclair/typebox';
import type { Metrics } from '../services/metrics.js';

const Reading = Type.Object({
  requests: Type.Integer({ description: 'requests answered' }),
  errors: Type.Integer({ description: 'of which answered 5xx' }),
  buckets: Type.Array(Type.Integer(), { description: 'cumulative count at or under each bound of `bounds`' }),
});
export const Figures = Type.Object({
  at: Type.String({ format: 'date-time' }),
  bounds: Type.Array(Type.Number(), { description: 'upper bounds of the latency buckets, seconds' }),
  overall: Reading,
  tenants: Type.Record(Type.String(), Reading),
});
export type Figures = Static<typeof Figures>;
type Reading = Static<typeof Reading>;

const DURATION = 'cardline_http_request_duration_seconds';

interface MetricValue {
  labels: Record<string, string | number | undefined>;
  value: number;
  metricName?: string;
}

export async function requestFigures(metrics: Metrics): Promise<Figures> {
  const all = (await metrics.registry.getMetricsAsJSON()) as unknown as { name: string; values: MetricValue[] }[];
  const values = all.find((m) => m.name === DURATION)?.values ?? [];
  const bounds = [...new Set(values.filter((v) => v.metricName === `${DURATION}_bucket` && v.labels.le !== '+Inf').map((v) => Number(v.labels.le)))].sort((a, b) => a - b);
  const empty = (): Reading => ({ requests: 0, errors: 0, buckets: bounds.map(() => 0) });
  const overall = empty();
  const tenants: Record<string, Reading> = {};
  for (const v of values) {
    const tenant = typeof v.labels.tenant === 'string' && v.labels.tenant !== '' ? v.labels.tenant : null;
    const targets = tenant ? [overall, (tenants[tenant] ??= empty())] : [overall];
    if (v.metricName === `${DURATION}_count`) {
      for (const r of targets) {
        r.requests += v.value;
        if (Number(v.labels.status) >= 500) r.errors += v.value;
      }
    } else if (v.metricName === `${DURATION}_bucket` && v.labels.le !== '+Inf') {
      const i = bounds.indexOf(Number(v.labels.le));
      for (const r of targets) r.buckets[i]! += v.value;
    }
  }
  return { at: new Date().toISOString(), bounds, overall, tenants };
}
