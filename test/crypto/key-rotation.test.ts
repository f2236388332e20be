// Gateway key rotation: a new kid becomes active, the old one is retiring (still accepted and published)
// until its grace ends, then retired (refused, unpublished). The end of a grace is simulated by moving the
// old key's retire_at into the past, which is what the passing of time does.
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeProtectedHeader, exportJWK, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/bootstrap.js';
import { loadConfig } from '../../src/config.js';
import { encryptCompact } from '../../src/crypto/jwe.js';
import type { PublicJwk } from '../../src/crypto/keys.js';
import { KeyLifecycleError, KeyRing } from '../../src/services/identity/key-ring.js';
import { MasterKey } from '../../src/crypto/master-key.js';
import { createTenant } from '../../src/services/tenancy/onboarding.js';
import { TenantService } from '../../src/services/tenancy/tenants.js';
import { UserService } from '../../src/services/identity/users.js';
import { migrate } from '../../src/store/migrate.js';
import { cliInProcess as runCli } from '../helpers/cli.js';
import { PASSWORD, PROBLEM_BASE, createTestApp, createTestDataDir, type TestApp } from '../helpers/app.js';
import { BUILD_TIMEOUT_MS, ensureBuilt, runProcess } from '../helpers/spawn.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const GENERIC_400 = {
  type: `${PROBLEM_BASE}/problem-with-message`,
  title: 'Bad Request',
  status: 400,
  message: 'error.http.400',
  detail: 'The encrypted payload could not be processed.',
};

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const encKeys = async (tenant = 'demo') =>
  (await t.inject({ method: 'GET', url: '/api/keys', headers: { TENANT: tenant } })).json().keys as PublicJwk[];
const jwksKids = async () =>
  ((await t.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json().keys as PublicJwk[]).map((k) => k.kid);

const login = async (password: string, username = 'admin') =>
  t.inject({ method: 'POST', url: '/api/authenticate', headers: { TENANT: 'demo' }, payload: { username, password } });

async function adminToken(): Promise<string> {
  const res = await login(await encryptCompact(PASSWORD, (await encKeys())[0]!));
  expect(res.statusCode, res.body).toBe(200);
  return res.json().id_token as string;
}

async function rotate(use: 'enc' | 'sig', graceSeconds?: number) {
  return t.inject({
    method: 'POST',
    url: '/v1/admin/keys/rotate',
    headers: { TENANT: 'demo', authorization: `Bearer ${await adminToken()}` },
    payload: graceSeconds === undefined ? { use } : { use, graceSeconds },
  });
}

/** What the passing of time does: the key's grace ends now. */
const endGrace = (kid: string) => t.db.query("UPDATE keys SET retire_at = now() - interval '1 second' WHERE kid = $1", [kid]);
const statusOf = async (kid: string) => (await t.db.query<{ status: string }>('SELECT status FROM keys WHERE kid = $1', [kid])).rows[0]?.status;
const readCard = (token: string) =>
  t.inject({ method: 'GET', url: '/v1/cards/CARD-3001', headers: { TENANT: 'demo', authorization: `Bearer ${token}` } });

describe('rotating the encryption key', () => {
  it('keeps the old kid decrypting during the grace, publishes both, then refuses and unpublishes it', async () => {
    const [old] = await encKeys();
    const before = Date.now();
    const res = await rotate('enc');
    expect(res.statusCode, res.body).toBe(200);
    const { result } = res.json() as { result: { message: string; active: PublicJwk; replaced: { kid: string; status: string; retireAt: string }[] } };
    expect(result.active).toMatchObject({ kty: 'EC', crv: 'P-256', use: 'enc', alg: 'ECDH-ES+A256KW' });
    expect(result.active.kid).not.toBe(old!.kid);
    expect(result.replaced).toEqual([{ kid: old!.kid, status: 'retiring', retireAt: expect.any(String) }]);
    expect(result.message).toBe(`New encryption key ${result.active.kid} is active; 1 previous key(s) retiring after 86400 s`);
    const retireAt = Date.parse(result.replaced[0]!.retireAt);
    expect(retireAt - before).toBeGreaterThanOrEqual(86_400_000 - 1000);
    expect(retireAt - before).toBeLessThan(86_400_000 + 60_000);

    // Published: the active key first (clients encrypt to it), the retiring one after it.
    expect((await encKeys()).map((k) => k.kid)).toEqual([result.active.kid, old!.kid]);
    // A client that still encrypts to the old key is served during the grace, and so is one on the new key.
    expect((await login(await encryptCompact(PASSWORD, old!))).statusCode).toBe(200);
    expect((await login(await encryptCompact(PASSWORD, result.active))).statusCode).toBe(200);

    await endGrace(old!.kid);
    const refused = await login(await encryptCompact(PASSWORD, old!));
    expect([refused.statusCode, refused.json()]).toEqual([400, GENERIC_400]);
    expect((await encKeys()).map((k) => k.kid)).toEqual([result.active.kid]);
    // Retired lazily: the first load after the grace recorded it.
    expect(await statusOf(old!.kid)).toBe('retired');
    expect((await login(await encryptCompact(PASSWORD, result.active))).statusCode).toBe(200);
  });

  it('retires the old key at once with graceSeconds 0', async () => {
    const [old] = await encKeys();
    const res = await rotate('enc', 0);
    expect(res.json().result.replaced).toEqual([{ kid: old!.kid, status: 'retired', retireAt: expect.any(String) }]);
    expect((await login(await encryptCompact(PASSWORD, old!))).statusCode).toBe(400);
    expect((await encKeys()).map((k) => k.kid)).toEqual([res.json().result.active.kid]);
  });
});

describe('rotating the signing key', () => {
  it('keeps tokens of the old kid verifying during the grace (jwks lists both), then refuses them', async () => {
    const oldToken = await adminToken();
    const oldKid = decodeProtectedHeader(oldToken).kid!;
    expect((await readCard(oldToken)).statusCode).toBe(200);
    const before = Date.now();
    const res = await rotate('sig');
    const { result } = res.json() as { result: { active: PublicJwk; replaced: { kid: string; retireAt: string }[] } };
    expect(result.replaced.map((r) => r.kid)).toEqual([oldKid]);
    // Token lifetime (3600 s) + 300 s of skew: every token the old key signed expires before it retires.
    expect(Date.parse(result.replaced[0]!.retireAt) - before).toBeGreaterThanOrEqual(3_900_000 - 1000);
    expect(Date.parse(result.replaced[0]!.retireAt) - before).toBeLessThan(3_900_000 + 60_000);

    const newToken = await adminToken();
    expect(decodeProtectedHeader(newToken).kid).toBe(result.active.kid);
    expect((await readCard(oldToken)).statusCode).toBe(200);
    expect((await readCard(newToken)).statusCode).toBe(200);
    const kids = await jwksKids();
    expect(kids).toContain(oldKid);
    expect(kids).toContain(result.active.kid);

    await endGrace(oldKid);
    // Refused although it verified moments ago (the verified-token cache re-checks the key).
    const refused = await readCard(oldToken);
    expect(refused.statusCode).toBe(401);
    expect((await readCard(newToken)).statusCode).toBe(200);
    const after = await jwksKids();
    expect(after).not.toContain(oldKid);
    expect(after).toContain(result.active.kid);
  });
});

describe('listing and retiring', () => {
  it('GET /v1/admin/keys shows public halves and statuses only, to Admins only', async () => {
    const token = await adminToken();
    const res = await t.inject({ method: 'GET', url: '/v1/admin/keys', headers: { TENANT: 'demo', authorization: `Bearer ${token}` } });
    expect(res.statusCode).toBe(200);
    const keys = res.json().result as { kid: string; use: string; status: string; retireAt: string | null; publicJwk: Record<string, string> }[];
    expect(keys.filter((k) => k.status === 'active').map((k) => k.use).sort()).toEqual(['enc', 'sig']);
    expect(keys.filter((k) => k.status === 'retired').length).toBeGreaterThanOrEqual(3);
    for (const k of keys) {
      expect(Object.keys(k.publicJwk).sort()).toEqual(['alg', 'crv', 'kid', 'kty', 'use', 'x', 'y']);
      expect(k.retireAt === null).toBe(k.status === 'active');
    }
    expect(res.body).not.toMatch(/"d"/);
    const ops = await t.inject({
      method: 'GET',
      url: '/v1/admin/keys',
      headers: { TENANT: 'demo', authorization: `Bearer ${await t.token('Operations')}` },
    });
    expect(ops.statusCode).toBe(403);
  });

  it('retires a retiring key at once, and refuses to retire the active one', async () => {
    const [old] = await encKeys();
    await rotate('enc');
    expect((await encKeys()).map((k) => k.kid)).toContain(old!.kid);
    const info = await t.app.cardline.keys.retire('demo', old!.kid);
    expect(info).toMatchObject({ kid: old!.kid, status: 'retired' });
    expect((await encKeys()).map((k) => k.kid)).not.toContain(old!.kid);
    const [active] = await encKeys();
    await expect(t.app.cardline.keys.retire('demo', active!.kid)).rejects.toThrow(KeyLifecycleError);
    await expect(t.app.cardline.keys.retire('demo', 'no-such-kid')).rejects.toThrow("Tenant 'demo' has no key 'no-such-kid'.");
  });
});

describe('cache visibility', () => {
  it('this process sees a rotation at once; another process within its cache TTL', async () => {
    const masterKey = new MasterKey(MasterKey.generate());
    const here = new KeyRing(t.db, masterKey, 60_000);
    const elsewhere = new KeyRing(t.db, masterKey, 300);
    await createTenant({ db: t.db, tenants: new TenantService(t.db, 0), keys: here, users: new UserService(t.db) }, { id: 'cache-bank' });
    const original = (await here.forTenant('cache-bank')).enc[0]!.kid;
    expect((await elsewhere.forTenant('cache-bank')).enc[0]!.kid).toBe(original);
    const { active } = await here.rotate('cache-bank', 'enc', 3600);
    expect((await here.forTenant('cache-bank')).enc.map((k) => k.kid)).toEqual([active.kid, original]);
    expect((await elsewhere.forTenant('cache-bank')).enc.map((k) => k.kid)).toEqual([original]);
    await new Promise((r) => setTimeout(r, 350));
    expect((await elsewhere.forTenant('cache-bank')).enc.map((k) => k.kid)).toEqual([active.kid, original]);
  });
});

/**
 * Runs a `cardline` command in this process with the given environment; resolves its JSON output, rejects
 * with its stderr line on a non-zero exit.
 */
async function cliInProcess(args: string[], env: NodeJS.ProcessEnv): Promise<unknown> {
  const r = await runCli(args, env);
  if (r.code !== 0) throw new Error(r.stderr.trim());
  return JSON.parse(r.stdout);
}

describe('CLI', () => {
  beforeAll(ensureBuilt, BUILD_TIMEOUT_MS);
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await createTestDataDir('cardline-rotate-');
  });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  it('keys rotate --use enc --grace 2h as an operator runs it; list, retire, register-client', { timeout: 600_000 }, async () => {
    const masterKey = MasterKey.generate();
    const config = loadConfig({ CARDLINE_DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
    const db = await openStore(config);
    await migrate(db);
    const keys = new KeyRing(db, new MasterKey(masterKey), 0);
    await createTenant({ db, tenants: new TenantService(db, 0), keys, users: new UserService(db) }, { id: 'acme' });
    const original = (await keys.forTenant('acme')).enc[0]!.kid;
    await db.close();

    const env: NodeJS.ProcessEnv = { ...process.env, CARDLINE_DATA_DIR: dataDir, CARDLINE_MASTER_KEY: masterKey };
    delete env.DATABASE_URL;
    const rotated = await runProcess(process.execPath, [join(ROOT, 'bin', 'cardline.js'), 'keys', 'rotate', '--tenant', 'acme', '--use', 'enc', '--grace', '2h'], {
      cwd: ROOT,
      env,
    });
    expect(rotated.code, rotated.stderr).toBe(0);
    const out = JSON.parse(rotated.stdout) as { active: PublicJwk; replaced: { kid: string; status: string; retireAt: string }[]; graceSeconds: number };
    expect(out).toEqual({
      active: { kty: 'EC', crv: 'P-256', x: expect.any(String), y: expect.any(String), kid: expect.any(String), use: 'enc', alg: 'ECDH-ES+A256KW' },
      replaced: [{ kid: original, status: 'retiring', retireAt: expect.any(String) }],
      graceSeconds: 7200,
    });

    // The other key commands, in this process (same code path as bin/cardline.js, without a second start-up).
    const list = (await cliInProcess(['keys', 'list', '--tenant', 'acme'], env)) as { kid: string; use: string; status: string }[];
    expect(list.filter((k) => k.use === 'enc').map((k) => [k.kid, k.status])).toEqual([
      [out.active.kid, 'active'],
      [original, 'retiring'],
    ]);
    const retired = (await cliInProcess(['keys', 'retire', '--tenant', 'acme', '--kid', original], env)) as { status: string };
    expect(retired).toMatchObject({ kid: original, status: 'retired' });
    await expect(cliInProcess(['keys', 'retire', '--tenant', 'acme', '--kid', out.active.kid], env)).rejects.toThrow(
      `error: Key '${out.active.kid}' is the tenant's active enc key; rotate the enc keys first, then retire the key the rotation replaced.`,
    );

    const { publicKey, privateKey } = await generateKeyPair('ECDH-ES+A256KW', { crv: 'P-256', extractable: true });
    const publicJwk = { ...(await exportJWK(publicKey)), kid: 'acme-client-1' };
    const jwkFile = join(dataDir, 'client-public.json');
    await writeFile(jwkFile, JSON.stringify(publicJwk));
    const registered = await cliInProcess(['keys', 'register-client', '--tenant', 'acme', '--jwk', `@${jwkFile}`], env);
    expect(registered).toEqual({
      jwk: { kty: 'EC', crv: 'P-256', x: publicJwk.x, y: publicJwk.y, kid: 'acme-client-1', use: 'enc', alg: 'ECDH-ES+A256KW' },
      registeredAt: expect.any(String),
    });
    await expect(
      cliInProcess(['keys', 'register-client', '--tenant', 'acme', '--jwk', JSON.stringify(await exportJWK(privateKey))], env),
    ).rejects.toThrow(/error: The client key is not an EC P-256 public JWK for encryption: \/d: a private key was given/);
  });
});
