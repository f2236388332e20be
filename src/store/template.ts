// A migrated, empty embedded store made once at install (npm's `prepare`, `npm run build`), that a new
// embedded store starts from (decision 0107): PGlite's initdb and every migration cost a new store about 5 s
// of CPU; unpacking this copy about 1.5 s. The file sits beside the compiled code (dist/store-template.tar.gz, 5 MB)
// with a fingerprint of what made it: the PGlite release and every migration's name and SQL. A store is only
// ever started from a template of this very code; without one (deleted, or made by other code) a new store
// is created as before.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { migrations } from './migrations/index.js';

/** dist/store-template.tar.gz, from the compiled code (dist/src/store/) or from the sources (src/store/, tests). */
export const TEMPLATE_FILE = fileURLToPath(new URL(import.meta.url.includes('/dist/src/') ? '../../store-template.tar.gz' : '../../dist/store-template.tar.gz', import.meta.url));
const fingerprintFile = (file: string) => `${file}.sha256`;

/** The PGlite release installed beside this code. */
function pgliteVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.resolve('@electric-sql/pglite')));
  while (!existsSync(join(dir, 'package.json'))) dir = dirname(dir);
  return (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string }).version;
}

/** What a template must have been made from to start a store of this code. */
export function templateFingerprint(): string {
  const hash = createHash('sha256').update(`pglite ${pgliteVersion()}\n`);
  for (const m of migrations) hash.update(`${m.name}\n${m.sql}\n`);
  return hash.digest('hex');
}

/** The template as PGlite loads it, or null when there is none made by this code. */
export function storeTemplate(file = TEMPLATE_FILE): Blob | null {
  try {
    if (readFileSync(fingerprintFile(file), 'utf8').trim() !== templateFingerprint()) return null;
    return new Blob([readFileSync(file)], { type: 'application/x-gzip' });
  } catch {
    return null;
  }
}

/** Makes the template when it is missing or was made by other code; true when it wrote one. */
export async function writeStoreTemplate(file = TEMPLATE_FILE): Promise<boolean> {
  if (storeTemplate(file)) return false;
  const { openDb, dumpPglite } = await import('./db.js');
  // In process (not on a thread of its own): the dump is compressed by PGlite itself.
  const { migrate } = await import('./migrate.js');
  const db = await openDb({ dataDir: 'memory://' });
  try {
    await migrate(db);
    const tar = Buffer.from(await (await dumpPglite(db, 'gzip')).arrayBuffer());
    // Written aside and renamed: a reader never sees half a file, nor a fingerprint before its file.
    writeFileSync(`${file}.tmp`, tar);
    renameSync(`${file}.tmp`, file);
    writeFileSync(`${fingerprintFile(file)}.tmp`, `${templateFingerprint()}\n`);
    renameSync(`${fingerprintFile(file)}.tmp`, fingerprintFile(file));
  } finally {
    await db.close();
  }
  return true;
}
