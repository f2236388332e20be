// The metrics' shape as Prometheus tooling checks it: no gauge named `…_total` (promtool's rule; Node's defaults
// had three, duplicates of the unsuffixed ones), and a `tenant` label bounded by default, so that a scrape's
// size follows the routes and not the number of tenants: the first 20 tenants a process serves, or the ones
// CARDLINE_METRICS_TENANTS names, have their own series; the others share `tenant="_other"`.
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import client from 'prom-client';
import { Metrics } from '../../src/services/infrastructure/metrics.js';

const metricsFor = (env: NodeJS.ProcessEnv) => new Metrics({ tenants: loadConfig({ LOG_LEVEL: 'silent', ...env }).metricsTenants });

/** Each metric family's declared type, from the `# TYPE` lines of an exposition. */
const types = (text: string): Map<string, string> =>
  new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1]!, m[2]!]));

/** The `tenant` label values of one family's samples. */
const tenantsOf = (text: string, family: string): string[] =>
  [...new Set([...text.matchAll(new RegExp(`^${family}\\{[^}]*tenant="([^"]*)"`, 'gm'))].map((m) => m[1]!))].sort();

/** Sends one request and one core call for each of `count` tenants named t00, t01, … */
function serve(metrics: Metrics, count: number): void {
  for (let i = 0; i < count; i++) {
    const tenant = `t${String(i).padStart(2, '0')}`;
    metrics.request('/v1/cards/:cardId', 'GET', 200, tenant, 0.01);
    metrics.connectorCall(tenant, 'mock', 'getCard', 'succeeded', 0.005);
    metrics.loginFailed(tenant);
  }
}

describe('series names', () => {
  it('no gauge ends in _total and every counter does (promtool check metrics)', async () => {
    const text = await metricsFor({}).text();
    const all = types(text);
    expect(all.size).toBeGreaterThan(20);
    const gaugesNamedTotal = [...all].filter(([name, type]) => type !== 'counter' && name.endsWith('_total')).map(([name]) => name);
    expect(gaugesNamedTotal).toEqual([]);
    const countersWithoutTotal = [...all].filter(([name, type]) => type === 'counter' && !name.endsWith('_total')).map(([name]) => name);
    expect(countersWithoutTotal).toEqual([]);
    // The unsuffixed gauges, by handle type, remain.
    expect(all.get('cardline_nodejs_active_handles')).toBe('gauge');
  });
});

describe("the audit writer's counters", () => {
  it('count conflict retries and chains taken over, from 0 at start (decision 0286: a chain left past its lease)', async () => {
    const metrics = metricsFor({});
    const counters = (text: string) => text.split('\n').filter((l) => /^cardline_audit_(conflict_retries|chains_taken)_total /.test(l));
    expect(counters(await metrics.text())).toEqual(['cardline_audit_conflict_retries_total 0', 'cardline_audit_chains_taken_total 0']);
    metrics.auditChainTaken();
    metrics.auditChainTaken();
    metrics.auditConflict();
    expect(counters(await metrics.text())).toEqual(['cardline_audit_conflict_retries_total 1', 'cardline_audit_chains_taken_total 2']);
  });
});

describe('the tenant label', () => {
  it('is bounded by default: the first 20 tenants served, then _other', async () => {
    const metrics = metricsFor({});
    serve(metrics, 35);
    const text = await metrics.text();
    const first20 = Array.from({ length: 20 }, (_, i) => `t${String(i).padStart(2, '0')}`);
    for (const family of ['cardline_http_requests_total', 'cardline_http_request_duration_seconds_count', 'cardline_connector_calls_total', 'cardline_login_failures_total']) {
      expect(tenantsOf(text, family)).toEqual(['_other', ...first20]);
    }
    // Nothing is lost: the 15 beyond the bound are counted together.
    expect(text).toMatch(/^cardline_http_requests_total\{route="\/v1\/cards\/:cardId",method="GET",status="200",tenant="_other"\} 15$/m);
    expect(text).toMatch(/^cardline_login_failures_total\{tenant="_other"\} 15$/m);
    // A labelled tenant keeps its series after the bound is reached.
    metrics.request('/v1/cards/:cardId', 'GET', 200, 't03', 0.01);
    expect(await metrics.text()).toMatch(/^cardline_http_requests_total\{route="\/v1\/cards\/:cardId",method="GET",status="200",tenant="t03"\} 2$/m);
  });

  it('follows CARDLINE_METRICS_TENANTS: a number, tenant ids, or * for every tenant', async () => {
    const three = metricsFor({ CARDLINE_METRICS_TENANTS: '3' });
    serve(three, 5);
    expect(tenantsOf(await three.text(), 'cardline_http_requests_total')).toEqual(['_other', 't00', 't01', 't02']);

    const named = metricsFor({ CARDLINE_METRICS_TENANTS: 't04, t01' });
    serve(named, 5);
    expect(tenantsOf(await named.text(), 'cardline_connector_calls_total')).toEqual(['_other', 't01', 't04']);

    const every = metricsFor({ CARDLINE_METRICS_TENANTS: '*' });
    serve(every, 30);
    expect(tenantsOf(await every.text(), 'cardline_http_requests_total')).toHaveLength(30);

    const none = metricsFor({ CARDLINE_METRICS_TENANT_LABEL: '0' });
    serve(none, 5);
    expect(await none.text()).not.toContain('tenant="');
  });

  it('refuses a value that is none of these, naming the variable', () => {
    expect(() => loadConfig({ CARDLINE_METRICS_TENANTS: 'acme,Not_A_Tenant' })).toThrow(ConfigError);
    expect(() => loadConfig({ CARDLINE_METRICS_TENANTS: 'acme,Not_A_Tenant' })).toThrow(
      "Invalid configuration: CARDLINE_METRICS_TENANTS must be a number of tenants, * for every tenant, or tenant ids separated by commas; 'Not_A_Tenant' is not a tenant id",
    );
  });
});

describe('exemplars (tracing on), kept per bucket and set when a scrape asks for OpenMetrics', () => {
  const OM = 'application/openmetrics-text; version=1.0.0';
  const trace = (n: number) => ({ traceId: String(n).repeat(32), spanId: String(n).repeat(16) });
  const exemplarsOf = (body: string, family: string) =>
    [...body.matchAll(new RegExp(`^${family}_bucket\\{le="([^"]+)"[^}]*\\} \\d+ # \\{trace_id="(\\w+)",span_id="(\\w+)"\\} (\\S+) (\\S+)$`, 'gm'))].map((m) => ({
      le: m[1],
      traceId: m[2],
      spanId: m[3],
      value: Number(m[4]),
      at: Number(m[5]),
    }));

  it('a bucket shows the latest sampled observation in it, stamped with the time it was observed, not the time of the scrape', async () => {
    const metrics = new Metrics({ tenants: { kind: 'all' }, exemplars: true });
    const before = Date.now() / 1000;
    metrics.request('/v1/x', 'POST', 200, 'demo', 0.003, trace(1));
    metrics.request('/v1/x', 'POST', 200, 'demo', 0.004, trace(2));
    metrics.request('/v1/x', 'POST', 200, 'demo', 0.2, trace(3));
    metrics.request('/v1/x', 'POST', 200, 'demo', 0.3);
    metrics.connectorCall('demo', 'mock', 'upgradeLimit', 'succeeded', 0.02, trace(4));
    const observed = Date.now() / 1000;
    await new Promise((resolve) => setTimeout(resolve, 20));
    const body = (await metrics.scrape(OM)).body;
    const requests = exemplarsOf(body, 'cardline_http_request_duration_seconds');
    expect(requests.map(({ le, traceId, spanId, value }) => ({ le, traceId, spanId, value }))).toEqual([
      { le: '0.005', ...trace(2), value: 0.004 },
      { le: '0.25', ...trace(3), value: 0.2 },
    ]);
    expect(exemplarsOf(body, 'cardline_connector_call_duration_seconds').map(({ le, traceId }) => ({ le, traceId }))).toEqual([{ le: '0.025', traceId: trace(4).traceId }]);
    for (const { at } of requests) {
      expect(at).toBeGreaterThanOrEqual(Math.floor(before * 1000) / 1000);
      expect(at).toBeLessThanOrEqual(observed);
    }
    // A later observation replaces its bucket's exemplar at the next scrape; the others stay.
    metrics.request('/v1/x', 'POST', 200, 'demo', 0.001, trace(5));
    const next = exemplarsOf((await metrics.scrape(OM)).body, 'cardline_http_request_duration_seconds');
    expect(next.map(({ le, traceId }) => ({ le, traceId }))).toEqual([
      { le: '0.001', traceId: trace(5).traceId },
      { le: '0.005', traceId: trace(2).traceId },
      { le: '0.25', traceId: trace(3).traceId },
    ]);
  });
});

describe('the request path\'s series, counted by the gateway and read at scrape time (decision 0421)', () => {
  /** The same observations made with prom-client's own counter and histogram: what the exposition was before. */
  async function promClientText(observations: [string, number][], more: [string, number][]): Promise<string[]> {
    const registry = new client.Registry();
    const labelNames = ['route', 'method', 'status', 'tenant'];
    const counter = new client.Counter({ name: 'cardline_http_requests_total', help: 'x', labelNames, registers: [registry] });
    const histogram = new client.Histogram({
      name: 'cardline_http_request_duration_seconds',
      help: 'x',
      labelNames,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    });
    const out: string[] = [];
    for (const batch of [observations, more]) {
      for (const [tenant, seconds] of batch) {
        const labels = { route: '/v1/x', method: 'POST', status: '200', tenant };
        counter.inc(labels);
        histogram.observe(labels, seconds);
      }
      out.push(samplesOf(await registry.metrics()));
    }
    return out;
  }
  const samplesOf = (text: string) =>
    text
      .split('\n')
      .filter((l) => /^cardline_http_request(s_total|_duration_seconds_(bucket|sum|count))\{/.test(l))
      .sort()
      .join('\n');

  it('gives the exposition prom-client gave, bucket by bucket, across scrapes', async () => {
    // Values exact in binary, so that the sums add up alike in either order.
    const first: [string, number][] = [['a', 0.0009765625], ['a', 0.00390625], ['b', 0.25], ['a', 0.5], ['b', 12], ['a', 0.0078125], ['b', 0.25]];
    const second: [string, number][] = [['a', 0.03125], ['c', 2], ['b', 0.0009765625]];
    const metrics = new Metrics({ tenants: { kind: 'all' } });
    const ours: string[] = [];
    for (const batch of [first, second]) {
      for (const [tenant, seconds] of batch) metrics.request('/v1/x', 'POST', 200, tenant, seconds);
      ours.push(samplesOf(await metrics.text()));
    }
    expect(ours).toEqual(await promClientText(first, second));
    // A scrape that found nothing new changes nothing.
    expect(samplesOf(await metrics.text())).toEqual(ours[1]);
  });

  it('counts connector calls, shadow calls and decision calls by their labels', async () => {
    const metrics = new Metrics({ tenants: { kind: 'all' } });
    metrics.connectorCall('a', 'mock', 'upgradeLimit', 'succeeded', 0.002);
    metrics.connectorCall('a', 'mock', 'upgradeLimit', 'succeeded', 0.02);
    metrics.connectorCall('a', 'mock', 'upgradeLimit', 'timeout', 5);
    metrics.shadowCall('a', 'upgradeLimit', 'match');
    metrics.decisionCall('a', 'approved');
    metrics.decisionCall('a', 'approved');
    const text = await metrics.text();
    expect(text).toContain('cardline_connector_calls_total{connector="mock",operation="upgradeLimit",outcome="succeeded",tenant="a"} 2\n');
    expect(text).toContain('cardline_connector_calls_total{connector="mock",operation="upgradeLimit",outcome="timeout",tenant="a"} 1\n');
    expect(text).toContain('cardline_connector_call_duration_seconds_bucket{le="0.0025",connector="mock",operation="upgradeLimit",tenant="a"} 1\n');
    expect(text).toContain('cardline_connector_call_duration_seconds_bucket{le="5",connector="mock",operation="upgradeLimit",tenant="a"} 3\n');
    expect(text).toContain('cardline_connector_call_duration_seconds_count{connector="mock",operation="upgradeLimit",tenant="a"} 3\n');
    expect(text).toContain('cardline_shadow_calls_total{operation="upgradeLimit",outcome="match",tenant="a"} 1\n');
    expect(text).toContain('cardline_decision_calls_total{outcome="approved",tenant="a"} 2\n');
  });
});

describe('a scrape of the counted series (decision 0421)', () => {
  const OM = 'application/openmetrics-text; version=1.0.0';
  const trace = (n: number) => ({ traceId: String(n).repeat(32), spanId: String(n).repeat(16) });

  it("answers when a new series is observed with a trace while the scrape is under way, and shows it at the next", async () => {
    const failures: unknown[] = [];
    // The observation lands after each number of microtask turns the scrape may take before it sets the exemplars.
    for (let turns = 0; turns < 6; turns++) {
      const metrics = new Metrics({ tenants: { kind: 'all' }, exemplars: true });
      metrics.request('/v1/x', 'POST', 200, 'a', 0.003, trace(1));
      const scrape = metrics.scrape(OM);
      let later: Promise<unknown> = Promise.resolve();
      for (let i = 0; i < turns; i++) later = later.then(() => undefined);
      void later.then(() => metrics.request('/v1/x', 'POST', 200, 'b', 0.003, trace(2)));
      await scrape.catch((err: unknown) => failures.push({ turns, err: String(err) }));
      const next = (await metrics.scrape(OM)).body;
      if (!next.includes('cardline_http_request_duration_seconds_count{route="/v1/x",method="POST",status="200",tenant="b"} 1\n')) failures.push({ turns, next });
    }
    expect(failures).toEqual([]);
  });

  it("reads prom-client's series once per scrape however many series are new (not once per new series)", async () => {
    /** How many times a scrape enumerates the latency histogram's series, with `fresh` new series since the last. */
    const enumerations = async (fresh: number) => {
      const metrics = new Metrics({ tenants: { kind: 'all' } });
      const histogram = metrics.registry.getSingleMetric('cardline_http_request_duration_seconds') as unknown as { hashMap: object };
      let n = 0;
      histogram.hashMap = new Proxy(histogram.hashMap, {
        ownKeys: (target) => {
          n += 1;
          return Reflect.ownKeys(target);
        },
      });
      for (let i = 0; i < fresh; i++) metrics.request('/v1/x', 'POST', 200, `t${i}`, 0.003);
      const text = await metrics.text();
      expect(text).toContain(`cardline_http_request_duration_seconds_count{route="/v1/x",method="POST",status="200",tenant="t${fresh - 1}"} 1\n`);
      return n;
    };
    expect(await enumerations(200)).toBe(await enumerations(1));
  });
});
