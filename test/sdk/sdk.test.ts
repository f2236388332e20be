// The SDK against a gateway listening on loopback: login with the password as a JWE, typed operations, typed
// errors in both dialects, a 202 pending result, safe retries with one Idempotency-Key, paging, encrypted
// bodies, sealed fields opened, webhook verification.
import { exportJWK, generateKeyPair } from 'jose';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { pending, type ConnectorContext, type OperationResult } from '../../connectors/contract.js';
import type { MockCore } from '../../connectors/mock/index.js';
import {
  Cardline,
  CardlineConnectionError,
  CardlineEnvelopeError,
  CardlineProblemError,
  isPending,
  OPERATIONS,
  type CardlineEvent,
  type Pending,
  type UpgradeLimitResponse,
} from '../../sdk/src/index.js';
import { LIMIT_URL, PASSWORD, PROBLEM_BASE, createTestApp, type TestApp } from '../helpers/app.js';

const COMPACT_JWE = /^[\w-]+\.[\w-]*\.[\w-]+\.[\w-]+\.[\w-]+$/;

interface Seen {
  method: string;
  url: string;
  headers: Record<string, string>;
  status?: number;
  replayed?: string | null;
}

describe('@cardline/sdk', () => {
  let t: TestApp;
  let baseUrl: string;
  const seen: Seen[] = [];
  const sleeps: number[] = [];
  /** Injected faults: each gets the request and may answer instead of the gateway, or after it. */
  let fault: ((req: Seen, forward: () => Promise<Response>) => Promise<Response>) | undefined;
  const restores: (() => void)[] = [];

  const recordingFetch: typeof fetch = async (input, init) => {
    const req: Seen = { method: init?.method ?? 'GET', url: String(input), headers: { ...(init?.headers as Record<string, string>) } };
    const forward = async () => {
      seen.push(req);
      const res = await fetch(input, init);
      req.status = res.status;
      req.replayed = res.headers.get('idempotent-replayed');
      return res;
    };
    return fault ? fault(req, forward) : forward();
  };

  const client = (opts: Partial<ConstructorParameters<typeof Cardline>[0]> = {}) =>
    new Cardline({ baseUrl, tenant: 'demo', fetch: recordingFetch, sleep: async (ms) => void sleeps.push(ms), ...opts });

  beforeAll(async () => {
    t = await createTestApp();
    baseUrl = await t.app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(() => t.close());
  afterEach(() => {
    fault = undefined;
    seen.length = 0;
    sleeps.length = 0;
    while (restores.length) restores.pop()!();
  });

  const core = async (tenantId = 'demo'): Promise<MockCore> => {
    const tenant = (await t.app.cardline.tenants.get(tenantId))!;
    return (await t.app.cardline.connectors.forTenant(tenant)) as unknown as MockCore;
  };
  const writesTo = (path: string) => seen.filter((s) => s.method !== 'GET' && new URL(s.url).pathname === path);

  it('logs in with the password as a JWE, upgrades a limit and locks a card', async () => {
    const cl = client();
    await cl.login('integration', PASSWORD);
    const login = seen.find((s) => s.url.endsWith('/api/authenticate'))!;
    expect(login.status).toBe(200);
    expect(seen.map((s) => `${s.method} ${new URL(s.url).pathname}`)).toEqual(['GET /api/keys', 'POST /api/authenticate']);

    const limit = await cl.creditLimit.upgrade({ entityId: 'ENT-1001', amount: '75000.00' });
    expect(limit).toEqual({ result: true, exception: null, pagination: null });
    const read = await cl.creditLimit.read({ entityId: 'ENT-1001' });
    expect(isPending(read) ? null : read.result?.creditLimit).toBe('75000.00');

    const locked = await cl.card.lock('CARD-3001');
    expect(isPending(locked) ? null : locked.result.card.state).toBe('LOCKED');
    const upgrade = writesTo(LIMIT_URL)[0]!;
    expect(upgrade.headers['idempotency-key']).toMatch(/^[0-9a-f-]{36}$/);
    expect(upgrade.headers.authorization).toMatch(/^Bearer /);

    // The same card locked again: the problem dialect's business refusal, typed with its fields.
    const err = await cl.card.lock('CARD-3001').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CardlineProblemError);
    const problem = err as CardlineProblemError;
    expect({ ...problem.problem }).toEqual({
      type: `${PROBLEM_BASE}/problem-with-message`,
      title: problem.title,
      status: 409,
      message: 'error.business',
      detail: problem.detail,
      businessCode: 'CARD_STATE_INVALID',
    });
    expect(problem.status).toBe(409);
    expect(problem.businessCode).toBe('CARD_STATE_INVALID');
    expect(problem.code).toBe('error.business');
    expect(problem.requestId).toMatch(/.+/);
    await cl.card.unlock('CARD-3001');
  });

  it('refuses a password that is not a string before sending anything (an unset environment variable)', async () => {
    const cl = client();
    const unset = process.env.CARDLINE_SDK_TEST_UNSET_PASSWORD;
    await expect(cl.login('integration', unset as string)).rejects.toThrow(new TypeError('Cardline login: the password must be a non-empty string, got undefined'));
    await expect(cl.login('integration', '')).rejects.toThrow(new TypeError('Cardline login: the password must be a non-empty string, got an empty string'));
    await expect(cl.login(42 as unknown as string, PASSWORD)).rejects.toThrow(new TypeError('Cardline login: the username must be a non-empty string, got number'));
    const asked = client({ credentials: () => ({ username: 'integration', password: unset as string }) });
    await expect(asked.card.read('CARD-3001')).rejects.toThrow(/the password must be a non-empty string, got undefined/);
    expect(seen.filter((s) => s.url.endsWith('/api/authenticate'))).toEqual([]);
  });

  it('encrypts every field an operation accepts as a JWE by default: a user created with a password and no option', async () => {
    const bodies = new Map<string, unknown>();
    const cl = client({
      fetch: (input, init) => {
        if (typeof init?.body === 'string') bodies.set(`${init.method} ${new URL(String(input)).pathname}`, JSON.parse(init.body));
        return fetch(input, init);
      },
    });
    await cl.login('admin', PASSWORD);
    const created = await cl.user.create({ username: 'sdk-default-encrypted', password: 'a-long-password-2', role: 'Read-Only' });
    // A user creation may be held by a tenant's approval policy (demo has none): the SDK types it Result | Pending.
    if (isPending(created)) throw new Error(`held: ${created.detail}`);
    expect(created.result).toMatchObject({ username: 'sdk-default-encrypted', role: 'Read-Only' });
    expect(bodies.get('POST /v1/admin/users')).toEqual({ username: 'sdk-default-encrypted', password: expect.stringMatching(COMPACT_JWE), role: 'Read-Only' });
    // The entity's contact and address lines too; other fields stay as they are.
    await cl.entity.update('ENT-1001', { contact: { email: 'ops@example.com', mobile: '+351910000000' } }).catch(() => undefined);
    expect(bodies.get('PATCH /v1/entities/ENT-1001')).toEqual({ contact: { email: expect.stringMatching(COMPACT_JWE), mobile: expect.stringMatching(COMPACT_JWE) } });
    // Opting out sends the password as it is, which this tenant refuses.
    const plain = await cl.user.create({ username: 'sdk-plain', password: 'a-long-password-3', role: 'Read-Only' }, { encryptFields: false }).catch((e: unknown) => e);
    expect(plain).toMatchObject({ status: 400 });
    expect(bodies.get('POST /v1/admin/users')).toMatchObject({ username: 'sdk-plain', password: 'a-long-password-3' });
  });

  it('types a refusal of the envelope dialect: status, errorCode and message', async () => {
    const cl = client();
    await cl.login('integration', PASSWORD);
    const err = (await cl.creditLimit.upgrade({ entityId: 'ENT-9999', amount: '100.00' }).catch((e: unknown) => e)) as CardlineEnvelopeError;
    expect(err).toBeInstanceOf(CardlineEnvelopeError);
    expect([err.status, err.code, err.shortMessage]).toEqual([404, 'ERR_404', 'Not Found']);
    expect(err.message).toMatch(/ENT-9999/);
    expect(err.requestId).toMatch(/.+/);
    const above = (await cl.creditLimit.upgrade({ entityId: 'ENT-1001', amount: '2000000.00' }).catch((e: unknown) => e)) as CardlineEnvelopeError;
    expect(above).toBeInstanceOf(CardlineEnvelopeError);
    // A business refusal of the credit-line routes: 400 in the envelope (spec 4.2), 409 in the problem dialect.
    expect([above.status, above.code, above.shortMessage, above.fieldErrors]).toEqual([400, 'ERR_400', 'Bad Request', []]);
    expect(above.message).toMatch(/maximum/i);

    const invalid = (await cl.creditLimit.upgrade({ entityId: 'ENT-1001', amount: '-1' }).catch((e: unknown) => e)) as CardlineEnvelopeError;
    expect([invalid.status, invalid.code]).toEqual([400, 'ERR_400']);
    expect(invalid.message).toContain('amount');
  });

  it('field errors of the problem dialect', async () => {
    const cl = client();
    await cl.login('integration', PASSWORD);
    const err = (await cl.card.block('CARD-3001', { reasonCode: 'BORED' as 'LOST' }).catch((e: unknown) => e)) as CardlineProblemError;
    expect(err).toBeInstanceOf(CardlineProblemError);
    expect(err.status).toBe(400);
    expect(err.code).toBe('error.validation');
    expect(err.fieldErrors.map((f) => [f.field, f.objectName])).toEqual([['reasonCode', 'cardBlockRequest']]);
  });

  it('a 202 is a pending result, neither an error nor a success', async () => {
    const c = await core();
    const original = c.upgradeLimit;
    c.upgradeLimit = async (_input: unknown, ctx: ConnectorContext) => pending(`REF-${ctx.idempotencyKey}`) as OperationResult<never>;
    restores.push(() => void (c.upgradeLimit = original));
    const cl = client();
    await cl.login('integration', PASSWORD);
    const r = await cl.creditLimit.upgrade({ entityId: 'ENT-1003', amount: '61000.00' }, { idempotencyKey: 'sdk-pending-1' });
    expectTypeOf(r).toEqualTypeOf<UpgradeLimitResponse | Pending>();
    expect(isPending(r)).toBe(true);
    expect(r).toMatchObject({ pending: true, status: 202, operation: 'credit-limit.upgrade', idempotencyKey: 'sdk-pending-1' });
    expect((r as Pending).requestId).toMatch(/.+/);
    // Not retried: a pending outcome is an answer.
    expect(writesTo(LIMIT_URL)).toHaveLength(1);
  });

  it('retries a write after a 503 with Retry-After, with the same Idempotency-Key; the gateway sees one write', async () => {
    const cl = client();
    await cl.login('integration', PASSWORD);
    let refused = 0;
    const keys: string[] = [];
    fault = async (req, forward) => {
      if (req.method === 'POST' && req.url.endsWith(LIMIT_URL)) keys.push(req.headers['idempotency-key']!);
      if (req.method === 'POST' && req.url.endsWith(LIMIT_URL) && refused++ === 0) {
        return new Response('{"title":"Service Unavailable","status":503}', { status: 503, headers: { 'retry-after': '2', 'content-type': 'application/problem+json' } });
      }
      return forward();
    };
    const r = await cl.creditLimit.upgrade({ entityId: 'ENT-1002', amount: '81000.00' });
    expect(r).toEqual({ result: true, exception: null, pagination: null });
    expect(refused).toBe(2);
    expect(sleeps).toEqual([2000]);
    expect(keys).toHaveLength(2);
    expect(keys[1]).toBe(keys[0]);
    const writes = writesTo(LIMIT_URL);
    expect(writes).toHaveLength(1);
    expect(writes[0]!.status).toBe(200);
  });

  it('a connection dropped after the gateway answered: the retry with the same key is the stored replay', async () => {
    const cl = client();
    await cl.login('integration', PASSWORD);
    let dropped = false;
    fault = async (req, forward) => {
      const res = await forward();
      if (req.method === 'POST' && req.url.endsWith(LIMIT_URL) && !dropped) {
        dropped = true;
        throw new TypeError('fetch failed', { cause: new Error('socket hang up') });
      }
      return res;
    };
    const admin = client();
    await admin.login('admin', PASSWORD);
    const outcomes = async () => {
      const records = await admin.audit.read({ action: 'credit-limit.upgrade', targetId: 'ENT-1002' }).toArray();
      return { succeeded: records.filter((a) => a.outcome === 'succeeded').length, replayed: records.filter((a) => a.outcome === 'replayed').length };
    };
    const before = await outcomes();
    const r = await cl.creditLimit.upgrade({ entityId: 'ENT-1002', amount: '82000.00' });
    expect(r).toEqual({ result: true, exception: null, pagination: null });
    // One write applied and recorded; the retry recorded as the replay it was.
    expect(await outcomes()).toEqual({ succeeded: before.succeeded + 1, replayed: before.replayed + 1 });
    const writes = writesTo(LIMIT_URL);
    expect(writes.map((w) => [w.status, w.replayed])).toEqual([
      [200, null],
      [200, 'true'],
    ]);
    expect(new Set(writes.map((w) => w.headers['idempotency-key'])).size).toBe(1);
    expect(sleeps).toHaveLength(1);
  });

  it('keeps spend controls: cl.authRules creates, pages, promotes and backtests a rule the pipeline enforces', async () => {
    const admin = client();
    await admin.login('admin', PASSWORD);
    const made = await admin.authRules.create({ name: 'No ATM', cardId: 'CARD-3003', conditions: [{ attribute: 'channel', operation: 'is-one-of', values: ['ATM'] }] });
    if (isPending(made)) throw new Error(`held: ${made.detail}`);
    const created = made.result;
    expect(created).toMatchObject({ level: 'card', cardId: 'CARD-3003', activeVersion: null, shadowVersion: 1 });
    const listed: string[] = [];
    for await (const rule of admin.authRules.list({ cardId: 'CARD-3003' })) listed.push(rule.ruleId);
    expect(listed).toEqual([created.ruleId]);
    const promoted = await admin.authRules.promote(created.ruleId);
    expect(isPending(promoted) ? null : promoted.result).toMatchObject({ activeVersion: 1, shadowVersion: null });
    const integration = client();
    await integration.login('integration', PASSWORD);
    const atm = { cardId: 'CARD-3003', amount: '40.00', currency: 'EUR', merchant: { name: 'ATM', mcc: '6011', country: 'PT' }, channel: 'ATM' as const };
    const declined = await integration.authorization.create(atm);
    expect(isPending(declined) ? null : declined.result).toMatchObject({ status: 'DECLINED', decidedBy: 'spend-controls', trail: [{}, { ruleId: created.ruleId }] });
    const day = new Date().toISOString().slice(0, 10);
    const report = (await admin.authRules.backtest(created.ruleId, { from: day, to: day })).result;
    expect(report).toMatchObject({ ruleId: created.ruleId, version: 1, declined: { count: 1, amount: '40.00' }, byReason: [{ declineReason: 'SPEND_CONTROL_DECLINED', count: 1, amount: '40.00' }] });
    const refused = (await admin.authRules.create({ name: 'Bad', conditions: [{ attribute: 'mcc', operation: 'is-one-of', values: ['60A1'] }] }).catch((e: unknown) => e)) as CardlineProblemError;
    expect(refused).toBeInstanceOf(CardlineProblemError);
    expect(refused.fieldErrors).toEqual([{ field: 'conditions.0.values.0', message: 'Pattern', objectName: 'authRuleRequest' }]);
    await admin.authRules.remove(created.ruleId);
  });

  it('pages a customer’s transactions with an async iterator', async () => {
    const cl = client();
    await cl.login('integration', PASSWORD);
    for (const amount of ['1.00', '2.00', '3.00']) {
      const tx = await cl.transaction.authorize('CARD-3002', { amount, merchant: { name: 'Shop', mcc: '5411', country: 'PT' }, channel: 'POS' });
      expect(isPending(tx)).toBe(false);
    }
    const amounts: string[] = [];
    for await (const tx of cl.transaction.list('ENT-1002', { limit: 1 })) amounts.push(tx.amount);
    expect(amounts).toEqual(['3.00', '2.00', '1.00']);
    // One page per transaction, each after the cursor of the one before.
    const pages = seen.filter((s) => s.url.includes('/transactions')).map((s) => new URL(s.url).searchParams);
    expect(pages.length).toBeGreaterThanOrEqual(3);
    expect(pages[0]!.get('cursor')).toBeNull();
    expect(pages.slice(1).every((q) => /.+/.test(q.get('cursor') ?? ''))).toBe(true);
    expect((await cl.transaction.list('ENT-1002', { limit: 2 }).pages().next()).value?.result.map((tx) => tx.amount)).toEqual(['3.00', '2.00']);
  });

  it('renews the token before it expires', async () => {
    let now = Date.now();
    const cl = client({ now: () => now });
    await cl.login('integration', PASSWORD);
    const expires = cl.tokenExpiresAt!;
    now = expires - 1000;
    await cl.creditLimit.read({ entityId: 'ENT-1001' });
    expect(seen.filter((s) => s.url.endsWith('/api/authenticate'))).toHaveLength(2);
  });

  it('a refused token: logs in again through the credentials callback and resends once', async () => {
    let asked = 0;
    const cl = client({ credentials: () => (asked++, { username: 'integration', password: PASSWORD }) });
    let refusals = 0;
    fault = async (req, forward) => {
      if (req.url.includes('/fetchLimit') && refusals++ === 0) return new Response('{"result":null,"exception":{"errorCode":"ERR_401","shortMessage":"Unauthorized","detailMessage":"expired"},"pagination":null}', { status: 401 });
      return forward();
    };
    // No login(): the first call logs in through the callback; the injected 401 makes it log in again.
    expect(await cl.creditLimit.read({ entityId: 'ENT-1003' })).toMatchObject({ result: { entityId: 'ENT-1003' } });
    expect(asked).toBe(2);
    expect(seen.filter((s) => s.url.endsWith('/api/authenticate')).map((s) => s.status)).toEqual([200, 200]);
  });

  it('retries a read after a connection error; never retries a write sent without a key, nor a 504', async () => {
    const cl = client();
    await cl.login('admin', PASSWORD);
    let drops = 0;
    fault = async (req, forward) => {
      if (req.url.endsWith('/v1/admin/keys') && drops++ === 0) throw new TypeError('fetch failed');
      return forward();
    };
    expect((await cl.keys.list()).result.length).toBeGreaterThan(0);
    expect(sleeps).toHaveLength(1);

    // A write whose route kept no idempotency record (none does since decision 0175; the class stays for the
    // table's `idempotent: false`): sent once, without a key, the connection error surfaces.
    let sentKey: string | undefined = 'none sent';
    fault = async (req, forward) => {
      if (req.method === 'POST' && req.url.endsWith('/v1/admin/users')) {
        sentKey = req.headers['idempotency-key'];
        throw new TypeError('fetch failed');
      }
      return forward();
    };
    const once = await cl
      .call({ ...OPERATIONS['user.create'], kind: 'once' }, [], { username: 'sdk-once', password: 'a-long-password-1', role: 'Read-Only' }, undefined)
      .catch((e: unknown) => e);
    expect(sentKey).toBeUndefined();
    expect(once).toBeInstanceOf(CardlineConnectionError);
    expect((once as CardlineConnectionError).status).toBe(0);
    expect(sleeps).toHaveLength(1);

    // A 504: the outcome is unknown, the caller decides (decision 0151).
    fault = async (req, forward) => {
      if (req.url.endsWith('/v1/cards/CARD-3003/lock')) {
        return new Response(JSON.stringify({ type: `${PROBLEM_BASE}/problem-with-message`, title: 'Gateway Timeout', status: 504, message: 'error.http.504', detail: 'unknown' }), { status: 504 });
      }
      return forward();
    };
    const timeout = (await cl.card.lock('CARD-3003').catch((e: unknown) => e)) as CardlineProblemError;
    expect([timeout.status, timeout.code]).toEqual([504, 'error.http.504']);
    expect(sleeps).toHaveLength(1);
  });

  it('sends the body as a JWE where the tenant requires it', async () => {
    const admin = client({ tenant: 'demo-b' });
    await admin.login('admin', PASSWORD);
    await admin.tenant.configUpdate({ encryption: { requireEncryptedBody: ['POST /credit-line-management/*'] } } as never);
    const plain = client({ tenant: 'demo-b' });
    await plain.login('integration', PASSWORD);
    const refused = (await plain.creditLimit.upgrade({ entityId: 'ENT-1001', amount: '70000.00' }).catch((e: unknown) => e)) as CardlineEnvelopeError;
    expect([refused.status, refused.code]).toEqual([400, 'ERR_400']);
    expect(refused.message).toMatch(/encrypted/);

    const sealed = client({ tenant: 'demo-b', encryptBodies: true });
    await sealed.login('integration', PASSWORD);
    expect(await sealed.creditLimit.upgrade({ entityId: 'ENT-1001', amount: '70000.00' })).toEqual({ result: true, exception: null, pagination: null });
    const sent = writesTo(LIMIT_URL).at(-1)!;
    expect(sent.headers['content-type']).toBe('application/jose');
  });

  it('opens sealed card fields with the registered client key', async () => {
    const { privateKey, publicKey } = await generateKeyPair('ECDH-ES+A256KW', { crv: 'P-256', extractable: true });
    const kid = 'sdk-test-client';
    const admin = client({ clientKey: { ...(await exportJWK(privateKey)), kid } });
    await admin.login('admin', PASSWORD);
    await admin.clientKey.register({ jwk: { ...(await exportJWK(publicKey)), kid, use: 'enc', alg: 'ECDH-ES+A256KW' } } as never);
    const card = await admin.card.read('CARD-3001', { decrypt: true });
    const sensitive = isPending(card) ? undefined : card.result.sensitive;
    expect(sensitive?.pan).toMatch(/^\d{12,19}$/);
    expect(sensitive?.cvv).toMatch(/^\d{3,4}$/);
  });

  it('verifies webhooks (Standard Webhooks) and reads them as typed events', () => {
    const secret = `whsec_${Buffer.from('0123456789abcdef0123456789abcdef').toString('base64')}`;
    const body = JSON.stringify({ type: 'card.locked', timestamp: '2026-11-25T18:00:00.000Z', data: { cardId: 'CARD-3001', entityId: 'ENT-1001', state: 'LOCKED' } });
    const id = 'msg_1';
    const at = new Date();
    const headers = { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': new Webhook(secret).sign(id, at, body) };
    expect(Cardline.webhooks.verify(body, headers, secret)).toBe(true);
    expect(Cardline.webhooks.verify(body.replace('LOCKED', 'ACTIVE'), headers, secret)).toBe(false);
    expect(Cardline.webhooks.verify(body, new Headers(headers), secret)).toBe(true);
    const event: CardlineEvent = Cardline.webhooks.parse(body, headers, secret);
    if (event.type === 'card.locked') expectTypeOf(event.data.state).toBeString();
    expect(event).toEqual(JSON.parse(body));
  });
});
