// Rate limits per tenant and per user (DESIGN §7): counted after authentication, configured per tenant,
// answered 429 in the route's dialect with Retry-After; in-process, and in Redis when REDIS_URL is set.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import type { MockCore } from '../../connectors/mock/index.js';
import Fastify from 'fastify';
import cardlineApp, { buildApp, serverOptions } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { MasterKey } from '../../src/crypto/master-key.js';
import { TenantConfigError } from '../../src/services/tenancy/tenants.js';
import { createTenant } from '../../src/services/tenancy/onboarding.js';
import { LIMIT_URL, PASSWORD, PROBLEM_BASE, UPGRADE_URL, createTestApp, createTestDb, type TestApp } from '../helpers/app.js';

const LIMITED = { id: 'limited', config: { rateLimit: { perUserPerMinute: 3, perTenantPerMinute: 5 } } };

async function limitedApp(env: NodeJS.ProcessEnv = {}): Promise<TestApp> {
  const t = await createTestApp({ env, tenants: [LIMITED, { id: 'tenant-only', config: { rateLimit: { perTenantPerMinute: 2 } } }] });
  for (const tenant of ['limited', 'tenant-only']) {
    await t.app.cardline.users.add(tenant, 'admin', 'Admin', PASSWORD);
    await t.app.cardline.users.add(tenant, 'integration', 'API Integration', PASSWORD);
  }
  return t;
}

const raiseLimit = async (t: TestApp, role: 'Admin' | 'API Integration', amount: string, tenant = 'limited', entityId = 'ENT-1001') =>
  t.inject({
    method: 'POST',
    url: LIMIT_URL,
    headers: { TENANT: tenant, authorization: `Bearer ${await t.token(role, tenant)}` },
    payload: { entityId, amount },
  });

const upgrade = async (t: TestApp, role: 'Admin' | 'API Integration', tenant = 'limited') =>
  t.inject({
    method: 'PUT',
    url: UPGRADE_URL,
    headers: { 'X-TENANT-ID': tenant, authorization: `Bearer ${await t.token(role, tenant)}` },
    payload: { kitNo: 'KIT-2001', entityId: 'ENT-1001', communicationAddress: { usePrimaryAddress: true } },
  });

const limitHeaders = (res: LightMyRequestResponse) => ({
  limit: res.headers['x-ratelimit-limit'],
  remaining: res.headers['x-ratelimit-remaining'],
});

async function mockCore(t: TestApp, tenant: string): Promise<MockCore> {
  return (await t.app.cardline.connectors.forTenant((await t.app.cardline.tenants.get(tenant))!)) as unknown as MockCore;
}

/** The seconds in Retry-After: a whole number within the one-minute window. */
function retryAfter(res: LightMyRequestResponse): number {
  const value = String(res.headers['retry-after']);
  expect(value).toMatch(/^\d+$/);
  const n = Number(value);
  expect(n).toBeGreaterThanOrEqual(1);
  expect(n).toBeLessThanOrEqual(60);
  return n;
}

/**
 * The one scenario both stores must pass. `limited` allows 3 requests per user and 5 for the tenant:
 * admin spends 3, its 4th is refused by its own limit (and does not spend the tenant's budget),
 * integration spends the remaining 2, and its next request is refused by the tenant's limit.
 */
function scenario(get: () => TestApp) {
  it('per user, then per tenant: 429 in the route dialect, with Retry-After; refused requests change nothing', async () => {
    const t = get();
    for (let i = 1; i <= 3; i++) {
      const res = await raiseLimit(t, 'Admin', `${50000 + i}.00`);
      expect(res.statusCode).toBe(200);
      // The user's limit is the tighter one: 3 - i left of 3 (the tenant has 5 - i left of 5).
      expect(limitHeaders(res)).toEqual({ limit: '3', remaining: String(3 - i) });
    }
    const core = await mockCore(t, 'limited');
    const before = structuredClone(core.state);

    const userLimited = await raiseLimit(t, 'Admin', '60000.00');
    expect(userLimited.statusCode).toBe(429);
    const wait = retryAfter(userLimited);
    expect(userLimited.json()).toEqual({
      result: null,
      exception: {
        errorCode: 'ERR_429',
        shortMessage: 'Too Many Requests',
        detailMessage: `User 'admin' has reached the limit of 3 requests per minute; retry in ${wait} s.`,
      },
      pagination: null,
    });
    expect(limitHeaders(userLimited)).toEqual({ limit: '3', remaining: '0' });
    expect(core.state).toEqual(before);

    // The refused request did not spend the tenant's budget: integration still has 2 of 5.
    for (let i = 1; i <= 2; i++) {
      const res = await raiseLimit(t, 'API Integration', `${51000 + i}.00`);
      expect(res.statusCode).toBe(200);
      expect(limitHeaders(res)).toEqual({ limit: '5', remaining: String(2 - i) });
    }
    const after = structuredClone(core.state);
    const tenantLimited = await upgrade(t, 'API Integration');
    expect(tenantLimited.statusCode).toBe(429);
    const tenantWait = retryAfter(tenantLimited);
    expect(tenantLimited.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(tenantLimited.json()).toEqual({
      type: `${PROBLEM_BASE}/problem-with-message`,
      title: 'Too Many Requests',
      status: 429,
      message: 'error.http.429',
      detail: `Tenant 'limited' has reached its limit of 5 requests per minute; retry in ${tenantWait} s.`,
    });
    expect(limitHeaders(tenantLimited)).toEqual({ limit: '5', remaining: '0' });
    expect(core.state).toEqual(after);

    // Login and the key set are not limited (DESIGN §7: login is limited per username by the lockout).
    const keys = await t.inject({ method: 'GET', url: '/api/keys', headers: { TENANT: 'limited' } });
    expect(keys.statusCode).toBe(200);
    const login = await t.inject({
      method: 'POST',
      url: '/api/authenticate',
      headers: { TENANT: 'limited' },
      payload: { username: 'admin', password: await t.encrypt(PASSWORD, 'limited') },
    });
    expect(login.statusCode).toBe(200);
    expect(login.headers['x-ratelimit-limit']).toBeUndefined();

    // Other tenants are unaffected, and the demo tenants set no limits (DESIGN §7).
    const other = await raiseLimit(t, 'Admin', '55000.00', 'demo');
    expect(other.statusCode).toBe(200);
    expect(other.headers['x-ratelimit-limit']).toBeUndefined();
  });

  it('a tenant limit alone; requests refused before authentication do not count', async () => {
    const t = get();
    const unauthenticated = await t.inject({
      method: 'POST',
      url: LIMIT_URL,
      headers: { TENANT: 'tenant-only', authorization: 'Bearer a.b.c' },
      payload: { entityId: 'ENT-1001', amount: '60000.00' },
    });
    expect(unauthenticated.statusCode).toBe(401);
    expect(unauthenticated.headers['x-ratelimit-limit']).toBeUndefined();
    expect((await raiseLimit(t, 'Admin', '50001.00', 'tenant-only')).statusCode).toBe(200);
    const second = await raiseLimit(t, 'API Integration', '50002.00', 'tenant-only');
    expect(second.statusCode).toBe(200);
    expect(limitHeaders(second)).toEqual({ limit: '2', remaining: '0' });
    const third = await raiseLimit(t, 'Admin', '50003.00', 'tenant-only');
    expect(third.statusCode).toBe(429);
    expect(third.json().exception.detailMessage).toBe(
      `Tenant 'tenant-only' has reached its limit of 2 requests per minute; retry in ${retryAfter(third)} s.`,
    );
  });
}

describe('in-process counters', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await limitedApp();
  });
  afterAll(() => t.close());
  afterEach(() => {
    vi.useRealTimers();
  });

  scenario(() => t);

  it('the window resets after a minute', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    vi.setSystemTime(Date.now() + 61_000);
    const res = await raiseLimit(t, 'Admin', '70000.00');
    expect(res.statusCode).toBe(200);
    expect(limitHeaders(res)).toEqual({ limit: '3', remaining: '2' });
  });

  it('a route declaring a limit of its own does not start: limits are per tenant', async () => {
    const app = Fastify(serverOptions(t.config));
    let error: unknown;
    try {
      await app.register(cardlineApp, { config: t.config, db: t.db, masterKey: t.masterKey, ownsDb: false });
      app.get('/probe', { config: { auth: false, tenant: false, rateLimit: { max: 1 } } }, async () => ({}));
      await app.ready();
    } catch (err) {
      error = err;
    } finally {
      await app.close();
    }
    expect((error as Error | undefined)?.message).toBe(
      'Route GET /probe declares config.rateLimit; limits are set per tenant (rateLimit in its configuration)',
    );
  });

  it('a tenant configuration with a limit below 1 is refused, naming the field', async () => {
    const attempt = createTenant(t.app.cardline, { id: 'bad-limits', config: { rateLimit: { perUserPerMinute: 0 } } });
    await expect(attempt).rejects.toThrow(TenantConfigError);
    await expect(createTenant(t.app.cardline, { id: 'bad-limits', config: { rateLimit: { perMinute: 5 } } })).rejects.toThrow(
      /\/rateLimit\/perMinute/,
    );
  });
});

describe('Redis', () => {
  it('an unreachable REDIS_URL stops the boot with a message naming the variable', async () => {
    const { db, drop } = await createTestDb();
    try {
      const config = loadConfig({ LOG_LEVEL: 'silent', REDIS_URL: 'redis://127.0.0.1:1' });
      await expect(buildApp({ config, db, masterKey: MasterKey.generate(), ownsDb: false })).rejects.toThrow(
        /^Invalid configuration: REDIS_URL names a Redis server that does not answer \(.*ECONNREFUSED.*\)$/,
      );
    } finally {
      await drop();
    }
  });
});

describe.runIf(process.env.REDIS_URL)('Redis counters (REDIS_URL)', () => {
  const prefix = `cardline-test-${randomBytes(6).toString('hex')}:`;
  let t: TestApp;
  let redis: Redis;
  beforeAll(async () => {
    redis = new Redis(process.env.REDIS_URL!);
    t = await limitedApp({ REDIS_URL: process.env.REDIS_URL, CARDLINE_REDIS_PREFIX: prefix });
  });
  afterAll(async () => {
    await t?.close();
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  });

  scenario(() => t);

  it('counters live under the configured prefix, expire with the window, and are shared by every replica', async () => {
    const key = `${prefix}rate-limit:user:limited:admin`;
    expect(Number(await redis.get(key))).toBe(4);
    const ttl = await redis.pttl(key);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60_000);
    expect(Number(await redis.get(`${prefix}rate-limit:tenant:limited`))).toBe(6);
    // What another gateway process counted in the same Redis counts here: 'tenant-only' had 2 left.
    await redis.set(`${prefix}rate-limit:tenant:tenant-only`, '2', 'PX', 60_000);
    const res = await raiseLimit(t, 'Admin', '60000.00', 'tenant-only');
    expect(res.statusCode).toBe(429);
    expect(res.json().exception.detailMessage).toBe(
      `Tenant 'tenant-only' has reached its limit of 2 requests per minute; retry in ${retryAfter(res)} s.`,
    );
  });

  it('when Redis stops answering, requests are let through (the limiter fails open)', async () => {
    const token = await t.token('API Integration', 'limited'); // before the outage: login needs the replay cache
    expect(token).toEqual(expect.any(String));
    t.app.cardline.redis!.disconnect();
    // integration has spent its 3 requests (2 accepted, 1 refused): with Redis reachable this would be a 429.
    const res = await raiseLimit(t, 'API Integration', '61000.00', 'limited', 'ENT-1002');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ result: true, exception: null, pagination: null });
  });
});
