// The CLI's in-process principal (decision 0198) cannot be presented over the network: the gateway's management
// listener is built without it and refuses the header as it refuses a wrong key, and even the CLI's own app
// refuses it once it listens.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildManagementApp } from '../../src/management/app.js';
import { IN_PROCESS_HEADER } from '../../src/plugins/operator-auth.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t?.close();
});

const secret = randomBytes(32).toString('base64url');

describe('the in-process CLI principal', () => {
  it('is refused by the gateway’s listener (no secret configured), with the exact 401 body', async () => {
    const m = await buildManagementApp({ services: t.app.cardline, config: t.app.cardline.config });
    try {
      const res = await m.inject({ method: 'GET', url: '/v1/tenants', headers: { [IN_PROCESS_HEADER]: secret } });
      const bad = await m.inject({ method: 'GET', url: '/v1/tenants', headers: { authorization: 'Bearer nope' } });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual(bad.json());
    } finally {
      await m.close();
    }
  });

  it('answers an injected request with the right secret, refuses a wrong one, and refuses all over HTTP', async () => {
    const m = await buildManagementApp({ services: t.app.cardline, config: t.app.cardline.config, inProcess: { secret, operator: { name: 'cli:tester' } } });
    try {
      const ok = await m.inject({ method: 'GET', url: '/v1/tenants', headers: { [IN_PROCESS_HEADER]: secret } });
      expect(ok.statusCode, ok.body).toBe(200);
      const wrong = await m.inject({ method: 'GET', url: '/v1/tenants', headers: { [IN_PROCESS_HEADER]: `${secret}x` } });
      expect(wrong.statusCode).toBe(401);
      const url = await m.listen({ host: '127.0.0.1', port: 0 });
      const res = await fetch(new URL('/v1/tenants', url), { headers: { [IN_PROCESS_HEADER]: secret } });
      expect(res.status).toBe(401);
      // The same refusal; its hint names the listener as each caller reached it.
      const refused = wrong.json() as { detail: string };
      expect(await res.json()).toEqual({ ...refused, detail: refused.detail.replace('http://localhost:80', url) });
    } finally {
      await m.close();
    }
  });
});
