// Tracing behind proxies and in the logs: the audit's origin behind trusted proxies only (TRUST_PROXY), and the log lines an operator
// relies on: an expired token logged as `expired`, and one warning per lockout naming tenant and user.
import { randomBytes, randomUUID } from 'node:crypto';
import pino from 'pino';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { loggerOptions } from '../../src/logging.js';
import { LIMIT_URL, PASSWORD, createTestApp, type TestApp } from '../helpers/app.js';
import { scanForSecrets } from '../helpers/log-scan.js';
import { UNAUTHORIZED_ENVELOPE, lowS } from '../helpers/token-targets.js';

/**
 * A request id the gateway keeps as sent: letters only. A UUID's hex digits form a run of twelve digits
 * (which the gateway replaces, as it could be a card number) in a few percent of ids, which made these
 * tests flaky.
 */
const requestIdFor = (prefix: string) => `${prefix}-${randomBytes(12).toString('hex').replace(/[0-9]/g, (d) => 'ghijklmnop'[Number(d)]!)}`;

/** The audit origin of the request that sent this X-Request-Id. */
async function originOf(t: TestApp, requestId: string): Promise<string | null> {
  const r = await t.db.query<{ origin: string | null }>('SELECT origin FROM audit_log WHERE request_id = $1', [requestId]);
  expect(r.rows).toHaveLength(1);
  return r.rows[0]!.origin;
}

/** A failed login (audited once the tenant is known) from `remoteAddress`, with the given X-Forwarded-For. */
async function loginFrom(t: TestApp, remoteAddress: string, forwardedFor?: string): Promise<string> {
  const requestId = requestIdFor('trace');
  const res = await t.inject({
    method: 'POST',
    url: '/api/authenticate',
    remoteAddress,
    headers: { TENANT: 'demo', 'x-request-id': requestId, ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}) },
    payload: { username: 'nobody', password: await t.encrypt('not-the-password') },
  });
  expect(res.statusCode).toBe(401);
  return originOf(t, requestId) as Promise<string>;
}

describe('TRUST_PROXY', () => {
  it('is validated at boot, naming the variable', () => {
    for (const bad of ['10.0.0.0/33', 'lb.internal', 'true', '10.0.0.1,,10.0.0.2', '::1/129', '10.0.0.0/8/1']) {
      expect(() => loadConfig({ TRUST_PROXY: bad })).toThrow(ConfigError);
      expect(() => loadConfig({ TRUST_PROXY: bad })).toThrow(/^Invalid configuration: TRUST_PROXY must be a comma-separated list of proxy addresses or CIDRs/);
    }
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: ' 10.0.0.0/8, 192.168.1.10 ,fd00::/8' }).trustProxy).toEqual(['10.0.0.0/8', '192.168.1.10', 'fd00::/8']);
  });

  describe('unset (the default)', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await createTestApp();
    });
    afterAll(() => t?.close());

    it('ignores X-Forwarded-For: the origin is the peer address', async () => {
      expect(await loginFrom(t, '10.0.0.5', '203.0.113.7')).toBe('10.0.0.5');
      expect(await loginFrom(t, '192.0.2.9')).toBe('192.0.2.9');
    });
  });

  describe('naming the load balancers', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await createTestApp({ env: { TRUST_PROXY: '10.0.0.0/8' } });
    });
    afterAll(() => t?.close());

    it('from a trusted proxy, the origin is the client it forwarded for', async () => {
      expect(await loginFrom(t, '10.0.0.5', '203.0.113.7')).toBe('203.0.113.7');
    });

    it('through two trusted proxies, the client is the first untrusted address from the right', async () => {
      expect(await loginFrom(t, '10.0.0.5', '203.0.113.7, 10.1.2.3')).toBe('203.0.113.7');
    });

    it('a client cannot forge its origin: what it put in X-Forwarded-For itself is left of the address the proxy saw', async () => {
      expect(await loginFrom(t, '10.0.0.5', '198.51.100.66, 203.0.113.7')).toBe('203.0.113.7');
    });

    it('from an untrusted peer, X-Forwarded-For is ignored', async () => {
      expect(await loginFrom(t, '192.0.2.9', '203.0.113.7')).toBe('192.0.2.9');
    });
  });
});

describe('log lines of refusals', () => {
  let t: TestApp;
  const lines: string[] = [];
  const logged = () => lines.map((l) => JSON.parse(l) as Record<string, unknown>);

  beforeAll(async () => {
    const stream = { write: (chunk: string) => void lines.push(chunk) };
    t = await createTestApp({ env: { LOG_LEVEL: 'info' }, logger: pino(loggerOptions('info'), stream) });
  });
  afterAll(() => t?.close());

  it('an expired token is logged as expired, and answers the usual 401', async () => {
    const sig = (await t.app.cardline.keys.forTenant('demo')).sig[0]!;
    const now = Math.floor(Date.now() / 1000);
    const expired = lowS(
      await new SignJWT({ tenant: 'demo', role: 'Admin' })
        .setProtectedHeader({ alg: 'ES256', kid: sig.kid, typ: 'JWT' })
        .setSubject('admin')
        .setIssuedAt(now - 7200)
        .setExpirationTime(now - 3600)
        .setJti(randomUUID())
        .setIssuer('cardline')
        .setAudience('cardline-api')
        .sign(await sig.privateKey()),
    );
    const requestId = requestIdFor('expired');
    lines.length = 0;
    const res = await t.inject({
      method: 'POST',
      url: LIMIT_URL,
      headers: { TENANT: 'demo', authorization: `Bearer ${expired}`, 'x-request-id': requestId },
      payload: { entityId: 'ENT-1001', amount: '60000.00' },
    });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual(UNAUTHORIZED_ENVELOPE);
    const refused = logged().filter((l) => l.msg === 'token refused');
    expect(refused).toEqual([expect.objectContaining({ level: 30, requestId, reason: 'expired' })]);
    expect(scanForSecrets(lines.join(''), [expired])).toEqual([]);
  });

  it('the tenth failed login logs one warning naming tenant and user, never the password', async () => {
    const wrong = 'Wr0ng-Guess-Passw0rd';
    lines.length = 0;
    for (let i = 1; i <= 11; i++) {
      const res = await t.inject({
        method: 'POST',
        url: '/api/authenticate',
        headers: { TENANT: 'demo' },
        payload: { username: 'viewer', password: await t.encrypt(i === 11 ? PASSWORD : wrong) },
      });
      expect(res.statusCode).toBe(401);
      const warnings = logged().filter((l) => l.level === 40);
      // Nothing before the tenth failure; exactly one line from then on (the eleventh, refused while locked, adds none).
      expect(warnings).toHaveLength(i < 10 ? 0 : 1);
    }
    const [warning] = logged().filter((l) => l.level === 40);
    expect(warning).toMatchObject({ msg: 'user locked after repeated failed logins', tenant: 'demo', user: 'viewer', failures: 10, lockedMinutes: 30 });
    expect(scanForSecrets(lines.join(''), [wrong, PASSWORD])).toEqual([]);
  });
});
