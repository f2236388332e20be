// CardlineAdmin against a gateway's management listener on loopback: a tenant and its first Admin created with
// an operator key (the password encrypted to the new tenant's key), the tenants listed across two pages by the
// iterator, refusals as typed problem errors, a write retried after a dropped connection ending as the stored
// replay; then the new Admin logs in with Cardline on the public listener and makes a call.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Cardline, CardlineAdmin, CardlineProblemError } from '../../sdk/src/index.js';
import { PROBLEM_BASE, createTestApp, type TestApp } from '../helpers/app.js';
import { operatorUnauthorizedDetail } from '../helpers/problems.js';

interface Seen {
  method: string;
  path: string;
  query: string;
  headers: Record<string, string>;
  body: unknown;
  status?: number;
  replayed?: string | null;
}

const TENANT = 'sdk-bank';
const PASSWORD = 'sdk-bank-root-password-1';
const MOCK_CORE = { connector: { id: 'mock', options: { fixtures: 'demo' } } };
const COMPACT_JWE = /^[\w-]+\.[\w-]*\.[\w-]+\.[\w-]+\.[\w-]+$/;

describe('CardlineAdmin', () => {
  let t: TestApp;
  let publicUrl: string;
  let managementUrl: string;
  let operatorKey: string;
  const seen: Seen[] = [];
  /** An injected fault: gets the request and may answer instead of the gateway, or after it. */
  let fault: ((req: Seen, forward: () => Promise<Response>) => Promise<Response>) | undefined;

  const recordingFetch: typeof fetch = async (input, init) => {
    const url = new URL(String(input));
    const text = typeof init?.body === 'string' ? init.body : undefined;
    const req: Seen = {
      method: init?.method ?? 'GET',
      path: url.pathname,
      query: url.search,
      headers: { ...(init?.headers as Record<string, string>) },
      body: text === undefined ? undefined : JSON.parse(text),
    };
    const forward = async () => {
      seen.push(req);
      const res = await fetch(input, init);
      req.status = res.status;
      req.replayed = res.headers.get('idempotent-replayed');
      return res;
    };
    return fault ? fault(req, forward) : forward();
  };

  const admin = (opts: Partial<ConstructorParameters<typeof CardlineAdmin>[0]> = {}) =>
    new CardlineAdmin({ baseUrl: managementUrl, operatorKey, fetch: recordingFetch, sleep: async () => undefined, ...opts });

  beforeAll(async () => {
    t = await createTestApp();
    publicUrl = await t.app.listen({ host: '127.0.0.1', port: 0 });
    managementUrl = await (await t.management()).listen({ host: '127.0.0.1', port: 0 });
    operatorKey = await t.operatorKey('ops-sdk');
  });
  afterAll(() => t.close());
  afterEach(() => {
    fault = undefined;
    seen.length = 0;
  });

  it('creates a tenant and its first Admin, the password encrypted to the tenant key, and that Admin logs in with Cardline', async () => {
    const ops = admin();
    const created = await ops.tenant.create({ id: TENANT, name: 'SDK Bank', config: MOCK_CORE });
    expect(created.result.tenant).toMatchObject({ id: TENANT, name: 'SDK Bank', status: 'active', version: 1 });
    expect(created.result.encryptionKeys.keys).toHaveLength(1);

    const root = await ops.tenantUser.create(TENANT, { username: 'root', role: 'Admin', password: PASSWORD });
    expect(root.result).toMatchObject({ username: 'root', role: 'Admin', disabled: false });

    // The operator key as a bearer, no tenant header; writes carry an Idempotency-Key; the password left as a
    // JWE to the key the management API publishes for the tenant (the key creation answered).
    expect(seen.map((s) => `${s.method} ${s.path}`)).toEqual(['POST /v1/tenants', `GET /v1/tenants/${TENANT}/keys`, `POST /v1/tenants/${TENANT}/users`]);
    for (const s of seen) {
      expect(s.headers.authorization).toBe(`Bearer ${operatorKey}`);
      expect(Object.keys(s.headers).map((h) => h.toLowerCase())).not.toContain('tenant');
    }
    expect(seen[0]!.headers['idempotency-key']).toMatch(/^[0-9a-f-]{36}$/);
    expect(seen[1]!.headers['idempotency-key']).toBeUndefined();
    const sent = seen[2]!.body as { username: string; role: string; password: string };
    expect(sent).toMatchObject({ username: 'root', role: 'Admin' });
    expect(sent.password).toMatch(COMPACT_JWE);
    const header = JSON.parse(Buffer.from(sent.password.split('.')[0]!, 'base64url').toString()) as Record<string, unknown>;
    expect(header).toMatchObject({ alg: 'ECDH-ES+A256KW', enc: 'A256GCM', kid: created.result.encryptionKeys.keys[0]!.kid });
    expect(JSON.stringify(seen)).not.toContain(PASSWORD);

    // The new Admin, on the public listener, with the tenant's client.
    const cl = new Cardline({ baseUrl: publicUrl, tenant: TENANT });
    await cl.login('root', PASSWORD);
    const users = await cl.user.list().toArray();
    expect(users.map((u) => [u.username, u.role])).toEqual([['root', 'Admin']]);
  });

  it('lists the tenants across two pages with the async iterator', async () => {
    const ops = admin();
    const all = await ops.tenant.list({ limit: 200 }).toArray();
    const ids = all.map((tenant) => tenant.id);
    expect(ids).toContain(TENANT);
    expect(ids.length).toBeGreaterThanOrEqual(3);
    seen.length = 0;

    const pages: string[][] = [];
    for await (const page of ops.tenant.list({ limit: ids.length - 1 }).pages()) pages.push(page.result.map((tenant) => tenant.id));
    expect(pages.map((p) => p.length)).toEqual([ids.length - 1, 1]);
    expect(pages.flat()).toEqual(ids);
    expect(seen.map((s) => new URLSearchParams(s.query).has('cursor'))).toEqual([false, true]);

    const walked: string[] = [];
    for await (const tenant of ops.tenant.list({ limit: ids.length - 1 })) walked.push(tenant.id);
    expect(walked).toEqual(ids);
  });

  it('pages on demand: page() answers the first page, or the one a previous cursor names', async () => {
    const ops = admin();
    const first = await ops.tenant.list({ limit: 1 }).page();
    const second = await ops.tenant.list({ limit: 1 }).page(first.pagination!.nextCursor);
    expect([first.result.length, second.result.length]).toEqual([1, 1]);
    expect(second.result[0]!.id > first.result[0]!.id).toBe(true);
    expect(seen.map((s) => new URLSearchParams(s.query).get('cursor'))).toEqual([null, first.pagination!.nextCursor]);
  });

  it("the console's variant: no key, the session cookie, and the session's CSRF token on each change, read as it is sent", async () => {
    const signIn = await fetch(`${managementUrl}/console/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ key: operatorKey }) });
    expect(signIn.status).toBe(201);
    const cookie = signIn.headers.get('set-cookie')!.split(';')[0]!;
    const csrf = ((await signIn.json()) as { result: { csrfToken: string } }).result.csrfToken;
    // What the browser adds by itself to a same-origin request: its cookie (Node's fetch keeps no jar).
    const browser: typeof fetch = (input, init) => recordingFetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), cookie } });
    let token = 'not-the-token';
    const ops = new CardlineAdmin({ baseUrl: managementUrl, session: { csrfToken: () => token }, fetch: browser, sleep: async () => undefined });

    expect((await ops.tenant.read(TENANT)).result.id).toBe(TENANT);
    const refused = (await ops.tenant.update(TENANT, { name: 'SDK Bank (console)' }).catch((err: unknown) => err)) as CardlineProblemError;
    expect(refused).toBeInstanceOf(CardlineProblemError);
    expect(refused.status).toBe(403);
    token = csrf;
    expect((await ops.tenant.update(TENANT, { name: 'SDK Bank (console)' })).result.name).toBe('SDK Bank (console)');

    expect(seen.map((s) => [s.method, s.headers.authorization, s.headers['x-csrf-token'], s.status])).toEqual([
      ['GET', undefined, undefined, 200],
      ['PATCH', undefined, 'not-the-token', 403],
      ['PATCH', undefined, csrf, 200],
    ]);
    expect(seen[2]!.headers['idempotency-key']).toMatch(/^[0-9a-f-]{36}$/);
    const audited = await t.db.query<{ actor: string }>("SELECT actor FROM audit_log WHERE tenant_id = $1 AND action = 'tenant.update' AND status = 200", [TENANT]);
    expect(audited.rows).toEqual([{ actor: 'ops-sdk' }]);
  });

  it('takes a fetch that authenticates each request itself instead of a key, and otherwise needs a key or a session', async () => {
    expect(() => new CardlineAdmin({ baseUrl: managementUrl })).toThrow('CardlineAdmin needs an operatorKey (or a console session, or a fetch that authenticates its requests)');
    expect(() => new CardlineAdmin({ baseUrl: managementUrl, operatorKey, session: { csrfToken: () => '' } })).toThrow('CardlineAdmin takes an operatorKey or a session, not both');
    const given: Record<string, string>[] = [];
    const authenticating: typeof fetch = (input, init) => {
      given.push({ ...(init?.headers as Record<string, string>) });
      return recordingFetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), authorization: `Bearer ${operatorKey}` } });
    };
    const ops = new CardlineAdmin({ baseUrl: managementUrl, fetch: authenticating });
    expect((await ops.tenant.read(TENANT)).result.id).toBe(TENANT);
    expect(given[0]).not.toHaveProperty('authorization');
    expect(seen[0]!.status).toBe(200);
  });

  it('throws a refusal as a typed problem error with the exact fields', async () => {
    const ops = admin();
    const refused = await ops.tenant.create({ id: TENANT, config: MOCK_CORE }).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(CardlineProblemError);
    const e = refused as CardlineProblemError;
    expect({ status: e.status, code: e.code, businessCode: e.businessCode, title: e.title, type: e.type, detail: e.detail, fieldErrors: e.fieldErrors }).toEqual({
      status: 409,
      code: 'error.business',
      businessCode: 'TENANT_EXISTS',
      title: 'Tenant Exists',
      type: `${PROBLEM_BASE}/problem-with-message`,
      detail: `A tenant '${TENANT}' exists already.`,
      fieldErrors: [],
    });
    expect(e.requestId).toEqual(expect.any(String));
    expect(e.message).toBe(e.detail);

    const invalid = (await ops.tenantUser.create(TENANT, { username: 'bad/name', role: 'Admin', password: PASSWORD }).catch((err: unknown) => err)) as CardlineProblemError;
    expect(invalid).toBeInstanceOf(CardlineProblemError);
    expect(invalid.problem).toEqual({
      type: `${PROBLEM_BASE}/constraint-violation`,
      title: 'Method argument not valid',
      status: 400,
      message: 'error.validation',
      fieldErrors: [{ field: 'username', message: 'Pattern', objectName: 'userRequest' }],
    });
    expect([invalid.status, invalid.code, invalid.fieldErrors]).toEqual([400, 'error.validation', [{ field: 'username', message: 'Pattern', objectName: 'userRequest' }]]);

    const unknown = (await admin({ operatorKey: 'clop_not-a-key-at-all-000000000000000' })
      .tenant.read(TENANT)
      .catch((err: unknown) => err)) as CardlineProblemError;
    expect(unknown).toBeInstanceOf(CardlineProblemError);
    expect(unknown.problem).toEqual({
      type: `${PROBLEM_BASE}/problem-with-message`,
      title: 'Unauthorized',
      status: 401,
      message: 'error.http.401',
      detail: operatorUnauthorizedDetail(managementUrl.replace(/\/$/, '')),
    });
  });

  it('retries a write whose connection dropped with the same Idempotency-Key: the stored answer is replayed, the user created once', async () => {
    const ops = admin();
    let dropped = false;
    fault = async (req, forward) => {
      const res = await forward();
      if (req.method === 'POST' && !dropped) {
        // The gateway acted; the answer is lost on the way back.
        dropped = true;
        throw new TypeError('fetch failed: socket hang up');
      }
      return res;
    };
    const user = await ops.tenantUser.create(TENANT, { username: 'ops-two', role: 'Operations', password: PASSWORD });
    expect(user.result).toMatchObject({ username: 'ops-two', role: 'Operations' });

    const posts = seen.filter((s) => s.method === 'POST');
    expect(posts.map((s) => [s.status, s.replayed])).toEqual([
      [201, null],
      [201, 'true'],
    ]);
    expect(posts[1]!.headers['idempotency-key']).toBe(posts[0]!.headers['idempotency-key']);
    // Encrypted anew for the retry (a JWE is accepted once); the key compares what it opens to.
    expect((posts[1]!.body as { password: string }).password).not.toBe((posts[0]!.body as { password: string }).password);
    const stored = await t.db.query<{ n: string }>("SELECT count(*) AS n FROM users WHERE tenant_id = $1 AND username = 'ops-two'", [TENANT]);
    expect(Number(stored.rows[0]!.n)).toBe(1);
  });
});
