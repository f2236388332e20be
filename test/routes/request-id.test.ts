// X-Request-Id is kept for tracing only when it is a plain short token; anything that could carry a card
// number, a token or odd characters is replaced by a fresh UUID before it reaches a log, a record or a core.
// A request id, the caller's or a generated one, is then never altered: not in the audit, not in a log.
import pino from 'pino';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { luhnValid } from '../../connectors/shared/pan.js';
import { loggerOptions, scrubBindings } from '../../src/logging.js';
import { LIMIT_URL, createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
const lines: string[] = [];
beforeAll(async () => {
  t = await createTestApp({ logger: pino(loggerOptions('info'), { write: (chunk: string) => void lines.push(chunk) }) });
});
afterAll(() => t.close());

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

async function recordedRequestId(given: string | undefined): Promise<string> {
  const marker = `ENT-RID-${Math.random().toString(36).slice(2, 10)}`;
  const authorization = `Bearer ${await t.token('Admin')}`;
  await t.inject({
    method: 'POST',
    url: LIMIT_URL,
    headers: { TENANT: 'demo', authorization, ...(given === undefined ? {} : { 'x-request-id': given }) },
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
  ['a card number in groups of four (dashes)', '4111-1111-1111-1111'],
  ['a card number in groups (dots, colons, underscores)', 'rq.4111.1111:1111_1111'],
  ['twelve digits in groups', 'order-2026-11-21-0001'],
  ['a JOSE string', 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln'],
  ['spaces and quotes', 'a "quoted" id'],
  ['an overlong id', 'x'.repeat(65)],
])('replaces %s with a UUID', async (_label, given) => {
  expect(await recordedRequestId(given)).toMatch(UUID);
});

/** A UUID (version 4 layout) whose last two groups hold a Luhn-valid 16-digit card number across the dash. */
function uuidHidingACardNumber(i: number): string {
  const digits = `${8 + (i % 2)}${String(i * 7919 + 100_000_000_000_003).slice(0, 14)}`;
  const check = [...'0123456789'].find((d) => luhnValid(digits + d))!;
  const pan = digits + check;
  return `${(0xa1b2c3d4 + i).toString(16)}-e5f6-4a7b-${pan.slice(0, 4)}-${pan.slice(4)}`;
}

it('stores and logs generated request ids unaltered, even those whose digits form a card number across dashes', async () => {
  const ids = Array.from({ length: 50 }, (_, i) => uuidHidingACardNumber(i));
  expect(ids.every((id) => /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89][0-9]{3}-[0-9]{12}$/.test(id) && luhnValid(id.slice(19).replace('-', '')))).toBe(true);
  const stored: string[] = [];
  for (const id of ids) {
    // The next UUID the gateway makes is the request's id (genReqId); a request without X-Request-Id gets one.
    const spy = vi.spyOn(globalThis.crypto, 'randomUUID').mockReturnValueOnce(id as ReturnType<typeof crypto.randomUUID>);
    try {
      stored.push(await recordedRequestId(undefined));
    } finally {
      spy.mockRestore();
    }
  }
  expect(stored).toEqual(ids);
  const logged = new Set(lines.flatMap((l) => (JSON.parse(l) as { requestId?: string }).requestId ?? []));
  expect(ids.filter((id) => !logged.has(id))).toEqual([]);
});

it('masks a card number bound to a logger (a child of a child too), and leaves the request id it binds alone', () => {
  const out: string[] = [];
  const log = scrubBindings(pino(loggerOptions('info'), { write: (chunk: string) => void out.push(chunk) }));
  const requestId = uuidHidingACardNumber(1);
  log.child({ requestId, card: '4111111111111111', nested: { note: 'pan 5500 0000 0000 0004' }, pan: '4000000000030017' }).info('bound');
  log.child({ tenant: 'demo' }).child({ requestId, card: '4111111111111111', nested: { note: 'pan 5500 0000 0000 0004' }, pan: '4000000000030017' }).info('bound');
  const masked = { requestId, card: '411111******1111', nested: { note: 'pan 550000******0004' }, pan: '[REDACTED]', msg: 'bound' };
  expect(out.map((line) => JSON.parse(line) as unknown)).toEqual([expect.objectContaining(masked), expect.objectContaining({ tenant: 'demo', ...masked })]);
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
