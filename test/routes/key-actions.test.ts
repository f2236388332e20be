// Rotating, retiring and registering a tenant's keys are entries of the operation table: the Admin's
// `keys.retire` beside `keys.rotate` on the public listener, and all three served to an operator on the
// management listener as the Admin's own entries (src/operations/management-keys.ts). Each is audited once, by
// the pipeline, and raises its event of record once.
import type { FastifyInstance } from 'fastify';
import { exportJWK, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROBLEM_BASE, createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
let m: FastifyInstance;
let operator: string;

beforeAll(async () => {
  t = await createTestApp();
  m = await t.management();
  operator = await t.operatorKey('keys-operator');
});
afterAll(() => t?.close());

const asAdmin = async (method: 'GET' | 'POST' | 'PUT', url: string, payload?: object) =>
  t.inject({ method, url, headers: { TENANT: 'demo', authorization: `Bearer ${await t.token('Admin')}` }, ...(payload ? { payload } : {}) });
const asOperator = (method: 'POST' | 'PUT', url: string, payload?: object) =>
  m.inject({ method, url, headers: { authorization: `Bearer ${operator}` }, ...(payload ? { payload } : {}) });

const published = async (tenant: string) =>
  (await t.inject({ method: 'GET', url: '/api/keys', headers: { TENANT: tenant } })).json<{ keys: { kid: string }[] }>().keys.map((k) => k.kid);
const events = async (tenant: string, type: string) =>
  (await t.db.query<{ payload: unknown }>('SELECT payload FROM outbox WHERE tenant_id = $1 AND type = $2 ORDER BY audit_seq', [tenant, type])).rows.map((r) => r.payload);
const audited = async (tenant: string, actor: string) =>
  (
    await t.db.query<{ action: string; method: string; route: string; target: Record<string, string>; role: string; status: number }>(
      "SELECT action, method, route, target, role, status FROM audit_log WHERE tenant_id = $1 AND actor = $2 AND method <> 'GET' ORDER BY seq",
      [tenant, actor],
    )
  ).rows;

describe('POST /v1/admin/keys/{kid}/retire', () => {
  it('retires a key a rotation replaced at once: unpublished, audited, keys.retired raised once', async () => {
    const rotated = await asAdmin('POST', '/v1/admin/keys/rotate', { use: 'enc', graceSeconds: 3600 });
    expect(rotated.statusCode, rotated.body).toBe(200);
    const old = rotated.json().result.replaced[0].kid as string;
    expect(await published('demo')).toContain(old);

    const res = await asAdmin('POST', `/v1/admin/keys/${old}/retire`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      result: { kid: old, use: 'enc', alg: 'ECDH-ES+A256KW', status: 'retired', createdAt: expect.any(String), retireAt: expect.any(String), publicJwk: expect.objectContaining({ kid: old }) },
      pagination: null,
    });
    expect(await published('demo')).not.toContain(old);
    expect(await events('demo', 'keys.retired')).toEqual([{ use: 'enc', kid: old }]);
    const record = (await audited('demo', 'admin')).filter((r) => r.action === 'keys.retire');
    expect(record).toEqual([{ action: 'keys.retire', method: 'POST', route: '/v1/admin/keys/:kid/retire', target: { kid: old }, role: 'Admin', status: 200 }]);
  });

  it('refuses the active key (409 KEY_ACTIVE) and an unknown one (404), in the problem dialect, raising nothing', async () => {
    const before = (await events('demo', 'keys.retired')).length;
    const active = (await published('demo'))[0]!;
    const refused = await asAdmin('POST', `/v1/admin/keys/${active}/retire`);
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toEqual({
      type: `${PROBLEM_BASE}/problem-with-message`,
      title: 'Key Active',
      status: 409,
      message: 'error.business',
      detail: `Key '${active}' is the tenant's active enc key; rotate the enc keys first, then retire the key the rotation replaced.`,
      businessCode: 'KEY_ACTIVE',
    });
    const unknown = await asAdmin('POST', '/v1/admin/keys/no-such-kid/retire');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({
      type: `${PROBLEM_BASE}/problem-with-message`,
      title: 'Not Found',
      status: 404,
      message: 'error.http.404',
      detail: "This tenant has no gateway key 'no-such-kid'.",
    });
    const malformed = await asAdmin('POST', '/v1/admin/keys/not%20a%20kid/retire');
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json()).toMatchObject({ status: 400, fieldErrors: [{ field: 'kid', message: 'Pattern', objectName: 'keyRetirementRequest' }] });
    expect(await published('demo')).toContain(active);
    expect((await events('demo', 'keys.retired')).length).toBe(before);
  });
});

describe("a tenant's keys on the management listener: the Admin's entries, for the tenant the path names", () => {
  it('rotate, retire and register-client as an operator: recorded in the tenant’s trail, each event once', async () => {
    const rotated = await asOperator('POST', '/v1/tenants/demo-b/keys/rotate', { use: 'enc', graceSeconds: 600 });
    expect(rotated.statusCode, rotated.body).toBe(200);
    const { active, replaced } = rotated.json().result as { active: { kid: string }; replaced: { kid: string; status: string }[] };
    expect(replaced).toEqual([{ kid: expect.any(String), status: 'retiring', retireAt: expect.any(String) }]);
    expect((await published('demo-b'))[0]).toBe(active.kid);

    const retired = await asOperator('POST', `/v1/tenants/demo-b/keys/${replaced[0]!.kid}/retire`);
    expect(retired.statusCode, retired.body).toBe(200);
    expect(retired.json().result).toMatchObject({ kid: replaced[0]!.kid, status: 'retired' });

    const jwk = { ...(await exportJWK((await generateKeyPair('ECDH-ES+A256KW', { crv: 'P-256', extractable: true })).publicKey)), kid: 'demo-b-client-1' };
    const registered = await asOperator('PUT', '/v1/tenants/demo-b/client-key', { jwk });
    expect(registered.statusCode, registered.body).toBe(200);
    expect(registered.json().result.jwk).toEqual({ kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y, kid: 'demo-b-client-1', use: 'enc', alg: 'ECDH-ES+A256KW' });
    expect((await t.app.cardline.clientKeys.get('demo-b'))?.jwk.kid).toBe('demo-b-client-1');

    // The Admin's action names, the operator's routes and role, the tenant named in each target.
    expect(await audited('demo-b', 'keys-operator')).toEqual([
      { action: 'keys.rotate', method: 'POST', route: '/v1/tenants/:tenantId/keys/rotate', target: { tenantId: 'demo-b', use: 'enc' }, role: 'Operator', status: 200 },
      { action: 'keys.retire', method: 'POST', route: '/v1/tenants/:tenantId/keys/:kid/retire', target: { tenantId: 'demo-b', kid: replaced[0]!.kid }, role: 'Operator', status: 200 },
      { action: 'client-key.register', method: 'PUT', route: '/v1/tenants/:tenantId/client-key', target: { tenantId: 'demo-b', kid: 'demo-b-client-1' }, role: 'Operator', status: 200 },
    ]);
    expect(await events('demo-b', 'keys.rotated')).toEqual([{ use: 'enc', kid: active.kid, replaced: [replaced[0]!.kid] }]);
    expect(await events('demo-b', 'keys.retired')).toEqual([{ use: 'enc', kid: replaced[0]!.kid }]);
  });

  it('answers 404 for a tenant that does not exist and changes nothing; a private client key is refused by the schema', async () => {
    const res = await asOperator('POST', '/v1/tenants/nowhere/keys/rotate', { use: 'sig' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({
      type: `${PROBLEM_BASE}/problem-with-message`,
      title: 'Not Found',
      status: 404,
      message: 'error.http.404',
      detail: "There is no tenant 'nowhere'.",
    });
    const { privateKey } = await generateKeyPair('ECDH-ES+A256KW', { crv: 'P-256', extractable: true });
    const refused = await asOperator('PUT', '/v1/tenants/demo-b/client-key', { jwk: await exportJWK(privateKey) });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().fieldErrors).toEqual([{ field: 'jwk.d', message: 'UnknownProperty', objectName: 'clientKeyRequest' }]);
    expect((await t.app.cardline.clientKeys.get('demo-b'))?.jwk.kid).toBe('demo-b-client-1');
  });
});
