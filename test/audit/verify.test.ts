// Audit chain verification: a clean chain verifies page by page; each kind of tampering is found at the
// right seq with the right reason; and `cardline audit verify` reports both as an operator sees them.
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { QUICK_COLUMNS, canonicalText, quickText, recordHash, trailRoot, type AuditRecord } from '../../src/audit/chain.js';
import { chainHeads, publishCheckpoint } from '../../src/audit/checkpoint.js';
import { verifyChain as verify, type ChainWalk, type VerifyOptions } from '../../src/audit/verify.js';
import { AuditWriter } from '../../src/audit/writer.js';
import { openStore } from '../../src/bootstrap.js';
import { loadConfig } from '../../src/config.js';
import { MasterKey } from '../../src/crypto/master-key.js';
import { createTenant } from '../../src/services/tenancy/onboarding.js';
import type { Db, Queryable } from '../../src/store/db.js';
import { migrate } from '../../src/store/migrate.js';
import { LIMIT_URL, createTestDataDir, createTestDb, type TestDb } from '../helpers/app.js';
import { BUILD_TIMEOUT_MS, ensureBuilt, runProcess, type Run } from '../helpers/spawn.js';

const RECORDS = 12;

/**
 * Each case runs with the walk in the verification's own transaction, and, on PostgreSQL, with every chain
 * walked on worker threads in the exported snapshot (decision 0211): a break must be found, and named, alike.
 */
const WALKS: { name: string; threads: boolean }[] = [
  { name: 'in its transaction', threads: false },
  ...(process.env.DATABASE_URL ? [{ name: 'on worker threads', threads: true }] : []),
];

describe.each(WALKS)('verifyChain, $name', ({ threads }) => {
  let testDb: TestDb;
  let db: Db;
  let writer: AuditWriter;
  /** How each chain's walk on a thread ended, in the last verification. */
  let walks: ChainWalk[] = [];
  const verifyChain = (on: Db, tenantId: string, opts: VerifyOptions = {}) => {
    walks = [];
    return verify(on, tenantId, threads ? { ...opts, parallelFrom: 0, onThreadWalk: (w) => walks.push(w) } : opts);
  };

  /** A tenant of the test's own with a fresh chain of RECORDS records. */
  let n = 0;
  async function chain(): Promise<string> {
    const tenantId = `chain-${++n}`;
    for (let i = 1; i <= RECORDS; i++) {
      await writer.record({
        tenantId, at: new Date(), actor: 'admin', role: 'Admin', action: 'credit-limit.upgrade', method: 'POST', route: LIMIT_URL,
        target: { entityId: `ENT-${i}` }, outcome: i % 3 ? 'succeeded' : 'refused', status: i % 3 ? 200 : 409, requestId: `req-${i}`, origin: '127.0.0.1',
      });
    }
    return tenantId;
  }
  const sql = (text: string, params: unknown[]) => db.query(text, params);
  const hashOf = async (tenantId: string, seq: number) =>
    (await db.query<{ hash: string }>('SELECT hash FROM audit_log WHERE tenant_id = $1 AND seq = $2', [tenantId, seq])).rows[0]!.hash;
  const swap = async (tenantId: string, a: number, b: number) => {
    await sql('UPDATE audit_log SET seq = -1 WHERE tenant_id = $1 AND seq = $2', [tenantId, a]);
    await sql('UPDATE audit_log SET seq = $3 WHERE tenant_id = $1 AND seq = $2', [tenantId, b, a]);
    await sql('UPDATE audit_log SET seq = $2 WHERE tenant_id = $1 AND seq = -1', [tenantId, b]);
  };

  beforeAll(async () => {
    testDb = await createTestDb();
    db = testDb.db;
    await migrate(db);
    writer = new AuditWriter(db);
  });
  afterAll(async () => {
    await writer.close();
    await testDb.drop();
  });

  /** What a clean trail of one writer's chain verifies to. */
  const clean = async (tenant: string, size = RECORDS) => {
    const chains = [{ chain: writer.chain, size, head: await hashOf(tenant, size) }];
    return { ok: true, records: size, chains, root: trailRoot(tenant, chains) };
  };

  it('a clean chain verifies: count, chains and root', async () => {
    const tenant = await chain();
    expect(await verifyChain(db, tenant)).toEqual(await clean(tenant));
    if (threads) expect(walks).toEqual([{ chain: writer.chain, state: 'done', size: RECORDS, hash: await hashOf(tenant, RECORDS), lastSeq: RECORDS }]);
  });

  it('a record with every kind of text (quotes, escapes, control characters, non-ASCII, nulls, targets of 0-3 keys) verifies', async () => {
    const tenantId = `texts-${++n}`;
    const texts = ['plain', 'quote " and \\ backslash', 'line\nbreak\ttab\u0001\u001f\u007f', 'é ü 中文 😀 \u2028', '/slash', ''];
    const targets: Record<string, string>[] = [{}, { entityId: 'ENT-1' }, { 'k"q': 'v\\', 'é': '😀', a: 'line\nbreak' }, { b: '2', a: '1', '': 'empty', '\u0001': 'x' }];
    for (let i = 0; i < texts.length * 2; i++) {
      const text = texts[i % texts.length]!;
      await writer.record({
        tenantId, at: new Date(Date.UTC(2026, 0, 1, 0, 0, 0, i * 7)), actor: i % 3 ? text : null, role: i % 2 ? null : text, action: `a${text}`, method: 'POST',
        route: `/r/${text}`, target: targets[i % targets.length]!, outcome: text || 'x', status: 200 + i, requestId: `req ${text}`, origin: i % 4 ? text : null,
      });
    }
    // The text a verification thread makes of a row read as strings is the text the writer hashed, byte for byte.
    const rows = (await db.query<Record<string, string | null>>(`SELECT ${QUICK_COLUMNS} FROM audit_log WHERE tenant_id = $1 ORDER BY position`, [tenantId])).rows;
    const records = (await db.query<{ seq: string; id: string; at: Date; actor: string | null; role: string | null; action: string; method: string; route: string; target: Record<string, string>; outcome: string; status: number; request_id: string; origin: string | null; prev_hash: string }>(
      'SELECT * FROM audit_log WHERE tenant_id = $1 ORDER BY position', [tenantId],
    )).rows;
    expect(rows).toHaveLength(texts.length * 2);
    records.forEach((r, i) => {
      const js = canonicalText(r.prev_hash, {
        tenantId, seq: Number(r.seq), id: r.id, actor: r.actor, role: r.role, action: r.action, method: r.method, route: r.route, target: r.target,
        outcome: r.outcome, status: r.status, requestId: r.request_id, origin: r.origin,
      }, new Date(r.at).toISOString());
      expect(quickText(tenantId, Object.values(rows[i]!))).toBe(js);
    });
    expect(await verifyChain(db, tenantId)).toMatchObject({ ok: true, records: texts.length * 2 });
    if (threads) expect(walks).toMatchObject([{ state: 'done', size: texts.length * 2 }]);
  });

  it.skipIf(threads)('reads the chain in pages of the given size, never all of it at once', async () => {
    const tenant = await chain();
    const sizes: number[] = [];
    const counting: Db = {
      kind: db.kind,
      query: (s, p) => db.query(s, p),
      exec: (s) => db.exec(s),
      exclusive: (id, fn) => db.exclusive(id, fn),
      close: () => db.close(),
      transaction: (fn) =>
        db.transaction((tx) => {
          const q: Queryable = {
            query: async <T,>(s: string, p?: unknown[]) => {
              const r = await tx.query<T>(s, p);
              if (/ORDER BY position LIMIT/.test(s)) sizes.push(r.rows.length);
              return r;
            },
            exec: (s) => tx.exec(s),
          };
          return fn(q);
        }),
    };
    expect(await verifyChain(counting, tenant, { pageSize: 5 })).toEqual(await clean(tenant));
    expect(sizes).toEqual([5, 5, 2]);
  });

  it('a tenant without records verifies with no chains', async () => {
    expect(await verifyChain(db, 'nobody-here')).toEqual({ ok: true, records: 0, chains: [], root: trailRoot('nobody-here', []) });
  });

  it('an edited record is named: UPDATE of its outcome', async () => {
    const tenant = await chain();
    await sql("UPDATE audit_log SET outcome = 'succeeded', status = 200 WHERE tenant_id = $1 AND seq = 6", [tenant]);
    expect(await verifyChain(db, tenant, { pageSize: 4 })).toEqual({
      ok: false, chain: writer.chain, position: 6, seq: 6, reason: 'edited', detail: "the record's contents do not match its hash", records: 5,
    });
    // The thread's quick walk stopped at the record, and left it to the exact walk.
    if (threads) expect(walks).toEqual([{ chain: writer.chain, state: 'stopped', expected: 6, prev: await hashOf(tenant, 5), prevSeq: 5 }]);
  });

  it('an edited target, time or id is named too', async () => {
    for (const [column, value] of [['target', '{"entityId": "ENT-999"}'], ['at', '2020-01-01T00:00:00Z'], ['id', '00000000-0000-7000-8000-000000000000']] as const) {
      const tenant = await chain();
      await sql(`UPDATE audit_log SET ${column} = $2 WHERE tenant_id = $1 AND seq = 9`, [tenant, value]);
      expect(await verifyChain(db, tenant, { pageSize: 4 })).toMatchObject({ ok: false, position: 9, seq: 9, reason: 'edited', records: 8 });
      if (threads) expect(walks).toMatchObject([{ state: 'stopped', expected: 9 }]);
    }
  });

  it('an edited record whose hash was recomputed is named by the link of the next one', async () => {
    const tenant = await chain();
    const row = (await db.query<{ prev_hash: string; id: string; at: Date; request_id: string }>(
      'SELECT prev_hash, id, at, request_id FROM audit_log WHERE tenant_id = $1 AND seq = 4', [tenant],
    )).rows[0]!;
    const forged: Omit<AuditRecord, 'prevHash' | 'hash' | 'chain' | 'position'> = {
      tenantId: tenant, seq: 4, id: row.id, at: new Date(row.at), actor: 'someone-else', role: 'Admin', action: 'credit-limit.upgrade',
      method: 'POST', route: LIMIT_URL, target: { entityId: 'ENT-4' }, outcome: 'succeeded', status: 200, requestId: row.request_id, origin: '127.0.0.1',
    };
    await sql("UPDATE audit_log SET actor = 'someone-else', hash = $2 WHERE tenant_id = $1 AND seq = 4", [tenant, recordHash(row.prev_hash, forged)]);
    expect(await verifyChain(db, tenant)).toMatchObject({ ok: false, seq: 4, reason: 'edited' });
  });

  it('a deleted record in the middle is a gap at its seq', async () => {
    const tenant = await chain();
    await sql('DELETE FROM audit_log WHERE tenant_id = $1 AND seq = 7', [tenant]);
    expect(await verifyChain(db, tenant, { pageSize: 4 })).toEqual({
      ok: false, chain: writer.chain, position: 7, seq: null, reason: 'deleted',
      detail: `chain ${writer.chain}: position 7 is missing; the next record is seq 8 at position 8`, records: 6,
    });
    if (threads) expect(walks).toEqual([{ chain: writer.chain, state: 'stopped', expected: 7, prev: await hashOf(tenant, 6), prevSeq: 6 }]);
  });

  it.runIf(threads)('a thread that cannot reach the store hands its chain back: the verification walks it, same answer', async () => {
    const tenant = await chain();
    await sql("UPDATE audit_log SET outcome = 'refused' WHERE tenant_id = $1 AND seq = 10", [tenant]);
    const unreachable: Db = {
      kind: db.kind,
      connectionString: 'postgres://postgres@127.0.0.1:1/nowhere',
      query: (s, p) => db.query(s, p),
      exec: (s) => db.exec(s),
      exclusive: (id, fn) => db.exclusive(id, fn),
      close: () => db.close(),
      transaction: (fn) => db.transaction(fn),
    };
    expect(await verifyChain(unreachable, tenant)).toMatchObject({ ok: false, chain: writer.chain, position: 10, seq: 10, reason: 'edited', records: 9 });
    expect(walks).toMatchObject([{ chain: writer.chain, state: 'failed' }]);
  });

  it('a deleted first record is a gap at position 1', async () => {
    const tenant = await chain();
    await sql('DELETE FROM audit_log WHERE tenant_id = $1 AND seq IN (1, 2)', [tenant]);
    expect(await verifyChain(db, tenant)).toMatchObject({
      ok: false, position: 1, reason: 'deleted', detail: `chain ${writer.chain}: positions 1 to 2 are missing; the next record is seq 3 at position 3`,
    });
  });

  it('a deleted last record is a head mismatch', async () => {
    const tenant = await chain();
    await sql('DELETE FROM audit_log WHERE tenant_id = $1 AND seq = $2', [tenant, RECORDS]);
    expect(await verifyChain(db, tenant)).toEqual({
      ok: false,
      chain: writer.chain,
      position: RECORDS,
      seq: null,
      reason: 'head-mismatch',
      detail: `the head of chain ${writer.chain} names position ${RECORDS}, but the chain ends at position ${RECORDS - 1}: records were deleted from its end`,
      records: RECORDS - 1,
    });
  });

  it('an altered head is a head mismatch', async () => {
    const tenant = await chain();
    await sql('UPDATE audit_chains SET head = $2 WHERE tenant_id = $1', [tenant, 'f'.repeat(64)]);
    expect(await verifyChain(db, tenant)).toMatchObject({ ok: false, position: RECORDS, seq: RECORDS, reason: 'head-mismatch' });
  });

  it('two records with swapped seqs are reordered, at the first of them', async () => {
    const tenant = await chain();
    await swap(tenant, 3, 8);
    expect(await verifyChain(db, tenant)).toEqual({
      ok: false, chain: writer.chain, position: 3, seq: 8, reason: 'reordered', detail: 'the record at seq 8 was written as seq 3', records: 2,
    });
  });

  it('two neighbours swapped are reordered too', async () => {
    const tenant = await chain();
    await swap(tenant, 5, 6);
    expect(await verifyChain(db, tenant)).toMatchObject({ ok: false, position: 5, seq: 6, reason: 'reordered', detail: 'the record at seq 6 was written as seq 5' });
  });

  it('two records with swapped positions are reordered', async () => {
    const tenant = await chain();
    await sql('UPDATE audit_log SET position = -1 WHERE tenant_id = $1 AND position = 4', [tenant]);
    await sql('UPDATE audit_log SET position = 4 WHERE tenant_id = $1 AND position = 9', [tenant]);
    await sql('UPDATE audit_log SET position = 9 WHERE tenant_id = $1 AND position = -1', [tenant]);
    expect(await verifyChain(db, tenant)).toEqual({
      ok: false, chain: writer.chain, position: 4, seq: 9, reason: 'reordered',
      detail: `the record at position 4 of chain ${writer.chain} was written after position 8`, records: 3,
    });
  });

  it('two writers append to chains of their own; the trail is both, and a chain without its head is named', async () => {
    const tenant = await chain();
    const second = new AuditWriter(db);
    for (let i = 0; i < 3; i++) {
      await Promise.all([
        second.record({ tenantId: tenant, at: new Date(), actor: 'b', role: 'Admin', action: 'x', method: 'POST', route: LIMIT_URL, target: {}, outcome: 'succeeded', status: 200, requestId: `b-${i}`, origin: null }),
        writer.record({ tenantId: tenant, at: new Date(), actor: 'a', role: 'Admin', action: 'x', method: 'POST', route: LIMIT_URL, target: {}, outcome: 'succeeded', status: 200, requestId: `a-${i}`, origin: null }),
      ]);
    }
    await second.close();
    const result = await verifyChain(db, tenant, { pageSize: 4 });
    expect(result).toMatchObject({ ok: true, records: RECORDS + 6 });
    expect(result.ok && result.chains.map((c) => [c.chain, c.size]).sort()).toEqual([[second.chain, 3], [writer.chain, RECORDS + 3]].sort());
    expect(writer.conflictRetries + second.conflictRetries).toBe(0);
    const seqs = (await db.query<{ seq: string }>('SELECT seq FROM audit_log WHERE tenant_id = $1', [tenant])).rows.map((r) => Number(r.seq));
    expect(new Set(seqs).size).toBe(RECORDS + 6);

    await sql('DELETE FROM audit_chains WHERE tenant_id = $1 AND chain = $2', [tenant, second.chain]);
    expect(await verifyChain(db, tenant)).toMatchObject({
      ok: false, chain: second.chain, position: 3, reason: 'head-mismatch', detail: `chain ${second.chain} has 3 records but no head`,
    });
  });

  it('a saved checkpoint is a prefix of the grown trail; a record altered or removed before it is found', async () => {
    const tenant = await chain();
    const saved = await chainHeads(db, tenant);
    await writer.record({ tenantId: tenant, at: new Date(), actor: 'a', role: 'Admin', action: 'x', method: 'POST', route: LIMIT_URL, target: {}, outcome: 'succeeded', status: 200, requestId: 'later', origin: null });
    expect(await verifyChain(db, tenant, { checkpoint: saved })).toMatchObject({ ok: true, records: RECORDS + 1 });
    expect(await verifyChain(db, tenant, { checkpoint: saved, since: true })).toMatchObject({ ok: true, records: RECORDS + 1 });

    // The last records removed and the head set back: the chain verifies alone, but not against the checkpoint.
    const at = (p: number) => db.query<{ hash: string; seq: string }>('SELECT hash, seq FROM audit_log WHERE tenant_id = $1 AND position = $2', [tenant, p]);
    const tenth = (await at(RECORDS - 2)).rows[0]!;
    await sql('DELETE FROM audit_log WHERE tenant_id = $1 AND position > $2', [tenant, RECORDS - 2]);
    await sql('UPDATE audit_chains SET size = $2, head = $3, last_seq = $4 WHERE tenant_id = $1', [tenant, RECORDS - 2, tenth.hash, tenth.seq]);
    expect(await verifyChain(db, tenant)).toMatchObject({ ok: true, records: RECORDS - 2 });
    expect(await verifyChain(db, tenant, { checkpoint: saved })).toEqual({
      ok: false, chain: writer.chain, position: RECORDS - 1, seq: null, reason: 'checkpoint-mismatch',
      detail: `the checkpoint names position ${RECORDS} of chain ${writer.chain}, but the chain ends at position ${RECORDS - 2}`, records: RECORDS - 2,
    });
    // A whole chain gone, head and all.
    await sql('DELETE FROM audit_log WHERE tenant_id = $1', [tenant]);
    await sql('DELETE FROM audit_chains WHERE tenant_id = $1', [tenant]);
    expect(await verifyChain(db, tenant, { checkpoint: saved })).toMatchObject({ ok: false, reason: 'checkpoint-mismatch', detail: `chain ${writer.chain} of the checkpoint (${RECORDS} records) is gone` });
  });

  it('a record rewritten with every later hash recomputed verifies alone, but not against a checkpoint', async () => {
    const tenant = await chain();
    const saved = await chainHeads(db, tenant);
    const rows = (await db.query<AuditRowLike>('SELECT * FROM audit_log WHERE tenant_id = $1 ORDER BY position', [tenant])).rows;
    let prev = rows[4]!.prev_hash;
    for (const row of rows.slice(4)) {
      const rec = { tenantId: tenant, seq: Number(row.seq), id: row.id, at: new Date(row.at), actor: row.position === '5' || Number(row.position) === 5 ? 'forger' : row.actor, role: row.role, action: row.action, method: row.method, route: row.route, target: row.target, outcome: row.outcome, status: row.status, requestId: row.request_id, origin: row.origin };
      const hash = recordHash(prev, rec);
      await sql('UPDATE audit_log SET actor = $3, prev_hash = $4, hash = $5 WHERE tenant_id = $1 AND position = $2', [tenant, row.position, rec.actor, prev, hash]);
      prev = hash;
    }
    await sql('UPDATE audit_chains SET head = $2 WHERE tenant_id = $1', [tenant, prev]);
    expect(await verifyChain(db, tenant)).toMatchObject({ ok: true, records: RECORDS });
    expect(await verifyChain(db, tenant, { checkpoint: saved })).toMatchObject({
      ok: false, position: RECORDS, seq: RECORDS, reason: 'checkpoint-mismatch',
      detail: `the checkpoint names another hash at position ${RECORDS} of chain ${writer.chain}: the trail was rewritten since`,
    });
    // The quick proof reads from the checkpoint's head on, and finds it replaced.
    expect(await verifyChain(db, tenant, { checkpoint: saved, since: true })).toMatchObject({
      ok: false, position: RECORDS, reason: 'checkpoint-mismatch', detail: `position ${RECORDS} of chain ${writer.chain} no longer holds the record the checkpoint names`,
    });
  });
});

interface AuditRowLike {
  seq: string; position: string; id: string; at: string; actor: string | null; role: string | null; action: string; method: string; route: string;
  target: Record<string, string>; outcome: string; status: number; request_id: string; origin: string | null; prev_hash: string; hash: string;
}

describe('cardline audit verify', () => {
  beforeAll(ensureBuilt, BUILD_TIMEOUT_MS);
  const ROOT = fileURLToPath(new URL('../..', import.meta.url));
  let dataDir: string;
  let root: string;
  let chain: string;
  let checkpointFile: string;
  const masterKey = MasterKey.generate();

  function cli(args: string[]): Promise<Run> {
    const env: NodeJS.ProcessEnv = { ...process.env, CARDLINE_DATA_DIR: dataDir, CARDLINE_MASTER_KEY: masterKey };
    delete env.DATABASE_URL;
    return runProcess(process.execPath, [join(ROOT, 'bin', 'cardline.js'), ...args], { cwd: ROOT, env });
  }

  /** Runs fn on the data dir's store while no gateway or CLI holds it. */
  async function onStore<T>(fn: (db: Db) => Promise<T>): Promise<T> {
    const db = await openStore(loadConfig({ CARDLINE_DATA_DIR: dataDir }));
    try {
      return await fn(db);
    } finally {
      await db.close();
    }
  }

  beforeAll(async () => {
    dataDir = await createTestDataDir('cardline-audit-');
    const config = loadConfig({ CARDLINE_DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
    const app = await buildApp({ config, db: await openStore(config), masterKey });
    try {
      await createTenant(app.cardline, { id: 'demo' });
      // Audited calls: failed logins and unauthenticated writes (the tenant is known, so each is recorded).
      for (let i = 0; i < 4; i++) {
        await app.inject({ method: 'POST', url: '/api/authenticate', headers: { TENANT: 'demo' }, payload: { username: `nobody-${i}`, password: 'x' } });
        await app.inject({ method: 'POST', url: LIMIT_URL, headers: { TENANT: 'demo' }, payload: { entityId: 'ENT-1001', amount: '1.00' } });
      }
      const checkpoint = await publishCheckpoint(app.cardline.db, app.cardline.keys, 'demo');
      ({ root } = checkpoint);
      chain = app.cardline.audit.chainOf('demo')!;
      // Saved as an operator would: the answer of GET /v1/audit/checkpoints/latest.
      checkpointFile = join(dataDir, 'checkpoint.json');
      await writeFile(checkpointFile, JSON.stringify({ result: checkpoint, pagination: null }));
    } finally {
      await app.close();
    }
  }, 180_000);
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  it('exits 0 with the count and root of a clean trail, proves a checkpoint, then exits 1 naming the tampered record', { timeout: 600_000 }, async () => {
    const clean = await cli(['audit', 'verify', '--tenant', 'demo']);
    expect(clean).toEqual({ code: 0, stdout: `OK: 8 records in 1 chain, root ${root}\n`, stderr: '' });
    const proven = await cli(['audit', 'verify', '--tenant', 'demo', '--checkpoint', checkpointFile]);
    const { at } = (JSON.parse(await readFile(checkpointFile, 'utf8')) as { result: { at: string } }).result;
    expect(proven).toEqual({
      code: 0,
      stdout: `OK: 8 records in 1 chain, root ${root}\nOK: the checkpoint of ${at} (8 records, root ${root}) is a prefix of today's trail\n`,
      stderr: '',
    });
    // The quick proof reads only what was written since: here nothing, so the same count and root.
    expect(await cli(['audit', 'verify', '--tenant', 'demo', '--checkpoint', checkpointFile, '--since'])).toEqual({
      code: 0,
      stdout: `OK: 8 records (read since the checkpoint) in 1 chain, root ${root}\nOK: the checkpoint of ${at} (8 records, root ${root}) is a prefix of today's trail\n`,
      stderr: '',
    });
    expect(await cli(['audit', 'verify', '--tenant', 'demo', '--since'])).toEqual({ code: 1, stdout: '', stderr: 'error: --since needs --checkpoint <file>.\n' });
    // A checkpoint whose payload was changed (a record more claimed) no longer carries a valid signature.
    const saved = JSON.parse(await readFile(checkpointFile, 'utf8')) as { result: { jws: string } };
    const [h, p, sig] = saved.result.jws.split('.');
    const payload = JSON.parse(Buffer.from(p!, 'base64url').toString('utf8')) as { size: number };
    payload.size += 1;
    const forged = join(dataDir, 'forged.json');
    await writeFile(forged, `${h}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${sig}`);
    expect(await cli(['audit', 'verify', '--tenant', 'demo', '--checkpoint', forged])).toEqual({
      code: 1,
      stdout: '',
      stderr: `error: checkpoint '${forged}' refused: the signature does not verify with tenant 'demo' key '${JSON.parse(Buffer.from(h!, 'base64url').toString('utf8')).kid}'.\n`,
    });

    await onStore((db) => db.query("UPDATE audit_log SET outcome = 'succeeded' WHERE tenant_id = 'demo' AND seq = 3"));
    const broken = await cli(['audit', 'verify', '--tenant', 'demo']);
    expect(broken).toEqual({
      code: 1,
      stdout: '',
      stderr: `error: audit trail of tenant 'demo' is broken in chain ${chain} at position 3 (seq 3): edited record (the record's contents do not match its hash).\n`,
    });
  });
});
