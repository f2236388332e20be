// The demo read on a terminal (issue 27, point 14): started under a pseudo-terminal (util-linux `script`), as a
// person starts it, its log lines are pino-pretty's ("[12:00:00.000] INFO: Server listening at …"), not JSON;
// piped (test/process/server.test.ts) they stay JSON. The compiled dist/, as `npm run demo` runs it.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, baseEnv, freePort, type Proc } from '../helpers/process.js';
import { BUILD_TIMEOUT_MS, ensureBuilt } from '../helpers/spawn.js';

const SCRIPT = '/usr/bin/script';
// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;]*m/g;

describe.runIf(existsSync(SCRIPT) && !process.env.DATABASE_URL)('the demo on a terminal', () => {
  beforeAll(ensureBuilt, BUILD_TIMEOUT_MS);
  let proc: Proc | undefined;
  let dir: string;
  let port: number;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cardline-demo-tty-'));
    port = await freePort();
    const env = baseEnv({ PORT: String(port), CARDLINE_ADMIN_PORT: String(await freePort()), CARDLINE_DATA_DIR: join(dir, 'data'), CARDLINE_DEMO_PASSWORD: 'demo-password-1', LOG_LEVEL: 'info' });
    // `script` gives the gateway a terminal as its standard output; -e exits with its status, -f flushes each write.
    const child = spawn(SCRIPT, ['-qfec', `${JSON.stringify(process.execPath)} bin/gateway.js --demo`, '/dev/null'], { cwd: ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (out += d));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) => child.once('exit', (code, signal) => res({ code, signal })));
    proc = { child, output: () => out.replace(ANSI, '').replace(/\r\n/g, '\n'), exited };
  }, 60_000);

  afterAll(async () => {
    if (proc && proc.child.exitCode === null && proc.child.signalCode === null) {
      // The terminal closes with `script`: the gateway gets its hang-up.
      proc.child.kill('SIGTERM');
      await proc.exited;
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('prints readable log lines, no JSON, and its banner', { timeout: 300_000 }, async () => {
    await expect.poll(() => proc!.output(), { timeout: 240_000, interval: 500 }).toContain('Cardline demo ready.');
    const output = proc!.output();
    expect(output).toMatch(new RegExp(`^\\[\\d{2}:\\d{2}:\\d{2}\\.\\d{3}\\] INFO: Server listening at http://127\\.0\\.0\\.1:${port}$`, 'm'));
    expect(output).not.toContain('"msg":');
    expect(output).not.toContain('"level":');
  });
});
