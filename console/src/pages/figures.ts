// Live figures: requests per second, p50/p99 latency and error rate, overall or for one tenant, as uPlot
// charts. Each reading is the gateway's request counters (GET /v1/console/figures); two readings make a
// point: the requests between them, the share answered 5xx, and the percentiles from the latency buckets.
import uPlot from 'uplot';
import { useEffect, useRef, useState } from 'preact/hooks';
import { admin, messageOf } from '../api.js';
import type { Figures } from '../types.js';
import { Field, html } from '../ui.js';

/** One reading's counters: the whole gateway's or a tenant's. */
type Reading = Figures['overall'];

const EVERY_MS = 2000;
const POINTS = 90;
const SPAN_S = (POINTS * EVERY_MS) / 1000;

const hm = uPlot.fmtDate('{HH}:{mm}');
const hms = uPlot.fmtDate('{HH}:{mm}:{ss}');
const sec = uPlot.fmtDate(':{ss}');
const day = uPlot.fmtDate('{D} {MMM} {YYYY}');

/** Time axis labels in local time: minutes as 06:29, seconds as :10, the date under a new day's first tick. */
function timeLabels(splits: number[]): string[] {
  return splits.map((s, i) => {
    const at = new Date(s * 1000);
    const time = at.getSeconds() === 0 ? hm(at) : i === 0 ? hms(at) : sec(at);
    const before = i > 0 ? new Date(splits[i - 1]! * 1000) : null;
    return before && before.toDateString() === at.toDateString() ? time : `${time}\n${day(at)}`;
  });
}

/** The x range: the last SPAN_S seconds up to the latest reading, not uPlot's own (it widens one point by 1000 days). */
function timeRange(u: uPlot): uPlot.Range.MinMax {
  const xs = u.data?.[0] ?? [];
  const last = xs.length ? xs[xs.length - 1]! + 1 : Date.now() / 1000;
  return [last - SPAN_S, last];
}

/** On the chart's root, as uPlot draws: data-drawn, the fewest values any series has inside the x range. */
function markDrawn(u: uPlot): void {
  const xs = u.data[0];
  const min = u.scales.x?.min ?? -Infinity;
  const max = u.scales.x?.max ?? Infinity;
  const shown = (ys: uPlot.AlignedData[number]) => xs.filter((x, i) => x >= min && x <= max && ys[i] != null).length;
  u.root.dataset.drawn = String(Math.min(...u.data.slice(1).map(shown)));
}

/** The latency under which a share `q` of the requests between two readings fell (bucket upper bound, ms). */
function percentile(bounds: number[], before: number[], after: number[], q: number): number | null {
  const counts = after.map((n, i) => n - (before[i] ?? 0));
  const total = after.length ? Math.max(...counts) : 0;
  if (total <= 0) return null;
  const rank = q * total;
  for (let i = 0; i < bounds.length; i++) if ((counts[i] ?? 0) >= rank) return (bounds[i] ?? 0) * 1000;
  return (bounds[bounds.length - 1] ?? 0) * 1000;
}

export function FiguresPage() {
  const [tenant, setTenant] = useState('');
  const [tenants, setTenants] = useState<string[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [latest, setLatest] = useState<{ rps: number; p50: number | null; p99: number | null; errorRate: number } | null>(null);
  const series = useRef<{ t: number[]; rps: number[]; p50: (number | null)[]; p99: (number | null)[]; err: number[] }>({ t: [], rps: [], p50: [], p99: [], err: [] });
  const charts = useRef<uPlot[]>([]);
  const boxes = [useRef<HTMLDivElement>(null), useRef<HTMLDivElement>(null), useRef<HTMLDivElement>(null)];

  useEffect(() => {
    series.current = { t: [], rps: [], p50: [], p99: [], err: [] };
    const width = () => Math.max(280, (boxes[0]!.current?.clientWidth ?? 600) - 8);
    const make = (el: HTMLDivElement, label: string, lines: { label: string; stroke: string }[]) =>
      new uPlot(
        {
          width: width(),
          height: 180,
          scales: { x: { time: true, range: timeRange } },
          series: [{}, ...lines.map((l) => ({ ...l, width: 2 }))],
          axes: [
            {
              values: (u, splits) => {
                const labels = timeLabels(splits);
                u.root.dataset.axis = labels.join(' ').replace(/\n/g, ' ');
                return labels;
              },
            },
            { label },
          ],
          legend: { show: false },
          hooks: { draw: [markDrawn] },
        },
        [[], ...lines.map(() => [])],
        el,
      );
    charts.current = [
      make(boxes[0]!.current!, 'requests / s', [{ label: 'requests / s', stroke: '#1d4ed8' }]),
      make(boxes[1]!.current!, 'ms', [{ label: 'p50 ms', stroke: '#047857' }, { label: 'p99 ms', stroke: '#b45309' }]),
      make(boxes[2]!.current!, '% 5xx', [{ label: 'error rate %', stroke: '#b91c1c' }]),
    ];
    const resize = () => charts.current.forEach((c) => c.setSize({ width: width(), height: 180 }));
    addEventListener('resize', resize);
    let previous: Figures | null = null;
    let live = true;
    const tick = async () => {
      try {
        const { result: now } = await admin.gateway.figures();
        if (!live) return;
        setError(null);
        setTenants(Object.keys(now.tenants).sort());
        if (previous) {
          const pick = (f: Figures): Reading => (tenant ? (f.tenants[tenant] ?? { requests: 0, errors: 0, buckets: f.bounds.map(() => 0) }) : f.overall);
          const a = pick(previous);
          const b = pick(now);
          const seconds = Math.max(0.001, (Date.parse(now.at) - Date.parse(previous.at)) / 1000);
          const requests = b.requests - a.requests;
          const point = {
            rps: Math.round((requests / seconds) * 10) / 10,
            p50: percentile(now.bounds, a.buckets, b.buckets, 0.5),
            p99: percentile(now.bounds, a.buckets, b.buckets, 0.99),
            errorRate: requests > 0 ? Math.round(((b.errors - a.errors) / requests) * 1000) / 10 : 0,
          };
          const s = series.current;
          s.t.push(Date.parse(now.at) / 1000);
          s.rps.push(point.rps);
          s.p50.push(point.p50);
          s.p99.push(point.p99);
          s.err.push(point.errorRate);
          for (const k of ['t', 'rps', 'p50', 'p99', 'err'] as const) if (s[k].length > POINTS) s[k].shift();
          charts.current[0]!.setData([s.t, s.rps]);
          charts.current[1]!.setData([s.t, s.p50, s.p99]);
          charts.current[2]!.setData([s.t, s.err]);
          setLatest(point);
        }
        previous = now;
      } catch (err) {
        if (live) setError(messageOf(err));
      }
    };
    void tick();
    const timer = setInterval(tick, EVERY_MS);
    return () => {
      live = false;
      clearInterval(timer);
      removeEventListener('resize', resize);
      charts.current.forEach((c) => c.destroy());
    };
  }, [tenant]);

  return html`<section aria-labelledby="figures-h">
    <h1 id="figures-h">Live figures</h1>
    <div class="toolbar">
      <${Field} label="Requests of" id="fig-tenant">
        <select id="fig-tenant" value=${tenant} onChange=${(e: Event) => setTenant((e.target as HTMLSelectElement).value)}>
          <option value="">all tenants</option>${tenants.map((t) => html`<option value=${t}>${t}</option>`)}
        </select>
      <//>
    </div>
    ${error ? html`<p class="notice error" role="alert">The figures could not be read: ${error}. They are read again every ${EVERY_MS / 1000} s.</p>` : null}
    <p role="status" aria-live="polite" class="figures-now">
      ${latest
        ? `Now: ${latest.rps} requests/s · p50 ${latest.p50 ?? '—'} ms · p99 ${latest.p99 ?? '—'} ms · ${latest.errorRate}% errors`
        : 'Reading the gateway’s counters: the first point appears after two readings.'}
    </p>
    <div class="charts">
      <figure><figcaption>Requests per second <span class="key k-blue">requests/s</span></figcaption><div ref=${boxes[0]}></div></figure>
      <figure><figcaption>Latency (bucket bounds, ms) <span class="key k-green">p50</span> <span class="key k-orange">p99</span></figcaption><div ref=${boxes[1]}></div></figure>
      <figure><figcaption>Error rate (answers 5xx) <span class="key k-red">% 5xx</span></figcaption><div ref=${boxes[2]}></div></figure>
    </div>
  </section>`;
}
