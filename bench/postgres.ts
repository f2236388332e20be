// A database of the bench's own on DATABASE_URL's server, created fresh and dropped afterwards, so that no run
// sees another's data.
import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** `template`: a copy of that database (kept seeded by bench/memory.ts's BENCH_SEED_DIR), not an empty one. */
export async function temporaryDatabase(prefix: string, template?: string): Promise<{ url: string; name: string; drop: () => Promise<void> }> {
  const server = process.env.DATABASE_URL;
  if (!server) throw new Error('BENCH_STORE=postgres needs DATABASE_URL');
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  const sql = async (statement: string) => {
    const c = new pg.Client({ connectionString: server });
    await c.connect();
    try {
      await c.query(statement);
    } finally {
      await c.end();
    }
  };
  await sql(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ''}`);
  const url = new URL(server);
  url.pathname = `/${name}`;
  return { url: url.toString(), name, drop: () => sql(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}
