#!/usr/bin/env node
// Builds dist/ (what `cardline`, `npm run demo` and `npm start` run) and checks it is not older than its
// sources (decision 0100): `--if-stale` builds only then, `--prepare` is npm's prepare. The stamp is tsc's
// dist/tsconfig.build.tsbuildinfo, dated back to the build's start so an edit made meanwhile counts as newer;
// a lock makes two processes that find dist/ stale build it once.
// waits on a lock, then finds it fresh.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, utimesSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import process from 'node:process';
import { URL, fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
const STAMP = join('dist', 'tsconfig.build.tsbuildinfo');
const CONFIGS = ['tsconfig.json', 'tsconfig.build.json'];

/** A checkout: the TypeScript sources are here (the Docker image ships dist/ without them). */
export function hasSources(root = ROOT) {
  return existsSync(join(root, 'src'));
}

/** What the build compiles: the `include` of tsconfig.build.json (folders such as src, connectors, schemas). */
function sources(root) {
  try {
    return JSON.parse(readFileSync(join(root, 'tsconfig.build.json'), 'utf8')).include ?? [];
  } catch {
    return ['src', 'connectors', 'schemas'];
  }
}

/** The newest modification time (ms) under the sources and of the build's configuration. */
function newestSource(root) {
  let newest = 0;
  const visit = (path) => {
    const st = statSync(path, { throwIfNoEntry: false });
    if (!st) return;
    if (st.mtimeMs > newest) newest = st.mtimeMs;
    if (st.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name));
  };
  for (const dir of sources(root)) visit(join(root, dir));
  for (const file of CONFIGS) visit(join(root, file));
  return newest;
}

/** Why dist/ must be rebuilt, or null when it is current. */
export function staleReason(root = ROOT) {
  const stamp = statSync(join(root, STAMP), { throwIfNoEntry: false });
  if (!stamp) return 'no build yet';
  return newestSource(root) >= stamp.mtimeMs ? 'sources changed since the last build' : null;
}

function typescriptCompiler() {
  try {
    return join(createRequire(import.meta.url).resolve('typescript/package.json'), '..', 'bin', 'tsc');
  } catch {
    return null;
  }
}

/** Writes the uncommitted derived files (the SDK's generated code) before compiling; skipped without tsx. */
function generateUncommitted(root) {
  const script = join(root, 'scripts', 'generate.ts');
  let tsx;
  try {
    tsx = createRequire(join(root, 'package.json')).resolve('tsx');
  } catch {
    return Promise.resolve(0);
  }
  if (!existsSync(script)) return Promise.resolve(0);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', tsx, script, '--uncommitted'], { cwd: root, stdio: ['ignore', 2, 2] });
    child.on('error', reject);
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

/** Runs tsc -b on the build configuration, its output on stderr (stdout belongs to the command). */
function compile(tsc, root) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [tsc, '-b', 'tsconfig.build.json'], { cwd: root, stdio: ['ignore', 2, 2] });
    child.on('error', reject);
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

export class BuildError extends Error {
  constructor(message) {
    super(message);
    this.name = 'BuildError';
  }
}

/** Builds dist/ (always, or when stale) under a lock; true when it compiled; BuildError on compiler failure. */
export async function build({ ifStale = false, say = (line) => process.stderr.write(`${line}\n`), root = ROOT, generate = true } = {}) {
  if (ifStale && !staleReason(root)) return false;
  const tsc = typescriptCompiler();
  if (!tsc) {
    throw new BuildError(
      `dist/ must be (re)built (${staleReason(root) ?? 'requested'}) and the TypeScript compiler is not installed: run npm ci (with dev dependencies), then npm run build.`,
    );
  }
  const dist = join(root, 'dist');
  const stamp = join(root, STAMP);
  mkdirSync(dist, { recursive: true });
  const { default: lockfile } = await import('proper-lockfile');
  // Wait for another process's build as long as it runs; a lock older than `stale` is a dead holder's.
  const release = await lockfile.lock(dist, {
    lockfilePath: join(dist, '.build.lock'),
    stale: 60_000,
    update: 10_000,
    retries: { retries: 100_000, factor: 1, minTimeout: 250, maxTimeout: 250 },
  });
  try {
    const reason = staleReason(root);
    if (ifStale && !reason) return false;
    say(`cardline: compiling the TypeScript into dist/ (${reason ?? 'requested'}); a first build takes a while, later ones are incremental.`);
    const started = new Date();
    // Skipped when the caller has just written them (bin/prepare.js).
    const generated = generate ? await generateUncommitted(root) : 0;
    if (generated !== 0) throw new BuildError(`writing the derived files failed (scripts/generate.ts --uncommitted exited ${generated}; its errors are above). Fix them, or run npm run generate.`);
    const code = await compile(tsc, root);
    const built = existsSync(stamp);
    if (built) utimesSync(stamp, code === 0 ? started : new Date(0), code === 0 ? started : new Date(0));
    if (code !== 0 || !built) throw new BuildError(`the TypeScript build failed (tsc -b tsconfig.build.json exited ${code}; its errors are above). Fix them, or run npm run build.`);
    return true;
  } finally {
    await release();
  }
}

/** What the commands call before importing dist/: builds when stale; a failure ends the process with exit 1. */
export async function ensureBuilt() {
  if (!hasSources()) return;
  try {
    await build({ ifStale: true });
  } catch (err) {
    process.stderr.write(`error: ${err instanceof BuildError ? err.message : `could not build dist/: ${err?.message ?? err}`}\n`);
    process.exit(1);
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const args = process.argv.slice(2);
  const prepare = args.includes('--prepare');
  if (prepare && !hasSources()) {
    process.stderr.write('cardline prepare: no src/ here (an image build copies it later); nothing to compile.\n');
  } else if (prepare && !typescriptCompiler()) {
    process.stderr.write('cardline prepare: the TypeScript compiler is not installed (dev dependencies omitted); dist/ not built.\n');
  } else {
    try {
      await build({ ifStale: prepare || args.includes('--if-stale'), generate: !args.includes('--generated') });
    } catch (err) {
      process.stderr.write(`error: ${err?.message ?? err}\n`);
      process.exitCode = 1;
    }
  }
}
