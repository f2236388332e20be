// The HTTP server's timeouts (decision 0015): a client that sends its headers or body too slowly gets
// 408 and its connection closed; the values follow the configuration.
import { connect } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, serverOptions } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { MasterKey } from '../../src/crypto/master-key.js';
import { createTenant } from '../../src/services/tenancy/onboarding.js';
import { createTestDb, type TestDb } from '../helpers/app.js';

let app: FastifyInstance;
let testDb: TestDb;
let port: number;

beforeAll(async () => {
  testDb = await createTestDb();
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    CARDLINE_REQUEST_TIMEOUT_MS: '1500',
    CARDLINE_CONNECTOR_TIMEOUT_MS: '2000',
    CARDLINE_KEEP_ALIVE_TIMEOUT_MS: '5000',
  });
  app = await buildApp({ config, db: testDb.db, masterKey: MasterKey.generate(), ownsDb: false });
  await createTenant(app.cardline, { id: 'demo' });
  await app.listen({ host: '127.0.0.1', port: 0 });
  port = (app.server.address() as { port: number }).port;
});
afterAll(async () => {
  await app?.close();
  await testDb?.drop();
});

/** Writes `chunks` (then stays silent) and resolves with what the server sent and when it closed. */
function slowClient(chunks: string[]): Promise<{ response: string; closedAfterMs: number }> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = connect(port, '127.0.0.1', () => {
      for (const c of chunks) socket.write(c);
    });
    let response = '';
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => (response += d));
    socket.on('error', reject);
    socket.on('close', () => resolve({ response, closedAfterMs: Date.now() - started }));
    setTimeout(() => {
      socket.destroy();
      reject(new Error('the server kept the connection open'));
    }, 8_000).unref();
  });
}

describe('server timeouts', () => {
  it('follow the configuration', () => {
    const server = app.server;
    expect({
      requestTimeout: server.requestTimeout,
      headersTimeout: server.headersTimeout,
      keepAliveTimeout: server.keepAliveTimeout,
      socketTimeout: server.timeout,
    }).toEqual({ requestTimeout: 1500, headersTimeout: 1500, keepAliveTimeout: 5000, socketTimeout: 3500 });
  });

  it('by default: headers within 10 s, the request within 30 s, a silent socket for 40 s, keep-alive 72 s', () => {
    const options = serverOptions(loadConfig({}));
    expect({
      requestTimeout: options.requestTimeout,
      headersTimeout: options.http?.headersTimeout,
      connectionTimeout: options.connectionTimeout,
      keepAliveTimeout: options.keepAliveTimeout,
    }).toEqual({ requestTimeout: 30_000, headersTimeout: 10_000, connectionTimeout: 40_000, keepAliveTimeout: 72_000 });
  });

  it('headers that never finish → 408 and the connection closed, within the request timeout plus the check interval', async () => {
    const { response, closedAfterMs } = await slowClient(['POST /api/authenticate HTTP/1.1\r\nHost: localhost\r\nTENANT: demo\r\n']);
    expect(response).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    expect(closedAfterMs).toBeGreaterThanOrEqual(1_400);
    // The configured 1.5 s, far from the 10 s and 30 s defaults (a bound a loaded machine meets).
    expect(closedAfterMs).toBeLessThan(9_000);
  });

  it('a body that never finishes → 408 and the connection closed', async () => {
    const { response, closedAfterMs } = await slowClient([
      'POST /api/authenticate HTTP/1.1\r\nHost: localhost\r\nTENANT: demo\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"user',
    ]);
    expect(response).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    expect(closedAfterMs).toBeLessThan(9_000);
  });
});
