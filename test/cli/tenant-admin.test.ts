// `cardline tenant create --admin <username>`: the tenant and its first Admin by one management operation, the
// password sent as a JWE to the onboarding key; a refused password leaves no tenant, over the management API and
// on the store alike.
import { rmSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MasterKey } from '../../src/crypto/master-key.js';
import { createTestApp, createTestDataDir, type TestApp } from '../helpers/app.js';
import { cliInProcess, operatorShell } from '../helpers/cli.js';

const PASSWORD = 'West-Bank-Admin-Passw0rd';

let t: TestApp;
let m: FastifyInstance;
let url: string;
let operator: string;
beforeAll(async () => {
  t = await createTestApp();
  m = await t.management();
  url = await m.listen({ host: '127.0.0.1', port: 0 });
  operator = await t.operatorKey('cli-onboarding');
});
afterAll(async () => {
  await t?.close();
});

/** No password from the developer's own shell: a test that gives none sees the prompt's refusal. */
const shell = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => operatorShell(url, operator, { CARDLINE_USER_PASSWORD: undefined, ...extra });
const cli = (args: string[], extra: NodeJS.ProcessEnv = {}) => cliInProcess(args, shell(extra));
const CREATE = ['tenant', 'create', 'west', '--home-country', 'GB', '--time-zone', 'Europe/London', '--max-limit', '250000.00', '--admin', 'root'];

describe('cardline tenant create --admin', () => {
  it('refuses a short password before sending anything, then creates the tenant and its Admin, who logs in', async () => {
    const refused = await cli(CREATE, { CARDLINE_USER_PASSWORD: 'short' });
    expect(refused).toMatchObject({ code: 1, stdout: '', stderr: 'error: A password needs at least 8 characters.\n' });
    expect((await cli(['tenant', 'show', 'west'])).stderr).toBe("error: The management API refused: 404 Not Found: There is no tenant 'west'.\n");

    const created = await cli(CREATE, { CARDLINE_USER_PASSWORD: PASSWORD });
    expect(created.code, created.stderr).toBe(0);
    expect(created.stderr).toBe("Tenant 'west' created with its first Admin 'root'.\n");
    expect(JSON.parse(created.stdout).keys).toHaveLength(1);
    expect((await cli(['user', 'list', '--tenant', 'west'])).stdout).toMatch(/^root +Admin +no +no +-$/m);
    const login = await t.app.inject({
      method: 'POST',
      url: '/api/authenticate',
      headers: { TENANT: 'west' },
      payload: { username: 'root', password: await t.encrypt(PASSWORD, 'west') },
    });
    expect(login.statusCode, login.body).toBe(200);
  });

  it('needs a password for --admin, and --admin for --password-stdin', async () => {
    expect((await cli(CREATE)).stderr).toBe('error: No password for --admin: pipe it in with --password-stdin, or set CARDLINE_USER_PASSWORD.\n');
    expect((await cli(['tenant', 'create', 'nobody', '--password-stdin'])).stderr).toBe(
      'error: --password-stdin reads the password of the Admin --admin names: give --admin too.\n',
    );
    expect((await cli(['tenant', 'create', 'nobody', '--admin', ' root'], { CARDLINE_USER_PASSWORD: PASSWORD })).stderr).toBe(
      'error: --admin must be 1-128 characters, without control characters or surrounding spaces.\n',
    );
  });

  it('does the same on the store, through the same operation run in process', { timeout: 600_000 }, async () => {
    const data = await createTestDataDir('cardline-cli-onboard-');
    const env: NodeJS.ProcessEnv = { ...process.env, CARDLINE_DATA_DIR: data, CARDLINE_MASTER_KEY: MasterKey.generate(), CARDLINE_USER_PASSWORD: PASSWORD };
    for (const k of ['CARDLINE_OPERATOR_KEY', 'DATABASE_URL', 'CARDLINE_ADMIN_URL']) delete env[k];
    try {
      const created = await cliInProcess(['tenant', 'create', 'eastbank', '--admin', 'root'], env);
      expect(created.code, created.stderr).toBe(0);
      expect((await cliInProcess(['user', 'list', '--tenant', 'eastbank'], env)).stdout).toMatch(/^root +Admin +no +no +-$/m);
    } finally {
      rmSync(data, { recursive: true, force: true });
    }
  });
});
