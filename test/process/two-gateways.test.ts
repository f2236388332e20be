// Two gateway processes on one PostgreSQL database: what one is told (by an operator or a tenant's Admin)
// the other applies within 2 s — a new tenant, a changed configuration, a disabled tenant, a user whose
// tokens are revoked, a revoked operator key. Skipped without PostgreSQL (DATABASE_URL), like the Redis tests.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encryptCompact } from '../../src/crypto/jwe.js';
import { MasterKey } from '../../src/crypto/master-key.js';
import { LIMIT_URL, createTestDb, type TestDb } from '../helpers/app.js';
import { GatewayProcess } from '../helpers/gateway.js';
import { sleep } from '../helpers/process.js';
import { BUILD_TIMEOUT_MS, ensureBuilt } from '../helpers/spawn.js';

// The gateway processes run the compiled dist/ (helpers/process.ts): built, if stale, once before them.
beforeAll(ensureBuilt, BUILD_TIMEOUT_MS);

const PG = process.env.DATABASE_URL;
const PASSWORD = 'Two-Gateways-Passw0rd';
const OPERATOR_KEY = 'two-gateways-operator-key-000000000001';
/** The bound: a change applies on every process within 2 s. */
const PROPAGATION_MS = 2_000;

describe.skipIf(!PG)('two gateway processes on PostgreSQL', () => {
  let store: TestDb;
  let a: GatewayProcess;
  let b: GatewayProcess;

  beforeAll(async () => {
    store = await createTestDb();
    const env = { DATABASE_URL: store.url!, CARDLINE_MASTER_KEY: MasterKey.generate(), CARDLINE_DEMO_OPERATOR_KEY: OPERATOR_KEY };
    // The first seeds the demo; the second starts on what it seeded.
    a = new GatewayProcess(env, PASSWORD);
    await a.start();
    b = new GatewayProcess(env, PASSWORD, []);
    await b.start();
  }, 300_000);

  afterAll(async () => {
    await a?.kill();
    await b?.kill();
    await store?.drop();
  });

  const json = (gw: string, method: string, url: string, body?: unknown, headers: Record<string, string> = {}) =>
    fetch(`${gw}${url}`, {
      method,
      headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const operator = { authorization: `Bearer ${OPERATOR_KEY}` };

  const login = async (gw: GatewayProcess, tenant: string, username: string, password = PASSWORD): Promise<string | null> => {
    const keys = (await (await json(gw.base, 'GET', '/api/keys', undefined, { TENANT: tenant })).json()) as { keys: Parameters<typeof encryptCompact>[1][] };
    const res = await json(gw.base, 'POST', '/api/authenticate', { username, password: await encryptCompact(password, keys.keys[0]!) }, { TENANT: tenant });
    return res.status === 200 ? ((await res.json()) as { id_token: string }).id_token : null;
  };

  /** Polls until `check` holds, failing after the propagation bound; resolves the time it took. */
  const eventually = async (what: string, check: () => Promise<boolean>): Promise<number> => {
    const started = Date.now();
    while (!(await check())) {
      if (Date.now() - started > PROPAGATION_MS) throw new Error(`${what}: not within ${PROPAGATION_MS} ms`);
      await sleep(50);
    }
    return Date.now() - started;
  };

  it('a tenant created on one process answers on the other within 2 s', async () => {
    // B has looked the tenant up before it exists (and remembers that it does not).
    expect((await json(b.base, 'GET', '/api/keys', undefined, { TENANT: 'acme' })).status).toBe(400);
    const created = await json(a.admin, 'POST', '/v1/tenants', { id: 'acme', config: { connector: { id: 'mock', options: { fixtures: 'demo' } } } }, operator);
    expect(created.status).toBe(201);
    await eventually('the new tenant on B', async () => (await json(b.base, 'GET', '/api/keys', undefined, { TENANT: 'acme' })).status === 200);
    const onA = (await (await json(a.admin, 'GET', '/v1/tenants/acme', undefined, operator)).json()) as { result: { id: string } };
    expect(onA.result.id).toBe('acme');
  });

  it("a configuration change applies on the other process within 2 s", async () => {
    const admin = (await login(b, 'demo', 'admin'))!;
    const raise = () => json(b.base, 'POST', LIMIT_URL, { entityId: 'ENT-1002', amount: '90000.00' }, { TENANT: 'demo', authorization: `Bearer ${admin}` });
    expect((await raise()).status).toBe(200);
    const adminOnA = (await login(a, 'demo', 'admin'))!;
    const patched = await json(a.base, 'PATCH', '/v1/admin/config', { creditLimit: { maximum: '80000.00' } }, { 'X-TENANT-ID': 'demo', authorization: `Bearer ${adminOnA}` });
    expect(patched.status).toBe(200);
    await eventually('the new maximum on B', async () => (await raise()).status === 400);
  });

  it("a user disabled on one process loses its tokens on the other within 2 s", async () => {
    const ops = (await login(b, 'demo', 'ops'))!;
    const read = () => json(b.base, 'GET', '/v1/cards/CARD-3001', undefined, { 'X-TENANT-ID': 'demo', authorization: `Bearer ${ops}` });
    expect((await read()).status).toBe(200);
    const adminOnA = (await login(a, 'demo', 'admin'))!;
    const disabled = await json(a.base, 'PATCH', '/v1/admin/users/ops', { disabled: true }, { 'X-TENANT-ID': 'demo', authorization: `Bearer ${adminOnA}` });
    expect(disabled.status).toBe(200);
    await eventually("ops's token refused on B", async () => (await read()).status === 401);
  });

  it('a tenant disabled by an operator on one process answers as unknown on the other within 2 s', async () => {
    const admin = (await login(b, 'demo-b', 'admin'))!;
    const read = () => json(b.base, 'GET', '/v1/cards/CARD-3001', undefined, { 'X-TENANT-ID': 'demo-b', authorization: `Bearer ${admin}` });
    expect((await read()).status).toBe(200);
    expect((await json(a.admin, 'POST', '/v1/tenants/demo-b/disable', undefined, operator)).status).toBe(200);
    await eventually('demo-b refused on B', async () => (await read()).status === 400);
  });

  it("an operator key revoked on one process is refused by the other's management listener within 2 s", async () => {
    const created = await json(a.admin, 'POST', '/v1/operator-keys', { name: 'short-lived' }, operator);
    const { key } = ((await created.json()) as { result: { key: string } }).result;
    const list = () => json(b.admin, 'GET', '/v1/tenants', undefined, { authorization: `Bearer ${key}` });
    expect((await list()).status).toBe(200);
    expect((await json(a.admin, 'DELETE', '/v1/operator-keys/short-lived', undefined, operator)).status).toBe(200);
    await eventually('the revoked key refused on B', async () => (await list()).status === 401);
  });
});
