// Answers given before a route runs — a malformed URL, an over-long path parameter, a known path called with
// another method, an unknown path, a request while the gateway shuts down — are in the dialect of the route
// the path belongs to (the problem record where none does), with the headers of every answer.
import { connect } from 'node:net';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMIT_URL, createTestApp, type TestApp } from '../helpers/app.js';
import { problem } from '../helpers/problems.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t?.close());

const envelope = (status: number, shortMessage: string, detailMessage: string) => ({
  result: null,
  exception: { errorCode: `ERR_${status}`, shortMessage, detailMessage },
  pagination: null,
});

const BAD_URL = 'The URL is not valid: its path holds a malformed percent-encoding, or one that does not decode to UTF-8 text.';
const TOO_LONG = 'A path parameter is longer than 100 characters; identifiers in paths are at most 64 characters.';

const send = async (method: string, url: string, headers: Record<string, string> = {}) =>
  t.inject({ method: method as 'GET', url, headers: { TENANT: 'demo', 'x-request-id': 'framework-1', authorization: `Bearer ${await t.token('Admin')}`, ...headers } });

/** The headers every answer carries, and the media type of its dialect. */
function expectHeaders(res: LightMyRequestResponse, dialect: 'problem' | 'envelope') {
  expect({
    type: res.headers['content-type'],
    requestId: res.headers['x-request-id'],
    cache: res.headers['cache-control'],
    nosniff: res.headers['x-content-type-options'],
    csp: res.headers['content-security-policy'],
  }).toEqual({
    type: dialect === 'problem' ? 'application/problem+json; charset=utf-8' : 'application/json; charset=utf-8',
    requestId: 'framework-1',
    cache: 'no-store',
    nosniff: 'nosniff',
    csp: "default-src 'none';frame-ancestors 'none'",
  });
}

describe('a malformed URL → 400', () => {
  it.each([
    ['a truncated percent-encoding', 'GET', '/v1/cards/%E0%A4%A'],
    ['percent-encoded UTF-8 of a lone surrogate', 'GET', '/v1/cards/%ED%A0%80'],
    ['a %u escape', 'GET', '/v1/cards/%uD800'],
    ['on a write', 'POST', '/v1/cards/%ED%A0%80/lock'],
    ['on a path no route matches', 'GET', '/v1/nothing/%E0%A4%A'],
  ])('%s: %s %s', async (_name, method, url) => {
    const res = await send(method, url);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(problem(400, 'Bad Request', BAD_URL));
    expectHeaders(res, 'problem');
  });

  it('a query string with invalid percent-encodings or a lone surrogate is no 5xx', async () => {
    for (const query of ['actor=%ED%A0%80', 'actor=%E0%A4%A', 'actor=%uD800', 'requestId=%F0%9F%98%80']) {
      const res = await send('GET', `/v1/audit?${query}`);
      expect(res.statusCode, query).toBe(200);
      expect(res.json(), query).toEqual({ result: [], pagination: { nextCursor: null, next: null, limit: 50 } });
    }
    const nul = await send('GET', '/v1/audit?actor=a%00b');
    expect(nul.statusCode).toBe(400);
    expect(nul.json()).toEqual(problem(400, 'Bad Request', 'The URL contains a NUL character (%00), which is not accepted.'));
  });
});

describe('a path parameter over the length limit → 414, the URL not echoed', () => {
  it('on a card route (problem)', async () => {
    const res = await send('GET', `/v1/cards/${'A'.repeat(101)}`);
    expect(res.statusCode).toBe(414);
    expect(res.json()).toEqual(problem(414, 'URI Too Long', TOO_LONG));
    expect(res.body).not.toContain('AAAA');
    expectHeaders(res, 'problem');
  });

  it('at 100 characters the route itself answers (validation: Size)', async () => {
    const res = await send('GET', `/v1/cards/${'A'.repeat(100)}`);
    expect(res.statusCode).toBe(400);
    expect(res.json().fieldErrors).toEqual([{ field: 'cardId', message: 'Size', objectName: 'cardRequest' }]);
  });

  it('on a path no route matches, it is a 404 that does not echo it', async () => {
    const res = await send('GET', `/v1/cards/${'A'.repeat(300)}/nothing`);
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual(problem(404, 'Not Found', 'No route GET for this path (too long to repeat).'));
    expectHeaders(res, 'problem');
  });
});

describe('a known path with another method → 405 and Allow', () => {
  it.each([
    ['DELETE', '/v1/cards/CARD-3001/lock', 'POST'],
    ['DELETE', '/v1/cards/CARD-3001', 'GET, HEAD'],
    ['POST', '/v1/admin/client-key', 'GET, HEAD, PUT'],
    ['PATCH', '/v1/cards/upgrade/physical', 'PUT'],
    ['PUT', '/health/live', 'GET, HEAD'],
  ])('%s %s → Allow: %s (problem)', async (method, url, allow) => {
    const res = await send(method, url);
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toBe(allow);
    expect(res.json()).toEqual(problem(405, 'Method Not Allowed', `${method} is not allowed on ${url}; it answers ${allow}.`));
    expectHeaders(res, 'problem');
  });

  it('on a credit-line path, in the envelope', async () => {
    const res = await send('GET', LIMIT_URL);
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toBe('POST');
    expect(res.json()).toEqual(envelope(405, 'Method Not Allowed', `GET is not allowed on ${LIMIT_URL}; it answers POST.`));
    expectHeaders(res, 'envelope');
  });

  it('needs no tenant or token: it says what the path answers, as the OpenAPI document does', async () => {
    const res = await t.inject({ method: 'DELETE', url: '/v1/cards/CARD-3001/lock', headers: { 'x-request-id': 'framework-1' } });
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toBe('POST');
  });

  it('a sandbox route stays hidden: another method answers 404, as on a route that does not exist (decision 0012)', async () => {
    const res = await send('GET', '/v1/sandbox/cards/CARD-3001/fulfilment/advance');
    expect(res.statusCode).toBe(404);
    expect(res.headers.allow).toBeUndefined();
    expect(res.json()).toEqual(problem(404, 'Not Found', 'No route GET /v1/sandbox/cards/CARD-3001/fulfilment/advance.'));
  });

  it('an unknown path stays 404', async () => {
    const res = await send('DELETE', '/v1/nothing-here?x=1');
    expect(res.statusCode).toBe(404);
    expect(res.headers.allow).toBeUndefined();
    expect(res.json()).toEqual(problem(404, 'Not Found', 'No route DELETE /v1/nothing-here.'));
    expectHeaders(res, 'problem');
  });
});

/** The HTTP/1.1 responses in what a socket received, in order (bodies by Content-Length). */
function responses(text: string): { status: number; headers: Record<string, string>; body: string }[] {
  const out = [];
  let rest = text;
  while (rest.startsWith('HTTP/1.1 ')) {
    const end = rest.indexOf('\r\n\r\n');
    const [statusLine, ...lines] = rest.slice(0, end).split('\r\n');
    const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
    const length = Number(headers['content-length'] ?? 0);
    out.push({ status: Number(statusLine!.split(' ')[1]), headers, body: rest.slice(end + 4, end + 4 + length) });
    rest = rest.slice(end + 4 + length);
  }
  return out;
}

describe('while the gateway shuts down', () => {
  it('a request still arriving on an open connection → 503 in its dialect, quoting its id, connection closed; the one in flight finishes', async () => {
    const own = await createTestApp();
    try {
      const token = await own.token('Admin');
      const connector = (await own.app.cardline.connectors.forTenant((await own.app.cardline.tenants.get('demo'))!)) as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>;
      const original = connector.upgradeLimit!;
      let release!: () => void;
      let entered!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      const inside = new Promise<void>((r) => (entered = r));
      connector.upgradeLimit = async (...args) => {
        entered();
        await gate;
        return original.apply(connector, args);
      };
      await own.app.listen({ host: '127.0.0.1', port: 0 });
      const port = (own.app.server.address() as { port: number }).port;
      const body = JSON.stringify({ entityId: 'ENT-1001', amount: '60000.00' });
      const request = (id: string) =>
        `POST ${LIMIT_URL} HTTP/1.1\r\nHost: localhost\r\nTENANT: demo\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${id}\r\n\r\n${body}`;
      const socket = connect(port, '127.0.0.1');
      let received = '';
      socket.setEncoding('utf8').on('data', (d: string) => (received += d));
      const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
      socket.write(request('framework-in-flight'));
      await inside;
      const closing = own.app.close();
      await new Promise((r) => setTimeout(r, 100));
      // On the connection that stays open for the request in flight: the server is closing by now.
      socket.write(request('framework-closing'));
      await new Promise((r) => setTimeout(r, 100));
      release();
      await closed;
      await closing;
      const [first, second] = responses(received);
      expect(first).toMatchObject({ status: 200, headers: { 'x-request-id': 'framework-in-flight' } });
      expect(second).toMatchObject({ status: 503, headers: { 'x-request-id': 'framework-closing', connection: 'close', 'content-type': 'application/json; charset=utf-8' } });
      expect(JSON.parse(second!.body)).toEqual(
        envelope(503, 'Service Unavailable', 'The gateway is shutting down; retry the request, another instance will answer it. Quote request id framework-closing to support.'),
      );
    } finally {
      await own.close();
    }
  });
});
