#!/usr/bin/env node
// `node bin/store-template.js [--prepare]`: writes dist/store-template/, the migrated empty store a new
// embedded store starts from (src/store/template.ts, decision 0107), when it is missing or stale. Run by npm's
// `prepare` and `npm run build` after the compile. Without a build (no dist/) it says so and does nothing.
import { existsSync } from 'node:fs';
import process from 'node:process';
import { URL, fileURLToPath } from 'node:url';

const compiled = new URL('../dist/src/store/write-template.js', import.meta.url);
if (!existsSync(fileURLToPath(compiled))) {
  process.stderr.write('cardline: no dist/ yet; the store template is made after the build.\n');
} else {
  try {
    const { writeStoreTemplate } = await import(compiled.href);
    if (await writeStoreTemplate()) process.stderr.write('cardline: wrote dist/store-template/ (a new embedded store starts from it).\n');
  } catch (err) {
    // Not fatal: a store without a template is created by initdb and the migrations, as before.
    process.stderr.write(`cardline: could not write the store template (${err?.message ?? err}); new stores will be created without it.\n`);
  }
}
