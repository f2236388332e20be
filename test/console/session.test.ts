// The operations console's session on the management listener (issue 19): an operator key exchanged for an
// HttpOnly SameSite=Strict cookie whose id the store keeps only hashed; the cookie counts as the key, a change
// needs the CSRF token, an idle session ends, sign-out ends it, revoking the key ends it; every change is
// audited with the key's name. And the console's own reads: channels, deliveries, audit with verification.
import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { problem } from '../helpers/problems.js';

let t: TestApp;
let m: FastifyInstance;
let key: string;
beforeAll(async () => {
  t = await createTestApp();
  m = await t.management();
  key = await t.operatorKey('ops-console');
});
afterAll(async () => {
  await t.close();
});

async function signIn(withKey = key): Promise<{ cookie: string; csrf: string; setCookie: string }> {
  const res = await m.inject({ method: 'POST', url: '/console/session', payload: { key: withKey } });
  expect(res.statusCode).toBe(201);
  const setCookie = String(res.headers['set-cookie']);
  return { cookie: setCookie.split(';')[0]!, csrf: res.json().result.csrfToken, setCookie };
}

describe('console sign-in', () => {
  it('exchanges an operator key for an HttpOnly SameSite=Strict cookie, stores only its hash, and audits it', async () => {
    const res = await m.inject({ method: 'POST', url: '/console/session', payload: { key } });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual({ result: { operator: 'ops-console', csrfToken: expect.stringMatching(/^[\w-]{43}$/), idleTimeoutSeconds: 900 }, pagination: null });
    const setCookie = String(res.headers['set-cookie']);
    expect(setCookie).toMatch(/^cardline_console=[\w-]{43}; Path=\/; HttpOnly; SameSite=Strict$/);
    const id = setCookie.split(';')[0]!.split('=')[1]!;
    const stored = await t.db.query<{ id_hash: string; operator: string }>('SELECT id_hash, operator FROM console_sessions');
    expect(stored.rows.map((r) => r.operator)).toContain('ops-console');
    expect(JSON.stringify(stored.rows)).not.toContain(id);
    expect(res.body).not.toContain(key);
    const audited = await t.db.query<{ actor: string; outcome: string }>("SELECT actor, outcome FROM audit_log WHERE action = 'console.sign-in' ORDER BY seq DESC LIMIT 1");
    expect(audited.rows[0]).toEqual({ actor: 'ops-console', outcome: 'succeeded' });
  });

  it('marks the cookie Secure when the console is reached over TLS (a proxy that says so, when trusted)', async () => {
    const t2 = await createTestApp({ env: { TRUST_PROXY: '127.0.0.1' } });
    try {
      const m2 = await t2.management();
      const key2 = await t2.operatorKey('ops-tls');
      const res = await m2.inject({ method: 'POST', url: '/console/session', headers: { 'x-forwarded-proto': 'https' }, payload: { key: key2 }, remoteAddress: '127.0.0.1' });
      expect(String(res.headers['set-cookie'])).toMatch(/; HttpOnly; SameSite=Strict; Secure$/);
    } finally {
      await t2.close();
    }
  });

  it('signing in again ends the session the browser held: its cookie no longer opens anything', async () => {
    const first = await signIn();
    expect((await m.inject({ method: 'GET', url: '/v1/tenants', headers: { cookie: first.cookie } })).statusCode).toBe(200);
    const res = await m.inject({ method: 'POST', url: '/console/session', headers: { cookie: first.cookie }, payload: { key } });
    expect(res.statusCode).toBe(201);
    const second = String(res.headers['set-cookie']).split(';')[0]!;
    expect(second).not.toBe(first.cookie);
    expect((await m.inject({ method: 'GET', url: '/v1/tenants', headers: { cookie: first.cookie } })).statusCode).toBe(401);
    expect((await m.inject({ method: 'GET', url: '/v1/tenants', headers: { cookie: second } })).statusCode).toBe(200);
    const idHash = createHash('sha256').update(first.cookie.split('=')[1]!).digest('hex');
    expect((await t.db.query('SELECT 1 FROM console_sessions WHERE id_hash = $1', [idHash])).rows).toEqual([]);
  });

  it('refuses an unknown key with a 401 that says what to do', async () => {
    const res = await m.inject({ method: 'POST', url: '/console/session', payload: { key: 'clop_not-a-key-at-all-000000000000000' } });
    expect(res.statusCode).toBe(401);
    expect(res.headers['set-cookie']).toBeUndefined();
    expect(res.json()).toEqual(
      problem(
        401,
        'Unauthorized',
        'This operator key is unknown or revoked: check it (the demo printed one at its first start), or have an operator with a key create one while the gateway runs: ' +
          '`CARDLINE_OPERATOR_KEY=<their key> npx cardline --admin-url http://localhost:80 operator-key create --name <name>`.',
      ),
    );
  });

  it('refuses a body without the key with the field error', async () => {
    const res = await m.inject({ method: 'POST', url: '/console/session', payload: {} });
    expect(res.statusCode).toBe(400);
    expect(res.json().fieldErrors).toEqual([{ field: 'key', message: 'NotNull', objectName: 'signInRequest' }]);
  });
});

describe('the session as the operator key', () => {
  it('reads the management API with the cookie alone, and reads its CSRF token again after a reload', async () => {
    const s = await signIn();
    const list = await m.inject({ method: 'GET', url: '/v1/tenants', headers: { cookie: s.cookie } });
    expect(list.statusCode).toBe(200);
    expect(list.json().result.map((x: { id: string }) => x.id)).toContain('demo');
    const again = await m.inject({ method: 'GET', url: '/console/session', headers: { cookie: s.cookie } });
    expect(again.json().result).toEqual({ operator: 'ops-console', csrfToken: s.csrf, idleTimeoutSeconds: 900 });
  });

  it('refuses a change without the CSRF token (403) or with another session\'s, and audits one with it under the key\'s name', async () => {
    const s = await signIn();
    const other = await signIn();
    for (const headers of [{ cookie: s.cookie }, { cookie: s.cookie, 'x-csrf-token': other.csrf }]) {
      const refused = await m.inject({ method: 'POST', url: '/v1/tenants/demo-b/disable', headers });
      expect(refused.statusCode).toBe(403);
      expect(refused.json()).toEqual(
        problem(403, 'Forbidden', "A change made with the console session needs the session's CSRF token in the x-csrf-token header; reload the console and try again."),
      );
    }
    expect((await t.app.cardline.tenants.stored('demo-b'))!.status).toBe('active');
    const done = await m.inject({ method: 'POST', url: '/v1/tenants/demo-b/disable', headers: { cookie: s.cookie, 'x-csrf-token': s.csrf } });
    expect(done.statusCode).toBe(200);
    expect(done.json().result.status).toBe('disabled');
    await m.inject({ method: 'POST', url: '/v1/tenants/demo-b/enable', headers: { cookie: s.cookie, 'x-csrf-token': s.csrf } });
    const audited = await t.db.query<{ actor: string; role: string; action: string; outcome: string }>(
      "SELECT actor, role, action, outcome FROM audit_log WHERE tenant_id = 'demo-b' AND action IN ('tenant.disable', 'tenant.enable') ORDER BY seq",
    );
    // The refused attempts are on the trail too, without an actor: nobody was authenticated for a change.
    expect(audited.rows).toEqual([
      { actor: null, role: null, action: 'tenant.disable', outcome: 'forbidden' },
      { actor: null, role: null, action: 'tenant.disable', outcome: 'forbidden' },
      { actor: 'ops-console', role: 'Operator', action: 'tenant.disable', outcome: 'succeeded' },
      { actor: 'ops-console', role: 'Operator', action: 'tenant.enable', outcome: 'succeeded' },
    ]);
  });

  it('ends after the idle timeout with a 401 that says so, and is gone from the store', async () => {
    const s = await signIn();
    const id = s.cookie.split('=')[1]!;
    // Idle for 16 minutes: the store's own clock decides, so the test moves the session's last use back.
    await t.db.query("UPDATE console_sessions SET seen_at = now() - interval '16 minutes' WHERE id_hash = encode(sha256(convert_to($1, 'UTF8')), 'hex')", [id]);
    const res = await m.inject({ method: 'GET', url: '/v1/tenants', headers: { cookie: s.cookie } });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual(problem(401, 'Unauthorized', 'The console session ended after 15 minutes without use; sign in again with your operator key.'));
    expect((await m.inject({ method: 'GET', url: '/v1/tenants', headers: { cookie: s.cookie } })).json().detail).toMatch(/^A valid operator key is required/);
  });

  it('keeps a session in use past the timeout of its start (each use moves the idle clock)', async () => {
    const s = await signIn();
    const id = s.cookie.split('=')[1]!;
    await t.db.query("UPDATE console_sessions SET seen_at = now() - interval '14 minutes', created_at = now() - interval '1 hour' WHERE id_hash = encode(sha256(convert_to($1, 'UTF8')), 'hex')", [id]);
    expect((await m.inject({ method: 'GET', url: '/v1/tenants', headers: { cookie: s.cookie } })).statusCode).toBe(200);
    const seen = await t.db.query<{ idle: boolean }>("SELECT seen_at > now() - interval '1 minute' AS idle FROM console_sessions WHERE id_hash = encode(sha256(convert_to($1, 'UTF8')), 'hex')", [id]);
    expect(seen.rows[0]!.idle).toBe(true);
  });

  it('signs out (with the CSRF token): the cookie is cleared and no longer opens anything', async () => {
    const s = await signIn();
    expect((await m.inject({ method: 'DELETE', url: '/console/session', headers: { cookie: s.cookie } })).statusCode).toBe(403);
    const out = await m.inject({ method: 'DELETE', url: '/console/session', headers: { cookie: s.cookie, 'x-csrf-token': s.csrf } });
    expect(out.statusCode).toBe(200);
    expect(String(out.headers['set-cookie'])).toBe('cardline_console=; Max-Age=0; Path=/; HttpOnly; SameSite=Strict');
    expect((await m.inject({ method: 'GET', url: '/v1/tenants', headers: { cookie: s.cookie } })).statusCode).toBe(401);
  });

  it('ends when its operator key is revoked', async () => {
    const tempKey = await t.operatorKey('ops-temp');
    const s = await signIn(tempKey);
    expect((await m.inject({ method: 'GET', url: '/v1/tenants', headers: { cookie: s.cookie } })).statusCode).toBe(200);
    await t.app.cardline.operatorKeys.revoke('ops-temp');
    expect((await m.inject({ method: 'GET', url: '/v1/tenants', headers: { cookie: s.cookie } })).statusCode).toBe(401);
  });

  it('is valid on another gateway process over the same store (the session lives in the store)', async () => {
    const s = await signIn();
    const { buildManagementApp } = await import('../../src/management/app.js');
    const second = await buildManagementApp({ services: t.app.cardline, config: t.config });
    try {
      expect((await second.inject({ method: 'GET', url: '/v1/tenants', headers: { cookie: s.cookie } })).statusCode).toBe(200);
    } finally {
      await second.close();
    }
  });
});

describe('the console files', () => {
  it('redirect /console to /console/ and answer a missing asset with 404 in the problem dialect', async () => {
    const res = await m.inject({ method: 'GET', url: '/console' });
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toBe('/console/');
    const missing = await m.inject({ method: 'GET', url: '/console/assets/nothing.js' });
    expect([404, 503]).toContain(missing.statusCode);
  });
});

describe("the console's reads", () => {
  it("audit: a tenant's trail filtered by action, and its chain verified; the platform's trail too; an unknown tenant 404", async () => {
    const auth = { authorization: `Bearer ${key}` };
    await m.inject({ method: 'PATCH', url: '/v1/tenants/demo', headers: auth, payload: { name: 'Demo Bank' } });
    const page = await m.inject({ method: 'GET', url: '/v1/tenants/demo/audit?action=tenant.update&limit=5', headers: auth });
    expect(page.statusCode).toBe(200);
    expect(page.json().result.length).toBeGreaterThan(0);
    expect(page.json().result.every((r: { action: string; actor: string }) => r.action === 'tenant.update' && r.actor === 'ops-console')).toBe(true);
    const verified = await m.inject({ method: 'GET', url: '/v1/tenants/demo/audit/verify', headers: auth });
    expect(verified.json().result).toEqual({ ok: true, records: expect.any(Number), chains: expect.any(Array), root: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(verified.json().result.chains[0]).toEqual({ chain: expect.any(String), size: expect.any(Number), head: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect((await m.inject({ method: 'GET', url: '/v1/tenants/_platform/audit/verify', headers: auth })).json().result.ok).toBe(true);
    expect((await m.inject({ method: 'GET', url: '/v1/tenants/nobody/audit/verify', headers: auth })).json()).toEqual(problem(404, 'Not Found', "There is no tenant 'nobody'."));
    const bad = await m.inject({ method: 'GET', url: '/v1/tenants/demo/audit?limit=0', headers: auth });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().fieldErrors).toEqual([{ field: 'limit', message: 'Min', objectName: 'auditQuery' }]);
  });

  it('figures: request counters overall and per tenant, with the latency buckets', async () => {
    await t.inject({ method: 'GET', url: '/api/keys', headers: { TENANT: 'demo' } });
    const res = await m.inject({ method: 'GET', url: '/v1/console/figures', headers: { authorization: `Bearer ${key}` } });
    const f = res.json().result;
    expect(f.overall.requests).toBeGreaterThan(0);
    expect(f.bounds[0]).toBe(0.001);
    expect(f.overall.buckets).toHaveLength(f.bounds.length);
    expect(f.tenants.demo.requests).toBeGreaterThan(0);
  });

  it("cores: every started core with its breaker and recent calls", async () => {
    // A core starts on its first use: the connectors view starts demo's.
    await m.inject({ method: 'GET', url: '/v1/tenants/demo/connectors', headers: { authorization: `Bearer ${key}` } });
    const res = await m.inject({ method: 'GET', url: '/v1/console/cores', headers: { authorization: `Bearer ${key}` } });
    expect(res.statusCode).toBe(200);
    const demo = res.json().result.find((c: { tenantId: string }) => c.tenantId === 'demo');
    expect(demo).toMatchObject({ connector: expect.any(String), connectorId: 'mock', recent: { windowSeconds: 300 } });
  });

  it("channels and deliveries: a tenant's channel, its delivery's attempts, and a retry, audited under the operator's name", async () => {
    const auth = { authorization: `Bearer ${key}` };
    const { startReceiver } = await import('../helpers/receiver.js');
    const rx = await startReceiver();
    try {
      rx.answer('/fail-then-ok', { status: 503 }, { status: 204 });
      const channel = await t.app.cardline.channels.create('demo', true, { type: 'webhook', url: `${rx.base}/fail-then-ok`, eventTypes: ['*'], description: 'ops' });
      const first = await t.app.cardline.deliveries.test('demo', channel.channelId);
      expect(first.attempts.map((a) => a.statusCode)).toEqual([503]);
      const list = await m.inject({ method: 'GET', url: '/v1/tenants/demo/channels', headers: auth });
      expect(list.json().result.map((c: { channelId: string }) => c.channelId)).toContain(channel.channelId);
      const deliveries = await m.inject({ method: 'GET', url: `/v1/tenants/demo/channels/${channel.channelId}/deliveries`, headers: auth });
      expect(deliveries.json().result[0]).toMatchObject({ deliveryId: first.deliveryId, attempts: [{ statusCode: 503 }] });
      const retried = await m.inject({ method: 'POST', url: `/v1/tenants/demo/deliveries/${first.deliveryId}/retry`, headers: auth });
      expect(retried.json().result).toMatchObject({ status: 'delivered', attempts: [{ statusCode: 503 }, { statusCode: 204 }] });
      const audited = await t.db.query<{ actor: string; target: Record<string, string> }>("SELECT actor, target FROM audit_log WHERE tenant_id = 'demo' AND action = 'delivery.retry'");
      expect(audited.rows).toEqual([{ actor: 'ops-console', target: { tenantId: 'demo', deliveryId: first.deliveryId } }]);
      const unknown = await m.inject({ method: 'GET', url: '/v1/tenants/demo/channels/0190b3c4-5d6e-7f80-9a1b-2c3d4e5f6a7b/deliveries', headers: auth });
      expect(unknown.statusCode).toBe(404);
      await t.app.cardline.channels.remove('demo', channel.channelId);
    } finally {
      await rx.close();
    }
  });

  it("shadow: a tenant's comparisons per operation with the match rate (none without a shadow core); an unknown tenant 404", async () => {
    const auth = { authorization: `Bearer ${key}` };
    const res = await m.inject({ method: 'GET', url: '/v1/tenants/demo/shadow', headers: auth });
    expect(res.json()).toEqual({ result: await t.app.cardline.shadow.summary('demo'), pagination: null });
    expect((await m.inject({ method: 'GET', url: '/v1/tenants/nobody/shadow', headers: auth })).statusCode).toBe(404);
  });

  it("connector check: the connector's own schema decides, before a tenant is created", async () => {
    const auth = { authorization: `Bearer ${key}` };
    const ok = await m.inject({ method: 'POST', url: '/v1/console/connectors/check', headers: auth, payload: { id: 'mock', options: { fixtures: 'demo' } } });
    expect(ok.json()).toEqual({ result: { ok: true, problem: null }, pagination: null });
    const bad = await m.inject({ method: 'POST', url: '/v1/console/connectors/check', headers: auth, payload: { id: 'mock', options: { fixtures: 'nope' } } });
    expect(bad.json().result.ok).toBe(false);
    expect(bad.json().result.problem).toMatch(/^connector 'mock' options are invalid: /);
    const unknown = await m.inject({ method: 'POST', url: '/v1/console/connectors/check', headers: auth, payload: { id: 'nope' } });
    expect(unknown.json().result.problem).toMatch(/^connector 'nope' is not registered/);
    const ids = (await m.inject({ method: 'GET', url: '/v1/console/connectors', headers: auth })).json().result.map((c: { id: string }) => c.id);
    expect(ids).toEqual(expect.arrayContaining(['file', 'mock', 'rest']));
  });

  it('lookup: a customer and a card from the core, masked, with recent transactions; an unknown one in the problem dialect', async () => {
    const auth = { authorization: `Bearer ${key}` };
    const customer = await m.inject({ method: 'GET', url: '/v1/tenants/demo/customers/ENT-1001', headers: auth });
    expect(customer.statusCode).toBe(200);
    const { entity, cards, transactions } = customer.json().result;
    expect(entity).toMatchObject({ entityId: 'ENT-1001', contact: { email: expect.stringContaining('*') } });
    expect(entity.sensitive).toBeUndefined();
    expect(cards[0].panMasked).toMatch(/^\d{6}\*+\d{4}$/);
    expect(Array.isArray(transactions)).toBe(true);
    expect(customer.body).not.toMatch(/\b4\d{15}\b/);
    const card = await m.inject({ method: 'GET', url: `/v1/tenants/demo/cards/${cards[0].cardId}`, headers: auth });
    expect(card.json().result.card).toMatchObject({ cardId: cards[0].cardId, panMasked: cards[0].panMasked });
    expect(card.json().result.card.sensitive).toBeUndefined();
    const missing = await m.inject({ method: 'GET', url: '/v1/tenants/demo/customers/ENT-9999', headers: auth });
    // The core's refusal, as the public API answers it (a business refusal: 409 with its code).
    expect(missing.statusCode).toBe(409);
    expect(missing.json()).toMatchObject({ status: 409, businessCode: 'ENTITY_NOT_FOUND', detail: expect.stringContaining('ENT-9999') });
  });
});
