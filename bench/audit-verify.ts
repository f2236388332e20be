// Audit verification figures (issue 21): one tenant's trail of BENCH_AUDIT_RECORDS records (default 1 000 000)
// in BENCH_AUDIT_CHAINS chains (default 2: two gateway processes), built with real hashes, then
//   - a full verification (every record re-hashed, every link and head checked: `cardline audit verify`),
//   - a signed checkpoint opened and proven against the trail after BENCH_AUDIT_SINCE more records
//     (`cardline audit verify --checkpoint FILE --since`): signature check plus the records since.
// Prints one JSON line of figures: wall time, this process's CPU (all its threads) and, on PostgreSQL, the CPU of
// the server's backends serving the bench's database (read from /proc every 50 ms: the server must run on this
// machine; a backend that ends between two readings loses at most 50 ms). BENCH_STORE=postgres (with
// DATABASE_URL) or disk (PGlite, the default). BENCH_KEEP=1 keeps the database (its URL on stderr);
// BENCH_REUSE_URL=<that URL> verifies it again without building it (the checkpoint part appends to it).
// BENCH_VERIFY_THREADS=0 verifies on the calling thread only (the walk before decision 0211), N on at most N.
//   npx tsx bench/audit-verify.ts
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg as loadavgOf, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { uuidv7 } from 'uuidv7';
import { GENESIS_HASH, recordHash } from '../src/audit/chain.js';
import { openCheckpoint, publishCheckpoint } from '../src/audit/checkpoint.js';
import { verifyChain } from '../src/audit/verify.js';
import { KeyRing } from '../src/services/identity/key-ring.js';
import { MasterKey } from '../src/crypto/master-key.js';
import { openDb, type Db } from '../src/store/db.js';
import { migrate } from '../src/store/migrate.js';
import { backendCpu, statsClient } from './peer-harness.js';
import { temporaryDatabase } from './postgres.js';

const RECORDS = Number(process.env.BENCH_AUDIT_RECORDS || '1000000');
const CHAINS = Number(process.env.BENCH_AUDIT_CHAINS || '2');
const SINCE = Number(process.env.BENCH_AUDIT_SINCE || '5000');
const TENANT = 'bench';
const INSERT_BATCH = 5000;

async function openStore(): Promise<{ db: Db; database: string | null; cleanup: () => Promise<void> }> {
  const reuse = process.env.BENCH_REUSE_URL;
  if (reuse) {
    const db = await openDb({ databaseUrl: reuse });
    return { db, database: new URL(reuse).pathname.slice(1), cleanup: () => db.close() };
  }
  if ((process.env.BENCH_STORE || 'disk') === 'postgres') {
    const database = await temporaryDatabase('cardline_bench_verify');
    const db = await openDb({ databaseUrl: database.url });
    // BENCH_KEEP=1 leaves the database for a closer look (its URL on stderr).
    if (process.env.BENCH_KEEP === '1') process.stderr.write(`${database.url}\n`);
    return { db, database: new URL(database.url).pathname.slice(1), cleanup: async () => { await db.close(); if (process.env.BENCH_KEEP !== '1') await database.drop(); } };
  }
  const dir = mkdtempSync(join(tmpdir(), 'cardline-bench-verify-'));
  const db = await openDb({ dataDir: join(dir, 'pglite') });
  return { db, database: null, cleanup: async () => { await db.close(); rmSync(dir, { recursive: true, force: true }); } };
}

/**
 * The CPU time of the PostgreSQL backends serving `database` from now until `stop()`, in seconds: their
 * /proc figures read every 50 ms (backends that connect meanwhile, such as the verification's threads', count
 * from their start). Null without a server on this machine.
 */
async function watchBackends(database: string | null): Promise<{ stop: () => Promise<number | null> }> {
  const client = database ? await statsClient() : null;
  if (!client || !database) return { stop: async () => null };
  const first = await backendCpu(client, database);
  const last = new Map(first);
  let reading: Promise<void> = Promise.resolve();
  const read = async () => {
    for (const [pid, us] of await backendCpu(client, database)) last.set(pid, us);
  };
  const timer = setInterval(() => {
    reading = reading.then(read, read);
  }, 50);
  return {
    stop: async () => {
      clearInterval(timer);
      await reading.catch(() => undefined);
      await read().catch(() => undefined);
      await client.end();
      let us = 0;
      for (const [pid, v] of last) us += v - (first.get(pid) ?? 0);
      return us / 1e6;
    },
  };
}

/** A trail built by an earlier run (BENCH_REUSE_URL): its chains as the writers left them, and the next seq. */
async function existing(db: Db): Promise<{ chains: { chain: string; size: number; head: string; lastSeq: number }[]; seq: number; records: number }> {
  const rows = (await db.query<{ chain: string; size: string; head: string; last_seq: string }>('SELECT chain, size, head, last_seq FROM audit_chains WHERE tenant_id = $1 ORDER BY chain', [TENANT])).rows;
  const chains = rows.map((r) => ({ chain: r.chain, size: Number(r.size), head: r.head, lastSeq: Number(r.last_seq) }));
  const seq = Number((await db.query<{ seq: string }>('SELECT seq FROM audit_heads WHERE tenant_id = $1', [TENANT])).rows[0]!.seq) + 1;
  return { chains, seq, records: chains.reduce((n, c) => n + c.size, 0) };
}

/** Appends `count` records round-robin over the chains, as writers would (seqs in blocks, hashes linked). */
async function append(db: Db, chains: { chain: string; size: number; head: string; lastSeq: number }[], firstSeq: number, count: number): Promise<number> {
  let seq = firstSeq;
  const t0 = Date.now();
  for (let done = 0; done < count; ) {
    const n = Math.min(INSERT_BATCH, count - done);
    const rows: Record<string, unknown>[] = [];
    for (let i = 0; i < n; i++) {
      const c = chains[(done + i) % chains.length]!;
      const id = uuidv7();
      const entry = {
        tenantId: TENANT, seq, id, at: new Date(t0 + seq), actor: 'integration', role: 'API Integration', action: `action-${seq % 24}`, method: 'POST',
        route: '/credit-line-management/business-entity-manager/upgradeLimit', target: { entityId: `ENT-${seq % 1000}` }, outcome: 'succeeded',
        status: 200, requestId: `req-${seq}`, origin: '127.0.0.1',
      };
      const hash = recordHash(c.head, entry);
      c.size += 1;
      rows.push({
        tenant_id: TENANT, seq, chain: c.chain, position: c.size, id, at: entry.at.toISOString(), actor: entry.actor, role: entry.role, action: entry.action,
        method: entry.method, route: entry.route, target: entry.target, outcome: entry.outcome, status: entry.status, request_id: entry.requestId,
        origin: entry.origin, prev_hash: c.head, hash,
      });
      c.head = hash;
      c.lastSeq = seq;
      seq += 1;
    }
    await db.query(`INSERT INTO audit_log SELECT * FROM jsonb_populate_recordset(NULL::audit_log, $1::jsonb)`, [JSON.stringify(rows)]);
    done += n;
  }
  for (const c of chains) {
    await db.query(
      `INSERT INTO audit_chains (tenant_id, chain, size, head, last_seq) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (tenant_id, chain) DO UPDATE SET size = EXCLUDED.size, head = EXCLUDED.head, last_seq = EXCLUDED.last_seq`,
      [TENANT, c.chain, c.size, c.head, c.lastSeq],
    );
  }
  await db.query('INSERT INTO audit_heads (tenant_id, seq) VALUES ($1, $2) ON CONFLICT (tenant_id) DO UPDATE SET seq = EXCLUDED.seq', [TENANT, seq - 1]);
  return seq;
}

async function main(): Promise<void> {
  const { db, database, cleanup } = await openStore();
  const loadavg = loadavgOf()[0]!;
  try {
    const masterKey = new MasterKey(MasterKey.generate());
    const keys = new KeyRing(db, masterKey, 0);
    let chains: { chain: string; size: number; head: string; lastSeq: number }[];
    let seq: number;
    let records = RECORDS;
    let buildSeconds = 0;
    if (process.env.BENCH_REUSE_URL) {
      ({ chains, seq, records } = await existing(db));
    } else {
      await migrate(db);
      // The tenant row only: the checkpoint is signed with a key created below.
      await db.query(`INSERT INTO tenants (tenant_id, name, config) VALUES ($1, $1, '{}')`, [TENANT]);
      chains = Array.from({ length: CHAINS }, () => ({ chain: uuidv7(), size: 0, head: GENESIS_HASH, lastSeq: 0 }));
      const built = performance.now();
      seq = await append(db, chains, 1, RECORDS);
      buildSeconds = (performance.now() - built) / 1000;
      if (db.kind === 'postgres') await db.exec('ANALYZE audit_log');
    }
    // A signing key of this run's master key (a reused database's, sealed with an earlier run's, goes).
    await db.query('DELETE FROM keys WHERE tenant_id = $1', [TENANT]);
    await keys.create(TENANT, 'sig', db);

    // Wall time, this process's CPU time (every thread) and the server's (on a shared machine the wall time
    // also counts other loads).
    const backends = await watchBackends(database);
    const full = performance.now();
    const cpu = process.cpuUsage();
    const threads = process.env.BENCH_VERIFY_THREADS;
    const result = await verifyChain(db, TENANT, threads === '0' ? { parallelFrom: Infinity } : threads ? { threads: Number(threads) } : {});
    const fullSeconds = (performance.now() - full) / 1000;
    const used = process.cpuUsage(cpu);
    const fullCpuSeconds = (used.user + used.system) / 1e6;
    const pgCpuSeconds = await backends.stop();
    if (!result.ok) throw new Error(`the bench trail does not verify: ${result.detail}`);

    // A checkpoint now, SINCE records more, then the proof that the trail extends it.
    const checkpoint = await publishCheckpoint(db, keys, TENANT);
    await append(db, chains, seq, SINCE);
    const proof = performance.now();
    const proofCpu = process.cpuUsage();
    const opened = await openCheckpoint(db, TENANT, JSON.stringify({ result: checkpoint, pagination: null }));
    const proven = await verifyChain(db, TENANT, { checkpoint: opened.chains, since: true });
    const proofMs = performance.now() - proof;
    const proofUsed = process.cpuUsage(proofCpu);
    if (!proven.ok) throw new Error(`the checkpoint proof failed: ${proven.detail}`);

    process.stdout.write(
      `${JSON.stringify({
        store: db.kind,
        records,
        chains: chains.length,
        buildSeconds: Number(buildSeconds.toFixed(1)),
        verifySeconds: Number(fullSeconds.toFixed(2)),
        verifyCpuSeconds: Number(fullCpuSeconds.toFixed(2)),
        verifyPostgresCpuSeconds: pgCpuSeconds === null ? null : Number(pgCpuSeconds.toFixed(2)),
        verifiedRecordsPerSecond: Math.round(records / fullSeconds),
        checkpointProofMs: Number(proofMs.toFixed(1)),
        checkpointProofCpuMs: Number(((proofUsed.user + proofUsed.system) / 1000).toFixed(1)),
        recordsSinceCheckpoint: SINCE,
        loadAverageAtStart: Number(loadavg.toFixed(1)),
      })}\n`,
    );
  } finally {
    await cleanup();
  }
}

await main();
