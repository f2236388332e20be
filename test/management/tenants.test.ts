// The management listener: operator keys, tenants created with their whole configuration, read, changed by
// JSON merge patch (validated as at creation, secrets sealed and shown as "***"), disabled and enabled, their
// first users; every call audited with the key's name; a tenant's token is never an operator key.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildMockCore } from '../../connectors/mock-core/server.js';
import { LIMIT_URL, PROBLEM_BASE, createTestApp, type TestApp } from '../helpers/app.js';
import { operatorUnauthorizedDetail } from '../helpers/problems.js';

let t: TestApp;
let m: FastifyInstance;
let key: string;
let core: FastifyInstance;
let coreBase: string;
beforeAll(async () => {
  t = await createTestApp();
  m = await t.management();
  key = await t.operatorKey('ops-alice');
  core = buildMockCore({ fixtures: 'demo', auth: { type: 'bearer', token: 'core-token-1' } });
  coreBase = await core.listen({ host: '127.0.0.1', port: 0 });
});
afterAll(async () => {
  await core.close();
  await t.close();
});

const call = (method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE', url: string, payload?: unknown, headers: Record<string, string> = {}) =>
  m.inject({ method, url, headers: { authorization: `Bearer ${key}`, ...headers }, ...(payload === undefined ? {} : { payload: payload as object }) });

const problem = (status: number, title: string, detail: string, extra: Record<string, unknown> = {}) => ({
  type: `${PROBLEM_BASE}/problem-with-message`,
  title,
  status,
  message: extra.businessCode ? 'error.business' : `error.http.${status}`,
  detail,
  ...extra,
});

const UNAUTHORIZED = problem(
  401,
  'Unauthorized',
  operatorUnauthorizedDetail(),
);

const restConfig = (bank: string, token = 'core-token-1') => ({
  connector: { id: 'rest', options: { baseUrl: `${coreBase}/banks/${bank}`, auth: { type: 'bearer', token } } },
  creditLimit: { maximum: '250000.00', allowDecrease: true },
});

describe('operator keys', () => {
  it('refuse a call without a key, with an unknown key, and with a tenant token (exact 401)', async () => {
    for (const authorization of [undefined, 'Bearer clop_not-a-key-at-all-000000000000000', `Bearer ${await t.token('Admin')}`]) {
      const res = await m.inject({ method: 'GET', url: '/v1/tenants', headers: authorization ? { authorization } : {} });
      expect(res.statusCode).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Bearer');
      expect(res.json()).toEqual(UNAUTHORIZED);
    }
  });

  it('are shown once, listed without the key, and revoked at once', async () => {
    const created = await call('POST', '/v1/operator-keys', { name: 'temp-bob' });
    expect(created.statusCode).toBe(201);
    const { key: bobKey, operatorKey } = created.json().result;
    expect(bobKey).toMatch(/^clop_[\w-]{43}$/);
    expect(operatorKey).toEqual({ name: 'temp-bob', prefix: bobKey.slice(0, 9), createdAt: expect.any(String), lastUsedAt: null, revokedAt: null });
    const list = await call('GET', '/v1/operator-keys');
    expect(JSON.stringify(list.json())).not.toContain(bobKey);
    expect(list.json().result.map((k: { name: string }) => k.name)).toContain('temp-bob');
    const stored = await t.db.query<{ key_hash: string }>("SELECT key_hash FROM operator_keys WHERE name = 'temp-bob'");
    expect(stored.rows[0]!.key_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(stored.rows[0]!.key_hash).not.toContain(bobKey);

    expect((await m.inject({ method: 'GET', url: '/v1/tenants', headers: { authorization: `Bearer ${bobKey}` } })).statusCode).toBe(200);
    expect((await call('POST', '/v1/operator-keys', { name: 'temp-bob' })).json()).toEqual(
      problem(409, 'Operator Key Exists', "An operator key named 'temp-bob' exists; revoke it first or choose another name.", { businessCode: 'OPERATOR_KEY_EXISTS' }),
    );
    const revoked = await call('DELETE', '/v1/operator-keys/temp-bob');
    expect(revoked.json()).toEqual({ result: { message: "Operator key 'temp-bob' revoked" }, pagination: null });
    const after = await m.inject({ method: 'GET', url: '/v1/tenants', headers: { authorization: `Bearer ${bobKey}` } });
    expect(after.statusCode).toBe(401);
    expect((await call('DELETE', '/v1/operator-keys/temp-bob')).json()).toEqual(problem(404, 'Not Found', "There is no operator key named 'temp-bob'."));
  });
});

describe('tenants', () => {
  it('creates a tenant with its whole configuration: 201 with the tenant (secrets as ***) and its public encryption keys', async () => {
    const res = await call('POST', '/v1/tenants', { id: 'acme', name: 'Acme Bank', config: { ...restConfig('acme'), sandbox: true, tokenLifetimeSeconds: 900, rateLimit: { perUserPerMinute: 120 } } });
    expect(res.statusCode).toBe(201);
    const { tenant, encryptionKeys } = res.json().result;
    expect(tenant).toEqual({
      id: 'acme',
      name: 'Acme Bank',
      status: 'active',
      version: 1,
      config: {
        connector: { id: 'rest', options: { baseUrl: `${coreBase}/banks/acme`, auth: { type: 'bearer', token: '***' } } },
        creditLimit: { maximum: '250000.00', allowDecrease: true },
        encryption: { allowPlaintextPassword: false },
        sandbox: true,
        tokenLifetimeSeconds: 900,
        rateLimit: { perUserPerMinute: 120 },
        // Defaults filled in (decision 0057).
        homeCountry: 'PT',
        timeZone: 'UTC',
        currency: 'EUR',
        traceContext: 'continue',
      },
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(encryptionKeys.keys).toEqual([{ kty: 'EC', crv: 'P-256', x: expect.any(String), y: expect.any(String), kid: expect.any(String), use: 'enc', alg: 'ECDH-ES+A256KW' }]);
    // The same keys the bank's clients fetch from the public listener, and operators from this one.
    const keys = await t.inject({ method: 'GET', url: '/api/keys', headers: { TENANT: 'acme' } });
    expect(keys.json()).toEqual(encryptionKeys);
    expect((await call('GET', '/v1/tenants/acme/keys')).json()).toEqual(encryptionKeys);
    expect((await call('GET', '/v1/tenants/nobody/keys')).json()).toEqual(problem(404, 'Not Found', "There is no tenant 'nobody'."));
    // The secret is sealed at rest, and open in memory for the connector.
    const stored = await t.db.query<{ config: unknown }>("SELECT config FROM tenants WHERE tenant_id = 'acme'");
    expect(JSON.stringify(stored.rows[0]!.config)).not.toContain('core-token-1');
    expect(JSON.stringify(stored.rows[0]!.config)).toContain('"$sealed"');
    expect((await t.app.cardline.tenants.get('acme'))!.config.connector!.options).toMatchObject({ auth: { type: 'bearer', token: 'core-token-1' } });
  });

  it('refuses an existing id, an invalid configuration, a module that cannot load and options that do not match (the reason named)', async () => {
    expect((await call('POST', '/v1/tenants', { id: 'demo' })).json()).toEqual(
      problem(409, 'Tenant Exists', "A tenant 'demo' exists already.", { businessCode: 'TENANT_EXISTS' }),
    );
    const bad = await call('POST', '/v1/tenants', { id: 'bad-1', config: { creditLimit: { maximum: '10.5.5', allowDecrease: false } } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toEqual(problem(400, 'Bad Request', expect.stringMatching(/^Tenant 'bad-1' has an invalid configuration: \/creditLimit\/maximum: /)));
    const noModule = await call('POST', '/v1/tenants', { id: 'bad-2', config: { connector: { id: 'acme-core', module: './plugins/missing.js' } } });
    expect(noModule.json()).toEqual(
      problem(400, 'Bad Request', expect.stringMatching(/^Tenant 'bad-2': connector 'acme-core' cannot be loaded: connector module '\.\/plugins\/missing\.js' could not be loaded: /)),
    );
    const badOptions = await call('POST', '/v1/tenants', { id: 'bad-3', config: { connector: { id: 'rest', options: { baseUrl: 'ftp://core' } } } });
    expect(badOptions.json()).toEqual(problem(400, 'Bad Request', expect.stringMatching(/^Tenant 'bad-3': connector 'rest' options are invalid: \/baseUrl: /)));
    const invalidId = await call('POST', '/v1/tenants', { id: 'Not_An_Id' });
    expect(invalidId.json()).toEqual({
      type: `${PROBLEM_BASE}/constraint-violation`,
      title: 'Method argument not valid',
      status: 400,
      message: 'error.validation',
      fieldErrors: [{ field: 'id', message: 'Pattern', objectName: 'tenantRequest' }],
    });
    const tenants = await call('GET', '/v1/tenants');
    expect(tenants.json().result.map((x: { id: string }) => x.id)).not.toEqual(expect.arrayContaining(['bad-1', 'bad-2', 'bad-3']));
  });

  it('reads a tenant (404 for an unknown one) and lists them, never showing a secret', async () => {
    const one = await call('GET', '/v1/tenants/acme');
    expect(one.json().result.config.connector.options.auth.token).toBe('***');
    expect((await call('GET', '/v1/tenants/nobody')).json()).toEqual(problem(404, 'Not Found', "There is no tenant 'nobody'."));
    const list = await call('GET', '/v1/tenants');
    expect(list.body).not.toContain('core-token-1');
    expect(list.json().result.map((x: { id: string }) => x.id)).toEqual(expect.arrayContaining(['acme', 'demo', 'demo-b']));
  });

  it('patches by JSON merge patch: *** keeps a secret, a value replaces it, null removes a setting; validated as at creation', async () => {
    const before = (await call('GET', '/v1/tenants/acme')).json().result;
    const res = await call(
      'PATCH',
      '/v1/tenants/acme',
      JSON.stringify({ name: 'Acme Bank plc', config: { connector: { options: { auth: { token: '***' }, timeoutMs: 5000 } }, rateLimit: null } }),
      { 'content-type': 'application/merge-patch+json' },
    );
    expect(res.statusCode).toBe(200);
    expect(res.json().result).toMatchObject({ name: 'Acme Bank plc', version: before.version + 1 });
    expect(res.json().result.config.rateLimit).toBeUndefined();
    expect(res.json().result.config.connector.options).toEqual({ baseUrl: `${coreBase}/banks/acme`, auth: { type: 'bearer', token: '***' }, timeoutMs: 5000 });
    expect((await t.app.cardline.tenants.get('acme'))!.config.connector!.options).toMatchObject({ auth: { token: 'core-token-1' } });

    const replaced = await call('PATCH', '/v1/tenants/acme', { config: { connector: { options: { auth: { token: 'core-token-2' } } } } });
    expect(replaced.statusCode).toBe(200);
    expect((await t.app.cardline.tenants.get('acme'))!.config.connector!.options).toMatchObject({ auth: { token: 'core-token-2' } });

    const invalid = await call('PATCH', '/v1/tenants/acme', { config: { tokenLifetimeSeconds: 5 } });
    expect(invalid.json()).toEqual(problem(400, 'Bad Request', expect.stringMatching(/^Tenant 'acme' has an invalid configuration: \/tokenLifetimeSeconds: /)));
    const noModule = await call('PATCH', '/v1/tenants/acme', { config: { connector: { id: 'acme-core', module: './nope.js', options: null } } });
    expect(noModule.json().detail).toMatch(/^Tenant 'acme': connector 'acme-core' cannot be loaded/);
    // A refused patch changes nothing.
    expect((await t.app.cardline.tenants.get('acme'))!.config).toMatchObject({ tokenLifetimeSeconds: 900, connector: { id: 'rest' } });
    expect((await call('PATCH', '/v1/tenants/nobody', { name: 'x' })).json()).toEqual(problem(404, 'Not Found', "There is no tenant 'nobody'."));
    const empty = await call('PATCH', '/v1/tenants/acme', {});
    expect(empty.statusCode).toBe(400);
    // Back to the token the core accepts.
    expect((await call('PATCH', '/v1/tenants/acme', { config: { connector: { options: { auth: { token: 'core-token-1' } } } } })).statusCode).toBe(200);
  });

  it('creates the first users (password a JWE to the tenant key), who then log in on the public listener', async () => {
    const created = await call('POST', '/v1/tenants/acme/users', { username: 'root', role: 'Admin', password: await t.encrypt('acme-root-password', 'acme') });
    expect(created.statusCode).toBe(201);
    expect(created.json()).toEqual({ result: { username: 'root', role: 'Admin', disabled: false, locked: false, lastLoginAt: null }, pagination: null });
    const plain = await call('POST', '/v1/tenants/acme/users', { username: 'plain', role: 'Admin', password: 'acme-root-password' });
    expect(plain.json()).toEqual(problem(400, 'Bad Request', "The password must be a compact JWE encrypted to the tenant's key (GET /api/keys)."));
    const again = await call('POST', '/v1/tenants/acme/users', { username: 'root', role: 'Admin', password: await t.encrypt('acme-root-password', 'acme') });
    expect(again.json()).toEqual(problem(409, 'User Exists', "Tenant 'acme' already has a user 'root'.", { businessCode: 'USER_EXISTS' }));
    const login = await t.inject({
      method: 'POST',
      url: '/api/authenticate',
      headers: { TENANT: 'acme' },
      payload: { username: 'root', password: await t.encrypt('acme-root-password', 'acme') },
    });
    expect(login.statusCode).toBe(200);
    // The new tenant's Admin works on its own core at once (the REST core named in its configuration).
    const limit = await t.inject({
      method: 'POST',
      url: LIMIT_URL,
      headers: { TENANT: 'acme', authorization: `Bearer ${login.json().id_token}` },
      payload: { entityId: 'ENT-1001', amount: '200000.00' },
    });
    expect(limit.json()).toEqual({ result: true, exception: null, pagination: null });
  });

  it("an operator's changes raise the security events a tenant Admin's do: tenant.config-changed, user.created, user.disabled", async () => {
    const events = async () =>
      (await t.db.query<{ type: string; payload: unknown }>(
        "SELECT type, payload FROM outbox WHERE tenant_id = 'demo-b' AND type IN ('tenant.config-changed', 'user.created', 'user.disabled') ORDER BY audit_seq",
      )).rows;
    const before = (await events()).length;
    expect((await call('PATCH', '/v1/tenants/demo-b', { name: 'Demo B', config: { rateLimit: { perUserPerMinute: 600 }, sandbox: true } })).statusCode).toBe(200);
    const created = await call('POST', '/v1/tenants/demo-b/users', { username: 'auditor', role: 'Read-Only', password: await t.encrypt('auditor-password-1', 'demo-b') });
    expect(created.statusCode).toBe(201);
    expect((await call('PATCH', '/v1/tenants/demo-b/users/auditor', { disabled: true })).statusCode).toBe(200);
    // A refused change raises nothing.
    expect((await call('PATCH', '/v1/tenants/demo-b', { config: { timeZone: 'Mars/Olympus' } })).statusCode).toBe(400);
    expect((await events()).slice(before)).toEqual([
      { type: 'tenant.config-changed', payload: { tenantId: 'demo-b', changed: ['name', 'rateLimit', 'sandbox'] } },
      { type: 'user.created', payload: { username: 'auditor', role: 'Read-Only' } },
      { type: 'user.disabled', payload: { username: 'auditor', by: 'ops-alice' } },
    ]);
  });

  it('disables a tenant (it then answers as an unknown one, its tokens too) and enables it again', async () => {
    const login = await t.inject({
      method: 'POST',
      url: '/api/authenticate',
      headers: { TENANT: 'acme' },
      payload: { username: 'root', password: await t.encrypt('acme-root-password', 'acme') },
    });
    const token = login.json().id_token as string;
    const disabled = await call('POST', '/v1/tenants/acme/disable');
    expect(disabled.json().result.status).toBe('disabled');
    const refused = await t.inject({ method: 'POST', url: LIMIT_URL, headers: { TENANT: 'acme', authorization: `Bearer ${token}` }, payload: { entityId: 'ENT-1001', amount: '1.00' } });
    expect(refused.statusCode).toBe(401);
    expect(refused.json().exception.errorCode).toBe('ERR_401');
    const enabled = await call('POST', '/v1/tenants/acme/enable');
    expect(enabled.json().result.status).toBe('active');
    const ok = await t.inject({ method: 'POST', url: LIMIT_URL, headers: { TENANT: 'acme', authorization: `Bearer ${token}` }, payload: { entityId: 'ENT-1001', amount: '150000.00' } });
    expect(ok.statusCode).toBe(200);
  });

  it("records every operator call in the trail of the tenant it concerns, with the key's name and no secret", async () => {
    const r = await t.db.query<{ actor: string; role: string; action: string; target: Record<string, string>; status: number }>(
      "SELECT actor, role, action, target, status FROM audit_log WHERE tenant_id = 'acme' AND role = 'Operator' ORDER BY seq",
    );
    expect(r.rows.map((x) => `${x.action} ${x.status}`)).toEqual(
      expect.arrayContaining(['tenant.create 201', 'tenant.update 200', 'tenant.update 400', 'user.create 201', 'user.create 400', 'user.create 409', 'tenant.disable 200', 'tenant.enable 200']),
    );
    expect(r.rows.every((x) => x.actor === 'ops-alice')).toBe(true);
    const all = await t.db.query<{ j: string }>("SELECT row_to_json(a)::text AS j FROM audit_log a WHERE tenant_id IN ('acme', '_platform')");
    for (const { j } of all.rows) {
      expect(j).not.toContain('core-token');
      expect(j).not.toContain('acme-root-password');
    }
    const platform = await t.db.query<{ action: string }>("SELECT action FROM audit_log WHERE tenant_id = '_platform' AND actor = 'ops-alice'");
    // Reads (the tenant list) are not recorded; changes are.
    expect(platform.rows.map((x) => x.action)).toEqual(expect.arrayContaining(['operator-key.create', 'operator-key.revoke']));
    expect(platform.rows.map((x) => x.action)).not.toContain('tenant.list');
  });
});
