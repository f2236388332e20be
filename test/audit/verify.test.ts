// Audit chain verification: a clean chain verifies page by page; each kind of tampering is found at the
// right seq with the right reason; and `cardline audit verify` reports both as an operator sees them.
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { GENESIS_HASH, recordHash, type AuditRecord } from '../../src/audit/chain.js';
import { verifyChain } from '../../src/audit/verify.js';
import { AuditWriter } from '../../src/audit/writer.js';
import { openStore } from '../../src/bootstrap.js';
import { loadConfig } from '../../src/config.js';
import { MasterKey } from '../../src/crypto/master-key.js';
import { createTenant } from '../../src/services/onboarding.js';
import type { Db, Queryable } from '../../src/store/db.js';
import { migrate } from '../../src/store/migrate.js';
import { LIMIT_URL, createTestDataDir, createTestDb, type TestDb } from '../helpers/app.js';
import { BUILD_TIMEOUT_MS, ensureBuilt, runProcess, type Run } from '../helpers/spawn.js';

const RECORDS = 12;

describe('verifyChain', () => {
  let testDb: TestDb;
  let db: Db;
  let writer: AuditWriter;

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

  it('a clean chain verifies: count and head', async () => {
    const tenant = await chain();
    expect(await verifyChain(db, tenant)).toEqual({ ok: true, records: RECORDS, head: await hashOf(tenant, RECORDS) });
  });

  it('reads the chain in pages of the given size, never all of it at once', async () => {
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
              if (/FROM audit_log/.test(s)) sizes.push(r.rows.length);
              return r;
            },
            exec: (s) => tx.exec(s),
          };
          return fn(q);
        }),
    };
    expect(await verifyChain(counting, tenant, { pageSize: 5 })).toEqual({ ok: true, records: RECORDS, head: await hashOf(tenant, RECORDS) });
    expect(sizes).toEqual([5, 5, 2]);
  });

  it('a tenant without records verifies with the genesis head', async () => {
    expect(await verifyChain(db, 'nobody-here')).toEqual({ ok: true, records: 0, head: GENESIS_HASH });
  });

  it('an edited record is named: UPDATE of its outcome', async () => {
    const tenant = await chain();
    await sql("UPDATE audit_log SET outcome = 'succeeded', status = 200 WHERE tenant_id = $1 AND seq = 6", [tenant]);
    expect(await verifyChain(db, tenant, { pageSize: 4 })).toEqual({
      ok: false, seq: 6, reason: 'edited', detail: "the record's contents do not match its hash", records: 5,
    });
  });

  it('an edited record whose hash was recomputed is named by the link of the next one', async () => {
    const tenant = await chain();
    const row = (await db.query<{ prev_hash: string; id: string; at: Date; request_id: string }>(
      'SELECT prev_hash, id, at, request_id FROM audit_log WHERE tenant_id = $1 AND seq = 4', [tenant],
    )).rows[0]!;
    const forged: Omit<AuditRecord, 'prevHash' | 'hash'> = {
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
      ok: false, seq: 7, reason: 'deleted', detail: 'seq 7 is missing; the next record is seq 8', records: 6,
    });
  });

  it('a deleted first record is a gap at seq 1', async () => {
    const tenant = await chain();
    await sql('DELETE FROM audit_log WHERE tenant_id = $1 AND seq IN (1, 2)', [tenant]);
    expect(await verifyChain(db, tenant)).toMatchObject({ ok: false, seq: 1, reason: 'deleted', detail: 'seqs 1 to 2 are missing; the next record is seq 3' });
  });

  it('a deleted last record is a head mismatch', async () => {
    const tenant = await chain();
    await sql('DELETE FROM audit_log WHERE tenant_id = $1 AND seq = $2', [tenant, RECORDS]);
    expect(await verifyChain(db, tenant)).toEqual({
      ok: false,
      seq: RECORDS,
      reason: 'head-mismatch',
      detail: `the head names seq ${RECORDS}, but the chain ends at seq ${RECORDS - 1}: records were deleted from its end`,
      records: RECORDS - 1,
    });
  });

  it('an altered head is a head mismatch', async () => {
    const tenant = await chain();
    await sql("UPDATE audit_heads SET hash = $2 WHERE tenant_id = $1", [tenant, 'f'.repeat(64)]);
    expect(await verifyChain(db, tenant)).toMatchObject({ ok: false, seq: RECORDS, reason: 'head-mismatch' });
  });

  it('two records with swapped seqs are reordered, at the first of them', async () => {
    const tenant = await chain();
    await swap(tenant, 3, 8);
    expect(await verifyChain(db, tenant)).toEqual({
      ok: false, seq: 3, reason: 'reordered', detail: 'the record at seq 3 was written as seq 8', records: 2,
    });
  });

  it('two neighbours swapped are reordered too', async () => {
    const tenant = await chain();
    await swap(tenant, 5, 6);
    expect(await verifyChain(db, tenant)).toMatchObject({ ok: false, seq: 5, reason: 'reordered', detail: 'the record at seq 5 was written as seq 6' });
  });
});

describe('cardline audit verify', () => {
  beforeAll(ensureBuilt, BUILD_TIMEOUT_MS);
  const ROOT = fileURLToPath(new URL('../..', import.meta.url));
  let dataDir: string;
  let head: string;
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
      head = (await app.cardline.db.query<{ hash: string }>("SELECT hash FROM audit_heads WHERE tenant_id = 'demo'")).rows[0]!.hash;
    } finally {
      await app.close();
    }
  }, 180_000);
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  it('exits 0 with the count and head of a clean chain, then 1 naming the tampered seq', { timeout: 600_000 }, async () => {
    const clean = await cli(['audit', 'verify', '--tenant', 'demo']);
    expect(clean).toEqual({ code: 0, stdout: `OK: 8 records, head ${head}\n`, stderr: '' });

    await onStore((db) => db.query("UPDATE audit_log SET outcome = 'succeeded' WHERE tenant_id = 'demo' AND seq = 3"));
    const broken = await cli(['audit', 'verify', '--tenant', 'demo']);
    expect(broken).toEqual({
      code: 1,
      stdout: '',
      stderr: "error: audit chain of tenant 'demo' is broken at seq 3: edited record (the record's contents do not match its hash).\n",
    });
  });
});
