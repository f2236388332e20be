// The metrics' shape as Prometheus tooling checks it: no gauge named `…_total` (promtool's rule; Node's defaults
// had three, duplicates of the unsuffixed ones), and a `tenant` label bounded by default, so that a scrape's
// size follows the routes and not the number of tenants: the first 20 tenants a process serves, or the ones
// CARDLINE_METRICS_TENANTS names, have their own series; the others share `tenant="_other"`.
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
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
