// A trail's chain count follows how many writers run at once, not how often they started (decision 0286):
// gateway processes stopped and started again, one killed, and audited CLI commands in between, leave the demo
// tenant's trail in as many chains as writers ran side by side, and `cardline audit verify` passes. On the
// embedded store one process at a time; with DATABASE_URL, two gateways on PostgreSQL with one restarted.
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/bootstrap.js';
import { loadConfig } from '../../src/config.js';
import { MasterKey } from '../../src/crypto/master-key.js';
import { createTestDataDir, createTestDb, type TestDb } from '../helpers/app.js';
import { cliInProcess } from '../helpers/cli.js';
import { GatewayProcess } from '../helpers/gateway.js';
import { within } from '../helpers/process.js';
import { BUILD_TIMEOUT_MS, ensureBuilt } from '../helpers/spawn.js';

beforeAll(ensureBuilt, BUILD_TIMEOUT_MS);

const PG = process.env.DATABASE_URL;
const PASSWORD = 'Chain-Restarts-Passw0rd';
const masterKey = MasterKey.generate();

/** Stops a gateway as an operator does (SIGTERM: drained, its writer closed) or as a crash does (SIGKILL). */
async function stop(gw: GatewayProcess, signal: 'SIGTERM' | 'SIGKILL'): Promise<void> {
  gw.proc!.child.kill(signal);
  await within(gw.proc!.exited, 60_000, `exit after ${signal}`);
}

/** A start, an audited call (a login) and a stop. */
async function session(env: Record<string, string>, signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM'): Promise<void> {
  const gw = new GatewayProcess(env, PASSWORD);
  await gw.start();
  try {
    await gw.token('integration');
  } finally {
    await stop(gw, signal);
  }
}

const cli = (store: NodeJS.ProcessEnv, args: string[]) => {
  const env: NodeJS.ProcessEnv = { ...process.env, ...store, CARDLINE_MASTER_KEY: masterKey };
  for (const k of ['CARDLINE_ADMIN_URL', 'CARDLINE_OPERATOR_KEY', ...(store.DATABASE_URL ? [] : ['DATABASE_URL'])]) delete env[k];
  return cliInProcess(args, env);
};

/** Audited CLI commands on the store: each one a writer of its own, as each run is a process of its own. */
async function cliCommands(store: NodeJS.ProcessEnv, times: number): Promise<void> {
  for (let i = 0; i < times; i++) {
    const r = await cli(store, ['user', i % 2 === 0 ? 'disable' : 'enable', '--tenant', 'demo', '--username', 'viewer']);
    expect(r.code, r.stderr).toBe(0);
  }
}

describe('audit chains across restarts on the embedded store', () => {
  let dataDir: string;

  beforeAll(async () => {
    dataDir = await createTestDataDir('cardline-chain-restarts-');
  });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  it('four starts (one killed) and four audited CLI commands leave one chain per trail, and the trail verifies', { timeout: 600_000 }, async () => {
    const env = { CARDLINE_DATA_DIR: dataDir, CARDLINE_MASTER_KEY: masterKey };
    await session(env);
    await session(env, 'SIGKILL');
    // The killed process's store lock would go stale in 30 s: removed at once, as staleness would.
    await rm(join(dataDir, 'pglite', 'cardline.lock'), { recursive: true, force: true });
    await cliCommands(env, 2);
    await session(env);
    await session(env);
    await cliCommands(env, 2);

    const db = await openStore(loadConfig({ CARDLINE_DATA_DIR: dataDir, CARDLINE_MASTER_KEY: masterKey, LOG_LEVEL: 'silent' }));
    try {
      const chains = await db.query<{ tenant_id: string; n: number; records: number; held: number }>(
        'SELECT tenant_id, count(*)::int AS n, sum(size)::int AS records, count(holder)::int AS held FROM audit_chains GROUP BY tenant_id ORDER BY tenant_id',
      );
      // Four logins and four CLI changes at least on the demo tenant, in one chain; nothing left held.
      const demo = chains.rows.find((r) => r.tenant_id === 'demo')!;
      expect(demo.records).toBeGreaterThanOrEqual(8);
      expect(chains.rows.map((r) => [r.tenant_id, r.n, r.held])).toEqual(chains.rows.map((r) => [r.tenant_id, 1, 0]));
    } finally {
      await db.close();
    }
    const verified = await cli({ CARDLINE_DATA_DIR: dataDir }, ['audit', 'verify', '--tenant', 'demo']);
    expect({ code: verified.code, stderr: verified.stderr }).toEqual({ code: 0, stderr: '' });
    expect(verified.stdout).toMatch(/^OK: \d+ records in 1 chain, root [0-9a-f]{64}\n$/);
  });
});

describe.skipIf(!PG)('audit chains across restarts, two gateways on PostgreSQL', () => {
  let store: TestDb;
  let steady: GatewayProcess;

  beforeAll(async () => {
    store = await createTestDb();
  });
  afterAll(async () => {
    await steady?.kill();
    await store?.drop();
  });

  it('one gateway runs throughout while another restarts and the CLI runs: two chains, a third only for a killed one, and the trail verifies', { timeout: 600_000 }, async () => {
    const env = { DATABASE_URL: store.url!, CARDLINE_MASTER_KEY: masterKey };
    const demoChains = async () =>
      (await store.db.query<{ n: number }>("SELECT count(*)::int AS n FROM audit_chains WHERE tenant_id = 'demo'")).rows[0]!.n;
    steady = new GatewayProcess(env, PASSWORD);
    await steady.start();
    await steady.token('integration');
    // Beside a live writer: the others open one chain more between them, whichever of them runs.
    for (let i = 0; i < 3; i++) await session(env);
    await cliCommands(env, 3);
    expect(await demoChains()).toBe(2);
    // A killed process holds its chain until the lease runs out: one more, then continued again.
    await session(env, 'SIGKILL');
    await session(env);
    await cliCommands(env, 1);
    await steady.token('integration');
    expect(await demoChains()).toBe(3);
    const verified = await cli({ DATABASE_URL: store.url! }, ['audit', 'verify', '--tenant', 'demo']);
    expect({ code: verified.code, stderr: verified.stderr }).toEqual({ code: 0, stderr: '' });
    expect(verified.stdout).toMatch(/^OK: \d+ records in 3 chains, root [0-9a-f]{64}\n$/);
  });
});
