// A tenant and its first Admin created by one operation (`POST /v1/tenants` with `admin`), both or neither: the
// password, encrypted to the gateway's onboarding key (the tenant has none yet), is checked before anything is
// written, so a refused one leaves no tenant, no key and no user behind and the same id can be sent again.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encryptCompact } from '../../src/crypto/jwe.js';
import { CardlineAdmin } from '../../sdk/src/index.js';
import { PROBLEM_BASE, createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
let m: FastifyInstance;
let key: string;
beforeAll(async () => {
  t = await createTestApp();
  m = await t.management();
  key = await t.operatorKey('ops-onboarding');
});
afterAll(async () => {
  await t?.close();
});

const call = (method: 'GET' | 'POST', url: string, payload?: unknown) =>
  m.inject({ method, url, headers: { authorization: `Bearer ${key}` }, ...(payload === undefined ? {} : { payload: payload as object }) });

const problem = (status: number, detail: string, extra: Record<string, unknown> = {}) => ({
  type: `${PROBLEM_BASE}/problem-with-message`,
  title: extra.businessCode ? 'Tenant Exists' : 'Bad Request',
  status,
  message: extra.businessCode ? 'error.business' : `error.http.${status}`,
  detail,
  ...extra,
});

const onboardingKey = async () => {
  const res = await call('GET', '/v1/onboarding/keys');
  expect(res.statusCode).toBe(200);
  return res.json().keys[0];
};
const sealed = async (password: string) => encryptCompact(password, await onboardingKey());

const CONFIG = {
  connector: { id: 'mock', options: { fixtures: 'demo' } },
  homeCountry: 'GB',
  timeZone: 'Europe/London',
  creditLimit: { maximum: '250000.00', allowDecrease: false },
};

/** Every row the tenant would own: none after a refusal. */
async function rowsOf(tenantId: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of ['tenants', 'keys', 'users']) {
    const r = await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE tenant_id = $1`, [tenantId]);
    counts[table] = r.rows[0]!.n;
  }
  return counts;
}
const NOTHING = { tenants: 0, keys: 0, users: 0 };

/** The public login, its password a JWE to the tenant's own key (which exists once the tenant does). */
const login = async (tenant: string, username: string, password: string) =>
  t.app.inject({ method: 'POST', url: '/api/authenticate', headers: { TENANT: tenant }, payload: { username, password: await t.encrypt(password, tenant) } });

describe('the onboarding key', () => {
  it('is one P-256 encryption key, the same on every call, and needs an operator key', async () => {
    const first = await onboardingKey();
    expect(first).toEqual({ kty: 'EC', crv: 'P-256', x: expect.any(String), y: expect.any(String), kid: expect.stringMatching(/^onboarding-[0-9a-f]{16}$/), use: 'enc', alg: 'ECDH-ES+A256KW' });
    expect(await onboardingKey()).toEqual(first);
    expect((await m.inject({ method: 'GET', url: '/v1/onboarding/keys' })).statusCode).toBe(401);
  });
});

describe('a tenant with its first Admin', () => {
  it('refuses a short password with 400 before writing anything; the same request with a good password then succeeds', async () => {
    const refused = await call('POST', '/v1/tenants', { id: 'north', name: 'North Bank', config: CONFIG, admin: { username: 'root', password: await sealed('short') } });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toEqual(problem(400, 'A password needs at least 8 characters.'));
    expect(await rowsOf('north')).toEqual(NOTHING);
    expect((await call('GET', '/v1/tenants/north')).statusCode).toBe(404);

    const created = await call('POST', '/v1/tenants', { id: 'north', name: 'North Bank', config: CONFIG, admin: { username: 'root', password: await sealed('north-root-password') } });
    expect(created.statusCode).toBe(201);
    const { tenant, encryptionKeys, admin } = created.json().result;
    expect(tenant).toMatchObject({ id: 'north', name: 'North Bank', status: 'active', config: { homeCountry: 'GB', timeZone: 'Europe/London', creditLimit: { maximum: '250000.00' } } });
    expect(encryptionKeys.keys).toHaveLength(1);
    expect(admin).toEqual({ username: 'root', role: 'Admin', disabled: false, locked: false, lastLoginAt: null });
    expect(await rowsOf('north')).toEqual({ tenants: 1, keys: 2, users: 1 });
    // The new Admin signs in on the public listener at once.
    const signedIn = await login('north', 'root', 'north-root-password');
    expect(signedIn.statusCode).toBe(200);
    expect(signedIn.json()).toEqual({ id_token: expect.any(String) });
  });

  it('refuses a password in clear (no key of the tenant could have allowed it), and writes nothing', async () => {
    const res = await call('POST', '/v1/tenants', { id: 'clear', config: CONFIG, admin: { username: 'root', password: 'clear-root-password' } });
    expect(res.json()).toEqual(problem(400, "The first Admin's password must be a compact JWE encrypted to the onboarding key (GET /v1/onboarding/keys)."));
    expect(await rowsOf('clear')).toEqual(NOTHING);
  });

  it('refuses a password encrypted to another key, or the same JWE sent twice, with the one generic 400', async () => {
    const toDemo = await call('POST', '/v1/tenants', { id: 'wrongkey', config: CONFIG, admin: { username: 'root', password: await t.encrypt('wrongkey-root-password') } });
    expect(toDemo.json()).toEqual(problem(400, 'The encrypted payload could not be processed.'));
    expect(await rowsOf('wrongkey')).toEqual(NOTHING);

    const once = await sealed('replayed-root-password');
    expect((await call('POST', '/v1/tenants', { id: 'replay-a', config: CONFIG, admin: { username: 'root', password: once } })).statusCode).toBe(201);
    const again = await call('POST', '/v1/tenants', { id: 'replay-b', config: CONFIG, admin: { username: 'root', password: once } });
    expect(again.json()).toEqual(problem(400, 'The encrypted payload could not be processed.'));
    expect(await rowsOf('replay-b')).toEqual(NOTHING);
  });

  it('refuses an invalid configuration or an existing id without creating a user', async () => {
    const bad = await call('POST', '/v1/tenants', { id: 'badcfg', config: { ...CONFIG, homeCountry: 'Portugal' }, admin: { username: 'root', password: await sealed('badcfg-root-password') } });
    expect(bad.statusCode).toBe(400);
    expect(await rowsOf('badcfg')).toEqual(NOTHING);

    const before = await rowsOf('north');
    const exists = await call('POST', '/v1/tenants', { id: 'north', config: CONFIG, admin: { username: 'second', password: await sealed('second-root-password') } });
    expect(exists.json()).toEqual(problem(409, "A tenant 'north' exists already.", { businessCode: 'TENANT_EXISTS' }));
    expect(await rowsOf('north')).toEqual(before);
  });

  it('keeps the password out of the trail, which names the tenant and the Admin', async () => {
    const r = await t.db.query<{ j: string; action: string; status: number; target: Record<string, string> }>(
      "SELECT row_to_json(a)::text AS j, action, status, target FROM audit_log a WHERE actor = 'ops-onboarding' AND action = 'tenant.create' ORDER BY seq",
    );
    expect(r.rows.map((x) => x.status)).toEqual(expect.arrayContaining([400, 201, 409]));
    expect(r.rows.find((x) => x.status === 201 && x.target.tenantId === 'north')?.target).toEqual({ tenantId: 'north', username: 'root' });
    for (const { j } of r.rows) expect(j).not.toMatch(/root-password|short"/);
  });

  it('is what CardlineAdmin sends: the password encrypted to the onboarding key without being asked', async () => {
    const url = await m.listen({ host: '127.0.0.1', port: 0 });
    const bodies: string[] = [];
    const admin = new CardlineAdmin({
      baseUrl: url,
      operatorKey: key,
      fetch: async (input, init) => {
        if (typeof init?.body === 'string') bodies.push(init.body);
        return fetch(input, init);
      },
    });
    const answer = await admin.tenant.create({ id: 'south', name: 'South Bank', config: CONFIG, admin: { username: 'root', password: 'south-root-password' } });
    expect(answer.result.admin).toEqual({ username: 'root', role: 'Admin', disabled: false, locked: false, lastLoginAt: null });
    expect(bodies.join('\n')).not.toContain('south-root-password');
    expect(JSON.parse(bodies[0]!).admin.password).toMatch(/^[\w-]+\.[\w-]*\.[\w-]+\.[\w-]+\.[\w-]+$/);
    expect((await login('south', 'root', 'south-root-password')).statusCode).toBe(200);
    // A short password is the same 400, thrown before the tenant exists; sending it right after works.
    await expect(admin.tenant.create({ id: 'east', config: CONFIG, admin: { username: 'root', password: 'short' } })).rejects.toMatchObject({
      status: 400,
      detail: 'A password needs at least 8 characters.',
    });
    expect(await rowsOf('east')).toEqual(NOTHING);
    expect((await admin.tenant.create({ id: 'east', config: CONFIG, admin: { username: 'root', password: 'east-root-password' } })).result.tenant.id).toBe('east');
  });
});
