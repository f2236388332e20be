// The gateway's JSON lines (decision 0388): gathered into fewer writes, yet on disk within 100 ms and at exit.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { logDestination, loggerOptions } from '../../src/logging.js';

const dir = mkdtempSync(join(tmpdir(), 'cardline-log-destination-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const lines = (file: string) => readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { msg: string });

describe('the log destination', () => {
  it('writes a lone line within its 100 ms flush, masked as ever', async () => {
    const file = join(dir, 'lone.log');
    const log = pino(loggerOptions('info'), logDestination(openSync(file, 'a')));
    log.info({ token: 'eyJhbGciOiJFUzI1NiJ9.a.b' }, 'request completed');
    await expect.poll(() => lines(file).map((l) => l.msg), { timeout: 2_000, interval: 20 }).toEqual(['request completed']);
    expect(readFileSync(file, 'utf8')).not.toContain('eyJ');
  });

  it('gathers a burst into writes of about 4 kB, every line kept in order', async () => {
    const file = join(dir, 'burst.log');
    const log = pino(loggerOptions('info'), logDestination(openSync(file, 'a')));
    for (let i = 0; i < 500; i++) log.info({ i }, `line ${i}`);
    await expect.poll(() => lines(file).length, { timeout: 2_000, interval: 20 }).toBe(500);
    expect(lines(file).map((l) => l.msg)).toEqual(Array.from({ length: 500 }, (_, i) => `line ${i}`));
  });

  it('loses no line when the process exits right after logging', () => {
    const file = join(dir, 'exit.log');
    const script = `import { openSync } from 'node:fs'; import { pino } from 'pino'; import { logDestination, loggerOptions } from './src/logging.ts';
      const log = pino(loggerOptions('info'), logDestination(openSync(${JSON.stringify(file)}, 'a')));
      for (let i = 0; i < 3; i++) log.info('before exit ' + i);
      process.exit(3);`;
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: join(import.meta.dirname, '../..') });
    expect(r.status, r.stderr.toString()).toBe(3);
    expect(lines(file).map((l) => l.msg)).toEqual(['before exit 0', 'before exit 1', 'before exit 2']);
  });
});
