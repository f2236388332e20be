// Strict JSON bodies on the routes: duplicate keys, unsafe numbers, nesting and size limits, invalid
// UTF-8 and media types are refused in the route's dialect, before anything reaches the core.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MockCore } from '../../connectors/mock/index.js';
import { LIMIT_URL, PROBLEM_BASE, UPGRADE_URL, createTestApp, type TestApp } from '../helpers/app.js';
import { problem } from '../helpers/problems.js';

let t: TestApp;
let token: string;
beforeAll(async () => {
  t = await createTestApp();
  token = await t.token('Admin');
});
afterAll(() => t.close());

async function core(): Promise<MockCore> {
  return (await t.app.cardline.connectors.forTenant((await t.app.cardline.tenants.get('demo'))!)) as unknown as MockCore;
}

const envelope = (status: number, shortMessage: string, detailMessage: string) => ({
  result: null,
  exception: { errorCode: `ERR_${status}`, shortMessage, detailMessage },
  pagination: null,
});

interface Route {
  name: string;
  method: 'POST' | 'PUT';
  url: string;
  /** A valid body, as text, with room for one more member at its end: `{...,` + extra + `}`. */
  prefix: string;
  expect: (status: number, title: string, detail: string) => unknown;
  contentType: string;
}

const ROUTES: Route[] = [
  {
    name: 'credit line (envelope)',
    method: 'POST',
    url: LIMIT_URL,
    prefix: '{"entityId":"ENT-1001","amount":"60000.00"',
    expect: envelope,
    contentType: 'application/json; charset=utf-8',
  },
  {
    name: 'card upgrade (problem)',
    method: 'PUT',
    url: UPGRADE_URL,
    prefix: '{"kitNo":"KIT-2001","entityId":"ENT-1001","communicationAddress":{"usePrimaryAddress":true}',
    expect: problem,
    contentType: 'application/json',
  },
];

const send = (route: Route, payload: string | Buffer, contentType: string | undefined = route.contentType) =>
  t.inject({
    method: route.method,
    url: route.url,
    headers: { TENANT: 'demo', authorization: `Bearer ${token}`, ...(contentType === undefined ? {} : { 'content-type': contentType }) },
    payload,
  });

/** Sends, expects the refusal, and checks that the core did not change. */
async function refused(route: Route, payload: string | Buffer, status: number, detail: string, contentType?: string) {
  const c = await core();
  const before = structuredClone(c.state);
  const res = await send(route, payload, contentType);
  expect(res.statusCode).toBe(status);
  expect(res.json()).toEqual(route.expect(status, status === 415 ? 'Unsupported Media Type' : 'Bad Request', detail));
  expect(c.state).toEqual(before);
}

describe.each(ROUTES)('$name', (route) => {
  it('a duplicate key → 400 naming the key; the first value is not silently replaced', async () => {
    const key = route.url === LIMIT_URL ? 'amount' : 'kitNo';
    const value = route.url === LIMIT_URL ? '"70000.00"' : '"KIT-2002"';
    await refused(route, `${route.prefix},"${key}":${value}}`, 400, `The request body repeats the key "${key}"; send each key once.`);
  });

  it('a duplicate key spelt with a \\u escape → 400', async () => {
    await refused(route, `${route.prefix},"\\u0065ntityId":"ENT-1002"}`, 400, 'The request body repeats the key "entityId"; send each key once.');
  });

  it('a duplicate key in a nested object → 400 naming the object', async () => {
    await refused(
      route,
      `${route.prefix},"extra":{"list":[{"a":1,"a":2}]}}`,
      400,
      'The request body repeats the key "a" of the object at extra.list[0]; send each key once.',
    );
  });

  it('a number with 16 significant digits → 400, the number not echoed', async () => {
    const res = await send(route, `${route.prefix},"pan":4111111111111111}`);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(route.expect(400, 'Bad Request', 'The number at pan has more than 15 significant digits; send it as a string.'));
    expect(res.body).not.toContain('4111111111111111');
  });

  it('a number beyond 1e15 → 400', async () => {
    await refused(
      route,
      `${route.prefix},"n":2e15}`,
      400,
      'The number at n is outside the accepted range (magnitude at most 1e15); send it as a string.',
    );
  });

  it('33 levels of nesting → 400', async () => {
    const deep = '{"d":'.repeat(32) + '1' + '}'.repeat(32);
    await refused(
      route,
      `${route.prefix},"x":${deep}}`,
      400,
      `The request body nests objects and arrays deeper than 32 levels (at x${'.d'.repeat(31)}).`,
    );
  });

  it('an array of 1001 items → 400', async () => {
    await refused(route, `${route.prefix},"x":[${Array(1001).fill('1').join(',')}]}`, 400, 'The array at x has more than 1000 items.');
  });

  it('an object of 257 keys → 400', async () => {
    const obj = `{${Array.from({ length: 257 }, (_, i) => `"k${i}":0`).join(',')}}`;
    await refused(route, `${route.prefix},"x":${obj}}`, 400, 'The object at x has more than 256 keys.');
  });

  it('__proto__ → 400', async () => {
    await refused(
      route,
      `${route.prefix},"__proto__":{"role":"Admin"}}`,
      400,
      'The request body contains a forbidden key (__proto__, or constructor.prototype).',
    );
  });

  it('invalid UTF-8 → 400 (not replaced by U+FFFD)', async () => {
    const body = Buffer.concat([Buffer.from(`${route.prefix},"x":"`), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]);
    await refused(route, body, 400, 'The request body is not valid UTF-8.');
  });

  it('an empty body with a JSON content type → 400', async () => {
    await refused(route, '', 400, 'The request body is empty; send a JSON object.');
  });

  it.each([
    ['text/plain', 'text/plain'],
    ['application/x-www-form-urlencoded', 'application/x-www-form-urlencoded'],
    ['application/json with a latin-1 charset', 'application/json; charset=iso-8859-1'],
    ['application/octet-stream', 'application/octet-stream'],
    ['application/xml', 'application/xml'],
  ])('Content-Type %s → 415', async (_name, contentType) => {
    await refused(route, `${route.prefix}}`, 415, `Content-Type '${contentType}' is not accepted; send application/json.`, contentType);
  });

  it('a body without Content-Type → 415', async () => {
    const c = await core();
    const before = structuredClone(c.state);
    const res = await t.inject({
      method: route.method,
      url: route.url,
      headers: { TENANT: 'demo', authorization: `Bearer ${token}` },
      payload: Buffer.from(`${route.prefix}}`),
    });
    expect(res.statusCode).toBe(415);
    expect(res.json()).toEqual(route.expect(415, 'Unsupported Media Type', "Content-Type '' is not accepted; send application/json."));
    expect(c.state).toEqual(before);
  });
});

describe('what stays accepted', () => {
  it('application/json with charset=UTF-8 and an application/*+json type are parsed like application/json', async () => {
    const limit = ROUTES[0]!;
    for (const [contentType, amount] of [
      ['application/json; charset=UTF-8', '61000.00'],
      ['application/merge-patch+json', '62000.00'],
      ['application/vnd.cardline.v1+json; charset=utf-8', '63000.00'],
    ] as const) {
      const res = await send(limit, JSON.stringify({ entityId: 'ENT-1002', amount }), contentType);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ result: true, exception: null, pagination: null });
    }
    expect((await core()).state.entities.get('ENT-1002')?.creditLimitMinor).toBe(6_300_000n);
  });

  it('the same key in two different objects, and numbers within bounds, reach validation (400 field errors, not a parse error)', async () => {
    const res = await send(
      ROUTES[1]!,
      '{"kitNo":"KIT-2001","communicationAddress":{"usePrimaryAddress":true},"plasticCodeDto":{"kitNo":1e15}}',
    );
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ type: `${PROBLEM_BASE}/constraint-violation`, message: 'error.validation' });
  });

  it('a route without a body is not affected', async () => {
    const res = await t.inject({ method: 'GET', url: '/api/keys', headers: { TENANT: 'demo' } });
    expect(res.statusCode).toBe(200);
  });
});
