// The `cardline` CLI as an operator runs it: a child process through bin/cardline.js, against a
// temporary PGlite data dir. Onboarding is proven end to end: the gateway built on that store after
// the CLI exits accepts a login with the CLI-made user and a password JWE made by the CLI.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { openStore } from '../../src/bootstrap.js';
import { loadConfig } from '../../src/config.js';
import { MasterKey } from '../../src/crypto/master-key.js';
import { createTestDataDir } from '../helpers/app.js';
import { BUILD_TIMEOUT_MS, ensureBuilt, runProcess, type Run } from '../helpers/spawn.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIN = join(ROOT, 'bin', 'cardline.js');
const PASSWORD = 'cli-made-password-1';
const COMPACT_JWE = /^[\w-]+\.[\w-]+\.[\w-]+\.[\w-]+\.[\w-]+\n$/;

let dataDir: string;
let emptyDir: string;
const masterKey = MasterKey.generate();

/** The environment of an operator's shell: this test's store and key, nothing inherited that selects another. */
function env(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const e: NodeJS.ProcessEnv = { ...process.env, CARDLINE_DATA_DIR: dataDir, CARDLINE_MASTER_KEY: masterKey, ...extra };
  delete e.DATABASE_URL;
  delete e.CARDLINE_USER_PASSWORD;
  for (const [k, v] of Object.entries(extra)) if (v === undefined) delete e[k];
  return e;
}

function cli(args: string[], opts: { input?: string; env?: NodeJS.ProcessEnv } = {}): Promise<Run> {
  return runProcess(process.execPath, [BIN, ...args], { cwd: ROOT, env: opts.env ?? env(), ...(opts.input !== undefined ? { input: opts.input } : {}) });
}

/** A failure as the CLI must report it: exit code 1 and one line on stderr, without a stack trace. */
function expectCleanFailure(run: Run, message: string | RegExp): void {
  expect(run.code, run.stderr).toBe(1);
  expect(run.stdout).toBe('');
  expect(run.stderr).toMatch(message);
  expect(run.stderr.trim().split('\n')).toHaveLength(1);
  expect(run.stderr).not.toMatch(/^\s+at /m);
}

beforeAll(ensureBuilt, BUILD_TIMEOUT_MS);
beforeAll(async () => {
  dataDir = await createTestDataDir('cardline-cli-');
  emptyDir = await mkdtemp(join(tmpdir(), 'cardline-cli-empty-'));
});
afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
  await rm(emptyDir, { recursive: true, force: true });
});

describe('cardline CLI', () => {
  it('onboards a tenant and a user whose CLI-encrypted password logs in to the gateway', { timeout: 600_000 }, async () => {
    const created = await cli(['tenant', 'create', 'acme', '--name', 'Acme Bank', '--max-limit', '250000.00']);
    expect(created.code, created.stderr).toBe(0);
    const jwks = JSON.parse(created.stdout) as { keys: Record<string, string>[] };
    expect(jwks.keys).toHaveLength(1);
    const encKey = jwks.keys[0]!;
    expect(encKey).toMatchObject({ kty: 'EC', crv: 'P-256', use: 'enc', alg: 'ECDH-ES+A256KW' });
    expect(encKey).not.toHaveProperty('d');

    const added = await cli(['user', 'add', '--tenant', 'acme', '--username', 'alice', '--role', 'API Integration', '--password-stdin'], {
      input: PASSWORD + '\n',
    });
    expect(added.code, added.stderr).toBe(0);

    const encrypted = await cli(['encrypt', '-', '--tenant', 'acme', '--store'], { input: PASSWORD });
    expect(encrypted.code, encrypted.stderr).toBe(0);
    expect(encrypted.stdout).toMatch(COMPACT_JWE);
    const header = JSON.parse(Buffer.from(encrypted.stdout.split('.')[0]!, 'base64url').toString()) as Record<string, unknown>;
    expect(header).toMatchObject({ alg: 'ECDH-ES+A256KW', enc: 'A256GCM', kid: encKey.kid });
    expect(typeof header.iat).toBe('number');
    expect(typeof header.jti).toBe('string');

    const exported = await cli(['keys', 'export', '--tenant', 'acme']);
    expect(exported.code, exported.stderr).toBe(0);
    const all = (JSON.parse(exported.stdout) as { keys: Record<string, string>[] }).keys;
    expect(all.map((k) => k.use)).toEqual(['enc', 'sig']);
    expect(all[0]).toEqual(encKey);
    expect(all[1]).toMatchObject({ alg: 'ES256' });
    expect(all.some((k) => 'd' in k)).toBe(false);

    // The gateway, on the store the CLI wrote (the CLI has exited: PGlite is single-process).
    const config = loadConfig({ CARDLINE_DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
    const app: FastifyInstance = await buildApp({ config, db: await openStore(config), masterKey });
    try {
      const login = (password: string) =>
        app.inject({ method: 'POST', url: '/api/authenticate', headers: { TENANT: 'acme' }, payload: { username: 'alice', password } });
      const res = await login(encrypted.stdout.trim());
      expect(res.statusCode, res.body).toBe(200);
      const claims = JSON.parse(Buffer.from(res.json<{ id_token: string }>().id_token.split('.')[1]!, 'base64url').toString());
      expect(claims).toMatchObject({ sub: expect.any(String), tenant: 'acme', role: 'API Integration' });

      await app.listen({ port: 0, host: '127.0.0.1' });
      const address = app.server.address();
      const gateway = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
      const [viaGateway, unknownTenant, heldStore] = await Promise.all([
        cli(['encrypt', '-', '--tenant', 'acme', '--gateway', gateway + '/'], { input: PASSWORD }),
        cli(['encrypt', 'x', '--tenant', 'nobody', '--gateway', gateway]),
        // The running gateway holds the PGlite dir: a store command must refuse rather than corrupt it.
        cli(['tenant', 'list']),
      ]);
      expect(viaGateway.code, viaGateway.stderr).toBe(0);
      expect(viaGateway.stdout).toMatch(COMPACT_JWE);
      const again = await login(viaGateway.stdout.trim());
      expect(again.statusCode, again.body).toBe(200);
      expectCleanFailure(unknownTenant, /^error: The gateway answered 400 to GET \/api\/keys for tenant 'nobody'/);
      // The holder named by its pid (this test's process holds the store), and the way in while it runs.
      expectCleanFailure(heldStore, new RegExp(`in use by another Cardline process \\(pid ${process.pid}, a gateway or a CLI command\\)\\. While the gateway runs, call its management API instead: \`CARDLINE_OPERATOR_KEY=<operator key> npx cardline --admin-url http://127\\.0\\.0\\.1:8081 <command>\``));
    } finally {
      await app.close();
    }

    const [listed, duplicate] = [await cli(['tenant', 'list']), await cli(['tenant', 'create', 'acme'])];
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(/^ID\s+STATUS\s+CONNECTOR\s+NAME\nacme\s+active\s+mock\s+Acme Bank\n$/);
    expectCleanFailure(duplicate, "error: Tenant 'acme' already exists.");
  });

  it('answers bad input with one line on stderr and exit code 1', async () => {
    const [role, noMasterKey, badId, noPassword, noSource, masterKeyRun] = await Promise.all([
      cli(['user', 'add', '--tenant', 'acme', '--username', 'bob', '--role', 'Boss'], { env: env({ CARDLINE_USER_PASSWORD: PASSWORD }) }),
      cli(['keys', 'export', '--tenant', 'acme'], { env: env({ CARDLINE_DATA_DIR: emptyDir, CARDLINE_MASTER_KEY: undefined }) }),
      cli(['tenant', 'create', 'Not_Valid']),
      cli(['user', 'add', '--tenant', 'acme', '--username', 'bob', '--role', 'Admin']),
      cli(['encrypt', 'x', '--tenant', 'acme']),
      cli(['master-key']),
    ]);
    expectCleanFailure(role, /argument 'Boss' is invalid\. Allowed choices are Admin, Operations, API Integration, Read-Only/);
    expectCleanFailure(noMasterKey, /^error: CARDLINE_MASTER_KEY is not set\. Generate one with `npx cardline master-key`/);
    expectCleanFailure(badId, /'Not_Valid' is not a tenant id/);
    expectCleanFailure(noPassword, /No password: pipe it in with --password-stdin, or set CARDLINE_USER_PASSWORD/);
    expectCleanFailure(noSource, /--gateway <url> or --store/);
    expect(masterKeyRun.code).toBe(0);
    expect(masterKeyRun.stdout).toMatch(/^[A-Za-z0-9_-]{43}\n$/);
    expect(() => new MasterKey(masterKeyRun.stdout.trim())).not.toThrow();
  });

  it('refuses a master key other than the store\'s at every store command, before changing anything', async () => {
    const wrong = env({ CARDLINE_MASTER_KEY: MasterKey.generate() });
    const message = /^error: The master key does not open the keys in this store \(tenant 'acme', key [\w-]+\): it is not the key the store was created with\. Set CARDLINE_MASTER_KEY to that key/;
    expectCleanFailure(await cli(['tenant', 'create', 'other-bank'], { env: wrong }), message);
    expectCleanFailure(await cli(['tenant', 'list'], { env: wrong }), message);
    // Nothing was created under the wrong key.
    const listed = await cli(['tenant', 'list']);
    expect(listed.stdout).not.toContain('other-bank');
  });
});
