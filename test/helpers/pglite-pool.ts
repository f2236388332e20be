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
 * A store whose schema a test changed (any DDL: an event trigger sets a session setting, undone with a rolled-back
 * transaction) or whose record of migrations differs is closed rather than reused. Comparing the catalogue's text
 * instead cost 17-46 ms of CPU a return (decision 0430).
 */
const WATCH_DDL = `
  CREATE FUNCTION pg_temp.cardline_test_ddl() RETURNS event_trigger LANGUAGE plpgsql AS $$
    BEGIN PERFORM set_config('cardline_test.ddl', 'changed', false); END $$;
  CREATE EVENT TRIGGER cardline_test_ddl ON ddl_command_end EXECUTE FUNCTION pg_temp.cardline_test_ddl();`;
const SHAPE_SQL = `SELECT coalesce(current_setting('cardline_test.ddl', true), '') || ':' || (SELECT md5(string_agg(name, '|' ORDER BY name)) FROM cardline_migrations) AS shape`;

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
  await db.exec(WATCH_DDL);
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
