// docs/operating.md's "Moving a bank to a new core", run as written (bash, npx cardline, curl) against a demo
// gateway and two mock core servers (the card processor, and the core-banking system with an old and a new
// bank). Only the ports change: the test's own free ones for 8080, 8081, 9090 and 9091. Where requests landed is
// counted by the mock cores themselves (GET /__admin/calls), in the block's own output. No duration is asserted.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, baseEnv, freePort, kill, start, waitReady, type Proc } from '../helpers/process.js';
import { BUILD_TIMEOUT_MS, ensureBuilt, runProcess } from '../helpers/spawn.js';
import { addedSince, workingTree } from '../helpers/working-tree.js';
import { NPX_CARDLINE, docBlock, outputMatches, startMockCore, withAddresses } from '../helpers/walkthrough.js';

const walkthrough = () => docBlock('operating.md', 'new-core-walkthrough');

describe.runIf(!process.env.DATABASE_URL)("docs/operating.md's Moving a bank to a new core", () => {
  beforeAll(ensureBuilt, BUILD_TIMEOUT_MS);
  let gateway: Proc | undefined;
  const cores: ChildProcess[] = [];
  let dir: string;
  const ports = { gw: 0, admin: 0, cards: 0, banking: 0 };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cardline-new-core-'));
    [ports.gw, ports.admin, ports.cards, ports.banking] = [await freePort(), await freePort(), await freePort(), await freePort()];
    gateway = start(
      ['--demo'],
      baseEnv({
        CARDLINE_DATA_DIR: join(dir, 'data'),
        PORT: String(ports.gw),
        CARDLINE_ADMIN_PORT: String(ports.admin),
        CARDLINE_DEMO_PASSWORD: 'demo-password-1',
        CARDLINE_DEMO_OPERATOR_KEY: 'clop_demo-walkthrough-operator-key-01',
        LOG_LEVEL: 'warn',
      }),
    );
    for (const [port, data] of [[ports.cards, 'cards'], [ports.banking, 'banking']] as const) cores.push(await startMockCore(port, join(dir, data)));
    await waitReady(`http://127.0.0.1:${ports.gw}`, gateway);
  }, 120_000);
  afterAll(async () => {
    await kill(gateway);
    for (const c of cores) c.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  });

  it('routes by operation, runs the new core in shadow, shows the divergence, fixes it and switches live without a failed read, counted on the cores', async () => {
    const script = withAddresses(walkthrough(), {
      'http://localhost:8080': `http://127.0.0.1:${ports.gw}`,
      'http://127.0.0.1:8081': `http://127.0.0.1:${ports.admin}`,
      '127.0.0.1:9090': `127.0.0.1:${ports.cards}`,
      '127.0.0.1:9091': `127.0.0.1:${ports.banking}`,
    });
    // From the project directory, as the guide says; it must leave nothing there (its temporary file: mktemp,
    // inside the test's own directory).
    const before = await workingTree();
    const r = await runProcess('bash', ['-e', '-c', `${NPX_CARDLINE}\n${script}`], { cwd: ROOT, env: baseEnv({ TMPDIR: dir }) });
    expect(r.code, `${r.stdout}\n${r.stderr}\n--- gateway ---\n${gateway?.output().slice(-3000)}`).toBe(0);
    expect(await addedSince(before)).toEqual([]);
    // Every "# →" line of the block, in order, is what the script printed (`…` standing for anything).
    const expected = [...walkthrough().matchAll(/^# → (.*?)(?:\s{3}\(.*\))?$/gm)].map((m) => m[1]!);
    const printed = r.stdout.trim().split('\n');
    expect(printed).toHaveLength(expected.length);
    expect(expected.flatMap((line, i) => (outputMatches(line, printed[i]!) ? [`${line}\n${printed[i]}`] : []))).toEqual([]);
  }, 240_000);
});
