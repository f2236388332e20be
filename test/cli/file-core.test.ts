// A tenant on the file connector as docs/connectors.md onboards it (`cardline tenant create … --connector file`),
// served by the gateway, then `cardline file-core export|import`: clean JSON on stdout that parses, card
// numbers opened with the tenant's secrets, sealed again on import; one-line failures. The CLI runs in this
// process (helpers/cli.ts): test/cli/cli.test.ts is the one that runs it as a child process.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SNAPSHOT_FILE } from '../../connectors/file/store.js';
import { demoFixtures, type MockCoreSnapshot } from '../../connectors/mock/fixtures.js';
import { buildApp } from '../../src/app.js';
import { openStore } from '../../src/bootstrap.js';
import { loadConfig } from '../../src/config.js';
import { MasterKey } from '../../src/crypto/master-key.js';
import { createTestDataDir } from '../helpers/app.js';
import { cliInProcess, type CliRun as Run } from '../helpers/cli.js';
import { findPans } from '../helpers/log-scan.js';

const masterKey = MasterKey.generate();
let dataDir: string;
let cores: string;

function cli(args: string[], extraEnv: NodeJS.ProcessEnv = {}): Promise<Run> {
  const env: NodeJS.ProcessEnv = { ...process.env, CARDLINE_DATA_DIR: dataDir, CARDLINE_MASTER_KEY: masterKey, ...extraEnv };
  delete env.DATABASE_URL;
  return cliInProcess(args, env);
}

beforeAll(async () => {
  dataDir = await createTestDataDir('cardline-file-cli-');
  cores = await mkdtemp(join(tmpdir(), 'cardline-file-cores-'));
});
afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
  await rm(cores, { recursive: true, force: true });
});

describe('a tenant on the file connector, and its state in and out', () => {
  it('onboards, serves, exports clean JSON, imports, and keeps card data sealed on disk', { timeout: 600_000 }, async () => {
    const dir = join(cores, 'acme-files');
    const created = await cli([
      'tenant', 'create', 'acme-files', '--name', 'Acme (file core)',
      '--connector', 'file', '--connector-options', JSON.stringify({ dir, fixtures: 'demo' }),
    ]);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stderr).toBe("Tenant 'acme-files' created.\n");

    // The gateway opens the tenant's file core at boot (writing its first snapshot) and serves it.
    const config = loadConfig({ CARDLINE_DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
    const app = await buildApp({ config, db: await openStore(config), masterKey });
    try {
      const ready = await app.inject({ method: 'GET', url: '/health/ready' });
      expect(ready.json()).toMatchObject({ status: 'ready', degraded: [] });
    } finally {
      await app.close();
    }
    const onDisk = await readFile(join(dir, SNAPSHOT_FILE), 'utf8');
    expect(findPans(onDisk)).toEqual([]);

    const exported = await cli(['file-core', 'export', '--tenant', 'acme-files', '--dir', dir]);
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.stderr).toBe('');
    const fixtures = JSON.parse(exported.stdout) as MockCoreSnapshot;
    const demo = [...demoFixtures().cards.values()];
    expect(fixtures.cards.map((c) => [c.cardId, c.pan, c.cvv])).toEqual(demo.map((c) => [c.cardId, c.pan, c.cvv]));

    const file = join(cores, 'acme-fixtures.json');
    await writeFile(file, exported.stdout);
    const copy = join(cores, 'acme-copy');
    const imported = await cli(['file-core', 'import', '--tenant', 'acme-files', '--dir', copy, '--from', file]);
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stderr).toBe(`imported ${file} into ${copy}\n`);
    expect(findPans(await readFile(join(copy, SNAPSHOT_FILE), 'utf8'))).toEqual([]);
    const again = await cli(['file-core', 'export', '--tenant', 'acme-files', '--dir', copy]);
    expect(JSON.parse(again.stdout)).toEqual(fixtures);
  });

  it('fails in one line: another tenant id, another master key, no state, fixtures that are not JSON', async () => {
    const dir = join(cores, 'acme-files');
    const oneLine = (r: Run, message: RegExp) => {
      expect(r.code).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(message);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
    };
    const sealedElsewhere = /^error: File core directory .+: the card data in snapshot\.json was sealed under another key\./;
    oneLine(await cli(['file-core', 'export', '--tenant', 'other-bank', '--dir', dir]), sealedElsewhere);
    oneLine(await cli(['file-core', 'export', '--tenant', 'acme-files', '--dir', dir], { CARDLINE_MASTER_KEY: MasterKey.generate() }), sealedElsewhere);
    oneLine(await cli(['file-core', 'export', '--tenant', 'acme-files', '--dir', join(cores, 'nothing-here')]), /holds no file-core state/);
    const notJson = join(cores, 'not.json');
    await writeFile(notJson, 'nope');
    oneLine(await cli(['file-core', 'import', '--tenant', 'acme-files', '--dir', join(cores, 'x'), '--from', notJson]), /^error: .*not\.json is not readable JSON/);
  }, 180_000);
});
