// The bench's arm "Cardline, N processes" (bench/cluster-arm.ts, decision 0217): the gateway started with
// CARDLINE_WORKERS=2 on a database seeded as `npm run bench` seeds it answers the bench's request through both
// workers, its CPU is read for the primary and each worker, and its /metrics counts the audit writers' batches
// with no chain-conflict retry. The PostgreSQL part is skipped without DATABASE_URL.
import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditFigures, freePort, procStat, startClusterArm, type ClusterArm } from '../../bench/cluster-arm.js';
import { temporaryDatabase } from '../../bench/postgres.js';
import { MasterKey } from '../../src/crypto/master-key.js';
import { ROOT } from '../helpers/process.js';

const PG = process.env.DATABASE_URL;
const LIMIT_URL = '/credit-line-management/business-entity-manager/upgradeLimit';

describe('the bench arm helpers', () => {
  it('reads the audit figures from a Prometheus text exposition', () => {
    const text = [
      '# HELP cardline_audit_conflict_retries_total Audit batches computed again',
      '# TYPE cardline_audit_conflict_retries_total counter',
      'cardline_audit_conflict_retries_total 3',
      'cardline_audit_batch_records_bucket{le="1"} 2',
      'cardline_audit_batch_records_sum 40',
      'cardline_audit_batch_records_count 5',
      'cardline_audit_commit_seconds_sum 0.25',
      'cardline_audit_commit_seconds_count 5',
    ].join('\n');
    expect(auditFigures(text)).toEqual({ conflictRetries: 3, batches: 5, records: 40, commitSeconds: 0.25 });
    expect(auditFigures('')).toEqual({ conflictRetries: 0, batches: 0, records: 0, commitSeconds: 0 });
  });

  it("reads a process's CPU and RSS from /proc, and nothing for a process that is gone", () => {
    const own = procStat(process.pid)!;
    expect(own.cpuUs).toBeGreaterThan(0);
    expect(own.rss).toBeGreaterThan(1024 * 1024);
    expect(procStat(2 ** 22 + 1)).toBeNull();
  });
});

/** One request on a connection of its own (node:cluster hands each new connection to the next worker). */
function post(port: number, tenant: string, token: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, method: 'POST', path: LIMIT_URL, agent: false, headers: { 'content-type': 'application/json', TENANT: tenant, authorization: `Bearer ${token}` } },
      (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify({ entityId: 'ENT-1001', amount: '60000.00' }));
  });
}

describe.skipIf(!PG)('the bench arm with CARDLINE_WORKERS=2 on PostgreSQL', () => {
  let db: Awaited<ReturnType<typeof temporaryDatabase>>;
  let arm: ClusterArm;
  let token: { tenant: string; token: string };

  beforeAll(async () => {
    db = await temporaryDatabase('cardline_bench_test');
    const masterKey = MasterKey.generate();
    // Seeded as bench/run.ts seeds it: bench/server.ts in its seed phase.
    const dir = mkdtempSync(join(tmpdir(), 'cardline-bench-test-'));
    try {
      const tokensFile = join(dir, 'tokens.json');
      const seeder = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'bench', 'server.ts')], {
        cwd: ROOT,
        env: { PATH: process.env.PATH, NODE_ENV: 'production', BENCH_PHASE: 'seed', BENCH_DATABASE_URL: db.url, BENCH_TOKENS_FILE: tokensFile, BENCH_MASTER_KEY: masterKey, BENCH_TENANTS: '1' },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      expect(await new Promise((r) => seeder.once('exit', r))).toBe(0);
      token = (JSON.parse(readFileSync(tokensFile, 'utf8')) as { tenant: string; token: string }[])[0]!;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    arm = await startClusterArm({ databaseUrl: db.url, masterKey, workers: 2, port: await freePort(), adminPort: await freePort() });
  }, 300_000);

  afterAll(async () => {
    if (arm) expect(await arm.stop()).toBe(0);
    await db?.drop();
  });

  it('answers through both workers, with their CPU counted and no chain-conflict retry', async () => {
    const pids = arm.pids();
    expect(pids).toHaveLength(3);
    expect(pids[0]).toBe(arm.child.pid);
    const before = await arm.audit();
    const answers = [];
    for (let i = 0; i < 6; i++) answers.push(await post(arm.port, token.tenant, token.token));
    for (const a of answers) expect(a).toEqual({ status: 200, body: answers[0]!.body });
    expect(JSON.parse(answers[0]!.body)).toEqual({ result: true, exception: null, pagination: null });

    const after = await arm.audit();
    expect(after.records - before.records).toBe(6);
    // Read as 0 when absent too: the scrape must carry the counter for that 0 to mean no retry.
    expect((await (await fetch(`http://127.0.0.1:${arm.adminPort}/metrics`)).text()).split('\n')).toContain('cardline_audit_conflict_retries_total 0');
    expect(after.conflictRetries).toBe(0);
    // Each worker appends to a chain of its own: the six records over two chains (node:cluster hands the
    // connections out in turn, so both workers answered).
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    try {
      const r = await c.query<{ chain: string; n: number }>('SELECT chain, count(*)::int AS n FROM audit_log WHERE route = $1 GROUP BY chain', [LIMIT_URL]);
      expect(r.rows).toHaveLength(2);
      expect(r.rows.reduce((n, row) => n + row.n, 0)).toBe(6);
    } finally {
      await c.end();
    }
    const cpu = arm.cpu();
    expect([...cpu.keys()]).toEqual(pids);
    for (const us of cpu.values()) expect(us).toBeGreaterThan(0);
    expect(arm.rss()).toBeGreaterThan(3 * 1024 * 1024);
  });
});
