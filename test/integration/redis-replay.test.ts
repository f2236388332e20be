// The JWE replay cache in Redis (REDIS_URL only): one use per (tenant, jti) across every gateway process,
// keys under the configured prefix that expire with the iat window, and 503 (never a pass) when Redis is down.
import { randomBytes, randomUUID } from 'node:crypto';
import { decodeProtectedHeader } from 'jose';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { closeRedis, openRedis } from '../../src/services/infrastructure/redis.js';
import { RedisReplayCache } from '../../src/services/infrastructure/replay.js';
import { PASSWORD, PROBLEM_BASE, createTestApp, supportDetail, type TestApp } from '../helpers/app.js';

const REDIS_URL = process.env.REDIS_URL;
const silent = { error: () => undefined, info: () => undefined } as unknown as Parameters<typeof openRedis>[1];

describe.runIf(REDIS_URL)('JWE replay cache in Redis (REDIS_URL)', () => {
  const prefix = `cardline-test-${randomBytes(6).toString('hex')}:`;
  let t: TestApp;
  let redis: Redis;

  beforeAll(async () => {
    redis = new Redis(REDIS_URL!);
    t = await createTestApp({ env: { REDIS_URL, CARDLINE_REDIS_PREFIX: prefix } });
  });
  afterAll(async () => {
    await t?.close();
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  });

  const login = (password: string) =>
    t.inject({ method: 'POST', url: '/api/authenticate', headers: { TENANT: 'demo' }, payload: { username: 'admin', password } });

  it('a JWE is accepted once; its jti is kept in Redis until the iat window closes, not in the store', async () => {
    const jwe = await t.encrypt(PASSWORD);
    const { jti, iat } = decodeProtectedHeader(jwe) as { jti: string; iat: number };
    expect((await login(jwe)).statusCode).toBe(200);

    const replay = await login(jwe);
    expect(replay.statusCode).toBe(400);
    expect(replay.json()).toEqual({
      type: `${PROBLEM_BASE}/problem-with-message`,
      title: 'Bad Request',
      status: 400,
      message: 'error.http.400',
      detail: 'The encrypted payload could not be processed.',
    });

    const key = `${prefix}jwe-replay:demo:${jti}`;
    expect(await redis.exists(key)).toBe(1);
    const ttl = await redis.pttl(key);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual((iat + 301) * 1000 - Date.now() + 1000);
    const rows = await t.db.query('SELECT 1 FROM jwe_replay');
    expect(rows.rows).toEqual([]);
  });

  it('two gateway processes share one cache: a jti seen by one is a replay for the other, per tenant', async () => {
    const config = loadConfig({ REDIS_URL, CARDLINE_REDIS_PREFIX: prefix });
    const [a, b] = await Promise.all([openRedis(config, silent), openRedis(config, silent)]);
    try {
      const one = new RedisReplayCache(a, prefix);
      const two = new RedisReplayCache(b, prefix);
      const jti = randomUUID();
      const expiresAt = new Date(Date.now() + 60_000);
      expect(await one.firstUse('demo', jti, expiresAt)).toBe(true);
      expect(await two.firstUse('demo', jti, expiresAt)).toBe(false);
      expect(await one.firstUse('demo', jti, expiresAt)).toBe(false);
      // The same jti for another tenant is another entry.
      expect(await two.firstUse('demo-b', jti, expiresAt)).toBe(true);
    } finally {
      await Promise.all([closeRedis(a), closeRedis(b)]);
    }
  });

  it('an entry expires when its window closes', async () => {
    const cache = new RedisReplayCache(t.app.cardline.redis!, prefix);
    const jti = randomUUID();
    expect(await cache.firstUse('demo', jti, new Date(Date.now() + 150))).toBe(true);
    expect(await cache.firstUse('demo', jti, new Date(Date.now() + 150))).toBe(false);
    await new Promise((r) => setTimeout(r, 400));
    expect(await cache.firstUse('demo', jti, new Date(Date.now() + 150))).toBe(true);
  });

  it('when Redis is unreachable an encrypted value is refused with 503, never accepted unchecked', async () => {
    const jwe = await t.encrypt(PASSWORD);
    t.app.cardline.redis!.disconnect();
    const res = await login(jwe);
    expect(res.statusCode).toBe(503);
    expect(res.json()).toEqual({
      type: `${PROBLEM_BASE}/problem-with-message`,
      title: 'Service Unavailable',
      status: 503,
      message: 'error.http.503',
      detail: supportDetail('The replay cache is unavailable; retry with a freshly encrypted value shortly.', res),
    });
  });
});
