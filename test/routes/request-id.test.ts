// X-Request-Id is kept for tracing only when it is a plain short token; anything that could carry a card
// number, a token or odd characters is replaced by a fresh UUID before it reaches a log, a record or a core.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { LIMIT_URL, createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

async function recordedRequestId(given: string): Promise<string> {
  const marker = `ENT-RID-${Math.random().toString(36).slice(2, 10)}`;
  await t.inject({
    method: 'POST',
    url: LIMIT_URL,
    headers: { TENANT: 'demo', authorization: `Bearer ${await t.token('Admin')}`, 'x-request-id': given },
    payload: { entityId: marker, amount: '60000.00' },
  });
  const r = await t.db.query<{ request_id: string }>("SELECT request_id FROM audit_log WHERE tenant_id = 'demo' AND target->>'entityId' = $1", [marker]);
  return r.rows[0]!.request_id;
}

it('keeps a plain tracing id', async () => {
  expect(await recordedRequestId('channel-7f3a.42:retry-1')).toBe('channel-7f3a.42:retry-1');
});

it.each([
  ['a card number', '4111111111111111'],
  ['a card number inside', 'req-4111111111111111-x'],
  ['a JOSE string', 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln'],
  ['spaces and quotes', 'a "quoted" id'],
  ['an overlong id', 'x'.repeat(65)],
])('replaces %s with a UUID', async (_label, given) => {
  expect(await recordedRequestId(given)).toMatch(UUID);
});

it('refuses a NUL character in the URL with a 400 in the route dialect, not a 500', async () => {
  const res = await t.inject({ method: 'GET', url: '/v1/cards/CARD%003001', headers: { TENANT: 'demo', authorization: `Bearer ${await t.token('Admin')}` } });
  expect(res.statusCode).toBe(400);
  expect(res.json()).toMatchObject({ status: 400, message: 'error.http.400', detail: 'The URL contains a NUL character (%00), which is not accepted.' });
});

it('refuses a NUL character in a JSON body with a 400, and the audit keeps working', async () => {
  const res = await t.inject({
    method: 'POST',
    url: '/api/authenticate',
    headers: { TENANT: 'demo', 'content-type': 'application/json' },
    payload: '{"username":"a\\u0000b","password":"x"}',
  });
  expect(res.statusCode).toBe(400);
  expect(res.json()).toMatchObject({ detail: 'The request body contains a NUL character (\\u0000), which is not accepted.' });
  expect(await recordedRequestId('after-nul')).toBe('after-nul');
});
