// The CLI's management client is the SDK's CardlineAdmin (src/cli/remote.ts), in both of its modes: over HTTP to
// a listening management app with an operator key, and in process, its fetch handing each request to the app
// built over the store (src/cli/in-process.ts) as the principal `cli:<os-user>`. The same typed calls either way;
// a refusal or an unreachable API becomes the CLI's one line; a command calls only the operations it declared.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliError } from '../../src/cli/common.js';
import { cliOperator, injectFetch } from '../../src/cli/in-process.js';
import { commandAdmin, storeRefusal, withTarget, type Target } from '../../src/cli/remote.js';
import { buildManagementApp } from '../../src/management/app.js';
import { IN_PROCESS_HEADER } from '../../src/plugins/operator-auth.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
let m: FastifyInstance;
let http: Target;
beforeAll(async () => {
  t = await createTestApp();
  m = await t.management();
  const url = await m.listen({ host: '127.0.0.1', port: 0 });
  http = { where: url, client: { baseUrl: url, operatorKey: await t.operatorKey('typed-client') } };
});
afterAll(() => t.close());

describe('over HTTP, with an operator key', () => {
  it('creates, lists and revokes an operator key; reads a tenant; creates and lists its users, the password sent as a JWE', async () => {
    const operations = ['operator-key.create', 'operator-key.list', 'operator-key.revoke', 'tenant.read', 'tenant.list', 'tenant.keys', 'tenant-user.create', 'tenant-user.list'] as const;
    await withTarget(http, operations, async (api) => {
      const created = await api.operatorKey.create({ name: 'typed-temp' });
      expect(created.result.key).toMatch(/^clop_/);
      expect((await api.operatorKey.list({ limit: 1 }).toArray()).map((k) => k.name)).toEqual(expect.arrayContaining(['typed-client', 'typed-temp']));
      expect((await api.operatorKey.revoke('typed-temp')).result.message).toBe("Operator key 'typed-temp' revoked");
      expect((await api.tenant.read('demo')).result).toMatchObject({ id: 'demo', status: 'active' });
      const user = await api.tenantUser.create('demo', { username: 'typed-user', role: 'Read-Only', password: 'Typed-Passw0rd-1' });
      expect(user.result).toEqual({ username: 'typed-user', role: 'Read-Only', disabled: false, locked: false, lastLoginAt: null });
      expect((await api.tenant.list({ q: 'DEMO' }).toArray()).map((x) => x.id)).toEqual(['demo', 'demo-b']);
      expect((await api.tenantUser.list('demo').toArray()).map((u) => u.username)).toContain('typed-user');
    });
    // The password travelled as a JWE to the tenant's key: the user logs in with it.
    const login = await t.inject({ method: 'POST', url: '/api/authenticate', headers: { TENANT: 'demo' }, payload: { username: 'typed-user', password: await t.encrypt('Typed-Passw0rd-1') } });
    expect(login.statusCode, login.body).toBe(200);
  });

  it("refuses with the API's words, as one line", async () => {
    await expect(withTarget(http, ['tenant.read'], (api) => api.tenant.read('nobody'))).rejects.toThrow(
      new CliError("The management API refused: 404 Not Found: There is no tenant 'nobody'."),
    );
    await expect(withTarget(http, ['tenant-user.remove'], (api) => api.tenantUser.remove('demo', 'admin'))).rejects.toThrow(
      new CliError("The management API refused: 409 Last Admin [LAST_ADMIN]: 'admin' is the tenant's last Admin; make another user Admin first."),
    );
  });

  it('a client limited to the operations a command declared refuses any other, before sending anything', async () => {
    const sent: string[] = [];
    const recording: Target = {
      where: 'nowhere',
      client: {
        baseUrl: 'http://nowhere.invalid',
        operatorKey: 'clop_x',
        fetch: async (input, init) => (sent.push(`${init?.method} ${new URL(String(input)).pathname}${new URL(String(input)).search}`), Response.json({ result: [], pagination: { nextCursor: null } })),
      },
    };
    const limited = await commandAdmin(recording, ['tenant.list']);
    await expect(limited.tenant.read('demo')).rejects.toThrow("cardline: this command calls the operation 'tenant.read' without declaring it in withApi's operations.");
    await expect(limited.operatorKey.list().toArray()).rejects.toThrow("the operation 'operator-key.list' without declaring it");
    expect(sent).toEqual([]);
    expect(await limited.tenant.list({ limit: 200 }).toArray()).toEqual([]);
    expect(sent).toEqual(['GET /v1/tenants?limit=200']);
  });

  it('is typed by the generated table (checked by npm run typecheck)', async () => {
    const api = await commandAdmin(http, ['tenant.read']);
    const typeOnly = () => {
      // @ts-expect-error: tenant.read names its tenant
      void api.tenant.read();
      // @ts-expect-error: no such operation in the management table
      void api.card.lock('CARD-3001');
      // @ts-expect-error: operator-key.create takes a name, not an id
      void api.operatorKey.create({ id: 'x' });
    };
    expect(typeof typeOnly).toBe('function');
  });
});

describe('in process: the injected fetch hands each request to the app, as the CLI principal', () => {
  it('answers through app.inject with the per-process secret: audited as cli:<os-user> with no origin, refusals in the store words', async () => {
    const secret = 'in-process-test-secret';
    const app = await buildManagementApp({ services: t.app.cardline, config: t.config, inProcess: { secret, operator: cliOperator() } });
    try {
      const seen: Record<string, string>[] = [];
      const inject = injectFetch(app, secret);
      const target: Target = {
        where: 'the store',
        client: { baseUrl: 'http://in-process.invalid', fetch: async (input, init) => (seen.push(Object.fromEntries(new Headers(init?.headers).entries())), inject(input, init)) },
        refusal: storeRefusal({ TENANT_EXISTS: "Tenant 'demo' already exists." }),
      };
      const updated = await withTarget(target, ['tenant.update'], (api) => api.tenant.update('demo-b', { name: 'Demo B (in process)' }));
      expect(updated.result.name).toBe('Demo B (in process)');
      // The SDK sent no credential of its own and an Idempotency-Key for the write; the app got the secret from the fetch.
      expect(seen[0]).not.toHaveProperty('authorization');
      expect(seen[0]).not.toHaveProperty(IN_PROCESS_HEADER);
      expect(seen[0]!['idempotency-key']).toMatch(/^[0-9a-f-]{36}$/);
      const record = await t.db.query<{ actor: string; role: string; origin: string | null; action: string }>(
        "SELECT actor, role, origin, action FROM audit_log WHERE tenant_id = 'demo-b' AND action = 'tenant.update' ORDER BY seq DESC LIMIT 1",
      );
      expect(record.rows).toEqual([{ actor: cliOperator().name, role: 'Operator', origin: null, action: 'tenant.update' }]);
      await expect(
        withTarget(target, ['tenant.create'], (api) => api.tenant.create({ id: 'demo', config: { connector: { id: 'mock', options: {} } } })),
      ).rejects.toThrow(new CliError("Tenant 'demo' already exists."));
      await expect(withTarget(target, ['tenant.read'], (api) => api.tenant.read('nobody'))).rejects.toThrow(new CliError("There is no tenant 'nobody'."));
    } finally {
      await app.close();
    }
  });
});
