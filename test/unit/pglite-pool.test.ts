// The per-worker pool of PGlite test stores (test/helpers/pglite-pool.ts, decision 0430): a store handed back is
// reused only when its schema is the template's. Any DDL a test ran (and committed), or a changed record of
// migrations, closes it, so the next test never starts on another schema.
import { describe, expect, it } from 'vitest';
import { returnPglite, takeMigratedPglite } from '../helpers/pglite-pool.js';

/** Runs `sql` on a pooled store, hands it back, and says whether the next take got the same store again. */
async function reusedAfter(sql: string): Promise<boolean> {
  const db = await takeMigratedPglite();
  await db.exec(sql);
  await returnPglite(db);
  const next = await takeMigratedPglite();
  await returnPglite(next);
  return next === db;
}

describe('the pooled PGlite test store', () => {
  it('is reused after rows only (emptied), and after DDL its transaction rolled back', async () => {
    expect(await reusedAfter("INSERT INTO tenants (tenant_id, name, config) VALUES ('pool-t', 'Pool', '{}')")).toBe(true);
    expect(await reusedAfter('BEGIN; CREATE TABLE pool_probe (a int); DROP TABLE tenants CASCADE; ROLLBACK')).toBe(true);
    const db = await takeMigratedPglite();
    expect((await db.query<{ n: number }>('SELECT count(*)::int AS n FROM tenants')).rows[0]!.n).toBe(0);
    await returnPglite(db);
  });

  it.each([
    ['a table created', 'CREATE TABLE pool_probe (a int)'],
    ['a table created and dropped again', 'CREATE TABLE pool_probe (a int); DROP TABLE pool_probe'],
    ['a table dropped', 'DROP TABLE channel_types CASCADE'],
    ['an index created', 'CREATE INDEX pool_probe_idx ON tenants (name)'],
    ['a function created', 'CREATE FUNCTION pool_probe() RETURNS int LANGUAGE sql AS $$ SELECT 1 $$'],
    ['a column altered', 'ALTER TABLE tenants ALTER COLUMN name DROP NOT NULL'],
    ['a column added', 'ALTER TABLE tenants ADD COLUMN pool_probe int'],
    ['a migration rolled back (its record gone)', 'DELETE FROM cardline_migrations WHERE name = (SELECT max(name) FROM cardline_migrations)'],
  ])('is closed, not reused, after %s', async (_what, sql) => {
    expect(await reusedAfter(sql)).toBe(false);
    const db = await takeMigratedPglite();
    const probes = await db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM information_schema.columns WHERE table_schema = 'public' AND (table_name LIKE 'pool_probe%' OR column_name = 'pool_probe')",
    );
    expect(probes.rows[0]!.n).toBe(0);
    await returnPglite(db);
  });
});
