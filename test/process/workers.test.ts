// CARDLINE_WORKERS=N (decision 0206): refused with its message on the embedded store; on PostgreSQL, two gateway
// processes on one port share the writes, one /metrics scrape counts both, every event is delivered once, a
// worker killed mid-load loses no acknowledged write and is replaced, a replacement killed while it starts is
// forked again while the other worker answers, and SIGTERM drains them all (exit 0).
// The PostgreSQL part is skipped without DATABASE_URL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childrenOf } from '../../bench/cluster-arm.js';
import { MasterKey } from '../../src/crypto/master-key.js';
import { LIMIT_URL, createTestDb, type TestDb } from '../helpers/app.js';
import { GatewayProcess } from '../helpers/gateway.js';
import { baseEnv, freePort, sleep, start, within } from '../helpers/process.js';
import { startReceiver, verifyWebhook, type Receiver } from '../helpers/receiver.js';
import { BUILD_TIMEOUT_MS, ensureBuilt } from '../helpers/spawn.js';

// The gateway processes run the compiled dist/ (helpers/process.ts): built, if stale, once before them.
beforeAll(ensureBuilt, BUILD_TIMEOUT_MS);

const PG = process.env.DATABASE_URL;
const PASSWORD = 'Workers-Test-Passw0rd';
const OPERATOR_KEY = 'clop_workers-test-operator-key-0001';

/** The gateway processes a CARDLINE_WORKERS primary runs: its children that run its entry again, bin/gateway.js. */
const workersOf = (primaryPid: number): number[] => childrenOf(primaryPid, 'bin/gateway.js');

/** The sum of a counter's series whose labels include `match`, from a Prometheus text exposition. */
function counter(text: string, name: string, match: string): number {
  return text
    .split('\n')
    .filter((l) => l.startsWith(`${name}{`) && l.includes(match))
    .reduce((n, l) => n + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}

describe('CARDLINE_WORKERS', () => {
  it('is refused on the embedded store, with the reason and what to do', async () => {
    const proc = start([], baseEnv({ CARDLINE_WORKERS: '2', CARDLINE_DATA_DIR: '/nonexistent/never-created', PORT: '0' }));
    const exit = await within(proc.exited, 60_000, 'the refused start');
    expect(exit.code).toBe(1);
    expect(proc.output().trim()).toBe(
      'Cardline failed to start while reading the configuration: Invalid configuration: CARDLINE_WORKERS is 2, but several gateway ' +
        "processes need PostgreSQL (DATABASE_URL): the embedded store (PGlite) is one process's own. Set DATABASE_URL, or unset " +
        'CARDLINE_WORKERS to run one process.',
    );
  });

  it('is a whole number from 1 to 64', async () => {
    const proc = start([], baseEnv({ CARDLINE_WORKERS: 'two', DATABASE_URL: 'postgres://127.0.0.1:1/none', PORT: '0' }));
    expect((await within(proc.exited, 60_000, 'the refused start')).code).toBe(1);
    expect(proc.output().trim()).toBe("Cardline failed to start while reading the configuration: Invalid configuration: CARDLINE_WORKERS must be a whole number, got 'two'");
  });
});

describe.skipIf(!PG)('CARDLINE_WORKERS=2 on PostgreSQL', () => {
  let store: TestDb;
  let rx: Receiver;
  let gw: GatewayProcess;
  let adminBase = '';

  beforeAll(async () => {
    [store, rx] = await Promise.all([createTestDb(), startReceiver()]);
    const adminPort = await freePort();
    adminBase = `http://127.0.0.1:${adminPort}`;
    gw = new GatewayProcess({ DATABASE_URL: store.url!, CARDLINE_MASTER_KEY: MasterKey.generate(), CARDLINE_WORKERS: '2', CARDLINE_ADMIN_PORT: String(adminPort), CARDLINE_DEMO_OPERATOR_KEY: OPERATOR_KEY }, PASSWORD);
    await gw.start();
    // Ready means the first worker answers; the second follows it (it starts once the first is ready).
    // Bounded, and ended by the primary's exit, so that a second worker that cannot start fails with the output.
    let exited = false;
    void gw.proc!.exited.then(() => (exited = true));
    const deadline = Date.now() + 180_000;
    while (workersOf(gw.proc!.child.pid!).length < 2 || !gw.proc!.output().includes('2 gateway processes ready')) {
      if (exited || Date.now() > deadline) throw new Error(`the second worker is not ready (primary ${exited ? 'exited' : 'running'}):\n${gw.proc!.output()}`);
      await sleep(100);
    }
  }, 300_000);

  afterAll(async () => {
    await gw?.kill();
    await rx?.close();
    await store?.drop();
  });

  it('two processes share the writes, one scrape counts them all, each event is delivered once', async () => {
    const admin = await gw.token('admin');
    const created = await gw.call('POST', '/v1/admin/channels', admin, { type: 'webhook', url: `${rx.base}/all`, eventTypes: ['credit-limit.upgraded'] });
    expect(created.status).toBe(201);
    const { secret } = created.json.result;
    const token = await gw.token('integration');
    const before = counter(await (await fetch(`${adminBase}/metrics`)).text(), 'cardline_http_requests_total', `route="${LIMIT_URL}"`);

    // Three writers, one entity each (each worker has a mock core of its own, and limits only go up: one writer
    // per entity, its amounts rising, whichever worker a request lands on), a connection per request (the
    // primary hands connections round-robin to the workers).
    const WRITES = 162;
    await Promise.all(
      Array.from({ length: 3 }, async (_, w) => {
        for (let i = 1; i <= WRITES / 3; i++) {
          const res = await fetch(`${gw.base}${LIMIT_URL}`, {
            method: 'POST',
            headers: { TENANT: 'demo', authorization: `Bearer ${token}`, 'content-type': 'application/json', connection: 'close' },
            body: JSON.stringify({ entityId: `ENT-100${1 + w}`, amount: `${70000 + i}.00` }),
          });
          expect(res.status).toBe(200);
        }
      }),
    );

    const audited = await store.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM audit_log WHERE tenant_id = 'demo' AND route = $1 AND outcome = 'succeeded'",
      [LIMIT_URL],
    );
    expect(audited.rows[0]!.n).toBe(WRITES);
    const after = counter(await (await fetch(`${adminBase}/metrics`)).text(), 'cardline_http_requests_total', `route="${LIMIT_URL}"`);
    expect(after - before).toBe(WRITES);

    await rx.waitFor('/all', WRITES, 120_000);
    for (;;) {
      const open = await store.db.query<{ n: number }>("SELECT count(*)::int AS n FROM deliveries WHERE status <> 'delivered'");
      if (open.rows[0]!.n === 0) break;
      await sleep(50);
    }
    const hooks = rx.at('/all');
    expect(hooks).toHaveLength(WRITES);
    expect(new Set(hooks.map((h) => String(h.headers['webhook-id']))).size).toBe(WRITES);
    for (const h of hooks) expect(verifyWebhook(secret, h).type).toBe('credit-limit.upgraded');
  }, 240_000);

  it("the console's live figures are the whole gateway's: every request counted, whichever worker served it", async () => {
    // Read through the management listener, itself served by one worker or the other.
    const figures = async () => {
      const res = await fetch(`${adminBase}/v1/console/figures`, { headers: { authorization: `Bearer ${OPERATOR_KEY}`, connection: 'close' } });
      expect(res.status).toBe(200);
      return ((await res.json()) as { result: { overall: { requests: number }; tenants: Record<string, { requests: number; errors: number }> } }).result;
    };
    const scraped = async () => counter(await (await fetch(`${adminBase}/metrics`)).text(), 'cardline_http_requests_total', 'route="/api/keys"');
    const before = await figures();
    const scrapedBefore = await scraped();
    // A connection per request: the primary hands them round-robin to the two workers.
    const REQUESTS = 40;
    for (let i = 0; i < REQUESTS; i++) {
      const res = await fetch(`${gw.base}/api/keys`, { headers: { TENANT: 'demo', connection: 'close' } });
      expect(res.status).toBe(200);
    }
    const after = await figures();
    expect((after.tenants.demo?.requests ?? 0) - (before.tenants.demo?.requests ?? 0)).toBe(REQUESTS);
    expect((after.tenants.demo?.errors ?? 0) - (before.tenants.demo?.errors ?? 0)).toBe(0);
    expect(after.overall.requests - before.overall.requests).toBeGreaterThanOrEqual(REQUESTS);
    // The same count the one Prometheus scrape gives.
    expect((await scraped()) - scrapedBefore).toBe(REQUESTS);
  }, 120_000);

  it('a worker killed mid-load loses no acknowledged write and is replaced', async () => {
    const token = await gw.token('integration');
    const [victim] = workersOf(gw.proc!.child.pid!);
    const acknowledged: string[] = [];
    let stop = false;
    const writers = Array.from({ length: 3 }, async (_, w) => {
      for (let i = 1; !stop; i++) {
        const amount = `${80000 + i}.00`;
        try {
          const res = await fetch(`${gw.base}${LIMIT_URL}`, {
            method: 'POST',
            headers: { TENANT: 'demo', authorization: `Bearer ${token}`, 'content-type': 'application/json', connection: 'close' },
            body: JSON.stringify({ entityId: `ENT-100${1 + w}`, amount }),
            signal: AbortSignal.timeout(20_000),
          });
          if (res.status === 200) acknowledged.push(res.headers.get('x-request-id')!);

        } catch {
          // the killed worker's connection (closed, or handed to it as it died and never answered): not acknowledged
        }
      }
    });
    while (acknowledged.length < 30) await sleep(10);
    process.kill(victim!, 'SIGKILL');
    const killedAt = acknowledged.length;
    while (acknowledged.length < killedAt + 60) await sleep(10);
    // The primary replaces the worker: two gateway processes again, the killed one not among them, both ready
    // (the primary says so again once the new one is).
    const readyLines = () => gw.proc!.output().split('2 gateway processes ready').length - 1;
    while (workersOf(gw.proc!.child.pid!).filter((p) => p !== victim).length < 2 || readyLines() < 2) await sleep(100);
    expect(gw.proc!.output()).toContain(`exited (SIGKILL); starting another`);
    stop = true;
    await Promise.all(writers);

    const rows = await store.db.query<{ request_id: string }>(
      "SELECT request_id FROM audit_log WHERE tenant_id = 'demo' AND route = $1 AND outcome = 'succeeded'",
      [LIMIT_URL],
    );
    const audited = new Set(rows.rows.map((r) => r.request_id));
    expect(acknowledged.length).toBeGreaterThanOrEqual(killedAt + 60);
    expect(acknowledged.filter((id) => !audited.has(id))).toEqual([]);
  }, 240_000);

  it('a replacement killed while it starts is forked again after a back-off; the other worker answers throughout', async () => {
    const primary = gw.proc!.child.pid!;
    const [victim, healthy] = workersOf(primary);
    expect(healthy).toBeDefined();
    let primaryExited = false;
    void gw.proc!.exited.then(() => (primaryExited = true));
    const readyLines = () => gw.proc!.output().split('2 gateway processes ready').length - 1;
    const readyBefore = readyLines();

    process.kill(victim!, 'SIGKILL');
    // The replacement: a new child of the primary, killed as soon as it exists (long before it can listen).
    let replacement: number | undefined;
    while (!replacement) {
      if (primaryExited) throw new Error(`the primary exited:\n${gw.proc!.output()}`);
      replacement = workersOf(primary).find((p) => p !== victim && p !== healthy);
      if (!replacement) await sleep(5);
    }
    process.kill(replacement, 'SIGKILL');

    // From now on, one request after another, each on its own connection: the primary hands connections only
    // to workers that listen, so each lands on the healthy worker until the new one is ready.
    const answers: (number | string)[] = [];
    let stop = false;
    const poller = (async () => {
      while (!stop) {
        try {
          const res = await fetch(`${gw.base}/api/keys`, { headers: { TENANT: 'demo', connection: 'close' }, signal: AbortSignal.timeout(30_000) });
          await res.arrayBuffer();
          answers.push(res.status);
        } catch (err) {
          answers.push(String((err as Error).cause ?? err));
        }
      }
    })();

    // Forked again after its back-off, and ready: two processes, neither killed one among them.
    while (answers.length === 0 || readyLines() === readyBefore || workersOf(primary).filter((p) => p !== victim && p !== replacement).length < 2) {
      if (primaryExited) throw new Error(`the primary exited:\n${gw.proc!.output()}`);
      await sleep(100);
    }
    stop = true;
    await poller;
    expect(gw.proc!.output()).toMatch(/gateway process \d exited during start-up \(SIGKILL\); starting another in 1 s/);
    expect(workersOf(primary)).toContain(healthy);
    expect(answers.length).toBeGreaterThan(0);
    expect(answers.filter((status) => status !== 200)).toEqual([]);
  }, 240_000);

  it('SIGTERM drains every worker and the primary exits 0', async () => {
    const workers = workersOf(gw.proc!.child.pid!);
    expect(workers).toHaveLength(2);
    gw.proc!.child.kill('SIGTERM');
    const exit = await within(gw.proc!.exited, 60_000, 'the drained stop');
    expect(exit).toEqual({ code: 0, signal: null });
    for (const pid of workers) expect(() => process.kill(pid, 0)).toThrow();
    expect(gw.proc!.output()).toContain('Cardline: SIGTERM: draining 2 gateway processes');
  }, 120_000);
});
