// A store upgraded across migration 0015 (decision 0200): the records written as one chain per tenant before it
// become the chain `legacy` (position = seq) and verify as they did; a writer continues that chain, no live writer
// holding it (decision 0286), and a saved checkpoint covers the legacy chain like any other.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GENESIS_HASH, recordHash } from '../../src/audit/chain.js';
import { chainHeads } from '../../src/audit/checkpoint.js';
import { verifyChain } from '../../src/audit/verify.js';
import { AuditWriter } from '../../src/audit/writer.js';
import type { Db } from '../../src/store/db.js';
import { migrate } from '../../src/store/migrate.js';
import { migrations } from '../../src/store/migrations/index.js';
import { LIMIT_URL, createTestDb, type TestDb } from '../helpers/app.js';

const TENANT = 'upgraded';
const BEFORE = 5;

const record = (i: number) => ({
  tenantId: TENANT, at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)), actor: 'admin', role: 'Admin', action: 'credit-limit.upgrade', method: 'POST',
  route: LIMIT_URL, target: { entityId: `ENT-${i}` }, outcome: 'succeeded', status: 200, requestId: `req-${i}`, origin: '127.0.0.1',
});

describe('audit records written before chains per writer (migration 0015)', () => {
  let testDb: TestDb;
  let db: Db;

  beforeAll(async () => {
    testDb = await createTestDb({ migrated: false });
    db = testDb.db;
    // The store as the release before 0015 left it: its migrations, and a tenant's chain of BEFORE records.
    await db.exec('CREATE TABLE cardline_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())');
    for (const m of migrations.slice(0, migrations.findIndex((x) => x.name === '0015-audit-writer-chains'))) {
      await db.exec(`BEGIN;\n${m.sql}\nINSERT INTO cardline_migrations (name) VALUES ('${m.name}');\nCOMMIT;`);
    }
    let prev = GENESIS_HASH;
    for (let seq = 1; seq <= BEFORE; seq++) {
      const r = { ...record(seq), seq, id: `00000000-0000-7000-8000-${String(seq).padStart(12, '0')}` };
      const hash = recordHash(prev, r);
      await db.query(
        `INSERT INTO audit_log (tenant_id, seq, id, at, actor, role, action, method, route, target, outcome, status, request_id, origin, prev_hash, hash)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
        [TENANT, seq, r.id, r.at, r.actor, r.role, r.action, r.method, r.route, JSON.stringify(r.target), r.outcome, r.status, r.requestId, r.origin, prev, hash],
      );
      prev = hash;
    }
    await db.query('INSERT INTO audit_heads (tenant_id, seq, hash) VALUES ($1, $2, $3)', [TENANT, BEFORE, prev]);
    await migrate(db);
  });
  afterAll(() => testDb.drop());

  it('verify as the chain `legacy`; records appended since continue it, after them in seq', async () => {
    const legacy = await verifyChain(db, TENANT);
    expect(legacy).toMatchObject({ ok: true, records: BEFORE });
    expect(legacy.ok && legacy.chains.map((c) => [c.chain, c.size])).toEqual([['legacy', BEFORE]]);
    const saved = await chainHeads(db, TENANT);

    const writer = new AuditWriter(db);
    for (let i = 1; i <= 3; i++) await writer.record(record(BEFORE + i));
    await writer.close();
    const grown = await verifyChain(db, TENANT, { checkpoint: saved });
    expect(grown.ok && grown.chains.map((c) => [c.chain, c.size])).toEqual([['legacy', BEFORE + 3]]);
    const seqs = await db.query<{ chain: string; position: string; seq: string }>('SELECT chain, position, seq FROM audit_log WHERE tenant_id = $1 ORDER BY seq', [TENANT]);
    expect(seqs.rows.map((r) => [r.chain, Number(r.position), Number(r.seq)])).toEqual([1, 2, 3, 4, 5, 6, 7, 8].map((s) => ['legacy', s, s]));

    // A legacy record edited after the upgrade is named in that chain.
    await db.query("UPDATE audit_log SET outcome = 'refused' WHERE tenant_id = $1 AND seq = 3", [TENANT]);
    expect(await verifyChain(db, TENANT)).toMatchObject({ ok: false, chain: 'legacy', position: 3, seq: 3, reason: 'edited' });
  });
});
