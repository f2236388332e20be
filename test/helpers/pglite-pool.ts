// In-memory PGlite test stores, started from the run's migrated template and reused within a worker:
// loading the template costs about 0.8 s of CPU, emptying a returned store a few milliseconds.
import { readFile } from 'node:fs/promises';
import { inject } from 'vitest';
import { openDb, type Db } from '../../src/store/db.js';

/** The PGlite template, read once per worker process. */
let template: Promise<Blob> | undefined;
export function pgliteTemplate(): Promise<Blob> {
  template ??= readFile(inject('pgliteTemplate')).then((bytes) => new Blob([bytes]));
  return template;
}

/**
 * The shape of a store: tables, columns, constraints, indexes and applied migrations. A store handed back
 * with another shape (a test altered the schema or the migrations) is closed rather than reused.
 */
const SHAPE_SQL = `
  SELECT md5(string_agg(x, '|' ORDER BY x)) AS shape FROM (
    SELECT 'c:' || table_name || '.' || column_name || ':' || data_type || ':' || is_nullable || ':' || coalesce(column_default, '') AS x
      FROM information_schema.columns WHERE table_schema = 'public'
    UNION ALL SELECT 'i:' || indexdef FROM pg_indexes WHERE schemaname = 'public'
    UNION ALL SELECT 'k:' || conrelid::regclass::text || ':' || conname || ':' || pg_get_constraintdef(oid)
      FROM pg_constraint WHERE connamespace = 'public'::regnamespace
    UNION ALL SELECT 'm:' || name FROM cardline_migrations
  ) parts`;

const shapeOf = async (db: Db): Promise<string> => (await db.query<{ shape: string }>(SHAPE_SQL)).rows[0]!.shape;

const idle: Db[] = [];
let templateShape: Promise<string> | undefined;

/** Tables whose rows the migrations write (the migrations' record, the channel types they seed): kept. */
const WRITTEN_BY_MIGRATIONS = ['cardline_migrations', 'channel_types'];

/** Every other table emptied: the store is as the template left it. */
async function empty(db: Db): Promise<void> {
  const r = await db.query<{ t: string }>("SELECT quote_ident(tablename) AS t FROM pg_tables WHERE schemaname = 'public' AND tablename <> ALL($1::text[])", [
    WRITTEN_BY_MIGRATIONS,
  ]);
  if (r.rows.length) await db.exec(`TRUNCATE ${r.rows.map((row) => row.t).join(', ')} RESTART IDENTITY CASCADE`);
}

/** A migrated, empty in-memory store: a returned one emptied again (late writes included), else a new one. */
export async function takeMigratedPglite(): Promise<Db> {
  for (let db = idle.pop(); db; db = idle.pop()) {
    try {
      await empty(db);
      return db;
    } catch {
      await db.close().catch(() => undefined);
    }
  }
  const db = await openDb({ dataDir: 'memory://', loadDataDir: await pgliteTemplate() });
  templateShape ??= shapeOf(db);
  await templateShape;
  return db;
}

/** Hands a store back for the next test, unless it was closed or its schema changed. */
export async function returnPglite(db: Db): Promise<void> {
  try {
    if ((await shapeOf(db)) === (await templateShape)) {
      idle.push(db);
      return;
    }
  } catch {
    // closed, or the migrations' table is gone: not reusable
  }
  await db.close().catch(() => undefined);
}
