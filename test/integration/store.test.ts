// The store on whichever engine the run uses: in-memory PGlite by default, a PostgreSQL server when
// DATABASE_URL is set (each test gets a database of its own, dropped afterwards).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { GENESIS_HASH, recordHash, type AuditRecord } from '../../src/audit/chain.js';
import { MasterKeyMismatchError } from '../../src/services/identity/key-ring.js';
import { MasterKey } from '../../src/crypto/master-key.js';
import { openDb, type Db, type Queryable } from '../../src/store/db.js';
import { migrate } from '../../src/store/migrate.js';
import { migrations } from '../../src/store/migrations/index.js';
import { LIMIT_URL, PROBLEM_BASE, UPGRADE_URL, createTestApp, createTestDb, supportDetail, type TestApp } from '../helpers/app.js';

const TENANT_TABLES = ['tenants', 'users', 'login_attempts', 'keys', 'jwe_replay', 'audit_heads', 'audit_log', 'audit_chains', 'audit_checkpoints'];

interface AuditRow {
  tenant_id: string;
  seq: string | number;
  chain: string;
  position: string | number;
  id: string;
  at: Date;
  actor: string | null;
  role: string | null;
  action: string;
  method: string;
  route: string;
  target: Record<string, string> | string;
  outcome: string;
  status: number;
  request_id: string;
  origin: string | null;
  prev_hash: string;
  hash: string;
}

/** Maps a stored row back to the record whose hash it carries. */
function toRecord(row: AuditRow): AuditRecord {
  return {
    tenantId: row.tenant_id,
    seq: Number(row.seq),
    chain: row.chain,
    position: Number(row.position),
    id: row.id,
    at: row.at,
    actor: row.actor,
    role: row.role,
    action: row.action,
    method: row.method,
    route: row.route,
    target: typeof row.target === 'string' ? (JSON.parse(row.target) as Record<string, string>) : row.target,
    outcome: row.outcome,
    status: Number(row.status),
    requestId: row.request_id,
    origin: row.origin,
    prevHash: row.prev_hash,
    hash: row.hash,
  };
}

async function auditLog(db: Queryable, tenantId: string): Promise<AuditRecord[]> {
  const r = await db.query<AuditRow>('SELECT * FROM audit_log WHERE tenant_id = $1 ORDER BY chain, position', [tenantId]);
  return r.rows.map(toRecord);
}

/** Checks each chain's positions 1..n, the links, every hash and the head; returns the log in seq order. */
async function expectConsistentChain(db: Queryable, tenantId: string): Promise<AuditRecord[]> {
  const log = await auditLog(db, tenantId);
  const chains = new Map<string, AuditRecord[]>();
  for (const rec of log) chains.set(rec.chain, [...(chains.get(rec.chain) ?? []), rec]);
  const heads = await db.query<{ chain: string; size: string | number; head: string }>('SELECT chain, size, head FROM audit_chains WHERE tenant_id = $1', [tenantId]);
  expect(heads.rows.filter((h) => Number(h.size) > 0).map((h) => h.chain).sort()).toEqual([...chains.keys()].sort());
  for (const [chain, records] of chains) {
    let prev = GENESIS_HASH;
    records.forEach((rec, i) => {
      expect(rec.at).toBeInstanceOf(Date);
      expect(rec.position).toBe(i + 1);
      expect(rec.prevHash).toBe(prev);
      const { prevHash, hash, chain: _chain, position: _position, ...rest } = rec;
      expect(recordHash(prevHash, rest)).toBe(hash);
      prev = hash;
    });
    const head = heads.rows.find((h) => h.chain === chain)!;
    expect(Number(head.size)).toBe(records.length);
    expect(head.head).toBe(prev);
  }
  expect(new Set(log.map((r) => r.seq)).size).toBe(log.length);
  return log.sort((a, b) => a.seq - b.seq);
}

describe('migrations', () => {
  it('apply once, and a second run applies nothing', async () => {
    const { db, drop } = await createTestDb({ migrated: false });
    try {
      const first = await migrate(db);
      expect(first).toEqual(migrations.map((m) => m.name));
      const second = await migrate(db);
      expect(second).toEqual([]);
      const recorded = await db.query<{ name: string; n: number }>('SELECT name, count(*)::int AS n FROM cardline_migrations GROUP BY name ORDER BY name');
      expect(recorded.rows).toEqual(migrations.map((m) => ({ name: m.name, n: 1 })).sort((a, b) => a.name.localeCompare(b.name)));
    } finally {
      await drop();
    }
  });

  it('replicas starting together take turns (PostgreSQL: advisory lock)', async (ctx) => {
    const url = process.env.DATABASE_URL;
    if (!url) return ctx.skip();
    const { db, drop } = await createTestDb({ migrated: false });
    // A second, independent pool on the same database, as another replica would have.
    const u = new URL(url);
    const name = (await db.query<{ d: string }>('SELECT current_database() AS d')).rows[0]!.d;
    u.pathname = `/${name}`;
    const other: Db = await openDb({ databaseUrl: u.toString() });
    try {
      const [a, b] = await Promise.all([migrate(db), migrate(other)]);
      expect([...a, ...b].sort()).toEqual(migrations.map((m) => m.name).sort());
    } finally {
      await other.close();
      await drop();
    }
  });
});

describe('named statements (decisions 0228, 0425)', () => {
  it('answer as unnamed ones do, on every connection of the pool, again after one of their runs failed', async () => {
    const { db, drop } = await createTestDb({ migrated: false });
    const sql = 'SELECT $1::int + 1 AS n';
    try {
      // More at once than the pool has connections: each connection prepares the statement on its first run.
      const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => db.query<{ n: number }>(sql, [i], { name: 'test_plus_one' })));
      expect(answers.map((r) => r.rows[0]!.n)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
      // A run the store refuses (not an integer) fails alone, with the store's safe error; the statement stays usable.
      await expect(db.query(sql, ['x'], { name: 'test_plus_one' })).rejects.toMatchObject({ name: 'StoreError', code: '22P02' });
      expect((await db.query<{ n: number }>(sql, [41], { name: 'test_plus_one' })).rows).toEqual([{ n: 42 }]);
      // PGlite, one session: prepared once, then run by name (decision 0425); the refused run was never planned.
      if (db.kind === 'pglite') {
        const prepared = await db.query("SELECT (generic_plans + custom_plans)::int AS runs FROM pg_prepared_statements WHERE name = 'test_plus_one'");
        expect(prepared.rows).toEqual([{ runs: 31 }]);
      }
    } finally {
      await drop();
    }
  });
});

describe('schema', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t?.close());

  it('the gateway does not boot with another master key than the one its keys are sealed under', async () => {
    const other = MasterKey.generate();
    const err = await buildApp({ config: t.config, db: t.db, masterKey: other, ownsDb: false }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MasterKeyMismatchError);
    expect((err as Error).message).toMatch(
      /^The master key does not open the keys in this store \(tenant '[\w-]+', key [\w-]+\): it is not the key the store was created with\. Set CARDLINE_MASTER_KEY to that key/,
    );
    // The right key boots.
    const again = await buildApp({ config: t.config, db: t.db, masterKey: t.masterKey, ownsDb: false });
    await again.close();
  });

  it('readiness answers 200 with the store and migrations checked', async () => {
    const res = await t.inject({ method: 'GET', url: '/health/ready' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ status: 'ready', checks: { store: 'ok', migrations: 'ok' } });
  });

  it("every table's primary key starts with tenant_id", async () => {
    const r = await t.db.query<{ table_name: string; column_name: string }>(
      `SELECT tc.table_name, kcu.column_name
         FROM information_schema.table_constraints tc
         JOIN information_schema.key_column_usage kcu
           ON kcu.constraint_name = tc.constraint_name AND kcu.constraint_schema = tc.constraint_schema
          AND kcu.table_name = tc.table_name
        WHERE tc.constraint_type = 'PRIMARY KEY' AND tc.table_schema = current_schema() AND kcu.ordinal_position = 1`,
    );
    const firstColumn = new Map(r.rows.map((row) => [row.table_name, row.column_name]));
    for (const table of TENANT_TABLES) expect({ table, first: firstColumn.get(table) }).toEqual({ table, first: 'tenant_id' });
    // Tables added later are held to the same rule (the migrations bookkeeping table is the gateway's own).
    const all = await t.db.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`,
    );
    for (const { table_name } of all.rows) {
      if (table_name === 'cardline_migrations') continue;
      expect({ table: table_name, first: firstColumn.get(table_name) }).toEqual({ table: table_name, first: 'tenant_id' });
    }
  });

  it('private keys are sealed at rest', async () => {
    const r = await t.db.query<{ tenant_id: string; private_jwk_enc: string }>('SELECT tenant_id, private_jwk_enc FROM keys');
    expect(r.rows.length).toBeGreaterThanOrEqual(4); // demo and demo-b: one enc and one sig key each
    for (const row of r.rows) {
      expect(row.private_jwk_enc).not.toContain('"d":');
      expect(row.private_jwk_enc).not.toContain('{');
      expect(row.private_jwk_enc).toMatch(/^v1\.[\w-]+\.[\w-]+\.[\w-]+$/);
    }
  });
});

describe('audit trail', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t?.close());

  it('records authentication and the limit upgrade in a hash chain that verifies', async () => {
    const token = await t.token('API Integration');
    const res = await t.inject({
      method: 'POST',
      url: LIMIT_URL,
      headers: { TENANT: 'demo', authorization: `Bearer ${token}` },
      payload: { entityId: 'ENT-1001', amount: '60000.00' },
    });
    expect(res.statusCode).toBe(200);

    const log = await expectConsistentChain(t.db, 'demo');
    expect(log.length).toBeGreaterThanOrEqual(2);
    const auth = log.find((r) => r.action === 'authenticate' && r.actor === 'integration');
    expect(auth).toMatchObject({ outcome: 'succeeded', status: 200, method: 'POST', route: '/api/authenticate' });
    const upgrade = log.at(-1)!;
    expect(upgrade).toMatchObject({
      tenantId: 'demo',
      actor: 'integration',
      role: 'API Integration',
      action: 'credit-limit.upgrade',
      method: 'POST',
      route: LIMIT_URL,
      target: { entityId: 'ENT-1001' },
      outcome: 'succeeded',
      status: 200,
    });
    // Nothing of the other tenant's chain moved.
    expect(await auditLog(t.db, 'demo-b')).toEqual([]);
  });

  it('200 concurrent audited requests give 200 rows and a consistent chain', async () => {
    const token = await t.token('API Integration');
    const before = (await auditLog(t.db, 'demo')).length;
    const responses = await Promise.all(
      Array.from({ length: 200 }, () =>
        t.inject({
          method: 'POST',
          url: LIMIT_URL,
          headers: { TENANT: 'demo', authorization: `Bearer ${token}` },
          payload: { entityId: 'ENT-1001', amount: '60000.00' },
        }),
      ),
    );
    expect(responses.map((r) => r.statusCode)).toEqual(Array(200).fill(200));
    const log = await expectConsistentChain(t.db, 'demo');
    expect(log.length - before).toBe(200);
    const ids = new Set(log.slice(before).map((r) => r.requestId));
    expect(ids.size).toBe(200);
  });
});

describe('audit failure', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t?.close());

  it('a write whose audit record cannot commit answers 500, in the route dialect', async () => {
    const token = await t.token('Admin');
    await t.db.exec('DROP TABLE audit_log');

    const limit = await t.inject({
      method: 'POST',
      url: LIMIT_URL,
      headers: { TENANT: 'demo', authorization: `Bearer ${token}` },
      payload: { entityId: 'ENT-1001', amount: '70000.00' },
    });
    expect(limit.statusCode).toBe(500);
    expect(limit.json()).toEqual({
      result: null,
      exception: { errorCode: 'ERR_500', shortMessage: 'Internal Server Error', detailMessage: supportDetail('An unexpected error occurred.', limit) },
      pagination: null,
    });

    const card = await t.inject({
      method: 'PUT',
      url: UPGRADE_URL,
      headers: { 'X-TENANT-ID': 'demo', authorization: `Bearer ${token}` },
      payload: { kitNo: 'KIT-2001', entityId: 'ENT-1001', communicationAddress: { usePrimaryAddress: true } },
    });
    expect(card.statusCode).toBe(500);
    expect(card.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(card.json()).toEqual({
      type: `${PROBLEM_BASE}/problem-with-message`,
      title: 'Internal Server Error',
      status: 500,
      message: 'error.http.500',
      detail: supportDetail('An unexpected error occurred.', card),
    });
    expect(card.body).not.toMatch(/audit_log|relation|does not exist/);
  });
});
