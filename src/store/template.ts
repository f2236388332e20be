// A migrated, empty embedded store made at install that new stores start as a copy of (decision 0107): about
// 0.3 s instead of initdb and migrations' 5 s of CPU. Its fingerprint (PGlite release, every migration) must
// match this code, or a new store is created as before.
import { createHash } from 'node:crypto';
import { constants, cpSync, existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { migrations } from './migrations/index.js';

/** dist/store-template, from the compiled code (dist/src/store/) or from the sources (src/store/, tests). */
export const TEMPLATE_DIR = fileURLToPath(new URL(import.meta.url.includes('/dist/src/') ? '../../store-template' : '../../dist/store-template', import.meta.url));
export const fingerprintFile = (dir: string) => `${dir}.sha256`;

/** The PGlite release installed beside this code (`require.resolve`: vitest's global setup has no `import.meta.resolve`). */
function pgliteVersion(): string {
  let dir = dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite'));
  while (!existsSync(join(dir, 'package.json'))) dir = dirname(dir);
  return (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string }).version;
}

/** What a template must have been made from to start a store of this code. */
export function templateFingerprint(): string {
  const hash = createHash('sha256').update(`pglite ${pgliteVersion()}\n`);
  for (const m of migrations) hash.update(`${m.name}\n${m.sql}\n`);
  return hash.digest('hex');
}

/** The template directory, or null when there is none made by this code. */
export function storeTemplate(dir = TEMPLATE_DIR): string | null {
  try {
    if (readFileSync(fingerprintFile(dir), 'utf8').trim() !== templateFingerprint()) return null;
    return existsSync(join(dir, 'PG_VERSION')) ? dir : null;
  } catch {
    return null;
  }
}

/** Copies the template into a new data directory, as copy-on-write clones where the file system allows. */
export function copyTemplate(template: string, dataDir: string): void {
  cpSync(template, dataDir, { recursive: true, mode: constants.COPYFILE_FICLONE });
}
