// Writes the store template (src/store/template.ts) at install: a new store made by initdb and every migration,
// renamed into place with its fingerprint. Run by bin/store-template.js after the build.
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { openDb } from './db.js';
import { migrate } from './migrate.js';
import { TEMPLATE_DIR, fingerprintFile, storeTemplate, templateFingerprint } from './template.js';

/** Makes the template when it is missing or was made by other code; true when it wrote one. */
export async function writeStoreTemplate(dir = TEMPLATE_DIR): Promise<boolean> {
  if (storeTemplate(dir)) return false;
  // Made aside and renamed into place: a reader never sees half a template, nor a fingerprint before it.
  const aside = mkdtempSync(`${dir}.tmp-`);
  try {
    const db = await openDb({ dataDir: aside, template: null });
    try {
      await migrate(db);
    } finally {
      await db.close();
    }
    rmSync(fingerprintFile(dir), { force: true });
    rmSync(dir, { recursive: true, force: true });
    renameSync(aside, dir);
    writeFileSync(`${fingerprintFile(dir)}.tmp`, `${templateFingerprint()}\n`);
    renameSync(`${fingerprintFile(dir)}.tmp`, fingerprintFile(dir));
  } finally {
    rmSync(aside, { recursive: true, force: true });
  }
  return true;
}
