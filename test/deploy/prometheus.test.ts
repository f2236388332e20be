// deploy/prometheus/ and deploy/grafana/ against a real Prometheus (issue 31): Debian's `prometheus` package,
// started here on a free port with its own data directory, scrapes a gateway under a little load. `promtool
// check rules` and `promtool check metrics` pass; every dashboard query returns data and every rule evaluates
// without error; a core made to fail fires the breaker alert. Skipped, saying why, where the binary is missing
// (.ci/run installs it), unless CI=true. On the embedded store, or on PostgreSQL when DATABASE_URL is set.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { parse } from 'yaml';
import { buildMockCore } from '../../connectors/mock-core/server.js';
import { MasterKey } from '../../src/crypto/master-key.js';
import { LIMIT_URL, createTestDataDir, createTestDb, type TestDb } from '../helpers/app.js';
import { GatewayProcess } from '../helpers/gateway.js';
import { ROOT, freePort, sleep } from '../helpers/process.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { BUILD_TIMEOUT_MS, ensureBuilt } from '../helpers/spawn.js';

const RULE_FILES = ['deploy/prometheus/cardline-recording.yml', 'deploy/prometheus/cardline-alerts.yml'].map((f) => join(ROOT, f));
const DASHBOARD = join(ROOT, 'deploy/grafana/cardline-dashboard.json');
const hasPrometheus = spawnSync('prometheus', ['--version']).status === 0 && spawnSync('promtool', ['--version']).status === 0;
if (!hasPrometheus && process.env.CI !== 'true') {
  console.warn('SKIPPED test/deploy/prometheus.test.ts: no `prometheus`/`promtool` binary (apt-get install prometheus; .ci/run installs it)');
}

const PASSWORD = 'Prometheus-Passw0rd-31';
const OPERATOR_KEY = 'clop_prometheus-test-operator-key-31';

interface Rule {
  alert?: string;
  record?: string;
  expr: string;
}

describe.runIf(hasPrometheus || process.env.CI === 'true')('the Prometheus rules and the Grafana dashboard against a real Prometheus', () => {
  beforeAll(ensureBuilt, BUILD_TIMEOUT_MS);
  let core: FastifyInstance | undefined;
  let rx: Receiver;
  let store: TestDb | undefined;
  let dataDir: string;
  let promDir: string;
  let gw: GatewayProcess;
  let prometheus: ChildProcess | undefined;
  let promLog = '';
  let prom = '';

  const query = async (expr: string): Promise<{ status: string; error?: string; data?: { result: unknown[] } }> => {
    const res = await fetch(`${prom}/api/v1/query?query=${encodeURIComponent(expr)}`);
    return (await res.json()) as { status: string; error?: string; data?: { result: unknown[] } };
  };
  /** Polls until `ok` holds (Prometheus scrapes and evaluates every second here). */
  const until = async <T>(what: string, read: () => Promise<T>, ok: (v: T) => boolean, ms = 240_000): Promise<T> => {
    const deadline = Date.now() + ms;
    for (;;) {
      const v = await read();
      if (ok(v)) return v;
      if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms (last: ${JSON.stringify(v).slice(0, 500)})\n--- prometheus ---\n${promLog.slice(-2000)}`);
      await sleep(1000);
    }
  };

  beforeAll(async () => {
    rx = await startReceiver();
    core = buildMockCore();
    const coreBase = await core.listen({ host: '127.0.0.1', port: 0 });
    dataDir = await createTestDataDir('cardline-prometheus-');
    const env: Record<string, string> = {
      CARDLINE_DATA_DIR: dataDir,
      CARDLINE_MASTER_KEY: MasterKey.generate(),
      CARDLINE_DEMO_OPERATOR_KEY: OPERATOR_KEY,
      CARDLINE_DELIVERY_POLL_MS: '50',
      CARDLINE_AUDIT_CHECKPOINT_MS: '500',
    };
    if (process.env.DATABASE_URL) {
      store = await createTestDb();
      env.DATABASE_URL = store.url!;
    }
    gw = new GatewayProcess(env, PASSWORD);
    await gw.start();
    // The demo tenant on a REST core whose breaker, once open, stays open for the rest of the test.
    const connector = { id: 'rest', options: { fixtures: null, baseUrl: `${coreBase}/banks/demo`, retries: { max: 0 }, breaker: { failureThreshold: 3, openMs: 600_000 } } };
    const patched = await fetch(`${gw.admin}/v1/tenants/demo`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${OPERATOR_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ config: { connector } }),
    });
    expect(patched.status, await patched.text()).toBe(200);

    promDir = mkdtempSync(join(tmpdir(), 'cardline-prometheus-data-'));
    const port = await freePort();
    prom = `http://127.0.0.1:${port}`;
    const config = {
      global: { scrape_interval: '1s', evaluation_interval: '1s' },
      rule_files: RULE_FILES,
      scrape_configs: [{ job_name: 'cardline', metrics_path: '/metrics', static_configs: [{ targets: [new URL(gw.admin).host] }] }],
    };
    writeFileSync(join(promDir, 'prometheus.yml'), JSON.stringify(config));
    // The recording rules' own 30 s interval and the alerts' `for` (a minute for the breaker) would leave the
    // test waiting: every group evaluates each second here, and an alert fires after 1 s of its condition.
    for (const file of RULE_FILES) {
      const doc = parse(readFileSync(file, 'utf8')) as { groups: { interval?: string; rules: { for?: string }[] }[] };
      for (const g of doc.groups) {
        delete g.interval;
        for (const r of g.rules) if (r.for) r.for = '1s';
      }
      writeFileSync(join(promDir, file.split('/').pop()!), JSON.stringify(doc));
    }
    config.rule_files = RULE_FILES.map((f) => join(promDir, f.split('/').pop()!));
    writeFileSync(join(promDir, 'prometheus.yml'), JSON.stringify(config));
    prometheus = spawn('prometheus', [`--config.file=${join(promDir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(promDir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    prometheus.stdout!.setEncoding('utf8').on('data', (d: string) => (promLog += d));
    prometheus.stderr!.setEncoding('utf8').on('data', (d: string) => (promLog += d));
    await until('Prometheus ready', () => fetch(`${prom}/-/ready`).then((r) => r.status, () => 0), (s) => s === 200);
  }, 400_000);

  afterAll(async () => {
    prometheus?.kill('SIGTERM');
    await gw?.kill();
    await core?.close().catch(() => undefined);
    await rx?.close();
    await store?.drop();
    for (const dir of [dataDir, promDir]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const upgrade = async (token: string, amount: string) =>
    fetch(`${gw.base}${LIMIT_URL}`, {
      method: 'POST',
      headers: { TENANT: 'demo', authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ entityId: 'ENT-1001', amount }),
    });

  it('promtool checks the rule files and the gateway exposition', () => {
    const rules = spawnSync('promtool', ['check', 'rules', ...RULE_FILES], { encoding: 'utf8' });
    expect(rules.status, rules.stdout + rules.stderr).toBe(0);
    expect(rules.stdout).toContain('SUCCESS: 11 rules found');
  });

  it('answers every dashboard query and rule with data from a gateway under load; a failing core fires the breaker alert', async () => {
    const admin = await gw.token('admin');
    const channel = await gw.call('POST', '/v1/admin/channels', admin, { type: 'webhook', url: `${rx.base}/prom`, eventTypes: ['credit-limit.upgraded'] });
    expect(channel.status).toBe(201);
    const integration = await gw.token('integration');
    for (let i = 0; i < 5; i++) expect((await upgrade(integration, `${60_000 + i * 1000}.00`)).status).toBe(200);
    await rx.waitFor('/prom', 5, 120_000);

    const exposition = await (await fetch(`${gw.admin}/metrics`)).text();
    const checked = spawnSync('promtool', ['check', 'metrics'], { input: exposition, encoding: 'utf8' });
    expect(checked.status, checked.stdout + checked.stderr).toBe(0);

    // Scraped, delivered and checkpointed, as Prometheus sees it.
    await until('deliveries scraped', () => query('sum(cardline_deliveries_total{outcome="delivered"})'), (r) => Number((r.data?.result[0] as { value?: [number, string] })?.value?.[1]) >= 5);
    await until('a checkpoint scraped', () => query('max(cardline_audit_checkpoint_last_published_timestamp_seconds) > 0'), (r) => (r.data?.result.length ?? 0) > 0);
    await until('recording rules evaluated', () => query('cardline:http_requests:rate5m'), (r) => (r.data?.result.length ?? 0) > 0);

    const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { panels: { title: string; targets?: { expr: string }[] }[] };
    const exprs = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr.replaceAll('$__rate_interval', '1m').replaceAll('$tenant', '.*') })));
    expect(exprs.length).toBeGreaterThanOrEqual(15);
    for (const { panel, expr } of exprs) {
      const r = await query(expr);
      expect(r, `${panel}: ${expr}`).toMatchObject({ status: 'success' });
      expect(r.data!.result.length, `${panel}: ${expr} returns data`).toBeGreaterThan(0);
    }

    // The core goes away: calls fail, the breaker opens and stays open, the alert fires.
    await core!.close();
    core = undefined;
    for (let i = 0; i < 4; i++) expect([502, 503, 504]).toContain((await upgrade(integration, '70000.00')).status);
    type Alerts = { data: { alerts: { labels: { alertname: string; connector?: string }; state: string }[] } };
    const alerts = await until(
      'CardlineCoreBreakerOpen firing',
      async () => (await (await fetch(`${prom}/api/v1/alerts`)).json()) as Alerts,
      (a) => a.data.alerts.some((x) => x.labels.alertname === 'CardlineCoreBreakerOpen' && x.state === 'firing'),
    );
    expect(alerts.data.alerts.find((x) => x.labels.alertname === 'CardlineCoreBreakerOpen')!.labels.connector).toBe('rest');

    // Every rule evaluates without error, and each expression runs as a query.
    type RulesAnswer = { data: { groups: { rules: { name: string; health: string; lastError?: string }[] }[] } };
    const loaded = ((await (await fetch(`${prom}/api/v1/rules`)).json()) as RulesAnswer).data.groups.flatMap((g) => g.rules);
    expect(loaded).toHaveLength(21);
    for (const r of loaded) expect(r, r.name).toMatchObject({ health: 'ok' });
    const rules = RULE_FILES.flatMap((f) => (parse(readFileSync(f, 'utf8')) as { groups: { rules: Rule[] }[] }).groups.flatMap((g) => g.rules));
    for (const rule of rules) expect(await query(rule.expr), rule.alert ?? rule.record).toMatchObject({ status: 'success' });
    // The ones the scenario produced have data: the failing core's error ratio and the 5xx ratio among them.
    for (const name of ['cardline:connector_calls:error_ratio_rate5m', 'cardline:http_5xx:ratio_rate5m', 'cardline:deliveries:rate5m', 'cardline:audit_records:rate5m']) {
      expect((await query(name)).data!.result.length, name).toBeGreaterThan(0);
    }
  }, 600_000);
});
