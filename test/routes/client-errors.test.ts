// What Node's HTTP parser refuses before a request exists: malformed framing (400), a request too slow (408),
// headers too large (431). Each answer is a problem record with the headers every other answer carries, on
// both listeners, over raw sockets (no HTTP client would send these), and is what the listener's document declares.
import { connect } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { MasterKey } from '../../src/crypto/master-key.js';
import { buildManagementApp } from '../../src/management/app.js';
import { createTestDb, type TestDb } from '../helpers/app.js';
import { MANAGEMENT_DOCUMENT, PUBLIC_DOCUMENT, readDocument } from '../helpers/openapi.js';
import { problem } from '../helpers/problems.js';

let testDb: TestDb;
let gateway: FastifyInstance;
let management: FastifyInstance;
const ports: Record<'public' | 'management', number> = { public: 0, management: 0 };

beforeAll(async () => {
  testDb = await createTestDb();
  const config = loadConfig({ LOG_LEVEL: 'silent', CARDLINE_REQUEST_TIMEOUT_MS: '1500' });
  gateway = await buildApp({ config, db: testDb.db, masterKey: MasterKey.generate(), ownsDb: false });
  management = await buildManagementApp({ services: gateway.cardline, config });
  await gateway.listen({ host: '127.0.0.1', port: 0 });
  await management.listen({ host: '127.0.0.1', port: 0 });
  ports.public = (gateway.server.address() as { port: number }).port;
  ports.management = (management.server.address() as { port: number }).port;
});
afterAll(async () => {
  await management?.close();
  await gateway?.close();
  await testDb?.drop();
});

interface Raw {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Writes `data` on a new connection and reads what the server sends until it closes it. */
function raw(port: number, data: string): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(data));
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => (text += d));
    // The server may reset the connection after its answer while the client still writes.
    socket.on('error', (err) => (text ? undefined : reject(err)));
    socket.on('close', () => {
      const [head, ...rest] = text.split('\r\n\r\n');
      const [statusLine, ...lines] = head!.split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const at = line.indexOf(':');
        headers[line.slice(0, at).toLowerCase()] = line.slice(at + 1).trim();
      }
      resolve({ status: Number(statusLine!.split(' ')[1]), headers, body: rest.join('\r\n\r\n') });
    });
  });
}

/** The headers of an ordinary answer on that listener that every answer carries (helmet's, cache, nosniff…). */
async function everyAnswersHeaders(port: number): Promise<Record<string, string>> {
  const ordinary = await raw(port, 'GET /health/live HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
  expect(ordinary.status).toBe(200);
  const { date: _date, connection: _connection, 'content-length': _length, 'content-type': _type, 'x-request-id': _id, ...security } = ordinary.headers;
  expect(Object.keys(security)).toEqual(expect.arrayContaining(['content-security-policy', 'x-content-type-options', 'cache-control', 'x-frame-options']));
  return security;
}

const DOCUMENTS = { public: readDocument(PUBLIC_DOCUMENT), management: readDocument(MANAGEMENT_DOCUMENT) };

/**
 * The listener's document declares the answer: 408 and 431 on every operation (the probes, the key set, the
 * metrics and the document included), by one component whose example is the answer; 400 where no operation is read.
 */
function expectDocumented(listener: 'public' | 'management', status: number, body: unknown) {
  const document = DOCUMENTS[listener];
  if (status === 400) {
    expect(document['x-unrouted-responses']['400']!.description).toMatch(/not well-formed HTTP\/1\.1/);
    return;
  }
  const operations = Object.entries(document.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => ({ where: `${method} ${path}`, op })));
  expect(operations.map(({ where }) => where)).toEqual(expect.arrayContaining(['get /health/live', 'get /openapi.json']));
  const missing = operations.filter(({ op }) => !op.responses[String(status)]?.$ref).map(({ where }) => where);
  expect(missing, `operations without a ${status}`).toEqual([]);
  const refs = new Set(operations.map(({ op }) => JSON.stringify(op.responses[String(status)])));
  expect(refs.size).toBe(1);
  const name = (JSON.parse([...refs][0]!) as { $ref: string }).$ref.replace('#/components/responses/', '');
  expect(document.components.responses![name]!.content!['application/problem+json']!.example).toEqual(body);
}

describe.each(['public', 'management'] as const)('on the %s listener', (listener) => {
  const expectAnswer = async (answer: Raw, status: number, title: string, detail: string) => {
    expect(answer.status).toBe(status);
    expect(JSON.parse(answer.body)).toEqual(problem(status, title, detail));
    expect(answer.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(answer.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(answer.headers).toMatchObject(await everyAnswersHeaders(ports[listener]));
    expectDocumented(listener, status, JSON.parse(answer.body));
  };

  it('malformed framing → 400', async () => {
    const answer = await raw(ports[listener], 'GET /health/live HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nx');
    await expectAnswer(answer, 400, 'Bad Request', 'The request is not well-formed HTTP/1.1 (request line, headers or framing).');
  });

  it('a request line that is no HTTP → 400', async () => {
    const answer = await raw(ports[listener], 'HELLO\r\n\r\n');
    await expectAnswer(answer, 400, 'Bad Request', 'The request is not well-formed HTTP/1.1 (request line, headers or framing).');
  });

  it('a 60 KB header → 431', async () => {
    const answer = await raw(ports[listener], `GET /health/live HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(60_000)}\r\n\r\n`);
    await expectAnswer(answer, 431, 'Request Header Fields Too Large', "The request's headers are larger than 16384 bytes; send fewer or shorter headers.");
  });

  it('headers that never finish → 408', async () => {
    const answer = await raw(ports[listener], 'GET /health/live HTTP/1.1\r\nHost: localhost\r\n');
    await expectAnswer(
      answer,
      408,
      'Request Timeout',
      'The request did not arrive in time (its headers, or the whole request: CARDLINE_REQUEST_TIMEOUT_MS); send it again.',
    );
  });
});
