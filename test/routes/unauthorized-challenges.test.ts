// What a refused token is told (issue 20, point 8; RFC 6750 §3, decision 0171): the 401 body is the spec's and
// the same for every refusal; WWW-Authenticate tells no token, a refused token and an expired one apart.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { CHALLENGE, TOKEN_TARGETS } from '../helpers/token-targets.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());
afterEach(() => {
  vi.useRealTimers();
});

const call = (target: (typeof TOKEN_TARGETS)[number], authorization?: string) =>
  t.inject({
    method: target.method,
    url: target.url,
    headers: { [target.tenantHeader]: 'demo', ...(authorization === undefined ? {} : { authorization }) },
    payload: target.payload,
  });

describe.each(TOKEN_TARGETS)('401 on the $name route', (target) => {
  it('a token the gateway issued, past its exp: invalid_token, "The access token expired"; the body unchanged', async () => {
    const token = await t.token('Admin');
    // The demo tenants' tokens live an hour; the clock moves on by an hour and a minute.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 3_660_000 });
    const res = await call(target, `Bearer ${token}`);
    expect(res.statusCode).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Bearer error="invalid_token", error_description="The access token expired"');
    expect(res.json()).toEqual(target.unauthorized);
  });

  it('a forged token (its signature altered): invalid_token without a description; the same body', async () => {
    const token = await t.token('Admin');
    const forged = `${token.slice(0, token.lastIndexOf('.'))}.${Buffer.alloc(64, 7).toString('base64url')}`;
    const res = await call(target, `Bearer ${forged}`);
    expect(res.statusCode).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Bearer error="invalid_token"');
    expect(res.json()).toEqual(target.unauthorized);
  });

  it('something that is no token after "Bearer": invalid_token; the same body', async () => {
    const res = await call(target, 'Bearer not-a-token');
    expect(res.statusCode).toBe(401);
    expect(res.headers['www-authenticate']).toBe(CHALLENGE.invalid);
    expect(res.json()).toEqual(target.unauthorized);
  });

  it('no token: the realm alone, no error (RFC 6750 §3.1); the same body', async () => {
    for (const authorization of [undefined, 'Basic YWRtaW46eA==']) {
      const res = await call(target, authorization);
      expect(res.statusCode).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Bearer realm="cardline"');
      expect(res.json()).toEqual(target.unauthorized);
    }
  });

  it('a valid token still passes (the control)', async () => {
    const res = await call(target, `Bearer ${await t.token('Admin')}`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['www-authenticate']).toBeUndefined();
  });
});
