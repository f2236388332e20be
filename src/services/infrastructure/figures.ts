// The live figures' readings: request counters and latency, overall and per tenant, read from the very exposition
// GET /metrics answers (every worker's under CARDLINE_WORKERS, decision 0166); the console turns two into rates.
import { Type, type Static } from '@sinclair/typebox';
import type { Metrics } from './metrics.js';

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
  labels: Record<string, string>;
  value: number;
  metricName: string;
}

/** One label pair of an exposition line: `name="value"`, the value with `\\`, `\"` and `\n` escaped. */
const LABEL = /(\w+)="((?:[^"\\]|\\.)*)"/g;
const unescape = (value: string) => value.replace(/\\(.)/g, (_m, c: string) => (c === 'n' ? '\n' : c));

/** The samples of one metric family (`<name>_bucket`, `_count`, `_sum`) in a Prometheus text exposition. */
function samplesOf(text: string, family: string): MetricValue[] {
  const out: MetricValue[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${family}_`)) continue;
    const brace = line.indexOf('{');
    const end = line.lastIndexOf('}');
    const metricName = brace < 0 ? line.slice(0, line.indexOf(' ')) : line.slice(0, brace);
    const labels: Record<string, string> = {};
    if (brace >= 0) for (const [, name, value] of line.slice(brace + 1, end).matchAll(LABEL)) labels[name!] = unescape(value!);
    const value = Number(line.slice(brace < 0 ? metricName.length : end + 1).trim().split(/\s+/)[0]);
    if (Number.isFinite(value)) out.push({ metricName, labels, value });
  }
  return out;
}

/** The readings from a Prometheus text exposition (the one GET /metrics answers). */
export function figuresOf(text: string, at: Date = new Date()): Figures {
  const values = samplesOf(text, DURATION);
  const bounds = [...new Set(values.filter((v) => v.metricName === `${DURATION}_bucket` && v.labels.le !== '+Inf').map((v) => Number(v.labels.le)))].sort((a, b) => a - b);
  const empty = (): Reading => ({ requests: 0, errors: 0, buckets: bounds.map(() => 0) });
  const overall = empty();
  const tenants: Record<string, Reading> = {};
  for (const v of values) {
    const tenant = v.labels.tenant ? v.labels.tenant : null;
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
  return { at: at.toISOString(), bounds, overall, tenants };
}

/** The whole gateway's readings: this process's, or under CARDLINE_WORKERS every worker's (Metrics.text()). */
export async function requestFigures(metrics: Metrics): Promise<Figures> {
  return figuresOf(await metrics.text());
}
