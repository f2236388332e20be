// The embedded store on its own thread (src/store/pglite-thread.ts), as the gateway runs it: the same answers
// as PGlite in process, transactions that commit or roll back as a whole and hold the store meanwhile, errors
// reduced to what cannot quote a row, a data directory that survives a restart, and a dump that loads; named
// statements prepared once (decision 0425).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dumpPglite, openDb, storeThreadMemory, StoreError, type Db } from '../../src/store/db.js';
import { Metrics } from '../../src/services/infrastructure/metrics.js';
import { pgliteTemplate } from '../helpers/pglite-pool.js';

describe.runIf(!process.env.DATABASE_URL)('the embedded store on a worker thread', () => {
  let db: Db;
  beforeAll(async () => {
    db = await openDb({ dataDir: 'memory://', loadDataDir: await pgliteTemplate(), thread: true });
    await db.exec('CREATE TABLE thread_probe (id integer PRIMARY KEY, secret text NOT NULL, at timestamptz, blob bytea, doc jsonb)');
  });
  afterAll(() => db?.close());

  it('answers statements with the values PGlite in process gives (dates, bytes, JSON, counts)', async () => {
    const at = new Date('2026-11-24T10:00:00.000Z');
    const r = await db.query('INSERT INTO thread_probe VALUES ($1, $2, $3, $4, $5), ($6, $7, $3, $4, $5)', [1, 'a', at, new Uint8Array([1, 2, 255]), JSON.stringify({ k: ['v'] }), 2, 'b']);
    expect(r.rowCount).toBe(2);
    const rows = await db.query<{ id: number; at: Date; blob: Uint8Array; doc: unknown }>('SELECT id, at, blob, doc FROM thread_probe ORDER BY id');
    expect(rows.rows.map((x) => ({ ...x, blob: [...x.blob] }))).toEqual([
      { id: 1, at, blob: [1, 2, 255], doc: { k: ['v'] } },
      { id: 2, at, blob: [1, 2, 255], doc: { k: ['v'] } },
    ]);
    // The gateway's own schema is there: the store started from the migrated template.
    expect((await db.query<{ n: number }>("SELECT count(*)::int AS n FROM tenants WHERE tenant_id = 'demo'")).rows).toEqual([{ n: 0 }]);
  });

  it('statements of one turn of the event loop go to the thread in one message, answered each its own, in order', async () => {
    const thread = (db as unknown as { thread: { messagesPosted: number } }).thread;
    const before = thread.messagesPosted;
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => db.query<{ n: number }>('SELECT $1::int * 2 AS n', [i])));
    expect(answers.map((a) => a.rows[0]!.n)).toEqual(Array.from({ length: 50 }, (_, i) => i * 2));
    expect(thread.messagesPosted - before).toBe(1);
    // Order holds across a batch: a write then a read of it, issued in the same turn.
    const [, read] = await Promise.all([
      db.query('INSERT INTO thread_probe (id, secret) VALUES (40, $1)', ['batched']),
      db.query<{ secret: string }>('SELECT secret FROM thread_probe WHERE id = 40'),
    ]);
    expect(read.rows).toEqual([{ secret: 'batched' }]);
    await db.query('DELETE FROM thread_probe WHERE id = 40');
  });

  it('a transaction commits as a whole, or rolls back as a whole when its function throws', async () => {
    await db.transaction(async (tx) => {
      await tx.query('INSERT INTO thread_probe (id, secret) VALUES (10, $1)', ['x']);
      await tx.query('INSERT INTO thread_probe (id, secret) VALUES (11, $1)', ['y']);
    });
    await expect(
      db.transaction(async (tx) => {
        await tx.query('INSERT INTO thread_probe (id, secret) VALUES (12, $1)', ['z']);
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    const ids = await db.query<{ id: number }>('SELECT id FROM thread_probe WHERE id >= 10 ORDER BY id');
    expect(ids.rows).toEqual([{ id: 10 }, { id: 11 }]);
  });

  it('a statement outside an open transaction waits for it, and sees what it committed', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const tx = db.transaction(async (t) => {
      await t.query('INSERT INTO thread_probe (id, secret) VALUES (20, $1)', ['during']);
      await held;
    });
    await new Promise((r) => setTimeout(r, 20));
    const outside = db.query<{ n: number }>('SELECT count(*)::int AS n FROM thread_probe WHERE id = 20');
    let answered = false;
    void outside.then(() => (answered = true));
    await new Promise((r) => setTimeout(r, 50));
    expect(answered).toBe(false);
    release();
    await tx;
    expect((await outside).rows).toEqual([{ n: 1 }]);
  });

  it('an error is a StoreError with the SQLSTATE and schema names, never the row or the parameter', async () => {
    const err = await db.query('INSERT INTO thread_probe (id, secret) VALUES (1, $1)', ['4111111111111111']).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreError);
    expect(err).toMatchObject({ code: '23505', table: 'thread_probe', constraint: 'thread_probe_pkey' });
    expect(JSON.stringify({ ...(err as object), message: (err as Error).message })).not.toMatch(/4111|\(1\)/);
    const bad = await db.query('SELECT $1::uuid', ['not-a-uuid-4111111111111111']).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(StoreError);
    expect((bad as StoreError).code).toBe('22P02');
    expect((bad as Error).message).not.toContain('4111');
    // A failed statement inside a transaction rolls it back and reaches the caller the same way.
    const inTx = await db
      .transaction(async (tx) => {
        await tx.query('INSERT INTO thread_probe (id, secret) VALUES (30, $1)', ['ok']);
        await tx.query('INSERT INTO thread_probe (id, secret) VALUES (30, $1)', ['dup']);
      })
      .catch((e: unknown) => e);
    expect(inTx).toMatchObject({ code: '23505' });
    expect((await db.query('SELECT 1 FROM thread_probe WHERE id = 30')).rows).toEqual([]);
  });

  it("tells the thread's own memory: its V8 heap within the young generation it is given, and PGlite's WebAssembly memory", async () => {
    const memory = await storeThreadMemory(db);
    expect(memory).not.toBeNull();
    expect(memory!.heapUsed).toBeGreaterThan(0);
    expect(memory!.heapTotal).toBeGreaterThanOrEqual(memory!.heapUsed);
    // PGlite's module declares 128 MB of WebAssembly memory at least; the thread's external memory counts it.
    expect(memory!.wasm).toBeGreaterThanOrEqual(128 * 1024 * 1024);
    expect(memory!.external).toBeGreaterThanOrEqual(memory!.wasm);
    // PGlite's in-memory files (its share/ directory, the store itself under memory://) are array buffers.
    expect(memory!.arrayBuffers).toBeGreaterThan(0);
    // A store in process has no thread to ask.
    const inProcess = await openDb({ dataDir: 'memory://', loadDataDir: await pgliteTemplate() });
    try {
      expect(storeThreadMemory(inProcess)).toBeNull();
    } finally {
      await inProcess.close();
    }
  });

  it("GET /metrics carries the thread's memory by area; a store without a thread (PostgreSQL, in process) has no such series", async () => {
    const sample = (text: string, area: string) => Number(new RegExp(`^cardline_store_thread_memory_bytes\\{area="${area}"\\} (\\S+)$`, 'm').exec(text)?.[1]);
    const text = await new Metrics({ tenants: { kind: 'none' } }, { storeMemory: async () => (await storeThreadMemory(db)) ?? null }).text();
    expect(sample(text, 'heap_used')).toBeGreaterThan(0);
    expect(sample(text, 'heap_committed')).toBeGreaterThanOrEqual(sample(text, 'heap_used'));
    expect(sample(text, 'external')).toBeGreaterThanOrEqual(sample(text, 'wasm_memory'));
    expect(sample(text, 'array_buffers')).toBeGreaterThan(0);
    expect(sample(text, 'wasm_memory')).toBeGreaterThanOrEqual(128 * 1024 * 1024);
    const without = await new Metrics({ tenants: { kind: 'none' } }, { storeMemory: async () => null }).text();
    expect(without).toMatch(/^# TYPE cardline_store_thread_memory_bytes gauge$/m);
    expect(without).not.toMatch(/^cardline_store_thread_memory_bytes\{/m);
  });

  it('a dump taken on the thread loads into a new store', async () => {
    const copy = await openDb({ dataDir: 'memory://', loadDataDir: await dumpPglite(db) });
    try {
      expect((await copy.query<{ id: number }>('SELECT id FROM thread_probe ORDER BY id')).rows.map((r) => r.id)).toEqual([1, 2, 10, 11, 20]);
    } finally {
      await copy.close();
    }
  });

  it('a named statement is prepared once and answers as an unnamed one does: types, counts, errors (decision 0425)', async () => {
    const sql = `INSERT INTO thread_probe (id, secret, at, doc)
      SELECT id, secret, at, doc FROM jsonb_to_recordset($1::jsonb) AS x(id integer, secret text, at timestamptz, doc jsonb)
      RETURNING id, at, doc, $2::bigint AS big`;
    const batch = (id: number) => JSON.stringify([{ id, secret: 's', at: '2026-11-29T10:00:00.000Z', doc: { n: id } }, { id: id + 1, secret: 't', at: null, doc: null }]);
    const unnamed = await db.query(sql, [batch(100), 7]);
    const named = await db.query(sql, [batch(102), 7], { name: 'test_probe_insert' });
    expect(named).toEqual({ rowCount: 2, rows: unnamed.rows.map((r, i) => ({ ...(r as object), id: 102 + i, doc: i ? null : { n: 102 } })) });
    expect(named.rows[0]).toEqual({ id: 102, at: new Date('2026-11-29T10:00:00.000Z'), doc: { n: 102 }, big: 7 });
    // A run the store refuses fails alone with the safe error; the statement stays prepared and usable.
    const dup = await db.query(sql, [batch(102), 7], { name: 'test_probe_insert' }).catch((e: unknown) => e);
    expect(dup).toBeInstanceOf(StoreError);
    expect(dup).toMatchObject({ code: '23505', constraint: 'thread_probe_pkey' });
    expect((await db.query(sql, [batch(104), 8], { name: 'test_probe_insert' })).rowCount).toBe(2);
    const stmt = await db.query<{ runs: number }>("SELECT (generic_plans + custom_plans)::int AS runs FROM pg_prepared_statements WHERE name = 'test_probe_insert'");
    expect(stmt.rows).toEqual([{ runs: 3 }]);
    // SELECT counts no rows, as PGlite's query() counts them; another text under a taken name answers for its own text.
    expect(await db.query('SELECT id FROM thread_probe WHERE id >= $1 ORDER BY id', [104], { name: 'test_probe_select' })).toEqual({ rowCount: 0, rows: [{ id: 104 }, { id: 105 }] });
    expect((await db.query('SELECT count(*)::int AS n FROM thread_probe WHERE id >= $1', [100], { name: 'test_probe_select' })).rows).toEqual([{ n: 6 }]);
    // A parameter without a plain text form (an array, a date) goes through query(), named or not.
    expect((await db.query<{ n: number }>('SELECT cardinality($1::int[]) AS n', [[1, 2, 3]], { name: 'test_probe_array' })).rows).toEqual([{ n: 3 }]);
    await db.query('DELETE FROM thread_probe WHERE id >= 100');
  });

  it('an acknowledged named write is in the data directory when the thread dies without closing the store', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cardline-thread-'));
    try {
      const first = await openDb({ dataDir: join(dir, 'pglite'), thread: true });
      await first.exec('CREATE TABLE kept (v text)');
      expect((await first.query('INSERT INTO kept VALUES ($1)', ['acknowledged'], { name: 'test_kept' })).rowCount).toBe(1);
      // As a crash: the thread ends with PGlite open (no checkpoint, nothing flushed by close), then the lock goes.
      const inner = first as unknown as { thread: { terminate(): Promise<void> }; release(): Promise<void> };
      await inner.thread.terminate();
      await inner.release();
      const second = await openDb({ dataDir: join(dir, 'pglite'), thread: true });
      try {
        expect((await second.query('SELECT v FROM kept')).rows).toEqual([{ v: 'acknowledged' }]);
      } finally {
        await second.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);

  it('a data directory written on the thread is there after a restart; a closed store refuses statements', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cardline-thread-'));
    try {
      const first = await openDb({ dataDir: join(dir, 'pglite'), thread: true });
      await first.exec('CREATE TABLE kept (v text)');
      await first.query('INSERT INTO kept VALUES ($1)', ['after restart']);
      await first.close();
      await expect(first.query('SELECT 1')).rejects.toThrow(/thread/);
      const second = await openDb({ dataDir: join(dir, 'pglite'), thread: true });
      try {
        expect((await second.query('SELECT v FROM kept')).rows).toEqual([{ v: 'after restart' }]);
      } finally {
        await second.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);
});
