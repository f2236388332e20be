#!/usr/bin/env node
// The operations console's files (decision 0160): console/src/ and the SDK bundled by esbuild into dist/console/
// at build and install; `--prepare` skips with a note where esbuild is missing. Nothing is fetched at run time.
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { stderr, stdout } from 'node:process';
import process from 'node:process';
import { URL, fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const OUT = join(ROOT, 'dist', 'console');

/** Builds the console into dist/console/ (or `outdir`); resolves when the files are written. */
export async function buildConsole(outdir = OUT) {
  const { build } = await import('esbuild');
  mkdirSync(outdir, { recursive: true });
  await build({
    entryPoints: { app: join(ROOT, 'console', 'src', 'main.ts') },
    bundle: true,
    // The SDK's sources (the console's management client) take randomUUID from node:crypto: the browser's here.
    alias: { 'node:crypto': join(ROOT, 'console', 'src', 'shims', 'node-crypto.ts') },
    format: 'esm',
    platform: 'browser',
    target: ['es2022'],
    minify: true,
    sourcemap: false,
    legalComments: 'none',
    outdir,
    logLevel: 'warning',
  });
  copyFileSync(join(ROOT, 'console', 'src', 'index.html'), join(outdir, 'index.html'));
  return outdir;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const prepare = process.argv.includes('--prepare');
  if (prepare && (!existsSync(join(ROOT, 'console', 'src')) || !existsSync(join(ROOT, 'node_modules', 'esbuild')))) {
    stdout.write('console: nothing to build here (no console sources or no esbuild); skipped\n');
  } else {
    buildConsole().then(
      (dir) => stdout.write(`console built into ${dir}\n`),
      (err) => {
        stderr.write(`${err?.stack ?? err}\n`);
        process.exit(1);
      },
    );
  }
}
