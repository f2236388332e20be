// Failed operator-key attempts are throttled per client address and across all addresses, on the management
// API and the console's sign-in alike: past the limit, 429 with Retry-After before the key is even checked
// (a right key included), the block recorded on the platform's trail; a right key from another address is
// not slowed.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATOR_KEY_LIMITS } from '../../src/services/identity/operator-key-throttle.js';
import { PROBLEM_BASE, createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
let m: FastifyInstance;
let key: string;
beforeAll(async () => {
  t = await createTestApp();
  m = await t.management();
  key = await t.operatorKey('ops-throttle');
});
afterAll(() => t?.close());

const WRONG = 'clop_wrong-key-guessed-by-someone-0000000000';
const { perAddress, global, windowSeconds } = OPERATOR_KEY_LIMITS;

const list = (from: string, withKey: string) => m.inject({ method: 'GET', url: '/v1/tenants', headers: { authorization: `Bearer ${withKey}` }, remoteAddress: from });
const signIn = (from: string, withKey: string) => m.inject({ method: 'POST', url: '/console/session', payload: { key: withKey }, remoteAddress: from });

const throttled = (detail: string) => ({ type: `${PROBLEM_BASE}/problem-with-message`, title: 'Too Many Requests', status: 429, message: 'error.http.429', detail });

describe('operator-key attempts', () => {
  it('the limits', () => {
    expect(OPERATOR_KEY_LIMITS).toEqual({ perAddress: 10, global: 100, windowSeconds: 300 });
  });

  it(`on the management API: ${perAddress} wrong keys from an address, then 429 with Retry-After even for the right key; another address is not slowed`, async () => {
    for (let i = 0; i < perAddress; i++) expect((await list('10.0.0.1', WRONG)).statusCode).toBe(401);
    for (const withKey of [WRONG, key]) {
      const res = await list('10.0.0.1', withKey);
      expect(res.statusCode).toBe(429);
      const retryAfter = Number(res.headers['retry-after']);
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(windowSeconds);
      expect(res.json()).toEqual(throttled(`Too many wrong operator keys from this address; retry in ${retryAfter} s.`));
    }
    expect((await list('10.0.0.2', key)).statusCode).toBe(200);
    const events = await t.db.query<{ action: string; origin: string; status: number; actor: string | null; target: unknown }>(
      "SELECT action, origin, status, actor, target FROM audit_log WHERE tenant_id = '_platform' AND action = 'operator-key.throttled'",
    );
    expect(events.rows).toEqual([
      { action: 'operator-key.throttled', origin: '10.0.0.1', status: 429, actor: null, target: { failures: String(perAddress), windowSeconds: String(windowSeconds) } },
    ]);
  });

  it('on the console sign-in alike, with no session opened', async () => {
    for (let i = 0; i < perAddress; i++) expect((await signIn('10.0.1.1', WRONG)).statusCode).toBe(401);
    const res = await signIn('10.0.1.1', key);
    expect(res.statusCode).toBe(429);
    expect(res.headers['set-cookie']).toBeUndefined();
    expect(res.json().detail).toMatch(/^Too many wrong operator keys from this address; retry in \d+ s\.$/);
    expect((await signIn('10.0.1.2', key)).statusCode).toBe(201);
  });

  it('past the global limit, addresses that failed wait; an address that did not is still let in', async () => {
    // Spread over many addresses, one wrong key each, until every address's failures add up to the global limit.
    for (let i = 0; i < global; i++) await list(`10.2.${i >> 8}.${i & 255}`, WRONG);
    const res = await list('10.2.0.0', key);
    expect(res.statusCode).toBe(429);
    expect(res.json().detail).toMatch(/^Too many wrong operator keys from many addresses; this address, which sent a wrong one too, may retry in \d+ s\.$/);
    expect((await list('10.3.0.1', key)).statusCode).toBe(200);
    expect((await signIn('10.3.0.2', key)).statusCode).toBe(201);
  });
});
