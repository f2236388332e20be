// Runs the migrations with umzug, holding an advisory lock so that replicas starting together take turns.
import type { UmzugStorage } from 'umzug';
import type { Db, Queryable } from './db.js';
import { migrations } from './migrations/index.js';

const MIGRATION_LOCK = 0x0ca7d11e;

class TableStorage implements UmzugStorage {
  constructor(private readonly db: Queryable) {}
  private async ensure(): Promise<void> {
    await this.db.query(
      'CREATE TABLE IF NOT EXISTS cardline_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
    );
  }
  async executed(): Promise<string[]> {
    await this.ensure();
    const r = await this.db.query<{ name: string }>('SELECT name FROM cardline_migrations ORDER BY name');
    return r.rows.map((row) => row.name);
  }
  async logMigration({ name }: { name: string }): Promise<void> {
    await this.db.query('INSERT INTO cardline_migrations (name) VALUES ($1) ON CONFLICT DO NOTHING', [name]);
  }
  async unlogMigration({ name }: { name: string }): Promise<void> {
    await this.db.query('DELETE FROM cardline_migrations WHERE name = $1', [name]);
  }
}

export async function migrate(db: Db): Promise<string[]> {
  // An up-to-date store is told by one query, without the lock or loading umzug (~0.2 s of a CLI start).
  const known = await db.query<{ t: string | null }>("SELECT to_regclass('cardline_migrations')::text AS t");
  if (known.rows[0]?.t && (await migrationsApplied(db))) return [];
  return db.exclusive(MIGRATION_LOCK, async (conn) => {
    const { Umzug } = await import('umzug');
    const umzug = new Umzug({
      migrations: migrations.map((m) => ({ name: m.name, up: async () =>
          // The schema change and its record commit together: a crash leaves neither or both.
          conn.exec(`BEGIN;\n${m.sql}\nINSERT INTO cardline_migrations (name) VALUES ('${m.name}');\nCOMMIT;`) })),
      storage: new TableStorage(conn),
      logger: undefined,
    });
    const applied = await umzug.up();
    return applied.map((m) => m.name);
  });
}

/** True when every known migration has been applied (readiness). */
export async function migrationsApplied(db: Queryable): Promise<boolean> {
  const r = await db.query<{ name: string }>('SELECT name FROM cardline_migrations');
  const done = new Set(r.rows.map((row) => row.name));
  return migrations.every((m) => done.has(m.name));
}
