// The audit-query target of `npm run bench`: one tenant's trail of BENCH_AUDIT_ROWS records (generated in
// the store, actions and outcomes spread as traffic spreads them), queried through the audit read service
// by a rare action and by outcome (GET /v1/audit's filters). Prints {"rows","actionMs","outcomeMs"} (medians of 5).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { AuditLog } from '../src/audit/log.js';
import { temporaryDatabase } from './postgres.js';
import { openDb, type Db } from '../src/store/db.js';
import { migrate } from '../src/store/migrate.js';

const ROWS = Number(process.env.BENCH_AUDIT_ROWS || '1000000');

async function main(): Promise<void> {
  let db: Db;
  let cleanup: () => Promise<void>;
  if ((process.env.BENCH_STORE || 'disk') === 'postgres') {
    const database = await temporaryDatabase('cardline_bench_audit');
    db = await openDb({ databaseUrl: database.url });
    cleanup = async () => {
      await db.close();
      await database.drop();
    };
  } else {
    const dir = mkdtempSync(join(tmpdir(), 'cardline-bench-audit-'));
    db = await openDb({ dataDir: join(dir, 'pglite') });
    cleanup = async () => {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    };
  }
  try {
    await migrate(db);
    // 24 common actions and a rare one (one record in 20 000: an Admin removing a user), mostly successes;
    // one record in a thousand failed, one in fifty refused. The rare filter is the slow one without an index.
    await db.query(
      `INSERT INTO audit_log (tenant_id, seq, chain, position, id, at, actor, role, action, method, route, target, outcome, status, request_id, origin, prev_hash, hash)
       SELECT 'demo', g, 'legacy', g, gen_random_uuid(), now() - ($1::int - g) * interval '1 millisecond', 'integration', 'API Integration',
              CASE WHEN g % 20000 = 7 THEN 'user.remove' ELSE 'action-' || (g % 24) END, 'POST', '/route/' || (g % 24), '{}'::jsonb,
              CASE WHEN g % 1000 = 0 THEN 'failed' WHEN g % 50 = 0 THEN 'refused' ELSE 'succeeded' END,
              200, 'req-' || g, '127.0.0.1', md5(g::text), md5((g + 1)::text)
         FROM generate_series(1, $1::int) AS g`,
      [ROWS],
    );
    await db.query(`INSERT INTO audit_heads (tenant_id, seq) VALUES ('demo', $1::int)`, [ROWS]);
    await db.query(`INSERT INTO audit_chains (tenant_id, chain, size, head, last_seq) VALUES ('demo', 'legacy', $1::int, md5(($1::int + 1)::text), $1::int)`, [ROWS]);
    await db.exec('ANALYZE audit_log');
    const log = new AuditLog(db);
    // A page of 50, or all there are when BENCH_AUDIT_ROWS is small (the rare action is 1 record in 20 000).
    const time = async (filter: { action?: string; outcome?: 'failed' }, matching: number) => {
      const samples: number[] = [];
      for (let i = 0; i < 5; i++) {
        const started = performance.now();
        const page = await log.page('demo', { ...filter, limit: 50 });
        samples.push(performance.now() - started);
        const expected = Math.min(50, matching);
        if (page.records.length !== expected) throw new Error(`expected ${expected} records, got ${page.records.length}`);
      }
      return samples.sort((a, b) => a - b)[2]!;
    };
    const actionMs = await time({ action: 'user.remove' }, ROWS >= 7 ? Math.floor((ROWS - 7) / 20_000) + 1 : 0);
    const outcomeMs = await time({ outcome: 'failed' }, Math.floor(ROWS / 1000));
    process.stdout.write(`${JSON.stringify({ rows: ROWS, actionMs, outcomeMs })}\n`);
  } finally {
    await cleanup();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`audit query bench failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
