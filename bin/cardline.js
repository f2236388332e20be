#!/usr/bin/env node
// `npx cardline …` / `cardline …`: runs the compiled CLI, dist/src/cli/index.js, in this process (stdin,
// signals and the exit code need no forwarding). In a checkout it first checks that dist/ is not older than
// the sources and rebuilds it when it is (bin/build.js, decision 0100): TypeScript is compiled once per
// change, never at every start. The Docker image has dist/ and no sources: it runs dist/ as it is.
import { existsSync } from 'node:fs';
import process from 'node:process';
import { URL, fileURLToPath } from 'node:url';
import { requireNode } from './node-version.js';

// Before the rest is loaded: on an older Node that could fail with a reason that does not name the version.
requireNode();
const { ensureBuilt } = await import('./build.js');
const compiled = new URL('../dist/src/cli/index.js', import.meta.url);

await ensureBuilt();
if (existsSync(fileURLToPath(compiled))) {
  await import(compiled.href);
} else {
  process.stderr.write('error: cardline is not built and has no sources to build from (dist/src/cli/index.js is missing).\n');
  process.exitCode = 1;
}
