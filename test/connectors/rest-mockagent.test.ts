// The REST connector against undici's MockAgent: answers, retries (with and without an idempotency key),
// resets, deadlines, the circuit breaker's cycle, unrecognised answers, auth headers, and quiet logs.
import { Writable } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import { MockAgent } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ConnectorTimeoutError,
  ConnectorUnavailableError,
  type ConnectorContext,
  type UpgradeLimitInput,
} from '../../connectors/contract.js';
import { createRestConnector, type RestConnector } from '../../connectors/rest/index.js';
import type { RestOptions } from '../../connectors/rest/options.js';
import { ephemeralSecrets } from '../../connectors/shared/ephemeral-secrets.js';

const LIMIT_PATH = '/banks/demo/v1/entities/ENT-1001/credit-limit';
const UPGRADE_PATH = '/banks/demo/v1/cards/physical-upgrades';
const limit: UpgradeLimitInput = { entityId: 'ENT-1001', amount: '75000.00', allowDecrease: false };
const applied = { status: 'APPLIED', entityId: 'ENT-1001', previousLimit: '50000.00', newLimit: '75000.00' };
const JSON_HEADERS = { headers: { 'content-type': 'application/json' } };
const SECRET_TOKEN = 'tok-SECRET-4242';
const SECRET_PASSWORD = 'pw-SECRET-4343';

/** Every log line of the test, to check that none carries a secret. */
const logLines: string[] = [];
const logger = pino(
  { level: 'trace' },
  new Writable({
    write(chunk, _enc, cb) {
      logLines.push(String(chunk));
      cb();
    },
  }),
) as unknown as FastifyBaseLogger;

let agent: MockAgent;
let origin: string;
let seq = 0;
const open: RestConnector[] = [];

beforeEach(() => {
  agent = new MockAgent({ enableCallHistory: true });
  agent.disableNetConnect();
  // A fresh origin per test: breakers are shared per origin, so tests cannot trip each other's.
  origin = `http://core-${++seq}.test`;
});

afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
  await agent.close();
});

async function connector(options: Partial<RestOptions> = {}, random?: () => number): Promise<RestConnector> {
  const c = await createRestConnector(
    {
      baseUrl: `${origin}/banks/demo`,
      retries: { max: 2, baseDelayMs: 1, maxDelayMs: 5 },
      breaker: { failureThreshold: 5, openMs: 30_000 },
      ...options,
    },
    { tenantId: 't1', logger, secrets: ephemeralSecrets() },
    { dispatcher: agent, ...(random ? { random } : {}) },
  );
  open.push(c);
  return c;
}

const ctx = (over: Partial<ConnectorContext> = {}): ConnectorContext => ({
  tenantId: 't1',
  requestId: 'req-123',
  logger,
  signal: AbortSignal.timeout(2_000),
  ...over,
});

const pool = () => agent.get(origin);
const calls = () => agent.getCallHistory()?.calls() ?? [];
const resetError = () => Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' });
const refusedError = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });

describe('answers', () => {
  it('200 APPLIED → succeeded; request id, idempotency key and JSON body are sent', async () => {
    pool().intercept({ path: LIMIT_PATH, method: 'POST' }).reply(200, applied, JSON_HEADERS);
    const c = await connector();
    const result = await c.upgradeLimit(limit, ctx({ idempotencyKey: 'idem-1' }));
    expect(result).toEqual({ status: 'succeeded', value: { entityId: 'ENT-1001', previousLimit: '50000.00', newLimit: '75000.00' } });
    const [call] = calls();
    expect(call!.headers).toMatchObject({ 'x-request-id': 'req-123', 'idempotency-key': 'idem-1', 'content-type': 'application/json' });
    expect(call!.headers).not.toHaveProperty('authorization');
    expect(JSON.parse(String(call!.body))).toEqual({ amount: '75000.00', allowDecrease: false });
    expect(c.stats()).toMatchObject({ calls: 1, succeeded: 1, failures: 0, timeouts: 0, breaker: { state: 'closed' } });
  });

  it('physical upgrade 200 APPLIED → succeeded with the card state', async () => {
    pool()
      .intercept({ path: UPGRADE_PATH, method: 'POST' })
      .reply(200, { status: 'APPLIED', cardId: 'CARD-3001', entityId: 'ENT-1001', kitNo: 'KIT-2001', cardState: 'PENDING_ACTIVATION' }, JSON_HEADERS);
    const c = await connector();
    const result = await c.upgradeToPhysical({ kitNo: 'KIT-2001', entityId: 'ENT-1001', lockOnUpgrade: true }, ctx());
    expect(result).toEqual({ status: 'succeeded', value: { cardId: 'CARD-3001', entityId: 'ENT-1001', kitNo: 'KIT-2001', state: 'PENDING_ACTIVATION' } });
    expect(JSON.parse(String(calls()[0]!.body))).toEqual({ kitNo: 'KIT-2001', entityId: 'ENT-1001', lockOnUpgrade: true });
  });

  it('422 → rejected with the core code and message, never retried', async () => {
    pool()
      .intercept({ path: UPGRADE_PATH, method: 'POST' })
      .reply(422, { error: { code: 'PPCUST_018', message: 'Kit KIT-9999 is not known to the core.' } }, JSON_HEADERS)
      .times(3);
    const c = await connector();
    const result = await c.upgradeToPhysical({ kitNo: 'KIT-9999', lockOnUpgrade: false }, ctx({ idempotencyKey: 'k' }));
    expect(result).toEqual({ status: 'rejected', code: 'PPCUST_018', message: 'Kit KIT-9999 is not known to the core.' });
    expect(calls()).toHaveLength(1);
    expect(c.stats()).toMatchObject({ rejected: 1, retries: 0 });
  });

  it('202 ACCEPTED → pending with the reference', async () => {
    pool().intercept({ path: LIMIT_PATH, method: 'POST' }).reply(202, { status: 'ACCEPTED', reference: 'Q-7' }, JSON_HEADERS);
    const c = await connector();
    expect(await c.upgradeLimit(limit, ctx())).toEqual({ status: 'pending', reference: 'Q-7' });
  });

  it.each([
    ['an unknown status', 299, JSON.stringify(applied)],
    ['an unparsable body', 200, '{"status":"APPL'],
    ['an empty body', 200, ''],
    ['an unknown status field', 200, JSON.stringify({ ...applied, status: 'MAYBE' })],
    ['HTML', 200, '<html>ok</html>'],
    ['a redirect', 302, ''],
  ])('%s → pending, never success', async (_name, status, body) => {
    pool().intercept({ path: LIMIT_PATH, method: 'POST' }).reply(status, body);
    const c = await connector();
    expect(await c.upgradeLimit(limit, ctx())).toEqual({ status: 'pending' });
    expect(c.stats().pending).toBe(1);
  });
});

describe('retries', () => {
  it('503 with an idempotency key: retried with the same key until it succeeds', async () => {
    pool().intercept({ path: LIMIT_PATH, method: 'POST' }).reply(503, { error: { code: 'CORE_UNAVAILABLE', message: 'busy' } }, JSON_HEADERS).times(2);
    pool().intercept({ path: LIMIT_PATH, method: 'POST' }).reply(200, applied, JSON_HEADERS);
    const c = await connector();
    const result = await c.upgradeLimit(limit, ctx({ idempotencyKey: 'idem-503' }));
    expect(result.status).toBe('succeeded');
    expect(calls().map((x) => x.headers?.['idempotency-key'])).toEqual(['idem-503', 'idem-503', 'idem-503']);
    expect(c.stats()).toMatchObject({ calls: 1, succeeded: 1, retries: 2, failures: 0 });
  });

  it('503 with an idempotency key: unavailable once the retries are spent', async () => {
    pool().intercept({ path: LIMIT_PATH, method: 'POST' }).reply(503, {}).times(3);
    const c = await connector();
    await expect(c.upgradeLimit(limit, ctx({ idempotencyKey: 'k' }))).rejects.toBeInstanceOf(ConnectorUnavailableError);
    expect(calls()).toHaveLength(3);
  });

  it('503 without an idempotency key: not retried (the core might apply it twice)', async () => {
    pool().intercept({ path: LIMIT_PATH, method: 'POST' }).reply(503, {}).times(3);
    const c = await connector();
    await expect(c.upgradeLimit(limit, ctx())).rejects.toBeInstanceOf(ConnectorUnavailableError);
    expect(calls()).toHaveLength(1);
    expect(c.stats()).toMatchObject({ failures: 1, retries: 0 });
  });

  it('500 is unavailable and not retried even with a key', async () => {
    pool().intercept({ path: LIMIT_PATH, method: 'POST' }).reply(500, {}).times(3);
    const c = await connector();
    await expect(c.upgradeLimit(limit, ctx({ idempotencyKey: 'k' }))).rejects.toBeInstanceOf(ConnectorUnavailableError);
    expect(calls()).toHaveLength(1);
  });

  it('connection reset without a key → unavailable, not retried', async () => {
    pool().intercept({ path: LIMIT_PATH, method: 'POST' }).replyWithError(resetError()).times(3);
    const c = await connector();
    await expect(c.upgradeLimit(limit, ctx())).rejects.toBeInstanceOf(ConnectorUnavailableError);
    expect(calls()).toHaveLength(1);
  });

  it('connection reset with a key → retried', async () => {
    pool().intercept({ path: LIMIT_PATH, method: 'POST' }).replyWithError(resetError());
    pool().intercept({ path: LIMIT_PATH, method: 'POST' }).reply(200, applied, JSON_HEADERS);
    const c = await connector();
    expect((await c.upgradeLimit(limit, ctx({ idempotencyKey: 'k' }))).status).toBe('succeeded');
    expect(calls()).toHaveLength(2);
  });

  it('connection refused → retried even without a key (the request was never sent)', async () => {
    pool().intercept({ path: LIMIT_PATH, method: 'POST' }).replyWithError(refusedError());
    pool().intercept({ path: LIMIT_PATH, method: 'POST' }).reply(200, applied, JSON_HEADERS);
    const c = await connector();
    expect((await c.upgradeLimit(limit, ctx())).status).toBe('succeeded');
    expect(calls()).toHaveLength(2);
  });

  it('retries: { max: 0 } makes a single attempt', async () => {
    pool().intercept({ path: LIMIT_PATH, method: 'POST' }).replyWithError(refusedError()).times(2);
    const c = await connector({ retries: { max: 0, baseDelayMs: 1, maxDelayMs: 1 } });
    await expect(c.upgradeLimit(limit, ctx({ idempotencyKey: 'k' }))).rejects.toBeInstanceOf(ConnectorUnavailableError);
    expect(calls()).toHaveLength(1);
  });
});

describe('deadlines', () => {
  it('a core slower than the request deadline → ConnectorTimeoutError, promptly', async () => {
    pool().intercept({ path: LIMIT_PATH, method: 'POST' }).reply(200, applied, JSON_HEADERS).delay(60_000);
    const c = await connector();
    const started = Date.now();
    await expect(c.upgradeLimit(limit, ctx({ signal: AbortSignal.timeout(100), idempotencyKey: 'k' }))).rejects.toBeInstanceOf(ConnectorTimeoutError);
    // At the 100 ms deadline, not at the 60 s answer: a bound a loaded machine meets with room to spare.
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(calls()).toHaveLength(1); // a timeout is not retried: the outcome is unknown
    expect(c.stats()).toMatchObject({ timeouts: 1, failures: 0 });
  });

  it('the timeoutMs cap applies when the request deadline is later', async () => {
    pool().intercept({ path: LIMIT_PATH, method: 'POST' }).reply(200, applied, JSON_HEADERS).delay(60_000);
    const c = await connector({ timeoutMs: 100 });
    await expect(c.upgradeLimit(limit, ctx())).rejects.toThrow(/within 100 ms/);
  });

  it('an already expired deadline → timeout without calling the core', async () => {
    const c = await connector();
    await expect(c.upgradeLimit(limit, ctx({ signal: AbortSignal.abort() }))).rejects.toBeInstanceOf(ConnectorTimeoutError);
    expect(calls()).toHaveLength(0);
  });

  it('a deadline during the backoff → timeout', async () => {
    pool().intercept({ path: LIMIT_PATH, method: 'POST' }).reply(503, {}).times(3);
    const c = await connector({ retries: { max: 2, baseDelayMs: 60_000, maxDelayMs: 60_000 } }, () => 0.5);
    const started = Date.now();
    await expect(c.upgradeLimit(limit, ctx({ signal: AbortSignal.timeout(100), idempotencyKey: 'k' }))).rejects.toBeInstanceOf(ConnectorTimeoutError);
    // At the 100 ms deadline, not after the 60 s backoff.
    expect(Date.now() - started).toBeLessThan(30_000);
  });
});

describe('circuit breaker', () => {
  it('opens after N consecutive failures, fails fast, half-opens after openMs, closes on a probe success', async () => {
    pool().intercept({ path: LIMIT_PATH, method: 'POST' }).reply(503, {}).times(3);
    const c = await connector({ breaker: { failureThreshold: 3, openMs: 150 } });
    for (let i = 0; i < 3; i++) await expect(c.upgradeLimit(limit, ctx())).rejects.toBeInstanceOf(ConnectorUnavailableError);
    expect(c.stats().breaker).toEqual({ state: 'open', consecutiveFailures: 3, opens: 1 });

    // Open: refused at once, the core is not called.
    await expect(c.upgradeLimit(limit, ctx())).rejects.toThrow(/circuit breaker is open/);
    expect(calls()).toHaveLength(3);
    expect(c.stats().shortCircuits).toBe(1);

    await new Promise((r) => setTimeout(r, 170));
    expect(c.stats().breaker.state).toBe('half-open');
    pool().intercept({ path: LIMIT_PATH, method: 'POST' }).reply(200, applied, JSON_HEADERS);
    expect((await c.upgradeLimit(limit, ctx())).status).toBe('succeeded');
    expect(c.stats().breaker).toEqual({ state: 'closed', consecutiveFailures: 0, opens: 1 });
  });

  it('a failed half-open probe re-opens it; only one probe gets through', async () => {
    pool().intercept({ path: LIMIT_PATH, method: 'POST' }).replyWithError(resetError()).times(2);
    const c = await connector({ breaker: { failureThreshold: 2, openMs: 100 } });
    for (let i = 0; i < 2; i++) await expect(c.upgradeLimit(limit, ctx())).rejects.toBeInstanceOf(ConnectorUnavailableError);
    await new Promise((r) => setTimeout(r, 120));

    pool().intercept({ path: LIMIT_PATH, method: 'POST' }).reply(503, {}).delay(50);
    const probe = c.upgradeLimit(limit, ctx());
    // While the probe is in flight, a second call is refused without reaching the core.
    await expect(c.upgradeLimit(limit, ctx())).rejects.toThrow(/circuit breaker is open/);
    await expect(probe).rejects.toBeInstanceOf(ConnectorUnavailableError);
    expect(c.stats().breaker).toMatchObject({ state: 'open', opens: 2 });
    expect(calls()).toHaveLength(3);
  });

  it('422 and 4xx answers are not transport failures', async () => {
    pool().intercept({ path: LIMIT_PATH, method: 'POST' }).reply(422, { error: { code: 'ENTITY_NOT_FOUND', message: 'no' } }).times(3);
    const c = await connector({ breaker: { failureThreshold: 2, openMs: 10_000 } });
    for (let i = 0; i < 3; i++) expect((await c.upgradeLimit(limit, ctx())).status).toBe('rejected');
    expect(c.stats().breaker.state).toBe('closed');
  });

  it('connectors of the same core share one breaker', async () => {
    pool().intercept({ path: LIMIT_PATH, method: 'POST' }).reply(503, {}).times(2);
    const breaker = { failureThreshold: 2, openMs: 10_000 };
    const a = await connector({ breaker });
    const b = await connector({ breaker });
    await expect(a.upgradeLimit(limit, ctx())).rejects.toBeInstanceOf(ConnectorUnavailableError);
    await expect(b.upgradeLimit(limit, ctx())).rejects.toBeInstanceOf(ConnectorUnavailableError);
    expect(a.stats().breaker.state).toBe('open');
    expect(b.stats().breaker.state).toBe('open');
  });
});

describe('auth', () => {
  it('bearer → Authorization: Bearer <token>', async () => {
    pool().intercept({ path: LIMIT_PATH, method: 'POST', headers: { authorization: `Bearer ${SECRET_TOKEN}` } }).reply(200, applied, JSON_HEADERS);
    const c = await connector({ auth: { type: 'bearer', token: SECRET_TOKEN } });
    expect((await c.upgradeLimit(limit, ctx())).status).toBe('succeeded');
  });

  it('basic → Authorization: Basic base64(user:password)', async () => {
    const expected = `Basic ${Buffer.from(`core-user:${SECRET_PASSWORD}`).toString('base64')}`;
    pool().intercept({ path: LIMIT_PATH, method: 'POST', headers: { authorization: expected } }).reply(200, applied, JSON_HEADERS);
    const c = await connector({ auth: { type: 'basic', username: 'core-user', password: SECRET_PASSWORD } });
    expect((await c.upgradeLimit(limit, ctx())).status).toBe('succeeded');
  });

  it('401 from the core → unavailable (misconfigured credentials), not a business refusal', async () => {
    pool().intercept({ path: LIMIT_PATH, method: 'POST' }).reply(401, { error: { code: 'UNAUTHENTICATED', message: 'no' } });
    const c = await connector({ auth: { type: 'bearer', token: SECRET_TOKEN } });
    await expect(c.upgradeLimit(limit, ctx())).rejects.toThrow(/refused the request with 401/);
  });

  it('mtls with unreadable certificate files fails at create, naming the field', async () => {
    await expect(
      createRestConnector({ baseUrl: 'https://core.test/banks/demo', auth: { type: 'mtls', cert: '/nonexistent/c.pem', key: '/nonexistent/k.pem' } }, { tenantId: 't1', logger, secrets: ephemeralSecrets() }),
    ).rejects.toThrow(/\/auth: the client certificate files could not be read \(ENOENT\)/);
  });
});

describe('logs', () => {
  it('carry no secret, no card number and no body', async () => {
    const pan = '4000000000003006';
    pool().intercept({ path: UPGRADE_PATH, method: 'POST' }).reply(503, { error: { code: 'X', message: `card ${pan}` } }).times(3);
    const c = await connector({ auth: { type: 'bearer', token: SECRET_TOKEN } });
    await expect(c.upgradeToPhysical({ kitNo: 'KIT-2001', cardId: 'CARD-3001', lockOnUpgrade: false }, ctx({ idempotencyKey: 'k' }))).rejects.toThrow();
    const all = logLines.join('');
    expect(all).toContain('core call failed'); // the retries were logged
    for (const secret of [SECRET_TOKEN, SECRET_PASSWORD, pan, Buffer.from(`core-user:${SECRET_PASSWORD}`).toString('base64')]) {
      expect(all).not.toContain(secret);
    }
  });
});

describe('card lifecycle', () => {
  const CARD = '/banks/demo/v1/cards/CARD-3001';
  const card = { cardId: 'CARD-3001', entityId: 'ENT-1001', form: 'VIRTUAL', state: 'LOCKED', maskedPan: '400000******3006', expiry: '12/29' };
  const details = { ...card, state: 'ACTIVE', sensitive: { pan: '4000000000003006', cvv: '150' } };

  it('a reference by entity is resolved first, under the same idempotency key, then changed by cardId', async () => {
    pool()
      .intercept({ path: '/banks/demo/v1/card-resolution?action=lock&entityId=ENT-1001', method: 'GET' })
      .reply(200, { cardId: 'CARD-3001' }, JSON_HEADERS);
    pool().intercept({ path: `${CARD}/lock`, method: 'POST' }).reply(200, { status: 'APPLIED', ...card }, JSON_HEADERS);
    const c = await connector();
    const result = await c.lockCard({ entityId: 'ENT-1001' }, ctx({ idempotencyKey: 'lock-1' }));
    expect(result).toEqual({
      status: 'succeeded',
      value: { cardId: 'CARD-3001', entityId: 'ENT-1001', form: 'VIRTUAL', state: 'LOCKED', panMasked: '400000******3006', expiry: '12/29' },
    });
    expect(calls().map((x) => [x.method, x.path, x.searchParams, x.headers?.['idempotency-key']])).toEqual([
      ['GET', '/banks/demo/v1/card-resolution', { action: 'lock', entityId: 'ENT-1001' }, 'lock-1'],
      ['POST', `${CARD}/lock`, {}, 'lock-1'],
    ]);
  });

  it('a refused lookup is the refusal of the change; nothing is posted', async () => {
    pool()
      .intercept({ path: '/banks/demo/v1/card-resolution?action=activate&kitNo=KIT-9', method: 'GET' })
      .reply(422, { error: { code: 'CARD_NOT_FOUND', message: 'No card is mapped to kit KIT-9.' } }, JSON_HEADERS);
    const c = await connector();
    expect(await c.activateCard({ kitNo: 'KIT-9' }, ctx())).toEqual({ status: 'rejected', code: 'CARD_NOT_FOUND', message: 'No card is mapped to kit KIT-9.' });
    expect(calls()).toHaveLength(1);
  });

  it('a read is retried after a 503 even without an idempotency key', async () => {
    pool().intercept({ path: CARD, method: 'GET' }).reply(503, { error: { code: 'CORE_UNAVAILABLE', message: 'busy' } }, JSON_HEADERS);
    pool().intercept({ path: CARD, method: 'GET' }).replyWithError(resetError());
    pool().intercept({ path: CARD, method: 'GET' }).reply(200, details, JSON_HEADERS);
    const c = await connector();
    expect(await c.getCard({ cardId: 'CARD-3001' }, ctx())).toMatchObject({ status: 'succeeded', value: { sensitive: { pan: '4000000000003006' } } });
    expect(calls()).toHaveLength(3);
    expect(c.stats()).toMatchObject({ retries: 2, succeeded: 1 });
  });

  it('a change is not retried after a 503 without a key', async () => {
    pool().intercept({ path: `${CARD}/lock`, method: 'POST' }).reply(503, {}).times(3);
    const c = await connector();
    await expect(c.lockCard({ cardId: 'CARD-3001' }, ctx())).rejects.toBeInstanceOf(ConnectorUnavailableError);
    expect(calls()).toHaveLength(1);
  });

  it.each([
    ['202 ACCEPTED', 202, JSON.stringify({ status: 'ACCEPTED' })],
    ['an unreadable 200', 200, '{"cardId":'],
    ['a 200 for another card', 200, JSON.stringify({ ...details, cardId: 'CARD-3002' })],
    ['a 404', 404, JSON.stringify({ error: { code: 'NOT_FOUND', message: 'no route' } })],
  ])('a read answered with %s → ConnectorUnavailableError (there is no pending read)', async (_name, status, body) => {
    pool().intercept({ path: CARD, method: 'GET' }).reply(status, body);
    const c = await connector();
    await expect(c.getCard({ cardId: 'CARD-3001' }, ctx())).rejects.toBeInstanceOf(ConnectorUnavailableError);
    expect(calls()).toHaveLength(1);
  });

  it('a read with an expired deadline throws a timeout and calls nothing', async () => {
    const c = await connector();
    await expect(c.listCards({ entityId: 'ENT-1001' }, ctx({ signal: AbortSignal.abort() }))).rejects.toBeInstanceOf(ConnectorTimeoutError);
    expect(calls()).toHaveLength(0);
  });

  it('setPin sends the block in the body only: never in the path, a header, the answer or a log line', async () => {
    const pinBlock = '0412AC89ABCDEF67';
    pool().intercept({ path: `${CARD}/pin`, method: 'PUT' }).reply(503, {}).times(3);
    const c = await connector();
    await expect(c.setPin({ cardId: 'CARD-3001', pinBlock, format: 0, keyId: 'zpk-1' }, ctx({ idempotencyKey: 'pin-1' }))).rejects.toThrow();
    expect(JSON.parse(String(calls()[0]!.body))).toEqual({ pinBlock, format: 0, keyId: 'zpk-1' });
    expect(calls().every((x) => !x.path.includes(pinBlock) && !JSON.stringify(x.headers).includes(pinBlock))).toBe(true);
    expect(logLines.join('')).not.toContain(pinBlock);

    pool().intercept({ path: `${CARD}/pin`, method: 'PUT' }).reply(200, { status: 'APPLIED', cardId: 'CARD-3001', pinBlock }, JSON_HEADERS);
    expect(await c.setPin({ cardId: 'CARD-3001', pinBlock, format: 0, keyId: 'zpk-1' }, ctx())).toEqual({ status: 'succeeded', value: { cardId: 'CARD-3001' } });
  });
});
