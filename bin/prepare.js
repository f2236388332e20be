#!/usr/bin/env node
// npm's `prepare` (what `npm ci` and `npm install` run after installing), on both cores (decision 0378): the store
// template (bin/store-template.js, from the sources) from the start, beside the SDK's generated code and then
// the compile of dist/ (bin/build.js, when stale: about 40 s of CPU, the longest step) and the console
// (bin/build-console.js). One after the other they took the template's 10 s of CPU more, and wrote the generated
// code twice. Each step says what it does or why it is skipped (no sources in the Docker image's install, no dev
// dependencies); a failing compile or console build fails the install, as before.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import process from 'node:process';
import { URL, fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const has = (path) => existsSync(join(ROOT, path));

/** Runs `node args…` in the project, its output on this process's; resolves with its exit code. */
function node(args) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
    child.on('error', reject);
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

const tsx = has('node_modules/tsx');
const template = has('bin/store-template.js') ? node(['bin/store-template.js', '--prepare', ...(tsx ? ['--from-sources'] : [])]) : Promise.resolve(0);
const rest = (async () => {
  // The SDK's generated code (not committed, decision 0260) before the compile and the console read it.
  const generated = has('scripts/generate.ts') && tsx;
  if (generated) {
    const code = await node(['--import', 'tsx', 'scripts/generate.ts', '--uncommitted']);
    if (code !== 0) return code;
  }
  const steps = [];
  if (has('bin/build.js')) steps.push(node(['bin/build.js', '--prepare', ...(generated ? ['--generated'] : [])]));
  if (has('bin/build-console.js')) steps.push(node(['bin/build-console.js', '--prepare']));
  return (await Promise.all(steps)).find((code) => code !== 0) ?? 0;
})();
const codes = await Promise.all([template, rest]);
process.exitCode = codes.find((code) => code !== 0) ?? 0;
