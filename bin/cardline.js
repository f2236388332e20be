#!/usr/bin/env node
// `npx cardline …` / `cardline …`: in a checkout (src/ and the tsx dev dependency present) it runs the
// TypeScript CLI in this process through tsx's ESM loader, so stdin, signals and the exit code need no
// forwarding; in a build without them (the Docker image) it runs the compiled dist/src/cli/index.js.
import { existsSync } from 'node:fs';
import process from 'node:process';
import { URL, fileURLToPath } from 'node:url';

const source = new URL('../src/cli/index.ts', import.meta.url);
const compiled = new URL('../dist/src/cli/index.js', import.meta.url);

async function tsxLoader() {
  try {
    return await import('tsx/esm/api');
  } catch {
    return null;
  }
}

const tsx = existsSync(fileURLToPath(source)) ? await tsxLoader() : null;
if (tsx) {
  tsx.register({ tsconfig: fileURLToPath(new URL('../tsconfig.json', import.meta.url)) });
  await import(source.href);
} else if (existsSync(fileURLToPath(compiled))) {
  await import(compiled.href);
} else {
  process.stderr.write('error: cardline is neither a checkout with its dev dependencies (npm ci) nor a build (npm run build).\n');
  process.exitCode = 1;
}
