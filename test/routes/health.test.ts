// Readiness with REDIS_URL: a `redis` check beside `store` and `migrations`; not ready when Redis does not
// answer. Against a fake connection always, and against the real Redis when REDIS_URL names one.
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

const ready = (t: TestApp) => t.inject({ method: 'GET', url: '/health/ready' });

describe('readiness checks Redis when the gateway uses it (fake connection)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    t.app.cardline.redis = null;
    await t?.close();
  });

  it('without REDIS_URL there is no redis check', async () => {
    const res = await ready(t);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ready', checks: { store: 'ok', migrations: 'ok' }, degraded: [] });
  });

  it('a Redis that answers PING: ready, redis ok', async () => {
    t.app.cardline.redis = { ping: async () => 'PONG' } as unknown as Redis;
    const res = await ready(t);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ready', checks: { store: 'ok', migrations: 'ok', redis: 'ok' }, degraded: [] });
  });

  it('a Redis that refuses: 503, redis unreachable', async () => {
    t.app.cardline.redis = { ping: async () => Promise.reject(new Error('Connection is closed.')) } as unknown as Redis;
    const res = await ready(t);
    expect(res.statusCode).toBe(503);
    expect(res.json()).toEqual({ status: 'not ready', checks: { store: 'ok', migrations: 'ok', redis: 'unreachable' }, degraded: [] });
  });

  it('a Redis that never answers: 503 within about a second, redis unreachable', async () => {
    t.app.cardline.redis = { ping: () => new Promise(() => undefined) } as unknown as Redis;
    const started = Date.now();
    const res = await ready(t);
    expect(Date.now() - started).toBeLessThan(30_000); // the ping's own deadline: this Redis never answers
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ status: 'not ready', checks: { redis: 'unreachable' } });
  });
});

const REDIS_URL = process.env.REDIS_URL;
if (!REDIS_URL) console.warn('SKIPPED readiness against a real Redis: REDIS_URL is not set');

describe.runIf(REDIS_URL)('readiness against the real Redis (REDIS_URL)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { REDIS_URL, CARDLINE_REDIS_PREFIX: `cardline-test-${randomBytes(6).toString('hex')}:` } });
  });
  afterAll(() => t?.close());

  it('ready while Redis answers; 503 naming redis once the connection is gone', async () => {
    const up = await ready(t);
    expect(up.statusCode).toBe(200);
    expect(up.json()).toEqual({ status: 'ready', checks: { store: 'ok', migrations: 'ok', redis: 'ok' }, degraded: [] });

    t.app.cardline.redis!.disconnect();
    const down = await ready(t);
    expect(down.statusCode).toBe(503);
    expect(down.json()).toEqual({ status: 'not ready', checks: { store: 'ok', migrations: 'ok', redis: 'unreachable' }, degraded: [] });
  });
});
