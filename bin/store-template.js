#!/usr/bin/env node
// `node bin/store-template.js [--prepare] [--from-sources]`: writes dist/store-template/, the migrated empty store a
// new embedded store starts from (decision 0107), when missing or stale; `--from-sources` reads the migrations from
// src/ through tsx, beside the compile (bin/prepare.js). With neither dist/ nor sources it does nothing.
import { existsSync, mkdirSync } from 'node:fs';
import process from 'node:process';
import { URL, fileURLToPath } from 'node:url';

const compiled = new URL('../dist/src/store/write-template.js', import.meta.url);
const source = new URL('../src/store/write-template.ts', import.meta.url);

/** The module that writes the template: from the sources through tsx when asked and possible, else compiled. */
async function writer() {
  if (process.argv.includes('--from-sources') && existsSync(fileURLToPath(source))) {
    try {
      const { tsImport } = await import('tsx/esm/api');
      mkdirSync(fileURLToPath(new URL('../dist', import.meta.url)), { recursive: true });
      return await tsImport(source.href, import.meta.url);
    } catch (err) {
      if (err?.code !== 'ERR_MODULE_NOT_FOUND') throw err;
      // no tsx (dev dependencies omitted): the compiled module, when there is one
    }
  }
  return existsSync(fileURLToPath(compiled)) ? import(compiled.href) : null;
}

try {
  const mod = await writer();
  if (!mod) process.stderr.write('cardline: no dist/ yet; the store template is made after the build.\n');
  else if (await mod.writeStoreTemplate()) process.stderr.write('cardline: wrote dist/store-template/ (a new embedded store starts from it).\n');
} catch (err) {
  // Not fatal: a store without a template is created by initdb and the migrations, as before.
  process.stderr.write(`cardline: could not write the store template (${err?.message ?? err}); new stores will be created without it.\n`);
}
