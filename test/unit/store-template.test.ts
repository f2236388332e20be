// A new embedded store starts from the migrated template made at install (src/store/template.ts, decision
// 0107): the template is made once, refused when other code made it, and a store started from it is complete.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDb } from '../../src/store/db.js';
import { migrate } from '../../src/store/migrate.js';
import { migrations } from '../../src/store/migrations/index.js';
import { TEMPLATE_DIR, storeTemplate, templateFingerprint } from '../../src/store/template.js';
import { writeStoreTemplate } from '../../src/store/write-template.js';

const dir = mkdtempSync(join(tmpdir(), 'cardline-template-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const template = join(dir, 'store-template');

describe('the store template', () => {
  it('lives beside the compiled code, in dist/', () => {
    expect(TEMPLATE_DIR.endsWith('/dist/store-template')).toBe(true);
  });

  it('is written once with its fingerprint, and a new store on disk started from it has every migration', async () => {
    expect(storeTemplate(template)).toBeNull();
    expect(await writeStoreTemplate(template)).toBe(true);
    expect(readFileSync(`${template}.sha256`, 'utf8')).toBe(`${templateFingerprint()}\n`);
    // Made already: not made again.
    expect(await writeStoreTemplate(template)).toBe(false);
    expect(storeTemplate(template)).toBe(template);

    const db = await openDb({ dataDir: join(dir, 'store'), template: storeTemplate(template) });
    try {
      const { rows } = await db.query<{ name: string }>('SELECT name FROM cardline_migrations ORDER BY name');
      expect(rows.map((r) => r.name)).toEqual(migrations.map((m) => m.name));
      expect(await migrate(db)).toEqual([]);
      await db.query("INSERT INTO tenants (tenant_id, name, config) VALUES ('t1', 'T1', '{}')");
    } finally {
      await db.close();
    }
    // The store is the directory's own now: opened again, its row is there, and the template has none.
    const again = await openDb({ dataDir: join(dir, 'store'), template: null });
    try {
      expect((await again.query<{ n: number }>('SELECT count(*)::int AS n FROM tenants')).rows[0]!.n).toBe(1);
    } finally {
      await again.close();
    }
    const fromTemplate = await openDb({ dataDir: join(dir, 'store2'), template });
    try {
      expect((await fromTemplate.query<{ n: number }>('SELECT count(*)::int AS n FROM tenants')).rows[0]!.n).toBe(0);
    } finally {
      await fromTemplate.close();
    }
  });

  it('is refused once a migration is added or edited (its fingerprint names every migration)', () => {
    expect(storeTemplate(template)).toBe(template);
    const last = migrations[migrations.length - 1]!;
    migrations.push({ ...last, name: `${last.name}_next`, sql: 'SELECT 1' });
    try {
      expect(storeTemplate(template)).toBeNull();
    } finally {
      migrations.pop();
    }
    const sql = last.sql;
    last.sql = `${sql}\n-- edited`;
    try {
      expect(storeTemplate(template)).toBeNull();
    } finally {
      last.sql = sql;
    }
    expect(storeTemplate(template)).toBe(template);
  });

  it('made by other code (another PGlite or other migrations) is not used', async () => {
    writeFileSync(`${template}.sha256`, `${'0'.repeat(64)}\n`);
    expect(storeTemplate(template)).toBeNull();
  });
});
