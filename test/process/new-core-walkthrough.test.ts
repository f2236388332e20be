// docs/operating.md's "Moving a bank to a new core", run as written (bash, npx cardline, curl) against a demo
// gateway and two mock core servers (the card processor, and the core-banking system with an old and a new
// bank). Only the ports change: the test's own free ones for 8080, 8081, 9090 and 9091. Where requests landed is
// counted by the mock cores themselves (GET /__admin/calls), in the block's own output. No duration is asserted.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, baseEnv, freePort, kill, start, waitReady, type Proc } from '../helpers/process.js';
import { BUILD_TIMEOUT_MS, ensureBuilt, runProcess } from '../helpers/spawn.js';
import { addedSince, workingTree } from '../helpers/working-tree.js';

function walkthrough(): string {
  const doc = readFileSync(new URL('../../docs/operating.md', import.meta.url), 'utf8');
  const match = /<!-- new-core-walkthrough -->\n```sh\n([\s\S]*?)\n```\n<!-- \/new-core-walkthrough -->/.exec(doc);
  if (!match) throw new Error('docs/operating.md has no new-core-walkthrough block');
  return match[1]!;
}

describe.runIf(!process.env.DATABASE_URL)("docs/operating.md's Moving a bank to a new core", () => {
  beforeAll(ensureBuilt, BUILD_TIMEOUT_MS);
  let gateway: Proc | undefined;
  const cores: ReturnType<typeof spawn>[] = [];
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
    for (const [port, data] of [[ports.cards, 'cards'], [ports.banking, 'banking']] as const) {
      cores.push(
        spawn(process.execPath, ['--import', 'tsx', 'src/mock-core/main.ts', '--port', String(port), '--data-dir', join(dir, data), '--log-level', 'warn'], { cwd: ROOT, stdio: 'ignore' }),
      );
    }
    await waitReady(`http://127.0.0.1:${ports.gw}`, gateway);
    for (const port of [ports.cards, ports.banking]) {
      for (let i = 0; i < 150; i++) {
        if (await fetch(`http://127.0.0.1:${port}/health`).then((r) => r.ok, () => false)) break;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  }, 120_000);
  afterAll(async () => {
    await kill(gateway);
    for (const c of cores) c.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  });

  it('routes by operation, runs the new core in shadow, shows the divergence, fixes it and switches live without a failed read, counted on the cores', async () => {
    const script = walkthrough()
      .replaceAll('http://localhost:8080', `http://127.0.0.1:${ports.gw}`)
      .replaceAll('http://127.0.0.1:8081', `http://127.0.0.1:${ports.admin}`)
      .replaceAll('127.0.0.1:9090', `127.0.0.1:${ports.cards}`)
      .replaceAll('127.0.0.1:9091', `127.0.0.1:${ports.banking}`);
    const npx = `npx() { if [ "$1" = cardline ]; then shift; node ${JSON.stringify(join(ROOT, 'bin', 'cardline.js'))} "$@"; else command npx "$@"; fi; }`;
    // From the project directory, as the guide says; it must leave nothing there (its temporary file: mktemp,
    // inside the test's own directory).
    const before = await workingTree();
    const r = await runProcess('bash', ['-e', '-c', `${npx}\n${script}`], { cwd: ROOT, env: baseEnv({ TMPDIR: dir }) });
    expect(r.code, `${r.stdout}\n${r.stderr}\n--- gateway ---\n${gateway?.output().slice(-3000)}`).toBe(0);
    expect(await addedSince(before)).toEqual([]);
    // Every "# →" line of the block, in order, is what the script printed.
    const expected = [...walkthrough().matchAll(/^# → (.*?)(?:\s{3}\(.*\))?$/gm)].map((m) => m[1]);
    expect(r.stdout.trim().split('\n')).toEqual(expected);
  }, 240_000);
});
