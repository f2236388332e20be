// The CLI against a running gateway's management API (--admin-url, CARDLINE_OPERATOR_KEY): operator keys,
// tenants with every configuration field (flags and --config), users; refusals printed as one line with the
// API's words and exit code 1. Then the same commands on the store directly, without --admin-url.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { exportJWK, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MasterKey } from '../../src/crypto/master-key.js';
import { createTestApp, createTestDataDir, type TestApp } from '../helpers/app.js';
import { cliInProcess, operatorShell } from '../helpers/cli.js';

const PASSWORD = 'Remote-Cli-Passw0rd-77';

let t: TestApp;
let m: FastifyInstance;
let url: string;
let operator: string;
let dir: string;

/** An operator's shell: the admin URL and key, nothing that selects a store. */
const shell = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => operatorShell(url, operator, extra);
const cli = (args: string[], extra: NodeJS.ProcessEnv = {}) => cliInProcess(args, shell(extra));
const json = async (args: string[], extra: NodeJS.ProcessEnv = {}) => {
  const r = await cli(args, extra);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Record<string, unknown>;
};

beforeAll(async () => {
  t = await createTestApp();
  m = await t.management();
  url = await m.listen({ host: '127.0.0.1', port: 0 });
  operator = await t.operatorKey('cli-remote');
  dir = mkdtempSync(join(tmpdir(), 'cardline-cli-remote-'));
});
afterAll(async () => {
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('cardline --admin-url', () => {
  it('operator-key create prints a key once; list never shows it; revoke makes the API refuse it', async () => {
    const created = await cli(['operator-key', 'create', '--name', 'ci-bot']);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toMatch(/^clop_[\w-]{40,}\n$/);
    expect(created.stderr).toBe("Operator key 'ci-bot' created. It is shown this once: keep it in your secret store.\n");
    const key = created.stdout.trim();
    const listed = await cli(['operator-key', 'list', '--json']);
    expect(listed.stdout).not.toContain(key);
    expect((JSON.parse(listed.stdout) as { name: string }[]).map((k) => k.name)).toContain('ci-bot');
    // The new key works…
    expect((await cli(['tenant', 'list'], { CARDLINE_OPERATOR_KEY: key })).code).toBe(0);
    expect((await cli(['operator-key', 'revoke', 'ci-bot'])).stdout).toBe("Operator key 'ci-bot' revoked.\n");
    // …and, revoked, is refused with the API's words.
    const refused = await cli(['tenant', 'list'], { CARDLINE_OPERATOR_KEY: key });
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toMatch(/^error: The management API refused: 401 Unauthorized: .+\n$/);
    const twice = await cli(['operator-key', 'create', '--name', 'cli-remote']);
    expect(twice.stderr).toBe(
      "error: The management API refused: 409 Operator Key Exists [OPERATOR_KEY_EXISTS]: An operator key named 'cli-remote' exists; revoke it first or choose another name.\n",
    );
  });

  it('tenant create with flags and --config, show, update (a merge patch), disable and enable', async () => {
    const file = join(dir, 'northbank.json');
    writeFileSync(file, JSON.stringify({ tokenLifetimeSeconds: 900, creditLimit: { maximum: '100000.00' }, timeZone: 'Europe/Lisbon', rateLimit: { perUserPerMinute: 100 } }));
    const created = await json([
      'tenant', 'create', 'northbank', '--name', 'North Bank', '--config', file, '--max-limit', '250000.00', '--sandbox',
      '--require-encrypted-body', 'PUT /v1/cards/upgrade/physical', '--require-encrypted-body', '/v1/cards/*', '--rate-limit-tenant', '6000',
    ]);
    expect((created.keys as { kty: string; use: string }[]).map((k) => [k.kty, k.use])).toEqual([['EC', 'enc']]);
    const shown = await json(['tenant', 'show', 'northbank']);
    expect(shown).toMatchObject({
      id: 'northbank',
      name: 'North Bank',
      status: 'active',
      config: {
        connector: { id: 'mock', options: {} },
        tokenLifetimeSeconds: 900,
        // The flag wins over the file.
        creditLimit: { maximum: '250000.00', allowDecrease: false },
        encryption: { allowPlaintextPassword: false, requireEncryptedBody: ['PUT /v1/cards/upgrade/physical', '/v1/cards/*'] },
        sandbox: true,
        timeZone: 'Europe/Lisbon',
        rateLimit: { perTenantPerMinute: 6000, perUserPerMinute: 100 },
      },
    });

    const patch = join(dir, 'patch.json');
    writeFileSync(patch, JSON.stringify({ rateLimit: { perUserPerMinute: null }, homeCountry: 'ES' }));
    const updated = await json(['tenant', 'update', 'northbank', '--config', patch, '--allow-decrease', '--no-sandbox', '--connector-options', '{"fixtures":"empty"}']);
    expect(updated).toMatchObject({
      name: 'North Bank',
      config: { creditLimit: { maximum: '250000.00', allowDecrease: true }, sandbox: false, homeCountry: 'ES', rateLimit: { perTenantPerMinute: 6000 }, connector: { options: { fixtures: 'empty' } } },
    });
    expect((updated.config as { rateLimit: object }).rateLimit).toEqual({ perTenantPerMinute: 6000 });
    expect((await t.app.cardline.tenants.get('northbank'))!.config.creditLimit.allowDecrease).toBe(true);

    expect((await cli(['tenant', 'disable', 'northbank'])).stdout).toBe("Tenant 'northbank' disabled.\n");
    expect((await t.app.cardline.tenants.get('northbank'))!.status).toBe('disabled');
    expect((await cli(['tenant', 'enable', 'northbank'])).stdout).toBe("Tenant 'northbank' enabled.\n");
    const list = await cli(['tenant', 'list']);
    expect(list.stdout).toMatch(/^northbank +active +mock +North Bank$/m);
    // --search: the gateway searches ids and names, in any case.
    const found = await cli(['tenant', 'list', '--search', 'NORTH B']);
    expect(found.stdout.trim().split('\n').slice(1)).toEqual([expect.stringMatching(/^northbank +active +mock +North Bank$/)]);
    expect(JSON.parse((await cli(['tenant', 'list', '--search', 'no-such-bank', '--json'])).stdout)).toEqual([]);
  });

  it('lists a tenant on several cores by the cores it routes to and the one in shadow, not as ?', async () => {
    const mock = { id: 'mock', options: { fixtures: 'demo' } };
    const file = join(dir, 'spread.json');
    writeFileSync(file, JSON.stringify({ connectors: { processor: mock, old: mock, new: mock }, routing: { default: 'old', operations: { cards: 'processor' } }, shadow: { connector: 'new', operations: ['credit-line'] } }));
    const created = await cli(['tenant', 'create', 'spreadbank', '--name', 'Spread Bank', '--config', file]);
    expect(created.code, created.stderr).toBe(0);
    const list = await cli(['tenant', 'list', '--search', 'spread']);
    expect(list.stdout.trim().split('\n').slice(1)).toEqual([expect.stringMatching(/^spreadbank +active +old=mock, processor=mock \(\+shadow new=mock\) +Spread Bank$/)]);
  });

  it('refuses a configuration the gateway refuses, with its reason, and changes nothing', async () => {
    const bad = await cli(['tenant', 'update', 'northbank', '--time-zone', 'Mars/Olympus']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^error: The management API refused: 400 Bad Request: .*timeZone.*Mars\/Olympus/);
    expect((await t.app.cardline.tenants.get('northbank'))!.config.timeZone).toBe('Europe/Lisbon');
    const unknown = await cli(['tenant', 'show', 'nowhere']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^error: The management API refused: 404 Not Found: .*'nowhere'.*\n$/);
    const nothing = await cli(['tenant', 'update', 'northbank']);
    expect(nothing.stderr).toBe('error: Nothing to change: give --name, --config or a configuration flag (see --help).\n');
    const badFile = await cli(['tenant', 'update', 'northbank', '--config', join(dir, 'missing.json')]);
    expect(badFile.stderr).toBe(`error: Cannot read --config ${join(dir, 'missing.json')}: ENOENT.\n`);
  });

  it('user add (the password a JWE to the tenant key), list, unlock, reset and remove', async () => {
    const add = await cli(['user', 'add', '--tenant', 'northbank', '--username', 'first-admin', '--role', 'Admin'], { CARDLINE_USER_PASSWORD: PASSWORD });
    expect(add.stdout, add.stderr).toBe("User 'first-admin' (Admin) saved on tenant 'northbank'.\n");
    const login = await t.inject({ method: 'POST', url: '/api/authenticate', headers: { TENANT: 'northbank' }, payload: { username: 'first-admin', password: await t.encrypt(PASSWORD, 'northbank') } });
    expect(login.statusCode, login.body).toBe(200);

    await cli(['user', 'add', '--tenant', 'northbank', '--username', 'svc', '--role', 'API Integration'], { CARDLINE_USER_PASSWORD: PASSWORD });
    const users = JSON.parse((await cli(['user', 'list', '--tenant', 'northbank', '--json'])).stdout) as { username: string; role: string }[];
    expect(users.map((u) => [u.username, u.role])).toEqual([['first-admin', 'Admin'], ['svc', 'API Integration']]);
    // Adding an existing user resets it: new role.
    await cli(['user', 'add', '--tenant', 'northbank', '--username', 'svc', '--role', 'Read-Only'], { CARDLINE_USER_PASSWORD: PASSWORD });
    expect((await cli(['user', 'list', '--tenant', 'northbank'])).stdout).toMatch(/^svc +Read-Only +no +no +-$/m);
    expect((await cli(['user', 'unlock', '--tenant', 'northbank', '--username', 'svc'])).stdout).toBe("User 'svc' unlocked on tenant 'northbank'.\n");
    expect((await cli(['user', 'disable', '--tenant', 'northbank', '--username', 'svc'])).stdout).toBe("User 'svc' disabled on tenant 'northbank'.\n");
    expect((await cli(['user', 'list', '--tenant', 'northbank'])).stdout).toMatch(/^svc +Read-Only +yes +no +-$/m);
    expect((await cli(['user', 'enable', '--tenant', 'northbank', '--username', 'svc'])).stdout).toBe("User 'svc' enabled on tenant 'northbank'.\n");
    const reset = await cli(['user', 'reset-password', '--tenant', 'northbank', '--username', 'svc'], { CARDLINE_USER_PASSWORD: `${PASSWORD}-new` });
    expect(reset.stdout, reset.stderr).toBe("Password of 'svc' set on tenant 'northbank'; its tokens are revoked.\n");
    const svcLogin = await t.inject({ method: 'POST', url: '/api/authenticate', headers: { TENANT: 'northbank' }, payload: { username: 'svc', password: await t.encrypt(`${PASSWORD}-new`, 'northbank') } });
    expect(svcLogin.statusCode, svcLogin.body).toBe(200);
    expect((await cli(['user', 'reset-password', '--tenant', 'northbank', '--username', 'svc'], { CARDLINE_USER_PASSWORD: 'short' })).stderr).toBe(
      'error: A password needs at least 8 characters.\n',
    );
    expect((await cli(['user', 'remove', '--tenant', 'northbank', '--username', 'svc'])).stdout).toBe("User 'svc' removed on tenant 'northbank'.\n");
    const last = await cli(['user', 'remove', '--tenant', 'northbank', '--username', 'first-admin']);
    expect(last.stderr).toBe("error: The management API refused: 409 Last Admin [LAST_ADMIN]: 'first-admin' is the tenant's last Admin; make another user Admin first.\n");
  });

  it("keys rotate, retire and register-client run the management API's key operations, audited as the operator", async () => {
    const rotated = await json(['keys', 'rotate', '--tenant', 'northbank', '--use', 'enc']);
    // The default grace, worked out from the tenant as the gateway does: 24 h for an encryption key.
    expect(rotated).toEqual({
      active: { kty: 'EC', crv: 'P-256', x: expect.any(String), y: expect.any(String), kid: expect.any(String), use: 'enc', alg: 'ECDH-ES+A256KW' },
      replaced: [{ kid: expect.any(String), status: 'retiring', retireAt: expect.any(String) }],
      graceSeconds: 86_400,
    });
    const old = (rotated.replaced as { kid: string }[])[0]!.kid;
    expect(await json(['keys', 'retire', '--tenant', 'northbank', '--kid', old])).toMatchObject({ kid: old, use: 'enc', status: 'retired' });
    const active = (rotated.active as { kid: string }).kid;
    expect((await cli(['keys', 'retire', '--tenant', 'northbank', '--kid', active])).stderr).toBe(
      `error: The management API refused: 409 Key Active [KEY_ACTIVE]: Key '${active}' is the tenant's active enc key; rotate the enc keys first, then retire the key the rotation replaced.\n`,
    );

    const { publicKey, privateKey } = await generateKeyPair('ECDH-ES+A256KW', { crv: 'P-256', extractable: true });
    const registered = await json(['keys', 'register-client', '--tenant', 'northbank', '--jwk', JSON.stringify({ ...(await exportJWK(publicKey)), kid: 'nb-client' })]);
    expect(registered).toMatchObject({ jwk: { kid: 'nb-client', use: 'enc' }, registeredAt: expect.any(String) });
    const privateRefused = await cli(['keys', 'register-client', '--tenant', 'northbank', '--jwk', JSON.stringify(await exportJWK(privateKey))]);
    expect(privateRefused.stderr).toMatch(/^error: The client key is not an EC P-256 public JWK for encryption: \/d: a private key was given/);

    const records = await t.db.query<{ action: string; route: string; outcome: string }>(
      "SELECT action, route, outcome FROM audit_log WHERE tenant_id = 'northbank' AND actor = 'cli-remote' AND action IN ('keys.rotate', 'keys.retire', 'client-key.register') ORDER BY seq",
    );
    // The private key never left: one registration, the public one.
    expect(records.rows).toEqual([
      { action: 'keys.rotate', route: '/v1/tenants/:tenantId/keys/rotate', outcome: 'succeeded' },
      { action: 'keys.retire', route: '/v1/tenants/:tenantId/keys/:kid/retire', outcome: 'succeeded' },
      { action: 'keys.retire', route: '/v1/tenants/:tenantId/keys/:kid/retire', outcome: 'refused' },
      { action: 'client-key.register', route: '/v1/tenants/:tenantId/client-key', outcome: 'succeeded' },
    ]);
  });

  it('audit verify asks the running gateway, for a tenant and the platform, and never opens a store', async () => {
    const noStore = join(dir, 'no-store-here');
    for (const trail of ['demo', '_platform']) {
      const r = await cli(['audit', 'verify', '--tenant', trail], { CARDLINE_DATA_DIR: noStore });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/^OK: \d+ records in \d+ chains?, root [0-9a-f]{64}\n$/);
    }
    expect(existsSync(noStore)).toBe(false);
    const unknown = await cli(['audit', 'verify', '--tenant', 'no-such-bank'], { CARDLINE_DATA_DIR: noStore });
    expect(unknown.stderr).toBe("error: The management API refused: 404 Not Found: There is no tenant 'no-such-bank'.\n");
    const checkpoint = await cli(['audit', 'verify', '--tenant', 'demo', '--checkpoint', join(dir, 'cp.json')], { CARDLINE_DATA_DIR: noStore });
    expect(checkpoint.stderr).toBe('error: --checkpoint is checked on the store: run this without --admin-url (and without CARDLINE_ADMIN_URL).\n');
  });

  it('a --config file that is not JSON: the reason and its line and column, nothing of its text, no connector example', async () => {
    const file = join(dir, 'broken-config.json');
    writeFileSync(file, '{"name": "Acme Bank",\n  "secret": "s3cret" 1}\n');
    const r = await cli(['tenant', 'create', 'broken-config', '--config', file]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`error: --config ${file} is not valid JSON: Expected ',' or '}' after property value in JSON at position 43 (line 2, column 22).\n`);
    expect(r.stderr).not.toContain('s3cret');
  });

  it('names what is missing: the operator key, a reachable API, a URL', async () => {
    expect((await cli(['tenant', 'list'], { CARDLINE_OPERATOR_KEY: undefined })).stderr).toBe(
      'error: Set CARDLINE_OPERATOR_KEY to an operator key to use the management API: the one the demo printed, or one an operator with a key creates for you: ' +
        `\`CARDLINE_OPERATOR_KEY=<their key> npx cardline --admin-url ${url} operator-key create --name <name>\`.\n`,
    );
    // A port nobody listens on (taken, then closed).
    const server = createServer();
    const port = await new Promise<number>((r) => server.listen(0, '127.0.0.1', () => r((server.address() as AddressInfo).port)));
    await new Promise((r) => server.close(r));
    const down = await cli(['--admin-url', `http://127.0.0.1:${port}`, 'tenant', 'list']);
    expect(down.code).toBe(1);
    expect(down.stderr).toBe(
      `error: Cannot reach the management API at http://127.0.0.1:${port}/: ECONNREFUSED. Is the gateway running, and is this its CARDLINE_ADMIN_HOST:CARDLINE_ADMIN_PORT?\n`,
    );
    expect((await cli(['--admin-url', 'not a url', 'tenant', 'list'])).stderr).toBe("error: --admin-url must be a URL such as http://127.0.0.1:8081, not 'not a url'.\n");
  });
});

describe('cardline on the store (no --admin-url)', () => {
  it('tenant update/show/disable, user list/remove, operator-key create/list/revoke', { timeout: 600_000 }, async () => {
    const data = await createTestDataDir('cardline-cli-store-');
    const env: NodeJS.ProcessEnv = { ...process.env, CARDLINE_DATA_DIR: data, CARDLINE_MASTER_KEY: MasterKey.generate() };
    delete env.CARDLINE_OPERATOR_KEY;
    delete env.DATABASE_URL;
    delete env.CARDLINE_ADMIN_URL;
    const local = (args: string[], extra: NodeJS.ProcessEnv = {}) => cliInProcess(args, { ...env, ...extra });
    try {
      expect((await local(['tenant', 'create', 'southbank', '--connector-options', '{"fixtures":"demo"}'])).code).toBe(0);
      const updated = await local(['tenant', 'update', 'southbank', '--sandbox', '--max-limit', '5000.00']);
      expect(updated.code, updated.stderr).toBe(0);
      expect(JSON.parse(updated.stdout)).toMatchObject({ id: 'southbank', config: { sandbox: true, creditLimit: { maximum: '5000.00' } } });
      expect(JSON.parse((await local(['tenant', 'show', 'southbank'])).stdout)).toMatchObject({ status: 'active', version: 2 });
      expect((await local(['tenant', 'disable', 'southbank'])).stdout).toBe("Tenant 'southbank' disabled.\n");
      expect(JSON.parse((await local(['tenant', 'show', 'southbank'])).stdout)).toMatchObject({ status: 'disabled' });
      await local(['user', 'add', '--tenant', 'southbank', '--username', 'ops', '--role', 'Operations'], { CARDLINE_USER_PASSWORD: PASSWORD });
      expect((await local(['user', 'list', '--tenant', 'southbank'])).stdout).toMatch(/^ops +Operations +no +no +-$/m);
      expect((await local(['user', 'remove', '--tenant', 'southbank', '--username', 'ops'])).code).toBe(0);
      expect((await local(['user', 'list', '--tenant', 'southbank'])).stdout).toBe('USERNAME  ROLE  DISABLED  LOCKED  LAST LOGIN\n');
      const key = await local(['operator-key', 'create', '--name', 'local-op']);
      expect(key.stdout).toMatch(/^clop_/);
      expect((await local(['operator-key', 'list'])).stdout).toMatch(/^local-op +clop_\S+ +\S+ +- +-$/m);
      expect((await local(['operator-key', 'revoke', 'local-op'])).code).toBe(0);
      expect((await local(['operator-key', 'revoke', 'local-op'])).stderr).toBe("error: No operator key named 'local-op'.\n");
      // The API's own words: the store mode runs the management operation (decision 0198).
      expect((await local(['tenant', 'show', 'nowhere'])).stderr).toBe("error: There is no tenant 'nowhere'.\n");
    } finally {
      rmSync(data, { recursive: true, force: true });
    }
  });
});
