// The PostgreSQL cost of appending audit records with their events (issue 21, decision 0228): one AuditWriter,
// BENCH_APPEND_INFLIGHT requests in flight (default 32, as the bench's connections), BENCH_APPEND_RECORDS records
// (default 5000) with an event each, on a database of its own on DATABASE_URL's server. Prints per record the
// Node CPU, the PostgreSQL backends' CPU (from /proc: the server must run on this machine), batches and commits.
// BENCH_APPEND_DROP=index,index… drops those indexes first (to price what each costs on the write path).
//   DATABASE_URL=postgres://… npx tsx bench/audit-append.ts
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { AuditWriter } from '../src/audit/writer.js';
import { openDb } from '../src/store/db.js';
import { migrate } from '../src/store/migrate.js';
import { backendCpu, cpuBetween } from './peer-harness.js';
import { temporaryDatabase } from './postgres.js';

const RECORDS = Number(process.env.BENCH_APPEND_RECORDS || '5000');
const INFLIGHT = Number(process.env.BENCH_APPEND_INFLIGHT || '32');
const ROUNDS = Number(process.env.BENCH_ROUNDS || '3');
const DROP = (process.env.BENCH_APPEND_DROP || '').split(',').filter(Boolean);

async function main(): Promise<void> {
  const database = await temporaryDatabase('cardline_bench_append');
  const name = new URL(database.url).pathname.slice(1);
  const stats = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await stats.connect();
  try {
    const db = await openDb({ databaseUrl: database.url });
    await migrate(db);
    for (const index of DROP) await db.exec(`DROP INDEX ${index}`);
    let batches = 0;
    const writer = new AuditWriter(db, { auditBatch: () => void (batches += 1) });
    const one = (i: number) =>
      writer.record({
        tenantId: 'demo', at: new Date(), actor: 'integration', role: 'API Integration', action: 'credit-limit.upgrade', method: 'POST',
        route: '/credit-line-management/business-entity-manager/upgradeLimit', target: { entityId: `ENT-${i % 1000}`, connector: 'mock' },
        outcome: 'succeeded', status: 200, requestId: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, origin: '127.0.0.1',
        event: { type: 'credit-limit.upgraded', aggregateId: `ENT-${i % 1000}`, payload: { entityId: `ENT-${i % 1000}`, amount: '60000.00' } },
      });
    await Promise.all(Array.from({ length: 200 }, (_, i) => one(i)));
    for (let round = 0; round < ROUNDS; round++) {
      batches = 0;
      const commits0 = await stats.query<{ n: string }>('SELECT xact_commit AS n FROM pg_stat_database WHERE datname = $1', [name]);
      const pg0 = await backendCpu(stats, name);
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      let next = 0;
      await Promise.all(Array.from({ length: INFLIGHT }, async () => {
        while (next < RECORDS) await one(next++);
      }));
      const seconds = (performance.now() - t0) / 1000;
      const cpu = process.cpuUsage(cpu0);
      const pgUs = cpuBetween(pg0, await backendCpu(stats, name));
      const commits1 = await stats.query<{ n: string }>('SELECT xact_commit AS n FROM pg_stat_database WHERE datname = $1', [name]);
      process.stdout.write(`${JSON.stringify({
        round, records: RECORDS, recordsPerSecond: Math.round(RECORDS / seconds), nodeUsPerRecord: Math.round((cpu.user + cpu.system) / RECORDS),
        pgUsPerRecord: Math.round(pgUs / RECORDS), recordsPerBatch: Number((RECORDS / Math.max(1, batches)).toFixed(1)),
        commitsPerRecord: Number(((Number(commits1.rows[0]!.n) - Number(commits0.rows[0]!.n)) / RECORDS).toFixed(3)),
        dropped: DROP,
      })}\n`);
    }
    await writer.close();
    await db.close();
  } finally {
    await stats.end();
    await database.drop();
  }
}

await main();
