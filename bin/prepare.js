#!/usr/bin/env node
// npm's `prepare`, on both cores (decision 0378): the store template beside the generated code, the compile of
// dist/ and the console; each step says what it does or why it is skipped, and a failing one fails the install.
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
