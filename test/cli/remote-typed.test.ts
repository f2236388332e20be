// The CLI's management client derived from the management table: an operation called by its id, its method
// and path taken from the entry, its input and answer typed by the entry's schemas (src/cli/remote.ts).
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliError } from '../../src/cli/common.js';
import { ManagementApi, managementRequest, managementTable, type ManagementOperationId } from '../../src/cli/remote.js';
import { managementOperations } from '../../src/operations/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
let m: FastifyInstance;
let api: ManagementApi;
beforeAll(async () => {
  t = await createTestApp();
  m = await t.management();
  api = new ManagementApi(await m.listen({ host: '127.0.0.1', port: 0 }), await t.operatorKey('typed-client'));
});
afterAll(() => t.close());

describe('managementRequest: method and path from the entry', () => {
  it('reaches every entry of the management table by its id', async () => {
    const byId = await managementTable();
    expect([...byId.keys()]).toEqual(managementOperations.map((op) => op.id));
    for (const op of managementOperations) {
      const params = Object.fromEntries([...op.url.matchAll(/:(\w+)/g)].map(([, name]) => [name, `v-${name}`]));
      const { method, path } = managementRequest(byId, op.id as ManagementOperationId, { params });
      expect(method).toBe(op.method);
      expect(path).toBe(op.url.replace(/:(\w+)/g, 'v-$1'));
    }
  });

  it('escapes each path parameter and adds the query', async () => {
    const byId = await managementTable();
    expect(managementRequest(byId, 'tenant-user.remove', { params: { tenantId: 'demo', username: 'a b/c' } }).path).toBe('/v1/tenants/demo/users/a%20b%2Fc');
    expect(managementRequest(byId, 'tenant.list', { query: { limit: '2', cursor: undefined } }).path).toBe('/v1/tenants?limit=2');
    expect(managementRequest(byId, 'tenant.list', { query: { q: 'north bank', limit: '2' } }).path).toBe('/v1/tenants?q=north+bank&limit=2');
    expect(() => managementRequest(byId, 'tenant.read', {})).toThrow("Operation tenant.read needs the path parameter 'tenantId'");
  });
});

describe('ManagementApi.operation: a typed call by id against the listener', () => {
  it('creates, lists and revokes an operator key; reads a tenant; lists and creates its users', async () => {
    const created = await api.operation('operator-key.create', { body: { name: 'typed-temp' } });
    expect(created.result.key).toMatch(/^clop_/);
    expect(created.result.operatorKey.name).toBe('typed-temp');
    const keys = await api.allOf('operator-key.list', {});
    expect(keys.map((k) => k.name)).toEqual(expect.arrayContaining(['typed-client', 'typed-temp']));
    const revoked = await api.operation('operator-key.revoke', { params: { name: 'typed-temp' } });
    expect(revoked.result.message).toBe("Operator key 'typed-temp' revoked");

    const tenant = await api.operation('tenant.read', { params: { tenantId: 'demo' } });
    expect(tenant.result).toMatchObject({ id: 'demo', status: 'active' });
    const user = await api.operation('tenant-user.create', {
      params: { tenantId: 'demo' },
      body: { username: 'typed-user', role: 'Read-Only', password: await t.encrypt('Typed-Passw0rd-1', 'demo') },
    });
    expect(user.result).toEqual({ username: 'typed-user', role: 'Read-Only', disabled: false, locked: false, lastLoginAt: null });
    expect((await api.allOf('tenant.list', { query: { q: 'DEMO' } })).map((x) => x.id)).toEqual(['demo', 'demo-b']);
    const users = await api.allOf('tenant-user.list', { params: { tenantId: 'demo' } });
    expect(users.map((u) => u.username)).toContain('typed-user');
  });

  it("refuses with the API's words, as call does", async () => {
    await expect(api.operation('tenant.read', { params: { tenantId: 'nobody' } })).rejects.toThrow(
      new CliError("The management API refused: 404 Not Found: There is no tenant 'nobody'."),
    );
  });

  it('a client limited to the operations a command declared refuses any other, before sending anything', async () => {
    const sent: string[] = [];
    const limited = new ManagementApi({ where: 'nowhere', send: async (method, path) => (sent.push(`${method} ${path}`), { status: 200, statusText: 'OK', text: '{"result":[],"pagination":{"nextCursor":null}}' }) }).only(['tenant.list']);
    await expect(limited.operation('tenant.read', { params: { tenantId: 'demo' } })).rejects.toThrow(
      "cardline: this command calls the operation 'tenant.read' without declaring it in withApi's operations.",
    );
    await expect(limited.allOf('operator-key.list', {})).rejects.toThrow("the operation 'operator-key.list' without declaring it");
    expect(sent).toEqual([]);
    expect(await limited.allOf('tenant.list', {})).toEqual([]);
    expect(sent).toEqual(['GET /v1/tenants?limit=200']);
  });

  it('is typed by the entry (checked by npm run typecheck)', () => {
    const typeOnly = () => {
      // @ts-expect-error: tenant.read names its tenant in the path
      void api.operation('tenant.read', {});
      // @ts-expect-error: no such operation in the management table
      void api.operation('card.lock', {});
      // @ts-expect-error: operator-key.create takes a name, not an id
      void api.operation('operator-key.create', { body: { id: 'x' } });
    };
    expect(typeof typeOnly).toBe('function');
  });
});
