// The real process (`node bin/gateway.js --demo`, as `npm run demo` runs it): start-up, security headers, a request
// served through SIGTERM, refusals to start with bad configuration, and a scan of everything it printed.
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encryptCompact } from '../../src/crypto/jwe.js';
import { MasterKey } from '../../src/crypto/master-key.js';
import { LIMIT_URL, UPGRADE_URL, createTestDataDir } from '../helpers/app.js';
import { scanForSecrets } from '../helpers/log-scan.js';
import { baseEnv, freePort, kill, sleep, start, waitReady, within, type Proc } from '../helpers/process.js';
import { BUILD_TIMEOUT_MS, ensureBuilt } from '../helpers/spawn.js';

// The gateway processes run the compiled dist/ (helpers/process.ts): built, if stale, once before them.
beforeAll(ensureBuilt, BUILD_TIMEOUT_MS);

const PASSWORD = 'Proc3ss-Scan-Passw0rd-9d41';
const TEST_PAN = '4111111111111111';
const STACK_FRAME = /\n\s+at .+[:(]/;

describe('the demo process', () => {
  let dataDir: string;
  let proc: Proc;
  let base: string;
  let port: number;
  let adminPort: number;
  let token: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'cardline-process-'));
    port = await freePort();
    adminPort = await freePort();
    base = `http://127.0.0.1:${port}`;
    // No HOST: the demo must listen on loopback by default (its password and PIN keys are published).
    proc = start(['--demo'], baseEnv({
      PORT: String(port),
      CARDLINE_DATA_DIR: dataDir,
      CARDLINE_DEMO_PASSWORD: PASSWORD,
      CARDLINE_ADMIN_PORT: String(adminPort),
      LOG_LEVEL: 'info',
    }));
    await waitReady(base, proc);
  }, 300_000);

  afterAll(async () => {
    await kill(proc);
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  const encryptPassword = async (password: string) => {
    const keys = (await (await fetch(`${base}/api/keys`, { headers: { TENANT: 'demo' } })).json()) as { keys: Parameters<typeof encryptCompact>[1][] };
    return encryptCompact(password, keys.keys[0]!);
  };

  const post = (url: string, body: unknown, headers: Record<string, string> = {}, method = 'POST') =>
    fetch(`${base}${url}`, { method, headers: { TENANT: 'demo', 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

  // Log lines are written asynchronously (flushed every 100 ms): they may follow the readiness answer.
  it('listens on loopback only when HOST is not set', async () => {
    await expect.poll(() => proc.output()).toContain(`"msg":"Server listening at http://127.0.0.1:${port}"`);
    expect(proc.output()).not.toContain('0.0.0.0');
  });

  it('listens on the management port before the public API, so that both answer once it is ready', async () => {
    await expect.poll(() => proc.output()).toContain(`"msg":"Server listening at http://127.0.0.1:${port}"`);
    const management = proc.output().indexOf(`"msg":"Server listening at http://127.0.0.1:${adminPort}"`);
    expect(management).toBeGreaterThanOrEqual(0);
    expect(management).toBeLessThan(proc.output().indexOf(`"msg":"Server listening at http://127.0.0.1:${port}"`));
  });

  it('says which address is the public API and which the management listener, and where the console and /docs are', async () => {
    await expect.poll(() => proc.output()).toContain('Cardline demo ready.');
    const banner = proc.output().slice(proc.output().indexOf('Cardline demo ready.'));
    expect(banner).toMatch(new RegExp(`Public API \\(the banks' calls, tenant header and token\\) +http://127\\.0\\.0\\.1:${port}\\n`));
    expect(banner).toMatch(new RegExp(`API reference +http://127\\.0\\.0\\.1:${port}/docs\\n`));
    expect(banner).toMatch(new RegExp(`Management listener \\(operators, operator key\\) +http://127\\.0\\.0\\.1:${adminPort}\\n`));
    expect(banner).toMatch(new RegExp(`Console +http://127\\.0\\.0\\.1:${adminPort}/console/\\n`));
    expect(banner).toMatch(new RegExp(`Management API reference +http://127\\.0\\.0\\.1:${adminPort}/docs\\n`));
    for (const url of [`${base}/docs/`, `http://127.0.0.1:${adminPort}/console/`, `http://127.0.0.1:${adminPort}/docs/`]) expect((await fetch(url)).status, url).toBe(200);
  });

  it('announces the demo tenants without printing the password', () => {
    expect(proc.output()).toContain("Demo tenants 'demo' and 'demo-b' created");
    expect(proc.output()).toContain('Their password is CARDLINE_DEMO_PASSWORD.');
  });

  it('prints a random operator key once, which the management listener (loopback) accepts', async () => {
    const printed = /Demo operator key 'demo' \(shown only now\): (clop_[\w-]{43})/.exec(proc.output());
    expect(printed).not.toBeNull();
    const admin = `http://127.0.0.1:${adminPort}`;
    const ok = await fetch(`${admin}/v1/tenants`, { headers: { authorization: `Bearer ${printed![1]}` } });
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { result: { id: string }[] }).result.map((t) => t.id)).toEqual(['demo', 'demo-b']);
    expect((await fetch(`${admin}/v1/tenants`)).status).toBe(401);
    // The public listener does not serve the management API.
    expect((await fetch(`${base}/v1/tenants`, { headers: { authorization: `Bearer ${printed![1]}` } })).status).toBe(404);
  });

  it('sends the security headers of a JSON API (helmet), and no-store', async () => {
    const res = await fetch(`${base}/health/live`);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('strict-transport-security')).toMatch(/max-age=\d+/);
    expect(res.headers.get('content-security-policy')).toBe("default-src 'none';frame-ancestors 'none'");
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.headers.get('cache-control')).toBe('no-store');
    // Browser-document policies are left out on purpose (src/app.ts).
    expect(res.headers.get('cross-origin-opener-policy')).toBeNull();
    expect(res.headers.get('x-powered-by')).toBeNull();
  });

  it('authenticates, changes a limit and upgrades a card; refusals answer in their dialect', async () => {
    const login = await post('/api/authenticate', { username: 'integration', password: await encryptPassword(PASSWORD) });
    expect(login.status).toBe(200);
    token = ((await login.json()) as { id_token: string }).id_token;
    const auth = { authorization: `Bearer ${token}` };

    const limit = await post(LIMIT_URL, { entityId: 'ENT-1001', amount: '60000.00' }, auth);
    expect(limit.status).toBe(200);
    expect(await limit.json()).toEqual({ result: true, exception: null, pagination: null });

    const card = await post(
      UPGRADE_URL,
      {
        kitNo: 'KIT-2002',
        entityId: 'ENT-1002',
        communicationAddress: {
          address1: '12 Rua Augusta',
          address2: `Ref ${TEST_PAN}`,
          city: 'Lisbon',
          state: 'Lisboa',
          country: 'PT',
          pin: '1100-053',
        },
      },
      auth,
      'PUT',
    );
    expect(card.status).toBe(200);

    // Failing requests: wrong password, plaintext password, forged token, unknown kit, invalid body.
    expect((await post('/api/authenticate', { username: 'integration', password: await encryptPassword(`${PASSWORD}-wrong`) })).status).toBe(401);
    expect((await post('/api/authenticate', { username: 'admin', password: PASSWORD })).status).toBe(400);
    const forged = `${token.split('.').slice(0, 2).join('.')}.AAAA`;
    expect((await post(LIMIT_URL, { entityId: 'ENT-1001', amount: '1.00' }, { authorization: `Bearer ${forged}` })).status).toBe(401);
    expect((await post(UPGRADE_URL, { kitNo: TEST_PAN, entityId: 'ENT-1003' }, auth, 'PUT')).status).toBe(409);
    expect((await post(LIMIT_URL, { entityId: 'ENT-1001', amount: TEST_PAN + '.999' }, auth)).status).toBe(400);
  });

  it('finishes a request in flight on SIGTERM, then exits 0', async () => {
    const body = JSON.stringify({ username: 'integration', password: await encryptPassword(PASSWORD) });
    const agent = new http.Agent({ keepAlive: true });
    const req = http.request({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/api/authenticate',
      agent,
      headers: { TENANT: 'demo', 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    });
    const response = new Promise<{ status: number; body: string }>((res, rej) => {
      req.on('response', (r) => {
        let text = '';
        r.setEncoding('utf8').on('data', (d: string) => (text += d)).on('end', () => res({ status: r.statusCode ?? 0, body: text }));
      });
      req.on('error', rej);
    });
    // Headers and the first bytes of the body are sent, so the server is handling the request...
    req.write(body.slice(0, 16));
    await sleep(500);
    // ...when SIGTERM arrives; the rest of the body follows.
    proc.child.kill('SIGTERM');
    await sleep(300);
    req.end(body.slice(16));

    const res = await within(response, 150_000, 'in-flight response');
    expect(res.status).toBe(200);
    expect(Object.keys(JSON.parse(res.body) as object)).toEqual(['id_token']);
    // A clean exit (code 0) is the proof: a shutdown that had to be forced would not end so.
    const exit = await within(proc.exited, 150_000, 'process exit after SIGTERM');
    agent.destroy();
    expect(exit).toEqual({ code: 0, signal: null });
    expect(proc.output()).toContain('shutting down');
  }, 180_000);

  it('printed no secret: no card number, token, JWE, bearer header or password', async () => {
    await proc.exited;
    const output = proc.output();
    expect(output).toContain('request completed'); // the scan below read real log lines
    expect((output.match(/"msg":"request completed"/g) ?? []).length).toBeGreaterThanOrEqual(8);
    expect(scanForSecrets(output, [PASSWORD, token])).toEqual([]);
  });
});

describe('restarting the demo on a store it seeded', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await createTestDataDir('cardline-restart-');
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  /** Starts the demo on the data dir, waits until ready and runs fn; stops it with SIGTERM. */
  async function demo(env: Record<string, string>, fn: (base: string, output: () => string, proc: Proc) => Promise<void>, args = ['--demo']): Promise<void> {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const p = start(args, baseEnv({ PORT: String(port), CARDLINE_DATA_DIR: dataDir, LOG_LEVEL: 'warn', ...env }));
    try {
      await waitReady(base, p);
      await fn(base, p.output, p);
    } finally {
      p.child.kill('SIGTERM');
      await within(p.exited, 150_000, 'exit after SIGTERM');
    }
  }

  const login = async (base: string, password: string) => {
    const keys = (await (await fetch(`${base}/api/keys`, { headers: { TENANT: 'demo' } })).json()) as { keys: Parameters<typeof encryptCompact>[1][] };
    const res = await fetch(`${base}/api/authenticate`, {
      method: 'POST',
      headers: { TENANT: 'demo', 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'integration', password: await encryptCompact(password, keys.keys[0]!) }),
    });
    return res.status;
  };

  it('CARDLINE_DEMO_PASSWORD given at a restart becomes the demo users\' password, and the terminal says so', async () => {
    let first = '';
    await demo({}, async (base, output) => {
      first = /Their password \(shown only now\): (\S+)/.exec(output())?.[1] ?? '';
      expect(first).not.toBe('');
      expect(await login(base, first)).toBe(200);
    });
    await demo({}, async (base, output) => {
      expect(output()).toContain('Demo tenants already exist: their users keep the password they were given when the store was seeded');
      expect(output()).not.toContain(first);
      expect(await login(base, first)).toBe(200);
    });
    await demo({ CARDLINE_DEMO_PASSWORD: 'demo-password-1' }, async (base, output) => {
      expect(output()).toContain(
        'Demo tenants already exist (demo, demo-b): the password of users admin, ops, integration, viewer is now CARDLINE_DEMO_PASSWORD.',
      );
      expect(output()).not.toContain('demo-password-1');
      expect(await login(base, 'demo-password-1')).toBe(200);
      expect(await login(base, first)).toBe(401);
    });
  }, 300_000);

  it('a demo whose operator key was revoked starts again, and the key stays revoked (issue 20, point 4)', async () => {
    const key = 'clop_demo-restart-revoked-operator-key';
    const withKey = (adminPort: number) => ({ CARDLINE_DEMO_OPERATOR_KEY: key, CARDLINE_ADMIN_PORT: String(adminPort) });
    let adminPort = await freePort();
    await demo(withKey(adminPort), async (_base, output, proc) => {
      const admin = `http://127.0.0.1:${adminPort}`;
      await waitReady(admin, proc, 180_000, '/health/live');
      expect(output()).toContain("Demo operator key 'demo' is CARDLINE_DEMO_OPERATOR_KEY.");
      const revoked = await fetch(`${admin}/v1/operator-keys/demo`, { method: 'DELETE', headers: { authorization: `Bearer ${key}` } });
      expect(revoked.status).toBe(200);
    });
    // The same store, the same key: it starts (it used to stop on SQLSTATE 23505 and restart in a loop).
    adminPort = await freePort();
    await demo(withKey(adminPort), async (_base, output, proc) => {
      const admin = `http://127.0.0.1:${adminPort}`;
      await waitReady(admin, proc, 180_000, '/health/live');
      expect(output()).toContain('CARDLINE_DEMO_OPERATOR_KEY was revoked and stays revoked: the management API refuses it.');
      expect((await fetch(`${admin}/v1/operator-keys`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(401);
      expect(output()).not.toContain('SQLSTATE');
    });
  }, 400_000);

  it('another master key than the store\'s: exit 1 with a message naming CARDLINE_MASTER_KEY, no stack trace', async () => {
    const p = start([], baseEnv({ CARDLINE_DATA_DIR: dataDir, PORT: String(await freePort()), CARDLINE_MASTER_KEY: MasterKey.generate() }));
    const exit = await within(p.exited, 150_000, 'exit');
    expect(exit.code).toBe(1);
    expect(p.output()).toContain("The master key does not open the keys in this store (tenant 'demo");
    expect(p.output()).toContain('Set CARDLINE_MASTER_KEY to that key');
    expect(p.output()).not.toMatch(STACK_FRAME);
  }, 180_000);
});

describe('refusing to start', () => {
  let dataDir: string;
  // A store already migrated (the run's template): a start that fails at the HSM does not first spend seconds creating one.
  beforeAll(async () => {
    dataDir = await createTestDataDir('cardline-refusing-');
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('without CARDLINE_MASTER_KEY outside demo mode: exit 1, names the variable, no stack trace', async () => {
    const p = start([], baseEnv({ CARDLINE_DATA_DIR: dataDir, PORT: String(await freePort()), HOST: '127.0.0.1' }));
    const exit = await within(p.exited, 150_000, 'exit');
    expect(exit.code).toBe(1);
    expect(p.output()).toContain('CARDLINE_MASTER_KEY');
    expect(p.output()).not.toMatch(STACK_FRAME);
  }, 180_000);

  // A start that really fails says what was being started and why (issue 22).
  it('with a store that does not answer: exit 1, names the step and the reason, no stack trace', async () => {
    const closed = await freePort();
    const p = start([], baseEnv({ DATABASE_URL: `postgres://cardline@127.0.0.1:${closed}/cardline`, CARDLINE_MASTER_KEY: MasterKey.generate(), PORT: String(await freePort()) }));
    const exit = await within(p.exited, 150_000, 'exit');
    expect(exit.code).toBe(1);
    expect(p.output()).toContain(
      `Cardline failed to start while starting the gateway's services (store migrations, master key check, connectors, HSM, Redis when configured): connect ECONNREFUSED 127.0.0.1:${closed}`,
    );
    expect(p.output()).not.toMatch(STACK_FRAME);
  }, 180_000);

  it('with a plugin that fails at start (a PKCS#11 library that is not there): exit 1, names the step and the reason', async () => {
    const p = start(['--demo'], baseEnv({
      CARDLINE_DATA_DIR: dataDir,
      PORT: String(await freePort()),
      CARDLINE_HSM: 'pkcs11',
      CARDLINE_PKCS11_LIBRARY: join(dataDir, 'no-such-pkcs11.so'),
      CARDLINE_PKCS11_TOKEN_LABEL: 'cardline',
      CARDLINE_PKCS11_PIN: '1234',
    }));
    const exit = await within(p.exited, 150_000, 'exit');
    expect(exit.code).toBe(1);
    expect(p.output()).toContain("Cardline failed to start while starting the gateway's services (store migrations, master key check, connectors, HSM, Redis when configured): PIN HSM: The PKCS#11 library");
    expect(p.output()).toContain('no-such-pkcs11.so');
    expect(p.output()).not.toMatch(STACK_FRAME);
  }, 180_000);

  it('with PORT=abc: exit 1, names PORT, no stack trace', async () => {
    const p = start(['--demo'], baseEnv({ CARDLINE_DATA_DIR: dataDir, PORT: 'abc' }));
    const exit = await within(p.exited, 150_000, 'exit');
    expect(exit.code).toBe(1);
    expect(p.output()).toMatch(/\bPORT\b/);
    expect(p.output()).not.toMatch(STACK_FRAME);
  }, 180_000);
});

describe('shutting down with a connection that carries no request', () => {
  it('closes a connection whose request headers never completed, and exits 0 within the grace period', async () => {
    const dataDir = await createTestDataDir('cardline-half-request-');
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    // A grace period shorter than the server's headers timeout (10 s): a shutdown that waited for that
    // connection would be forced, and exit 1.
    const proc = start(['--demo'], baseEnv({ PORT: String(port), CARDLINE_ADMIN_PORT: String(await freePort()), CARDLINE_DATA_DIR: dataDir, CARDLINE_SHUTDOWN_GRACE_MS: '3000', LOG_LEVEL: 'info' }));
    try {
      await waitReady(base, proc);
      const { connect } = await import('node:net');
      const socket = connect(port, '127.0.0.1');
      const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
      socket.on('error', () => undefined);
      await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
      // Half a request: the request line and one header, never the blank line that ends the headers.
      socket.write('POST /api/authenticate HTTP/1.1\r\nHost: 127.0.0.1\r\n');
      proc.child.kill('SIGTERM');
      const exit = await within(proc.exited, 150_000, 'process exit after SIGTERM');
      await closed;
      expect(exit).toEqual({ code: 0, signal: null });
      expect(proc.output()).toContain('shutting down');
      expect(proc.output()).not.toContain('graceful shutdown timed out');
    } finally {
      await kill(proc);
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 300_000);
});
