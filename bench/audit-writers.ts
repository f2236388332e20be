// Audit writers contending for one tenant (issue 21, decision 0200): BENCH_WRITERS AuditWriters (default 1 and
// 2; each with a pool of its own, as gateway processes have) append BENCH_WRITER_RECORDS records each to one
// tenant, BENCH_WRITER_INFLIGHT requests in flight per writer, on PostgreSQL (DATABASE_URL). Counts the batch
// statements and those that inserted nothing (a conflict: the batch is computed again). The same file runs
// on an older tree to measure the design it replaces (the decision record says how). One JSON line per run.
//   DATABASE_URL=postgres://… npx tsx bench/audit-writers.ts
import { performance } from 'node:perf_hooks';
import { AuditWriter } from '../src/audit/writer.js';
import { openDb, type Db } from '../src/store/db.js';
import { migrate } from '../src/store/migrate.js';
import { temporaryDatabase } from './postgres.js';

const RECORDS = Number(process.env.BENCH_WRITER_RECORDS || '5000');
const INFLIGHT = Number(process.env.BENCH_WRITER_INFLIGHT || '32');
const WRITERS = (process.env.BENCH_WRITERS || '1,2').split(',').map(Number);
const ROUNDS = Number(process.env.BENCH_ROUNDS || '3');

interface Counts {
  statements: number;
  conflicts: number;
}

/** The store, counting the batch statements (those inserting audit records) and the ones that inserted none. */
function counting(db: Db, counts: Counts): Db {
  return {
    kind: db.kind,
    // The options pass through: the writer's batch statement is a named prepared one (decision 0228), and the
    // bench measures it as the gateway runs it.
    query: async <T,>(sql: string, params?: unknown[], options?: { name?: string }) => {
      const r = await db.query<T>(sql, params, options);
      if (sql.includes('INSERT INTO audit_log')) {
        counts.statements += 1;
        if (r.rowCount === 0) counts.conflicts += 1;
      }
      return r;
    },
    exec: (sql) => db.exec(sql),
    transaction: (fn) => db.transaction(fn),
    exclusive: (id, fn) => db.exclusive(id, fn),
    close: () => db.close(),
  };
}

async function run(url: string, writers: number, tenant: string): Promise<Record<string, number>> {
  const counts: Counts = { statements: 0, conflicts: 0 };
  const dbs = await Promise.all(Array.from({ length: writers }, () => openDb({ databaseUrl: url })));
  const ws = dbs.map((db) => new AuditWriter(counting(db, counts)));
  const started = performance.now();
  const cpu = process.cpuUsage();
  await Promise.all(
    ws.flatMap((w, wi) =>
      Array.from({ length: INFLIGHT }, async (_, slot) => {
        for (let i = slot; i < RECORDS; i += INFLIGHT) {
          await w.record({
            tenantId: tenant, at: new Date(), actor: 'integration', role: 'API Integration', action: 'credit-limit.upgrade', method: 'POST',
            route: '/credit-line-management/business-entity-manager/upgradeLimit', target: { entityId: `ENT-${i % 1000}` }, outcome: 'succeeded',
            status: 200, requestId: `w${wi}-${i}`, origin: '127.0.0.1',
          });
        }
      }),
    ),
  );
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  await Promise.all(ws.map((w) => w.close()));
  await Promise.all(dbs.map((db) => db.close()));
  const records = RECORDS * writers;
  return {
    writers,
    records,
    seconds: Number(seconds.toFixed(2)),
    recordsPerSecond: Math.round(records / seconds),
    cpuMicrosPerRecord: Math.round((used.user + used.system) / records),
    statements: counts.statements,
    conflicts: counts.conflicts,
    conflictShare: Number((counts.conflicts / Math.max(1, counts.statements)).toFixed(3)),
  };
}

async function main(): Promise<void> {
  const database = await temporaryDatabase('cardline_bench_writers');
  try {
    const db = await openDb({ databaseUrl: database.url });
    await migrate(db);
    await db.close();
    for (let round = 0; round < ROUNDS; round++) {
      for (const writers of WRITERS) {
        process.stdout.write(`${JSON.stringify({ round, ...(await run(database.url, writers, `bench-${round}-${writers}`)) })}\n`);
      }
    }
  } finally {
    await database.drop();
  }
}

await main();
