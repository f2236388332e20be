// Logs at trace level, captured in memory, after requests that carry every kind of secret: nothing leaks.
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loggerOptions } from '../../src/logging.js';
import { LIMIT_URL, PASSWORD, UPGRADE_URL, createTestApp, type TestApp } from '../helpers/app.js';
import { scanForSecrets } from '../helpers/log-scan.js';

const TEST_PAN = '4111111111111111';
const OTHER_PAN = '5500 0000 0000 0004';

let t: TestApp;
const lines: string[] = [];
const secrets: string[] = [PASSWORD];

beforeAll(async () => {
  const stream = { write: (chunk: string) => void lines.push(chunk) };
  t = await createTestApp({ env: { LOG_LEVEL: 'trace' }, logger: pino(loggerOptions('trace'), stream) });
});
afterAll(() => t?.close());

const captured = () => lines.join('');

describe('captured logs (trace level)', () => {
  it('hold no password, token, JWE, card number or bearer header after a mixed workload', async () => {
    // Authentication: success, wrong password, unknown user, plaintext refused, replayed JWE, garbage JWE.
    const goodJwe = await t.encrypt(PASSWORD);
    secrets.push(goodJwe);
    const ok = await t.inject({ method: 'POST', url: '/api/authenticate', headers: { TENANT: 'demo' }, payload: { username: 'admin', password: goodJwe } });
    expect(ok.statusCode).toBe(200);
    const token = ok.json().id_token as string;
    secrets.push(token);
    const replay = await t.inject({ method: 'POST', url: '/api/authenticate', headers: { TENANT: 'demo' }, payload: { username: 'admin', password: goodJwe } });
    expect(replay.statusCode).toBe(400);
    const wrong = await t.inject({
      method: 'POST',
      url: '/api/authenticate',
      headers: { TENANT: 'demo' },
      payload: { username: 'admin', password: await t.encrypt(`${PASSWORD}-not`) },
    });
    expect(wrong.statusCode).toBe(401);
    const unknown = await t.inject({
      method: 'POST',
      url: '/api/authenticate',
      headers: { TENANT: 'demo' },
      payload: { username: TEST_PAN, password: await t.encrypt(PASSWORD) },
    });
    expect(unknown.statusCode).toBe(401);
    const plaintext = await t.inject({ method: 'POST', url: '/api/authenticate', headers: { TENANT: 'demo' }, payload: { username: 'admin', password: PASSWORD } });
    expect(plaintext.statusCode).toBe(400);
    const garbage = await t.inject({
      method: 'POST',
      url: '/api/authenticate',
      headers: { TENANT: 'demo' },
      payload: { username: 'admin', password: 'eyJhbGciOiJFQ0RILUVTK0EyNTZLVyJ9.AAAA.BBBB.CCCC.DDDD' },
    });
    expect(garbage.statusCode).toBe(400);

    const auth = { authorization: `Bearer ${token}` };
    // Limit upgrade: success, a forged token, a malformed amount carrying a card number.
    expect((await t.inject({ method: 'POST', url: LIMIT_URL, headers: { TENANT: 'demo', ...auth }, payload: { entityId: 'ENT-1001', amount: '60000.00' } })).statusCode).toBe(200);
    const forged = `${token.slice(0, -8)}AAAAAAAA`;
    expect(
      (await t.inject({ method: 'POST', url: LIMIT_URL, headers: { TENANT: 'demo', authorization: `Bearer ${forged}` }, payload: { entityId: 'ENT-1001', amount: '1.00' } }))
        .statusCode,
    ).toBe(401);
    expect((await t.inject({ method: 'POST', url: LIMIT_URL, headers: { TENANT: 'demo', ...auth }, payload: { entityId: TEST_PAN, amount: TEST_PAN } })).statusCode).toBe(400);

    // Card upgrade with address lines (one of them card-number shaped), and an unknown kit.
    const card = await t.inject({
      method: 'PUT',
      url: UPGRADE_URL,
      headers: { 'X-TENANT-ID': 'demo', ...auth },
      payload: {
        kitNo: 'KIT-2002',
        entityId: 'ENT-1002',
        communicationAddress: { address1: `Flat ${OTHER_PAN}`, address2: `Ref ${TEST_PAN}`, city: 'Lisbon', state: 'Lisboa', country: 'PT', pin: '1100-053' },
      },
    });
    expect(card.statusCode).toBe(200);
    expect((await t.inject({ method: 'PUT', url: UPGRADE_URL, headers: { 'X-TENANT-ID': 'demo', ...auth }, payload: { kitNo: TEST_PAN, entityId: 'ENT-1003' } })).statusCode).toBe(409);

    // A 500: the core fails with a message that carries card numbers and the caller's token.
    const connector = await t.app.cardline.connectors.forTenant((await t.app.cardline.tenants.get('demo'))!);
    const original = connector.upgradeLimit;
    connector.upgradeLimit = async () => {
      throw new Error(`core refused card ${TEST_PAN} (${OTHER_PAN}) for ${token}`);
    };
    try {
      const res = await t.inject({ method: 'POST', url: LIMIT_URL, headers: { TENANT: 'demo', ...auth }, payload: { entityId: 'ENT-1001', amount: '70000.00' } });
      expect(res.statusCode).toBe(500);
      expect(res.body).not.toContain(TEST_PAN);
    } finally {
      connector.upgradeLimit = original;
    }

    // The scan reads real lines: one completion line per request and the 500's error line.
    const text = captured();
    const completions = text.split('\n').filter((l) => l.includes('"msg":"request completed"'));
    expect(completions.length).toBeGreaterThanOrEqual(11);
    expect(text).toMatch(/"level":50[^\n]*unhandled error/);
    expect(scanForSecrets(text, secrets)).toEqual([]);
  });

  it('still says why the request failed: the error line keeps a scrubbed message', () => {
    const errorLine = captured()
      .split('\n')
      .find((l) => l.includes('unhandled error'));
    expect(errorLine).toBeDefined();
    const entry = JSON.parse(errorLine!) as { err?: { message?: string; type?: string; stack?: string } };
    expect(entry.err).toMatchObject({ type: 'Error', message: expect.stringContaining('core refused card 411111******1111 (550000******0004) for [REDACTED-JOSE]') });
    expect(entry.err?.stack).toContain('411111******1111');
  });
});
