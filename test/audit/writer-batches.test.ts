// Group commit across tenants: records of many tenants that arrive together commit in one statement, every
// chain stays whole and verifiable, a chain head moved by another writer (a replica) makes the batch
// recompute instead of forking a chain, and one bad record does not fail the others of its batch.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyChain } from '../../src/audit/verify.js';
import { AuditWriter, type WriterEntry } from '../../src/audit/writer.js';
import type { Db } from '../../src/store/db.js';
import { migrate } from '../../src/store/migrate.js';
import { LIMIT_URL, createTestDb, type TestDb } from '../helpers/app.js';

const entry = (tenantId: string, i: number): WriterEntry => ({
  tenantId, at: new Date(), actor: 'integration', role: 'API Integration', action: 'credit-limit.upgrade', method: 'POST', route: LIMIT_URL,
  target: { entityId: `ENT-${i}` }, outcome: 'succeeded', status: 200, requestId: `req-${tenantId}-${i}`, origin: '127.0.0.1',
  event: { type: 'credit-limit.upgraded', aggregateId: `ENT-${i}`, payload: { entityId: `ENT-${i}`, previousLimit: '1.00', newLimit: '2.00' } },
});

describe('AuditWriter batches', () => {
  let testDb: TestDb;
  let db: Db;
  let run = 0;
  const tenants = (n: number) => Array.from({ length: n }, (_, i) => `batch-${++run}-${i}`);

  beforeAll(async () => {
    testDb = await createTestDb();
    db = testDb.db;
    await migrate(db);
  });
  afterAll(() => testDb.drop());

  it('records of 40 tenants that arrive together commit in one statement, and each chain verifies', async () => {
    const batches: number[] = [];
    const writer = new AuditWriter(db, { auditBatch: (records) => void batches.push(records) });
    const ids = tenants(40);
    // First, every chain's head is known (one record each); then three records per tenant at once.
    await Promise.all(ids.map((t) => writer.record(entry(t, 0))));
    batches.length = 0;
    await Promise.all(ids.flatMap((t) => [1, 2, 3].map((i) => writer.record(entry(t, i)))));
    await writer.close();
    expect(batches).toEqual([120]);
    for (const t of ids) {
      const v = await verifyChain(db, t);
      expect({ t, ok: v.ok, count: v.records }).toEqual({ t, ok: true, count: 4 });
      const events = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM outbox WHERE tenant_id = $1', [t]);
      expect(events.rows[0]!.n).toBe(4);
    }
  });

  it("another writer's records on a tenant go to its own chain: nothing is recomputed, no record is lost or doubled", async () => {
    const ids = tenants(5);
    const mine = new AuditWriter(db);
    const replica = new AuditWriter(db);
    await Promise.all(ids.map((t) => mine.record(entry(t, 0))));
    // The replica writes to one of the tenants: this writer's view of that head is now stale.
    await replica.record(entry(ids[2]!, 100));
    await Promise.all(ids.flatMap((t) => [1, 2].map((i) => mine.record(entry(t, i)))));
    await Promise.all([mine.close(), replica.close()]);
    for (const t of ids) {
      const v = await verifyChain(db, t);
      expect({ t, ok: v.ok, count: v.records }).toEqual({ t, ok: true, count: t === ids[2] ? 4 : 3 });
    }
    expect({ mine: mine.conflictRetries, replica: replica.conflictRetries }).toEqual({ mine: 0, replica: 0 });
  });

  it('many writers on the same tenants at once keep every chain whole, without a conflict retry', async () => {
    const ids = tenants(4);
    const writers = [new AuditWriter(db), new AuditWriter(db), new AuditWriter(db)];
    await Promise.all(writers.flatMap((w, wi) => ids.flatMap((t) => Array.from({ length: 10 }, (_, i) => w.record(entry(t, wi * 100 + i))))));
    await Promise.all(writers.map((w) => w.close()));
    for (const t of ids) {
      const v = await verifyChain(db, t);
      expect({ t, ok: v.ok, count: v.records, chains: v.ok && v.chains.length }).toEqual({ t, ok: true, count: 30, chains: 3 });
    }
    expect(writers.map((w) => w.conflictRetries)).toEqual([0, 0, 0]);
  });

  it('batches with and without events and settlements, one after another, each commit on its own prepared statement', async () => {
    const [tenant] = tenants(1);
    const writer = new AuditWriter(db);
    const keys = Array.from({ length: 8 }, (_, i) => ({ scope: `scope-${run}-${i}`, token: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}` }));
    for (const k of keys) {
      await db.query(
        `INSERT INTO idempotency_keys (tenant_id, scope_hash, fingerprint, state, connector_key, lock_token, locked_at, created_at)
         VALUES ($1, $2, 'f', 'in_flight', gen_random_uuid(), $3, now(), now())`,
        [tenant, k.scope, k.token],
      );
    }
    const settlement = (i: number) => ({ scope: keys[i]!.scope, token: keys[i]!.token, response: { status: 200, contentType: 'application/json', body: `{"n":${i}}` } });
    // Each kind twice over (none, event, settlement, both), so that a connection runs a statement it prepared before.
    for (let round = 0; round < 2; round++) {
      const base = round * 4;
      await writer.record({ ...entry(tenant!, base), event: undefined });
      await writer.record(entry(tenant!, base + 1));
      await writer.record({ ...entry(tenant!, base + 2), event: undefined, settlement: settlement(base + 2) });
      await writer.record({ ...entry(tenant!, base + 3), settlement: settlement(base + 3) });
    }
    await writer.close();
    const v = await verifyChain(db, tenant!);
    expect({ ok: v.ok, records: v.records }).toEqual({ ok: true, records: 8 });
    const events = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM outbox WHERE tenant_id = $1', [tenant]);
    expect(events.rows[0]!.n).toBe(4);
    const settled = await db.query<{ scope_hash: string; state: string; body: string | null }>(
      "SELECT scope_hash, state, body FROM idempotency_keys WHERE tenant_id = $1 AND state = 'completed' ORDER BY scope_hash",
      [tenant],
    );
    expect(settled.rows).toEqual([2, 3, 6, 7].map((i) => ({ scope_hash: keys[i]!.scope, state: 'completed', body: `{"n":${i}}` })));
    expect(writer.conflictRetries).toBe(0);
  });

  it('under load a batch waits for the records on their way, up to twice the previous batch; a lone record does not wait', async () => {
    const [tenant] = tenants(1);
    const batches: number[] = [];
    // A linger long enough never to end first in this test: the batch is cut when twice the last one is queued.
    const writer = new AuditWriter(db, { auditBatch: (records) => void batches.push(records) }, undefined, undefined, 600_000);
    // A lone record: the previous batch held none, so it is cut at once (a linger of 600 s would time the test out).
    await writer.record(entry(tenant!, 0));
    // Eight at once: one batch (the previous held one record, below the load threshold: no waiting).
    await Promise.all(Array.from({ length: 8 }, (_, i) => writer.record(entry(tenant!, 1 + i))));
    // Sixteen, arriving over several turns of the event loop: the batch waits for all of them (twice eight).
    const pending: Promise<void>[] = [];
    for (let i = 0; i < 16; i++) {
      pending.push(writer.record(entry(tenant!, 9 + i)));
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    await Promise.all(pending);
    await writer.close();
    expect(batches).toEqual([1, 8, 16]);
    const v = await verifyChain(db, tenant!);
    expect({ ok: v.ok, records: v.records }).toEqual({ ok: true, records: 25 });
  });

  it("a chain moved under its writer (two writers given one chain and one holder) is read again and recomputed, counted as a conflict; the chain stays whole", async () => {
    const [tenant] = tenants(1);
    let conflicts = 0;
    const observer = { auditBatch: () => undefined, auditConflict: () => void (conflicts += 1) };
    const a = new AuditWriter(db, observer);
    const b = new AuditWriter(db, observer);
    // Only a statement whose answer a writer lost can move its chain: two writers posing as one stand in for it.
    Object.assign(b, { chain: a.chain, holder: a.holder });
    await a.record(entry(tenant!, 1));
    await a.record(entry(tenant!, 2));
    // b claims the chain as its own holder's, reads it, and appends after a's records.
    await b.record(entry(tenant!, 3));
    // a's view of its head is now stale: it reads the chain again.
    await a.record(entry(tenant!, 4));
    await Promise.all([a.close(), b.close()]);
    expect({ a: a.conflictRetries, b: b.conflictRetries, counted: conflicts }).toEqual({ a: 1, b: 0, counted: 1 });
    const v = await verifyChain(db, tenant!);
    expect({ ok: v.ok, records: v.records, chains: v.ok && v.chains.map((c) => [c.chain, c.size]) }).toEqual({ ok: true, records: 4, chains: [[a.chain, 4]] });
  });

  it('a batch whose statement committed but whose answer was lost (connection dropped at commit) is not written again', async () => {
    const [tenant] = tenants(1);
    let lose = 1;
    // The store commits the batch, then the client never hears of it: an error, as a dropped connection gives.
    const dropping: Db = {
      kind: db.kind,
      query: async <T,>(sql: string, params?: unknown[], options?: { name?: string }) => {
        const r = await db.query<T>(sql, params, options);
        if (options?.name?.startsWith('cardline_audit_append') && lose-- > 0) throw new Error('Connection terminated unexpectedly');
        return r;
      },
      exec: (sql) => db.exec(sql),
      transaction: (fn) => db.transaction(fn),
      exclusive: (id, fn) => db.exclusive(id, fn),
      close: () => db.close(),
    };
    const writer = new AuditWriter(dropping);
    await writer.record(entry(tenant!, 1));
    await writer.record(entry(tenant!, 2));
    await writer.close();
    const v = await verifyChain(db, tenant!);
    expect({ ok: v.ok, records: v.records }).toEqual({ ok: true, records: 2 });
    const events = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM outbox WHERE tenant_id = $1', [tenant]);
    expect(events.rows[0]!.n).toBe(2);
    expect(writer.conflictRetries).toBe(0);
  });

  it('one record the store refuses fails alone; the others of its batch commit', async () => {
    const ids = tenants(3);
    const writer = new AuditWriter(db);
    // An event type outside the catalogue's table constraint is not possible here, so an invalid timestamp
    // stands in for a record the store refuses.
    const bad = { ...entry(ids[1]!, 1), at: new Date(Number.NaN) };
    const results = await Promise.allSettled([writer.record(entry(ids[0]!, 1)), writer.record(bad), writer.record(entry(ids[2]!, 1))]);
    await writer.close();
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((await verifyChain(db, ids[0]!)).records).toBe(1);
    expect((await verifyChain(db, ids[1]!)).records).toBe(0);
    expect((await verifyChain(db, ids[2]!)).records).toBe(1);
  });
});

describe.skipIf(!process.env.DATABASE_URL)('AuditWriter on many tenants (PostgreSQL, decision 0412)', () => {
  let testDb: TestDb;

  beforeAll(async () => {
    testDb = await createTestDb();
  });
  afterAll(() => testDb.drop());

  it("a batch finds its chains through the key whatever the number of tenants: the append's generic plan reads no other tenant's chain", async () => {
    const db = testDb.db;
    const seen: { sql: string; params: unknown[] }[] = [];
    const query = db.query.bind(db);
    db.query = ((sql: string, params?: unknown[], opts?: { name?: string }) => {
      if (opts?.name?.startsWith('cardline_audit_append')) seen.push({ sql, params: params ?? [] });
      return query(sql, params, opts as never);
    }) as typeof db.query;
    const writer = new AuditWriter(db);
    const ids = Array.from({ length: 20 }, (_, i) => `many-${i}`);
    await Promise.all(ids.map((t) => writer.record(entry(t, 0))));
    await Promise.all(ids.map((t) => writer.record(entry(t, 1))));
    await writer.close();
    db.query = query;
    // 10 000 other tenants' chains, and the statistics that say so: a join priced the scan of them all below 100 lookups.
    await db.query(`INSERT INTO audit_chains (tenant_id, chain, size, head, last_seq)
      SELECT 'other-' || n, 'c', 1, repeat('0', 64), 1 FROM generate_series(1, 10000) n`);
    await db.query('ANALYZE audit_chains');
    const { sql, params } = seen.at(-1)!;
    const client = new pg.Client({ connectionString: testDb.url! });
    await client.connect();
    try {
      await client.query('SET plan_cache_mode = force_generic_plan');
      await client.query(`PREPARE append_plan AS ${sql}`);
      const args = params.map((p) => client.escapeLiteral(String(p))).join(', ');
      await client.query('BEGIN');
      const plan = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) EXECUTE append_plan(${args})`);
      await client.query('ROLLBACK');
      const lines = plan.rows.map((r) => r['QUERY PLAN']);
      expect(lines.filter((l) => /Scan on audit_chains/.test(l) && !/Index/.test(l))).toEqual([]);
    } finally {
      await client.end();
    }
  });
});

describe('AuditWriter and the delivery worker (decision 0219)', () => {
  let testDb: TestDb;

  beforeAll(async () => {
    testDb = await createTestDb();
    await migrate(testDb.db);
  });
  afterAll(() => testDb.drop());

  it('wakes the delivery worker for a batch only when a channel subscribes to one of its events', async () => {
    const db = testDb.db;
    for (const t of ['quiet', 'subscribed']) await db.query(`INSERT INTO tenants (tenant_id, name, config) VALUES ($1, $1, '{}'::jsonb)`, [t]);
    await db.query(`INSERT INTO channels (tenant_id, id, type, event_types) VALUES ('subscribed', gen_random_uuid(), 'nats', '["credit-limit.upgraded"]'::jsonb)`);
    let wakes = 0;
    const writer = new AuditWriter(db, undefined, () => void (wakes += 1));
    await Promise.all([1, 2, 3].map((i) => writer.record(entry('quiet', i))));
    expect(wakes).toBe(0);
    await writer.record(entry('subscribed', 4));
    expect(wakes).toBe(1);
    // A record without an event wakes nothing either.
    await writer.record({ ...entry('subscribed', 5), event: undefined });
    expect(wakes).toBe(1);
    await writer.close();
    const r = await db.query<{ tenant_id: string; status: string; n: number }>('SELECT tenant_id, status, count(*)::int AS n FROM outbox GROUP BY 1, 2 ORDER BY 1');
    expect(r.rows).toEqual([
      { tenant_id: 'quiet', status: 'done', n: 3 },
      { tenant_id: 'subscribed', status: 'pending', n: 1 },
    ]);
  });
});
