// A tenant's Admin manages its users and its own settings (spec §5.4), every user its own password: exact
// bodies, validation rows, the last-Admin rule, tokens revoked by every change that must end them, and
// nothing secret in the audit trail.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMIT_URL, PASSWORD, createTestApp, type TestApp } from '../helpers/app.js';
import { problem, validationProblem as invalid } from '../helpers/problems.js';

let t: TestApp;
beforeAll(async () => {
  // Its own tenant: these tests change users and settings.
  t = await createTestApp({ tenants: [{ id: 'bank', config: { connector: { id: 'mock', options: { fixtures: 'demo' } } } }] });
  await t.app.cardline.users.add('bank', 'admin', 'Admin', PASSWORD);
  await t.app.cardline.users.add('bank', 'ops', 'Operations', PASSWORD);
});
afterAll(() => t.close());

const login = async (username: string, password = PASSWORD) => {
  const res = await t.inject({ method: 'POST', url: '/api/authenticate', headers: { TENANT: 'bank' }, payload: { username, password: await t.encrypt(password, 'bank') } });
  return res.statusCode === 200 ? (res.json().id_token as string) : null;
};

const as = async (token: string | Promise<string | null>, method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, payload?: unknown) =>
  t.inject({ method, url, headers: { 'X-TENANT-ID': 'bank', authorization: `Bearer ${await token}` }, ...(payload === undefined ? {} : { payload: payload as object }) });

const UNAUTHORIZED = problem(401, 'Unauthorized', 'A valid bearer token for this tenant is required; obtain one from POST /api/authenticate.');

/** The token works on a business route (a limit read), or is refused with the exact 401. */
async function works(token: string): Promise<boolean> {
  const res = await t.inject({ method: 'POST', url: '/credit-line-management/business-entity-manager/fetchLimit', headers: { TENANT: 'bank', authorization: `Bearer ${token}` }, payload: { entityId: 'ENT-1001' } });
  if (res.statusCode === 401) expect(res.json().exception.detailMessage).toBe(UNAUTHORIZED.detail);
  return res.statusCode === 200;
}

let admin: string;
beforeAll(async () => {
  admin = (await login('admin'))!;
});

describe('users', () => {
  it('lists the users: role, disabled, locked, last login, never a hash', async () => {
    const res = await as(admin, 'GET', '/v1/admin/users');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      result: [
        { username: 'admin', role: 'Admin', disabled: false, locked: false, lastLoginAt: expect.any(String) },
        { username: 'ops', role: 'Operations', disabled: false, locked: false, lastLoginAt: null },
      ],
      pagination: { nextCursor: null },
    });
    expect(res.body).not.toMatch(/argon2|hash/i);
  });

  it('creates a user from a JWE password (201); refuses plain text, a short password, a taken name and bad fields', async () => {
    const res = await as(admin, 'POST', '/v1/admin/users', { username: 'alice', role: 'API Integration', password: await t.encrypt('alice-password-1', 'bank') });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual({ result: { username: 'alice', role: 'API Integration', disabled: false, locked: false, lastLoginAt: null }, pagination: null });
    expect(await login('alice', 'alice-password-1')).toEqual(expect.any(String));

    expect((await as(admin, 'POST', '/v1/admin/users', { username: 'bob', role: 'Admin', password: 'bob-password-1' })).json()).toEqual(
      problem(400, 'Bad Request', "The password must be a compact JWE encrypted to the tenant's key (GET /api/keys)."),
    );
    expect((await as(admin, 'POST', '/v1/admin/users', { username: 'bob', role: 'Admin', password: await t.encrypt('short', 'bank') })).json()).toEqual(
      problem(400, 'Bad Request', 'A password needs at least 8 characters.'),
    );
    expect((await as(admin, 'POST', '/v1/admin/users', { username: 'alice', role: 'Admin', password: await t.encrypt('alice-password-2', 'bank') })).json()).toEqual(
      problem(409, 'User Exists', "Tenant 'bank' already has a user 'alice'.", 'USER_EXISTS'),
    );
    expect((await as(admin, 'POST', '/v1/admin/users', { username: ' spaced', role: 'Boss', password: await t.encrypt('whatever-1', 'bank'), extra: 1 })).json()).toEqual(
      invalid('userRequest', ['extra', 'UnknownProperty'], ['username', 'Pattern'], ['role', 'Invalid']),
    );
    expect((await as(admin, 'POST', '/v1/admin/users', {})).json()).toEqual(invalid('userRequest', ['username', 'NotNull'], ['role', 'NotNull'], ['password', 'NotNull']));
  });

  it("a role change revokes the user's tokens; the new role applies to the next token", async () => {
    const alice = (await login('alice', 'alice-password-1'))!;
    expect(await works(alice)).toBe(true);
    const res = await as(admin, 'PATCH', '/v1/admin/users/alice', { role: 'Read-Only' });
    expect(res.json()).toEqual({ result: { username: 'alice', role: 'Read-Only', disabled: false, locked: false, lastLoginAt: expect.any(String) }, pagination: null });
    expect(await works(alice)).toBe(false);
    const again = (await login('alice', 'alice-password-1'))!;
    const write = await t.inject({ method: 'POST', url: LIMIT_URL, headers: { TENANT: 'bank', authorization: `Bearer ${again}` }, payload: { entityId: 'ENT-1001', amount: '60000.00' } });
    expect(write.statusCode).toBe(403);
  });

  it('disabling revokes the tokens and refuses logins; enabling lets the user log in again', async () => {
    const ops = (await login('ops'))!;
    expect((await as(admin, 'PATCH', '/v1/admin/users/ops', { disabled: true })).json().result.disabled).toBe(true);
    expect(await works(ops)).toBe(false);
    expect(await login('ops')).toBeNull();
    expect((await as(admin, 'PATCH', '/v1/admin/users/ops', { disabled: false })).json().result.disabled).toBe(false);
    expect(await works((await login('ops'))!)).toBe(true);
    // Enabling again does not bring the old token back.
    expect(await works(ops)).toBe(false);
  });

  it('a password reset revokes the tokens and lifts a lockout; unlock lifts one on its own', async () => {
    const alice = (await login('alice', 'alice-password-1'))!;
    for (let i = 0; i < 10; i++) await login('alice', 'wrong-password-x');
    expect((await as(admin, 'GET', '/v1/admin/users')).json().result.find((u: { username: string }) => u.username === 'alice').locked).toBe(true);
    expect(await login('alice', 'alice-password-1')).toBeNull();
    const unlocked = await as(admin, 'POST', '/v1/admin/users/alice/unlock');
    expect(unlocked.json().result.locked).toBe(false);
    expect(await login('alice', 'alice-password-1')).toEqual(expect.any(String));

    const reset = await as(admin, 'PUT', '/v1/admin/users/alice/password', { password: await t.encrypt('alice-password-9', 'bank') });
    expect(reset.json()).toEqual({ result: { message: "Password of 'alice' set; its tokens are revoked" }, pagination: null });
    expect(await works(alice)).toBe(false);
    expect(await login('alice', 'alice-password-1')).toBeNull();
    expect(await login('alice', 'alice-password-9')).toEqual(expect.any(String));
  });

  it('unknown users are 404 on every route that names one', async () => {
    const NOT_FOUND = problem(404, 'Not Found', "This tenant has no user 'nobody'.");
    expect((await as(admin, 'PATCH', '/v1/admin/users/nobody', { role: 'Admin' })).json()).toEqual(NOT_FOUND);
    expect((await as(admin, 'POST', '/v1/admin/users/nobody/unlock')).json()).toEqual(NOT_FOUND);
    expect((await as(admin, 'PUT', '/v1/admin/users/nobody/password', { password: await t.encrypt('whatever-123', 'bank') })).json()).toEqual(NOT_FOUND);
    expect((await as(admin, 'DELETE', '/v1/admin/users/nobody')).json()).toEqual(NOT_FOUND);
    expect((await as(admin, 'PATCH', '/v1/admin/users/ops', {})).json()).toEqual(invalid('userPatch', ['body', 'Size']));
  });

  it('the last enabled Admin can be neither demoted, disabled nor removed; with a second Admin it can', async () => {
    const LAST = problem(409, 'Last Admin', "'admin' is the tenant's last Admin; make another user Admin first.", 'LAST_ADMIN');
    expect((await as(admin, 'PATCH', '/v1/admin/users/admin', { role: 'Operations' })).json()).toEqual(LAST);
    expect((await as(admin, 'PATCH', '/v1/admin/users/admin', { disabled: true })).json()).toEqual(LAST);
    expect((await as(admin, 'DELETE', '/v1/admin/users/admin')).json()).toEqual(LAST);
    expect(await works(admin)).toBe(true);

    await as(admin, 'PATCH', '/v1/admin/users/ops', { role: 'Admin' });
    const ops = (await login('ops'))!;
    // Two Admins demoting each other at once: one wins, the tenant keeps an Admin.
    const [a, b] = await Promise.all([
      as(admin, 'PATCH', '/v1/admin/users/ops', { role: 'Operations' }),
      as(ops, 'PATCH', '/v1/admin/users/admin', { role: 'Operations' }),
    ]);
    // The loser is refused as the last Admin, or, when the winner demoted it first, its token is revoked.
    const codes = [a.statusCode, b.statusCode].sort();
    expect(codes[0]).toBe(200);
    expect([401, 409]).toContain(codes[1]);
    const admins = (await t.app.cardline.users.list('bank')).filter((u) => u.role === 'Admin' && !u.disabled);
    expect(admins).toHaveLength(1);
    // Whoever is the Admin now restores the other.
    const remaining = admins[0]!.username;
    const token = (await login(remaining))!;
    await as(token, 'PATCH', `/v1/admin/users/${remaining === 'admin' ? 'ops' : 'admin'}`, { role: 'Admin' });
    admin = (await login('admin'))!;
    const removed = await as(token, 'DELETE', '/v1/admin/users/ops');
    expect(removed.json()).toEqual({ result: { message: "User 'ops' removed" }, pagination: null });
    expect(await login('ops')).toBeNull();
    await t.app.cardline.users.add('bank', 'ops', 'Operations', PASSWORD);
  });
});

describe('configuration', () => {
  it('shows what the bank may change, and applies a merge patch at once', async () => {
    const before = await as(admin, 'GET', '/v1/admin/config');
    expect(before.json()).toEqual({
      result: { creditLimit: { maximum: '1000000.00', allowDecrease: false }, tokenLifetimeSeconds: 3600, encryption: { allowPlaintextPassword: false } },
      pagination: null,
    });
    const patched = await as(admin, 'PATCH', '/v1/admin/config', { creditLimit: { maximum: '80000.00' }, rateLimit: { perUserPerMinute: 1000 }, tokenLifetimeSeconds: 600 });
    expect(patched.json()).toEqual({
      result: {
        creditLimit: { maximum: '80000.00', allowDecrease: false },
        tokenLifetimeSeconds: 600,
        rateLimit: { perUserPerMinute: 1000 },
        encryption: { allowPlaintextPassword: false },
      },
      pagination: null,
    });
    // The new maximum applies to the very next request.
    const above = await t.inject({ method: 'POST', url: LIMIT_URL, headers: { TENANT: 'bank', authorization: `Bearer ${admin}` }, payload: { entityId: 'ENT-1001', amount: '90000.00' } });
    expect(above.json()).toEqual({
      result: null,
      exception: { errorCode: 'ERR_400', shortMessage: 'Bad Request', detailMessage: 'The amount 90000.00 exceeds the product maximum of 80000.00.' },
      pagination: null,
    });
    const removed = await as(admin, 'PATCH', '/v1/admin/config', { rateLimit: null });
    expect(removed.json().result.rateLimit).toBeUndefined();
  });

  it('refuses what is not the bank\'s to change, and invalid values, changing nothing', async () => {
    expect((await as(admin, 'PATCH', '/v1/admin/config', { connector: { id: 'rest' }, sandbox: true, pin: {} })).json()).toEqual(
      invalid('configPatch', ['connector', 'UnknownProperty'], ['sandbox', 'UnknownProperty'], ['pin', 'UnknownProperty']),
    );
    expect((await as(admin, 'PATCH', '/v1/admin/config', { tokenLifetimeSeconds: 10, creditLimit: { maximum: 5 } })).json()).toEqual(
      invalid('configPatch', ['creditLimit.maximum', 'TypeMismatch'], ['tokenLifetimeSeconds', 'Min']),
    );
    expect((await as(admin, 'PATCH', '/v1/admin/config', {})).json()).toEqual(invalid('configPatch', ['body', 'Size']));
    expect((await as(admin, 'GET', '/v1/admin/config')).json().result.creditLimit.maximum).toBe('80000.00');
  });
});

describe('a user changes its own password', () => {
  it('with both passwords as JWEs; a wrong current one is refused; every token of the user is revoked', async () => {
    const ops = (await login('ops'))!;
    const wrong = await as(ops, 'PUT', '/v1/me/password', { currentPassword: await t.encrypt('not-it-at-all', 'bank'), newPassword: await t.encrypt('ops-password-2', 'bank') });
    expect(wrong.json()).toEqual(problem(400, 'Bad Request', 'currentPassword is not the current password of this user.'));
    const plain = await as(ops, 'PUT', '/v1/me/password', { currentPassword: PASSWORD, newPassword: 'ops-password-2' });
    expect(plain.json()).toEqual(problem(400, 'Bad Request', "The field currentPassword must be a compact JWE encrypted to the tenant's key (GET /api/keys)."));
    const ok = await as(ops, 'PUT', '/v1/me/password', { currentPassword: await t.encrypt(PASSWORD, 'bank'), newPassword: await t.encrypt('ops-password-2', 'bank') });
    expect(ok.json()).toEqual({ result: { message: 'Password changed; log in again with the new password' }, pagination: null });
    expect(await works(ops)).toBe(false);
    expect(await login('ops', 'ops-password-2')).toEqual(expect.any(String));
  });
});

describe('the audit trail of these changes', () => {
  it('records each change with its target and never a password', async () => {
    const r = await t.db.query<{ action: string; target: Record<string, string>; j: string }>(
      "SELECT action, target, row_to_json(a)::text AS j FROM audit_log a WHERE tenant_id = 'bank' AND action LIKE 'user.%' OR tenant_id = 'bank' AND action LIKE 'tenant.config%' ORDER BY seq",
    );
    const actions = new Set(r.rows.map((x) => x.action));
    for (const a of ['user.list', 'user.create', 'user.update', 'user.unlock', 'user.password-reset', 'user.remove', 'user.password-change', 'tenant.config-read', 'tenant.config-update']) {
      expect(actions).toContain(a);
    }
    for (const { j } of r.rows) expect(j).not.toMatch(/alice-password|ops-password|eyJ/);
  });
});
