// Audit verification figures (issue 21): one tenant's trail of BENCH_AUDIT_RECORDS records (default 1 000 000)
// in BENCH_AUDIT_CHAINS chains (default 2: two gateway processes), built with real hashes, then
//   - a full verification (every record re-hashed, every link and head checked: `cardline audit verify`),
//   - a signed checkpoint opened and proven against the trail after BENCH_AUDIT_SINCE more records
//     (`cardline audit verify --checkpoint FILE --since`): signature check plus the records since.
// Prints one JSON line of figures. BENCH_STORE=postgres (with DATABASE_URL) or disk (PGlite, the default).
//   npx tsx bench/audit-verify.ts
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg as loadavgOf, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { uuidv7 } from 'uuidv7';
import { GENESIS_HASH, recordHash } from '../src/audit/chain.js';
import { openCheckpoint, publishCheckpoint } from '../src/audit/checkpoint.js';
import { verifyChain } from '../src/audit/verify.js';
import { KeyRing } from '../src/crypto/keys.js';
import { MasterKey } from '../src/crypto/master-key.js';
import { openDb, type Db } from '../src/store/db.js';
import { migrate } from '../src/store/migrate.js';
import { temporaryDatabase } from './postgres.js';

const RECORDS = Number(process.env.BENCH_AUDIT_RECORDS || '1000000');
const CHAINS = Number(process.env.BENCH_AUDIT_CHAINS || '2');
const SINCE = Number(process.env.BENCH_AUDIT_SINCE || '5000');
const TENANT = 'bench';
const INSERT_BATCH = 5000;

async function openStore(): Promise<{ db: Db; cleanup: () => Promise<void> }> {
  if ((process.env.BENCH_STORE || 'disk') === 'postgres') {
    const database = await temporaryDatabase('cardline_bench_verify');
    const db = await openDb({ databaseUrl: database.url });
    // BENCH_KEEP=1 leaves the database for a closer look (its URL on stderr).
    if (process.env.BENCH_KEEP === '1') process.stderr.write(`${database.url}\n`);
    return { db, cleanup: async () => { await db.close(); if (process.env.BENCH_KEEP !== '1') await database.drop(); } };
  }
  const dir = mkdtempSync(join(tmpdir(), 'cardline-bench-verify-'));
  const db = await openDb({ dataDir: join(dir, 'pglite') });
  return { db, cleanup: async () => { await db.close(); rmSync(dir, { recursive: true, force: true }); } };
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
  const { db, cleanup } = await openStore();
  const loadavg = loadavgOf()[0]!;
  try {
    await migrate(db);
    const masterKey = new MasterKey(MasterKey.generate());
    const keys = new KeyRing(db, masterKey, 0);
    // The tenant row and its signing key only: the checkpoint is signed with it.
    await db.query(`INSERT INTO tenants (tenant_id, name, config) VALUES ($1, $1, '{}')`, [TENANT]);
    await keys.create(TENANT, 'sig', db);
    const chains = Array.from({ length: CHAINS }, () => ({ chain: uuidv7(), size: 0, head: GENESIS_HASH, lastSeq: 0 }));
    const built = performance.now();
    const seq = await append(db, chains, 1, RECORDS);
    const buildSeconds = (performance.now() - built) / 1000;
    if (db.kind === 'postgres') await db.exec('ANALYZE audit_log');

    // Wall time, and this process's CPU time (on a shared machine the wall time also counts other loads).
    const full = performance.now();
    const cpu = process.cpuUsage();
    const result = await verifyChain(db, TENANT);
    const fullSeconds = (performance.now() - full) / 1000;
    const used = process.cpuUsage(cpu);
    const fullCpuSeconds = (used.user + used.system) / 1e6;
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
        records: RECORDS,
        chains: CHAINS,
        buildSeconds: Number(buildSeconds.toFixed(1)),
        verifySeconds: Number(fullSeconds.toFixed(2)),
        verifyCpuSeconds: Number(fullCpuSeconds.toFixed(2)),
        verifiedRecordsPerSecond: Math.round(RECORDS / fullSeconds),
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
