// On a Node.js older than package.json's engines, `npm start`, `npm run demo` and `npx cardline` say which
// version they need and which one runs, and exit 1 before loading anything else.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REQUIRED_NODE, nodeVersionProblem } from '../../bin/node-version.js';
import { ROOT } from '../helpers/process.js';
import { runProcess } from '../helpers/spawn.js';

const OLD = `error: Cardline needs Node.js 20.19 or later (package.json "engines"); this is Node.js 20.11.1 (${process.execPath}). Install Node.js 20.19 or a later release and run the command again.\n`;

describe('the Node.js version check', () => {
  it('is the version package.json requires', () => {
    const engines = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node;
    expect(`>=${REQUIRED_NODE.replace(/\.0$/, '')}`).toBe(engines);
  });

  it('accepts 20.19 and every later release', () => {
    for (const v of ['20.19.0', 'v20.19.0', '20.19.5', '20.20.0', '21.0.0', '22.12.0', '24.11.1', '25.0.0-pre', process.versions.node]) {
      expect({ v, problem: nodeVersionProblem(v) }).toEqual({ v, problem: null });
    }
  });

  it('refuses older ones, naming the version needed and the version running', () => {
    for (const v of ['20.18.3', '20.11.1', '18.20.4', '16.0.0', 'v20.0.0']) {
      expect(nodeVersionProblem(v)).toBe(
        `Cardline needs Node.js 20.19 or later (package.json "engines"); this is Node.js ${v.replace(/^v/, '')} (${process.execPath}). Install Node.js 20.19 or a later release and run the command again.`,
      );
    }
    expect(nodeVersionProblem('22.11.0', '22.12.0')).toMatch(/^Cardline needs Node\.js 22\.12 or later .*this is Node\.js 22\.11\.0/);
  });

  it('the CLI and the gateway, started on an older Node, print it and exit 1', async () => {
    const preload = join(ROOT, 'test/cli/fixtures/old-node.mjs');
    for (const bin of ['bin/cardline.js', 'bin/gateway.js']) {
      const r = await runProcess(process.execPath, ['--import', preload, join(ROOT, bin), '--version'], { cwd: ROOT, env: { ...process.env, PORT: '0' } });
      expect({ bin, code: r.code, stderr: r.stderr, stdout: r.stdout }).toEqual({ bin, code: 1, stderr: OLD, stdout: '' });
    }
  });
});
