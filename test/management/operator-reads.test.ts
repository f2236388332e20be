// What an operator's reads leave behind and what the console's pages read: page views and polling write no
// audit record (a lookup of a customer's or a card's data does), a trail filters changes from reads, a broken
// chain names the page that starts at its record, and a core's breaker says which other tenants share it.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildMockCore } from '../../connectors/mock-core/server.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
let m: FastifyInstance;
let key: string;
let core: FastifyInstance;
beforeAll(async () => {
  // Every call to this core fails: the breaker it shares between two tenants opens.
  core = buildMockCore({ fixtures: 'demo', faults: { errorRate: 1 } });
  const coreBase = await core.listen({ host: '127.0.0.1', port: 0 });
  const rest = (bank: string) => ({ connector: { id: 'rest', options: { baseUrl: `${coreBase}/banks/${bank}` } } });
  t = await createTestApp({ tenants: [{ id: 'north', config: rest('north') }, { id: 'south', config: rest('south') }] });
  m = await t.management();
  key = await t.operatorKey('ops-reader');
});
afterAll(async () => {
  await t.close();
  await core.close();
});

const get = (url: string) => m.inject({ method: 'GET', url, headers: { authorization: `Bearer ${key}` } });
const records = async (tenant: string) =>
  (await t.db.query<{ action: string; method: string }>('SELECT action, method FROM audit_log WHERE tenant_id = $1 AND actor = $2 ORDER BY seq', [tenant, 'ops-reader'])).rows;

describe("an operator's reads", () => {
  it('leave no audit record for page views and polling, in the tenant\'s trail or the platform\'s', async () => {
    const views = [
      '/v1/tenants',
      '/v1/tenants?q=demo',
      '/v1/tenants/demo',
      '/v1/tenants/demo/keys',
      '/v1/tenants/demo/connectors',
      '/v1/tenants/demo/users',
      '/v1/tenants/demo/channels',
      '/v1/tenants/demo/shadow',
      '/v1/tenants/demo/audit',
      '/v1/tenants/demo/audit/verify',
      '/v1/tenants/_platform/audit',
      '/v1/operator-keys',
      '/v1/console/cores',
      '/v1/console/figures',
      '/v1/console/connectors',
    ];
    for (let poll = 0; poll < 2; poll++) {
      for (const url of views) expect((await get(url)).statusCode, url).toBe(200);
    }
    expect(await records('demo')).toEqual([]);
    expect(await records('_platform')).toEqual([]);
  });

  it("record a lookup of a customer's or a card's data, and every change", async () => {
    expect((await get('/v1/tenants/demo/customers/ENT-1001')).statusCode).toBe(200);
    expect((await get('/v1/tenants/demo/cards/CARD-3001')).statusCode).toBe(200);
    const renamed = await m.inject({ method: 'PATCH', url: '/v1/tenants/demo', headers: { authorization: `Bearer ${key}` }, payload: { name: 'Demo Bank (renamed)' } });
    expect(renamed.statusCode).toBe(200);
    expect(await records('demo')).toEqual([
      { action: 'console.customer-lookup', method: 'GET' },
      { action: 'console.card-lookup', method: 'GET' },
      { action: 'tenant.update', method: 'PATCH' },
    ]);
  });

  it('a trail filters changes (kind=write) from reads (kind=read), on the management listener and the tenant\'s own API', async () => {
    const actions = (res: { json(): { result: { action: string }[] } }) => res.json().result.map((r) => r.action);
    expect(actions(await get('/v1/tenants/demo/audit?actor=ops-reader&kind=write'))).toEqual(['tenant.update']);
    expect(actions(await get('/v1/tenants/demo/audit?actor=ops-reader&kind=read'))).toEqual(['console.card-lookup', 'console.customer-lookup']);
    expect(actions(await get('/v1/tenants/demo/audit?actor=ops-reader'))).toEqual(['tenant.update', 'console.card-lookup', 'console.customer-lookup']);
    const own = await t.inject({ method: 'GET', url: '/v1/audit?actor=ops-reader&kind=write', headers: { TENANT: 'demo', authorization: `Bearer ${await t.token('Admin')}` } });
    expect(own.statusCode).toBe(200);
    expect(actions(own)).toEqual(['tenant.update']);
    const bad = await get('/v1/tenants/demo/audit?kind=writes');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().fieldErrors).toEqual([{ field: 'kind', message: 'Invalid', objectName: 'auditQuery' }]);
  });

  it('a broken chain names the cursor of the trail page that starts at its record', async () => {
    // More changes than a page holds after the record that will be edited, so it is not on the first page.
    for (let i = 0; i < 60; i++) {
      const res = await m.inject({ method: 'PATCH', url: '/v1/tenants/north', headers: { authorization: `Bearer ${key}` }, payload: { name: `North ${i}` } });
      expect(res.statusCode).toBe(200);
    }
    const target = (await t.db.query<{ seq: string }>("SELECT seq FROM audit_log WHERE tenant_id = 'north' AND actor = 'ops-reader' ORDER BY seq LIMIT 1")).rows[0]!;
    const seq = Number(target.seq);
    await t.db.query("UPDATE audit_log SET actor = 'someone-else' WHERE tenant_id = 'north' AND seq = $1", [seq]);
    const verified = (await get('/v1/tenants/north/audit/verify')).json().result;
    expect(verified).toMatchObject({ ok: false, seq, reason: expect.stringMatching(/^edited/) });
    const first = (await get('/v1/tenants/north/audit')).json();
    expect(first.result.map((r: { seq: number }) => r.seq)).not.toContain(seq);
    const page = (await get(`/v1/tenants/north/audit?cursor=${verified.cursor}`)).json();
    expect(page.result[0].seq).toBe(seq);
  });
  it("look up an authorization with its decision trail and the rule that declined it, recorded as a lookup", async () => {
    const asTenant = async (method: 'POST' | 'DELETE', url: string, payload: unknown, role: 'Admin' | 'API Integration') => {
      const res = await t.inject({ method, url, headers: { 'X-TENANT-ID': 'demo', authorization: `Bearer ${await t.token(role)}` }, ...(payload ? { payload: payload as string } : {}) });
      expect(res.statusCode, res.body).toBeLessThan(300);
      return res.json().result;
    };
    const rule = await asTenant('POST', '/v1/admin/auth-rules', { name: 'No casinos', mode: 'active', cardId: 'CARD-3001', conditions: [{ attribute: 'mcc', operation: 'is-one-of', values: ['7995'] }] }, 'Admin');
    const ask = (mcc: string) => ({ cardId: 'CARD-3001', amount: '80.00', currency: 'EUR', merchant: { name: 'Lucky Star', mcc, country: 'MT' }, channel: 'ECOM' });
    const declined = await asTenant('POST', '/v1/authorizations', ask('7995'), 'API Integration');
    const approved = await asTenant('POST', '/v1/authorizations', ask('5814'), 'API Integration');
    const before = (await records('demo')).length;
    const read = await get(`/v1/tenants/demo/authorizations/${declined.authorizationId}`);
    expect(read.statusCode).toBe(200);
    const { authorization, decidingRule } = read.json().result;
    expect(authorization).toEqual(declined);
    expect(decidingRule).toEqual({ ruleId: rule.ruleId, version: 1, name: 'No casinos' });
    // No rule decided an approval; a rule removed since is named by id and version, its name gone with it.
    expect((await get(`/v1/tenants/demo/authorizations/${approved.authorizationId}`)).json().result.decidingRule).toBeNull();
    await asTenant('DELETE', `/v1/admin/auth-rules/${rule.ruleId}`, undefined, 'Admin');
    expect((await get(`/v1/tenants/demo/authorizations/${declined.authorizationId}`)).json().result.decidingRule).toEqual({ ruleId: rule.ruleId, version: 1, name: null });
    const missing = await get('/v1/tenants/demo/authorizations/auth_nothing');
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ status: 404, detail: "This tenant has no authorization 'auth_nothing'." });
    expect((await records('demo')).slice(before)).toEqual([
      { action: 'console.authorization-lookup', method: 'GET' },
      { action: 'console.authorization-lookup', method: 'GET' },
      { action: 'console.authorization-lookup', method: 'GET' },
      { action: 'console.authorization-lookup', method: 'GET' },
    ]);
  });
});

describe("a core's breaker", () => {
  it('names the other tenants on the same core that share it', async () => {
    for (const tenant of ['north', 'south']) {
      await t.app.cardline.users.create(tenant, 'root', 'Admin', 'root-password-1');
      const login = await t.app.inject({ method: 'POST', url: '/api/authenticate', headers: { TENANT: tenant }, payload: { username: 'root', password: await t.encrypt('root-password-1', tenant) } });
      const headers = { TENANT: tenant, authorization: `Bearer ${login.json().id_token as string}` };
      const res = await t.app.inject({ method: 'GET', url: '/v1/entities/ENT-1001', headers });
      expect(res.statusCode).toBeGreaterThanOrEqual(500);
    }
    const cores = (await get('/v1/console/cores')).json().result as { tenantId: string; connector: string; breakerSharedWith: string[] }[];
    const of = (tenant: string) => cores.find((c) => c.tenantId === tenant)!;
    expect(of('north').breakerSharedWith).toEqual(['south']);
    expect(of('south').breakerSharedWith).toEqual(['north']);
    // The demo tenants' in-process mock core has no breaker to share.
    expect(cores.filter((c) => c.tenantId === 'demo').every((c) => c.breakerSharedWith.length === 0)).toBe(true);
  });
});
