// The operating guide's walk-through (docs/operating.md, "A new bank, end to end"), run as written (bash, npx cardline, curl) against what it
// starts: a demo gateway as `npm run demo` runs it (bin/gateway.js --demo: the compiled dist/, which loads step
// 7's TypeScript plugin through tsx), its embedded store open, and the mock core
// (`npm run mock-core`). Only the ports change: the test's own free ones for 8080, 8081 and 9090.
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, baseEnv, freePort, kill, start, waitReady, type Proc } from '../helpers/process.js';
import { BUILD_TIMEOUT_MS, ensureBuilt, runProcess } from '../helpers/spawn.js';
import { addedSince, workingTree } from '../helpers/working-tree.js';
import { NPX_CARDLINE, docBlock, startMockCore, withAddresses } from '../helpers/walkthrough.js';

const OPERATOR_KEY = 'clop_demo-walkthrough-operator-key-01';

const walkthrough = () => docBlock('operating.md', 'operating-walkthrough');

describe.runIf(!process.env.DATABASE_URL)("docs/operating.md's walk-through: a new bank, end to end", () => {
  beforeAll(ensureBuilt, BUILD_TIMEOUT_MS);
  let gateway: Proc | undefined;
  let core: ChildProcess | undefined;
  let dir: string;
  const ports = { gw: 0, admin: 0, core: 0 };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cardline-operating-'));
    [ports.gw, ports.admin, ports.core] = [await freePort(), await freePort(), await freePort()];
    gateway = start(
      ['--demo'],
      baseEnv({
        CARDLINE_DATA_DIR: join(dir, 'data'),
        PORT: String(ports.gw),
        CARDLINE_ADMIN_PORT: String(ports.admin),
        CARDLINE_DEMO_PASSWORD: 'demo-password-1',
        CARDLINE_DEMO_OPERATOR_KEY: OPERATOR_KEY,
        LOG_LEVEL: 'warn',
      }),
    );
    core = await startMockCore(ports.core, join(dir, 'core'));
    await waitReady(`http://127.0.0.1:${ports.gw}`, gateway);
  }, 300_000);
  afterAll(async () => {
    await kill(gateway);
    core?.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  });

  it('onboards North Bank on the REST connector, its Admin adds an API Integration user, who raises a limit; then a bank on a connector plugin', async () => {
    const script = withAddresses(walkthrough(), {
      'http://localhost:8080': `http://127.0.0.1:${ports.gw}`,
      'http://127.0.0.1:8081': `http://127.0.0.1:${ports.admin}`,
      '127.0.0.1:9090': `127.0.0.1:${ports.core}`,
    });
    // mktemp (the guide's keys directory) inside the test's own directory, removed afterwards.
    const env = baseEnv({ TMPDIR: dir });
    delete env.CARDLINE_ADMIN_PORT;
    // A shell as the operator's: -e stops at the first failing step; each curl answer is printed. It runs
    // from the project directory, as the guide says, with `npx cardline` the project's bin/cardline.js (as
    // npx resolves it in the project), and must leave nothing there (issue 20, point 11: it left
    // northbank-keys.json and southbank-keys.json untracked).
    const before = await workingTree();
    const r = await runProcess('bash', ['-e', '-c', `${NPX_CARDLINE}\n${script}`], { cwd: ROOT, env });
    const out = r.stdout;
    expect(r.code, `${r.stderr}\n--- gateway ---\n${gateway?.output().slice(-3000)}`).toBe(0);
    expect(await addedSince(before)).toEqual([]);
    for (const file of ['northbank-keys.json', 'southbank-keys.json']) expect(existsSync(join(ROOT, file))).toBe(false);
    // 3: the CLI's word; 4: the Admin's answer; 5: the limit raised; 6: the core's record and the operator's view.
    const lines = out.trim().split('\n');
    expect(lines.shift()).toBe("User 'nadmin' (Admin) saved on tenant 'northbank'.");
    expect(JSON.parse(lines[0]!)).toEqual({ result: { username: 'channel', role: 'API Integration', disabled: false, locked: false, lastLoginAt: null }, pagination: null });
    expect(JSON.parse(lines[1]!)).toEqual({ result: true, exception: null, pagination: null });
    expect(JSON.parse(lines[2]!)).toMatchObject({ entityId: 'ENT-1001', creditLimit: '120000.00' });
    // 7: the plugin tenant disabled and enabled again.
    expect(lines.slice(-2)).toEqual(["Tenant 'southbank' disabled.", "Tenant 'southbank' enabled."]);
    const shown = JSON.parse(lines.slice(3, -2).join('\n')) as Record<string, unknown>;
    expect(shown).toMatchObject({
      id: 'northbank',
      name: 'North Bank',
      status: 'active',
      config: { connector: { id: 'rest', options: { baseUrl: `http://127.0.0.1:${ports.core}/banks/northbank` } }, creditLimit: { maximum: '250000.00' } },
    });
    // The plugin tenant is served by the module the gateway loaded.
    const plugin = await fetch(`http://127.0.0.1:${ports.admin}/v1/tenants/southbank`, { headers: { authorization: `Bearer ${OPERATOR_KEY}` } });
    expect(((await plugin.json()) as { result: unknown }).result).toMatchObject({
      status: 'active',
      config: { connector: { id: 'acme-core', module: './examples/acme-core/index.ts', options: { seed: 'demo' } } },
    });
    const keys = await fetch(`http://127.0.0.1:${ports.gw}/api/keys`, { headers: { TENANT: 'southbank' } });
    expect(keys.status).toBe(200);
    // Step 1 made an operator key of its own (shown once, on stdout, into the variable).
    expect(r.stderr).toContain("Operator key 'alice-ops' created.");
  }, 300_000);
});
