// The command line starts at once (issue 22, decision 0100): `cardline --help` runs the compiled dist/ and
// loads commander and the CLI's own entry, not the schemas, jose or the store; its listing is the one of the
// fully loaded program.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { COMMANDS, createProgram } from '../../src/cli/program.js';
import { MasterKey } from '../../src/crypto/master-key.js';
import { ROOT } from '../helpers/process.js';
import { BUILD_TIMEOUT_MS, ensureBuilt, runProcess } from '../helpers/spawn.js';

/** The module URLs a CLI run loads (fixtures/log-modules.mjs), with its exit code and output. */
async function loadedBy(args: string[], env: NodeJS.ProcessEnv) {
  const dir = mkdtempSync(join(tmpdir(), 'cardline-modules-'));
  try {
    const file = join(dir, 'modules.txt');
    writeFileSync(file, '');
    const r = await runProcess(process.execPath, ['--import', join(ROOT, 'test/cli/fixtures/log-modules.mjs'), join(ROOT, 'bin/cardline.js'), ...args], { cwd: ROOT, env: { ...env, LOG_MODULES_TO: file } });
    return { ...r, modules: readFileSync(file, 'utf8').split('\n').filter(Boolean) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const help = async (argv: string[], all = false) => (await createProgram(['node', 'cardline', ...argv], { all })).helpInformation();

describe('cardline --help', () => {
  beforeAll(ensureBuilt, BUILD_TIMEOUT_MS);

  it('lists every command with the term and summary its module declares', async () => {
    const loaded = await createProgram(['node', 'cardline'], { all: true });
    for (const c of COMMANDS) expect(loaded.commands.find((cmd) => cmd.name() === c.name)?.description(), c.name).toBe(c.summary);
    expect(await help(['--help'])).toBe(await help(['--help'], true));
    expect(await help(['--help'])).toContain("encrypt [options] <value>  Encrypt a value (a password or any field) to a");
  });

  it('a named command is the real one (its own options and subcommands), also through `help <command>`', async () => {
    const tenant = (argv: string[]) => createProgram(['node', 'cardline', ...argv]).then((p) => p.commands.find((c) => c.name() === 'tenant')!);
    for (const argv of [['tenant', 'list'], ['--admin-url', 'http://127.0.0.1:1', 'tenant', 'show', 'acme'], ['help', 'tenant']]) {
      expect((await tenant(argv)).commands.map((c) => c.name()), argv.join(' ')).toContain('create');
    }
    expect((await tenant(['user', 'list'])).commands).toEqual([]);
  });

  it('the binary loads no schema, no jose and nothing of the store or the gateway', async () => {
    const { modules, ...r } = await loadedBy(['--help'], process.env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('Usage: cardline [options] [command]');
    expect(modules).toContain(new URL('dist/src/cli/program.js', `file://${ROOT}/`).href);
    expect(modules.filter((m) => /\/node_modules\/(@sinclair\/typebox|jose|fastify|pino|pg|@electric-sql)\/|\/dist\/(schemas|connectors|src\/(store|services|crypto|plugins))\//.test(m))).toEqual([]);
  });

  it('a store command loads no HTTP client, NATS, Redis or migration runner it does not use, and no document or console', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'cardline-start-'));
    try {
      // The embedded store and no optional service configured (CI's PostgreSQL run sets REDIS_URL and NATS).
      const env: NodeJS.ProcessEnv = { ...process.env, CARDLINE_DATA_DIR: dataDir, CARDLINE_MASTER_KEY: MasterKey.generate() };
      for (const name of ['DATABASE_URL', 'REDIS_URL', 'NATS_URL']) delete env[name];
      const created = await runProcess(process.execPath, [join(ROOT, 'bin/cardline.js'), 'tenant', 'create', 'startup'], { cwd: ROOT, env });
      expect(created.code, created.stderr).toBe(0);
      // The store is migrated now: the next command finds it up to date with one query.
      const { modules, ...r } = await loadedBy(['tenant', 'list'], env);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain('startup');
      expect(modules.some((m) => m.includes('/node_modules/fastify/'))).toBe(true);
      expect(modules.filter((m) => /\/node_modules\/(undici|@nats-io\/[^/]+|ioredis|umzug|@fastify\/swagger|@fastify\/swagger-ui|@fastify\/static)\//.test(m))).toEqual([]);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('`npx cardline` runs the bin linked into node_modules/.bin, without loading the dependency tree (decision 0103)', async () => {
    const pkg = (path: string) => JSON.parse(readFileSync(join(ROOT, path), 'utf8')) as { bin?: Record<string, string>; workspaces?: string[] };
    // A bin on the root package would send npx through a load of the whole tree and a link into its cache.
    expect(pkg('package.json').bin).toBeUndefined();
    expect(pkg('package.json').workspaces).toContain('cli');
    expect(pkg('cli/package.json').bin).toEqual({ cardline: 'cardline.js' });
    const r = await runProcess('npx', ['--no-install', '--loglevel', 'silly', 'cardline', '--help'], { cwd: ROOT, env: process.env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('Usage: cardline [options] [command]');
    // npm logs its tree loads (`shrinkwrap`, `placeDep`, reify): none on the direct path to node_modules/.bin.
    expect(r.stderr).toContain('npm verbose title npm exec cardline --help');
    expect(r.stderr.split('\n').filter((l) => /shrinkwrap|reify|placeDep|_npx/.test(l))).toEqual([]);
  });
});
