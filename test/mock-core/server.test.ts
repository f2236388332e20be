// The mock core server: the core REST protocol v1, persistence across restarts, serialized banks,
// fault injection (configured and per request), admin routes, process configuration, OpenAPI file.
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CORE_PROTOCOL_FILE, openapiText, staleFiles, staleMessage } from '../../scripts/generate.js';
import { MockCoreConfigError, parseMockCoreArgs } from '../../src/mock-core/config.js';
import { mulberry32 } from '../../src/mock-core/faults.js';
import { buildMockCore } from '../../src/mock-core/server.js';

const LIMIT = '/banks/demo/v1/entities/ENT-1001/credit-limit';
const UPGRADE = '/banks/demo/v1/cards/physical-upgrades';
const ENTITY = '/banks/demo/v1/entities/ENT-1001';

const post = (app: FastifyInstance, url: string, payload: unknown, headers: Record<string, string> = {}) =>
  app.inject({ method: 'POST', url, payload: payload as object, headers });
const creditLimitOf = async (app: FastifyInstance, url = ENTITY) => (await app.inject({ method: 'GET', url })).json().creditLimit as string;

describe('protocol', () => {
  let app: FastifyInstance;
  beforeAll(() => {
    app = buildMockCore();
  });
  afterAll(() => app.close());
  afterEach(async () => {
    await app.inject({ method: 'POST', url: '/__admin/reset' });
  });

  it('sets a credit limit: 200 APPLIED with the previous and new limits; X-Request-Id echoed', async () => {
    const res = await post(app, LIMIT, { amount: '75000.00', allowDecrease: false }, { 'x-request-id': 'req-42' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-request-id']).toBe('req-42');
    expect(res.json()).toEqual({ status: 'APPLIED', entityId: 'ENT-1001', previousLimit: '50000.00', newLimit: '75000.00' });
    expect(await creditLimitOf(app)).toBe('75000.00');
  });

  it('answers a generated X-Request-Id when none was sent', async () => {
    const res = await app.inject({ method: 'GET', url: '/health' });
    expect(res.json()).toEqual({ status: 'UP' });
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it.each([
    ['a decrease the product refuses', LIMIT, { amount: '100.00', allowDecrease: false }, 'LIMIT_DECREASE_NOT_ALLOWED'],
    ['zero', LIMIT, { amount: '0', allowDecrease: true }, 'LIMIT_NOT_POSITIVE'],
    ['an unknown entity', '/banks/demo/v1/entities/ENT-9/credit-limit', { amount: '1.00', allowDecrease: true }, 'ENTITY_NOT_FOUND'],
    ['an unknown kit', UPGRADE, { kitNo: 'KIT-9999', entityId: 'ENT-1001', lockOnUpgrade: false }, 'PPCUST_018'],
    ['a kit allocated to another entity', UPGRADE, { kitNo: 'KIT-2101', entityId: 'ENT-1001', lockOnUpgrade: false }, 'PPCUST_018'],
    ['a free kit without an entity', UPGRADE, { kitNo: 'KIT-2001', lockOnUpgrade: false }, 'PPCUST_018'],
    ['an unknown card', UPGRADE, { kitNo: 'KIT-2001', cardId: 'CARD-9', lockOnUpgrade: false }, 'CARD_NOT_FOUND'],
  ])('refuses %s: 422 with the business code', async (_name, url, body, code) => {
    const res = await post(app, url, body);
    expect(res.statusCode).toBe(422);
    expect(res.json()).toEqual({ error: { code, message: expect.any(String) } });
  });

  it('a decrease is applied when the product allows it', async () => {
    const res = await post(app, LIMIT, { amount: '100.00', allowDecrease: true });
    expect(res.json()).toMatchObject({ status: 'APPLIED', newLimit: '100.00' });
  });

  it.each([
    ['a float amount', LIMIT, { amount: 75000, allowDecrease: false }],
    ['three decimals', LIMIT, { amount: '1.234', allowDecrease: false }],
    ['a missing allowDecrease', LIMIT, { amount: '1.00' }],
    ['an unknown field', LIMIT, { amount: '1.00', allowDecrease: false, extra: 1 }],
    ['a missing kitNo', UPGRADE, { lockOnUpgrade: false }],
    ['a missing lockOnUpgrade', UPGRADE, { kitNo: 'KIT-2001' }],
  ])('refuses %s: 400 BAD_REQUEST', async (_name, url, body) => {
    const res = await post(app, url, body);
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('BAD_REQUEST');
  });

  it('refuses a bank id that is not a file-safe name, and unknown routes', async () => {
    expect((await post(app, '/banks/..%2Fetc/v1/entities/E/credit-limit', { amount: '1', allowDecrease: true })).statusCode).toBe(400);
    const res = await app.inject({ method: 'GET', url: '/banks/demo/v2/nothing' });
    expect(res.statusCode).toBe(404);
    expect(res.json().error.code).toBe('NOT_FOUND');
  });

  it('upgrades a virtual card: 200 APPLIED with the card state; the entity shows the physical card', async () => {
    const res = await post(app, UPGRADE, { kitNo: 'KIT-2001', entityId: 'ENT-1001', lockOnUpgrade: true, communicationAddress: { usePrimaryAddress: true } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'APPLIED', cardId: 'CARD-3001', entityId: 'ENT-1001', kitNo: 'KIT-2001', cardState: 'PENDING_ACTIVATION' });
    const entity = (await app.inject({ method: 'GET', url: ENTITY })).json();
    expect(entity.cards).toEqual([
      { cardId: 'CARD-3001', form: 'PHYSICAL', state: 'PENDING_ACTIVATION', maskedPan: '400000******0017', kitNo: 'KIT-2001', fulfilment: 'ORDERED', balance: '123.45' },
    ]);
    // The kit is now mapped: a second upgrade with it is refused.
    expect((await post(app, UPGRADE, { kitNo: 'KIT-2001', entityId: 'ENT-1002', lockOnUpgrade: false })).json().error.code).toBe('PPCUST_018');
  });

  it('the entity read masks card numbers and carries no full PAN', async () => {
    const res = await app.inject({ method: 'GET', url: '/banks/demo/v1/entities/ENT-1002' });
    expect(res.json()).toMatchObject({ entityId: 'ENT-1002', creditLimit: '50000.00' });
    expect(res.body).not.toMatch(/\d{13,19}/);
    expect((await app.inject({ method: 'GET', url: '/banks/demo/v1/entities/NOPE' })).statusCode).toBe(404);
  });

  it('an idempotency key makes a retry answer the first outcome without applying again', async () => {
    const first = await post(app, LIMIT, { amount: '60000.00', allowDecrease: false }, { 'idempotency-key': 'k-1' });
    await post(app, LIMIT, { amount: '70000.00', allowDecrease: false }); // a change in between, without key
    const retry = await post(app, LIMIT, { amount: '60000.00', allowDecrease: false }, { 'idempotency-key': 'k-1' });
    expect(retry.json()).toEqual(first.json());
    expect(await creditLimitOf(app)).toBe('70000.00');
  });

  it('banks are separate: one bank’s change is not seen by another', async () => {
    await post(app, '/banks/bank-a/v1/entities/ENT-1001/credit-limit', { amount: '90000.00', allowDecrease: false });
    expect(await creditLimitOf(app, '/banks/bank-a/v1/entities/ENT-1001')).toBe('90000.00');
    expect(await creditLimitOf(app, '/banks/bank-b/v1/entities/ENT-1001')).toBe('50000.00');
  });

  it('operations of one bank are serialized: concurrent upgrades of one kit succeed once', async () => {
    const results = await Promise.all(
      ['ENT-1001', 'ENT-1002', 'ENT-1001', 'ENT-1002', 'ENT-1001'].map((entityId) => post(app, UPGRADE, { kitNo: 'KIT-2002', entityId, lockOnUpgrade: false })),
    );
    expect(results.filter((r) => r.statusCode === 200)).toHaveLength(1);
    expect(results.filter((r) => r.statusCode === 422).map((r) => r.json().error.code)).toEqual(Array(4).fill('PPCUST_018'));
  });

  it('concurrent limit changes form one chain: each previous limit is another call’s new limit', async () => {
    const amounts = Array.from({ length: 20 }, (_, i) => `${60_000 + i * 100}.00`);
    const results = await Promise.all(amounts.map((amount) => post(app, LIMIT, { amount, allowDecrease: true })));
    const previous = results.map((r) => r.json().previousLimit as string).sort();
    const expected = ['50000.00', ...amounts].sort();
    // Every previous limit is the starting one or some other call's new limit, each exactly once.
    expect(previous.every((p) => expected.includes(p))).toBe(true);
    expect(new Set(previous).size).toBe(20);
  });

  it('/openapi.json serves the protocol document, the committed one; /v1/health answers per bank', async () => {
    const served = (await app.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(served.openapi).toBe('3.1.0');
    const stale = staleFiles([{ path: CORE_PROTOCOL_FILE, text: openapiText(served), committed: true }]);
    expect(stale, staleMessage(stale)).toEqual([]);
    expect((await app.inject({ method: 'GET', url: '/banks/demo/v1/health' })).json()).toEqual({ status: 'UP' });
  });
});

describe('card lifecycle', () => {
  let app: FastifyInstance;
  beforeAll(() => {
    app = buildMockCore();
  });
  afterAll(() => app.close());
  afterEach(async () => {
    await app.inject({ method: 'POST', url: '/__admin/reset' });
  });

  const CARD = '/banks/demo/v1/cards/CARD-3001';
  const card = { cardId: 'CARD-3001', entityId: 'ENT-1001', form: 'VIRTUAL', state: 'ACTIVE', maskedPan: '400000******0017', expiry: '12/29' };
  const get = (url: string, headers: Record<string, string> = {}) => app.inject({ method: 'GET', url, headers });
  const put = (url: string, payload: unknown, headers: Record<string, string> = {}) => app.inject({ method: 'PUT', url, payload: payload as object, headers });
  const change = (url: string, headers: Record<string, string> = {}) => app.inject({ method: 'POST', url, headers });

  it('lock → 200 APPLIED with the card; again → 422 CARD_STATE_INVALID; unlock → ACTIVE', async () => {
    const res = await change(`${CARD}/lock`, { 'x-request-id': 'req-7' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-request-id']).toBe('req-7');
    expect(res.json()).toEqual({ status: 'APPLIED', ...card, state: 'LOCKED' });
    const again = await change(`${CARD}/lock`);
    expect(again.statusCode).toBe(422);
    expect(again.json()).toEqual({ error: { code: 'CARD_STATE_INVALID', message: 'Card CARD-3001: only an ACTIVE card can be locked; this one is LOCKED.' } });
    expect((await change(`${CARD}/unlock`)).json()).toEqual({ status: 'APPLIED', ...card });
  });

  it('upgrade locked, activation, fulfilment steps, block with a reason', async () => {
    await post(app, UPGRADE, { kitNo: 'KIT-2001', entityId: 'ENT-1001', lockOnUpgrade: true });
    expect((await change(`${CARD}/activation`)).json()).toMatchObject({ state: 'ACTIVE', form: 'PHYSICAL', fulfilment: 'ORDERED', kitNo: 'KIT-2001' });
    expect((await change(`${CARD}/fulfilment/advance`)).json()).toMatchObject({ fulfilment: 'EMBOSSED' });
    const blocked = await post(app, `${CARD}/block`, { reasonCode: 'STOLEN' });
    expect(blocked.json()).toEqual({ status: 'APPLIED', ...card, form: 'PHYSICAL', kitNo: 'KIT-2001', fulfilment: 'EMBOSSED', state: 'BLOCKED', blockReason: 'STOLEN' });
    expect((await change(`${CARD}/fulfilment/advance`)).json().error.code).toBe('CARD_STATE_INVALID');
  });

  it.each([
    ['block without a reason', 'POST', `${CARD}/block`, {}],
    ['block with an unknown reason', 'POST', `${CARD}/block`, { reasonCode: 'BORED' }],
    ['preferences with an unknown field', 'PUT', `${CARD}/preferences`, { preferences: { domestic: { atm: { enabled: true, colour: 'red' } } } }],
    ['preferences with a float limit', 'PUT', `${CARD}/preferences`, { preferences: { domestic: { atm: { enabled: true, dailyLimit: 500 } } } }],
    ['a PIN block that is not hex', 'PUT', `${CARD}/pin`, { pinBlock: 'not-a-pin-block!', format: 0, keyId: 'k' }],
    ['a PIN block in an unknown format', 'PUT', `${CARD}/pin`, { pinBlock: '0412AC89ABCDEF67', format: 1, keyId: 'k' }],
  ])('refuses %s: 400 BAD_REQUEST, nothing applied', async (_name, method, url, payload) => {
    const res = await app.inject({ method: method as 'POST' | 'PUT', url, payload });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('BAD_REQUEST');
    expect((await get(CARD)).json()).toMatchObject({ state: 'ACTIVE' });
    expect((await get(CARD)).json()).not.toHaveProperty('preferences');
  });

  it('reads: the entity’s cards masked, one card in full, preferences and the credit limit', async () => {
    const list = await get('/banks/demo/v1/entities/ENT-1001/cards');
    expect(list.json()).toEqual({ entityId: 'ENT-1001', cards: [card] });
    expect(list.body).not.toMatch(/\d{12,}/);
    expect((await get(CARD)).json()).toEqual({ ...card, sensitive: { pan: '4000000000030017', cvv: '272' } });
    const preferences = { domestic: { enabled: true, pos: { enabled: true, dailyLimit: '100.00', dailyCount: 3 } } };
    expect((await put(`${CARD}/preferences`, { preferences })).json()).toEqual({ status: 'APPLIED', cardId: 'CARD-3001', preferences });
    expect((await get(`${CARD}/preferences`)).json()).toEqual({ cardId: 'CARD-3001', preferences });
    expect((await get('/banks/demo/v1/entities/ENT-1002/credit-limit')).json()).toEqual({ entityId: 'ENT-1002', creditLimit: '50000.00', outstanding: '0.00', availableCredit: '50000.00' });
  });

  it('reads of what does not exist → 422 with the business code', async () => {
    for (const [url, code] of [
      ['/banks/demo/v1/cards/CARD-0', 'CARD_NOT_FOUND'],
      ['/banks/demo/v1/cards/CARD-0/preferences', 'CARD_NOT_FOUND'],
      ['/banks/demo/v1/entities/ENT-0/cards', 'ENTITY_NOT_FOUND'],
      ['/banks/demo/v1/entities/ENT-0/credit-limit', 'ENTITY_NOT_FOUND'],
    ] as const) {
      const res = await get(url);
      expect(res.statusCode).toBe(422);
      expect(res.json()).toEqual({ error: { code, message: expect.any(String) } });
    }
  });

  it('card resolution: by entity (for the action), by kit, with every identifier agreeing', async () => {
    const resolve = (query: string, headers: Record<string, string> = {}) => get(`/banks/demo/v1/card-resolution?${query}`, headers);
    expect((await resolve('action=lock&entityId=ENT-1002')).json()).toEqual({ cardId: 'CARD-3002' });
    await post(app, UPGRADE, { kitNo: 'KIT-2101', lockOnUpgrade: true });
    expect((await resolve('action=activate&kitNo=KIT-2101')).json()).toEqual({ cardId: 'CARD-3003' });
    expect((await resolve('action=activate&kitNo=KIT-2101&entityId=ENT-1001')).json().error.code).toBe('CARD_NOT_FOUND');
    expect((await resolve('action=lock&entityId=ENT-0')).json().error.code).toBe('ENTITY_NOT_FOUND');
    expect((await resolve('entityId=ENT-1001')).statusCode).toBe(400);
    expect((await resolve('action=explode&entityId=ENT-1001')).statusCode).toBe(400);
    expect((await resolve('action=lock&entity=ENT-1001')).statusCode).toBe(400);
  });

  it('a keyed change applies once; resolution with the key names the card it changed', async () => {
    const first = await change(`${CARD}/lock`, { 'idempotency-key': 'lk-1' });
    await change(`${CARD}/unlock`);
    const retry = await change(`${CARD}/lock`, { 'idempotency-key': 'lk-1' });
    expect(retry.json()).toEqual(first.json());
    expect((await get(CARD)).json().state).toBe('ACTIVE');
    expect((await get('/banks/demo/v1/card-resolution?action=lock&entityId=ENT-1001', { 'idempotency-key': 'lk-1' })).json()).toEqual({ cardId: 'CARD-3001' });
  });

  it('PIN: 200 with the card only; refused on a virtual card', async () => {
    const pin = { pinBlock: '0412AC89ABCDEF67', format: 0, keyId: 'zpk-1' };
    expect((await put(`${CARD}/pin`, pin)).json()).toEqual({ error: { code: 'CARD_STATE_INVALID', message: 'Card CARD-3001: a PIN can be set on a physical card only.' } });
    await post(app, UPGRADE, { kitNo: 'KIT-2001', entityId: 'ENT-1001', lockOnUpgrade: false });
    const res = await put(`${CARD}/pin`, pin);
    expect(res.json()).toEqual({ status: 'APPLIED', cardId: 'CARD-3001' });
    expect(res.body).not.toContain(pin.pinBlock);
  });

  it('every lifecycle route takes X-Mock-Fault like the other operations', async () => {
    for (const [method, url] of [
      ['POST', `${CARD}/lock`],
      ['GET', CARD],
      ['GET', '/banks/demo/v1/entities/ENT-1001/cards'],
      ['GET', '/banks/demo/v1/card-resolution?action=lock&cardId=CARD-3001'],
    ] as const) {
      const res = await app.inject({ method, url, headers: { 'x-mock-fault': 'error' } });
      expect(res.statusCode, `${method} ${url}`).toBe(503);
    }
    expect((await get(CARD)).json().state).toBe('ACTIVE');
  });
});

describe('card lifecycle persistence', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mock-core-lc-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('lifecycle changes survive a restart; the snapshot never holds a PIN block', async () => {
    const first = buildMockCore({ dataDir: dir });
    await post(first, UPGRADE, { kitNo: 'KIT-2001', entityId: 'ENT-1001', lockOnUpgrade: true });
    await first.inject({ method: 'POST', url: '/banks/demo/v1/cards/CARD-3001/activation' });
    await first.inject({ method: 'PUT', url: '/banks/demo/v1/cards/CARD-3001/pin', payload: { pinBlock: '0412AC89ABCDEF67', format: 0, keyId: 'zpk-1' } });
    await post(first, '/banks/demo/v1/cards/CARD-3002/block', { reasonCode: 'LOST' });
    await first.close();
    const text = readFileSync(join(dir, 'demo.json'), 'utf8');
    expect(text).not.toContain('0412AC89ABCDEF67');
    const saved = JSON.parse(text).state.cards as { cardId: string }[];
    expect(saved.find((c) => c.cardId === 'CARD-3001')).toMatchObject({ state: 'ACTIVE', pinSet: true });

    const second = buildMockCore({ dataDir: dir });
    expect((await second.inject({ method: 'GET', url: '/banks/demo/v1/cards/CARD-3002' })).json()).toMatchObject({ state: 'BLOCKED', blockReason: 'LOST' });
    expect((await second.inject({ method: 'GET', url: '/banks/demo/v1/cards/CARD-3001' })).json()).toMatchObject({ state: 'ACTIVE', form: 'PHYSICAL' });
    await second.close();
  });
});

describe('call counts', () => {
  it("GET /__admin/calls: what each bank received, by the protocol's operationId, faulted and invalid calls included, unauthenticated ones not; reset leaves them", async () => {
    const app = buildMockCore({ auth: { type: 'bearer', token: 't' } });
    try {
      const bearer = { authorization: 'Bearer t' };
      expect((await app.inject({ method: 'GET', url: '/__admin/calls' })).json()).toEqual({ banks: {} });
      await app.inject({ method: 'GET', url: LIMIT, headers: bearer });
      await app.inject({ method: 'GET', url: LIMIT, headers: { ...bearer, 'x-mock-fault': 'error' } });
      await app.inject({ method: 'GET', url: '/banks/other/v1/entities/ENT-1001/cards', headers: bearer });
      await post(app, LIMIT, { amount: 'not money' }, bearer);
      await app.inject({ method: 'GET', url: ENTITY, headers: bearer });
      await app.inject({ method: 'GET', url: LIMIT }); // no credentials: refused before it reaches the bank
      await app.inject({ method: 'POST', url: '/__admin/reset' });
      expect((await app.inject({ method: 'GET', url: '/__admin/calls' })).json()).toEqual({
        banks: { demo: { getCreditLimit: 2, setCreditLimit: 1, getEntity: 1 }, other: { listCards: 1 } },
      });
    } finally {
      await app.close();
    }
  });
});

describe('configuration', () => {
  it('empty fixtures: a new bank knows no entity', async () => {
    const app = buildMockCore({ fixtures: 'empty' });
    const res = await post(app, LIMIT, { amount: '1.00', allowDecrease: true });
    expect(res.json().error.code).toBe('ENTITY_NOT_FOUND');
    await app.close();
  });

  it('bearer auth: bank routes need the token; health does not', async () => {
    const app = buildMockCore({ auth: { type: 'bearer', token: 's3cret' } });
    expect((await post(app, LIMIT, { amount: '1.00', allowDecrease: true })).statusCode).toBe(401);
    expect((await post(app, LIMIT, { amount: '1.00', allowDecrease: true }, { authorization: 'Bearer wrong' })).statusCode).toBe(401);
    expect((await post(app, LIMIT, { amount: '1.00', allowDecrease: true }, { authorization: 'Bearer s3cret' })).statusCode).toBe(200);
    expect((await app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);
    await app.close();
  });

  it('basic auth', async () => {
    const app = buildMockCore({ auth: { type: 'basic', username: 'u', password: 'p:w' } });
    const ok = `Basic ${Buffer.from('u:p:w').toString('base64')}`;
    expect((await post(app, LIMIT, { amount: '1.00', allowDecrease: true }, { authorization: ok })).statusCode).toBe(200);
    expect((await post(app, LIMIT, { amount: '1.00', allowDecrease: true }, { authorization: 'Basic eDp5' })).statusCode).toBe(401);
    await app.close();
  });
});

describe('persistence', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mock-core-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('keeps every bank across a restart with the same data dir, written atomically', async () => {
    const first = buildMockCore({ dataDir: dir });
    await post(first, LIMIT, { amount: '80000.00', allowDecrease: false }, { 'idempotency-key': 'persist-1' });
    await post(first, UPGRADE, { kitNo: 'KIT-2003', entityId: 'ENT-1002', lockOnUpgrade: false });
    await post(first, '/banks/other/v1/entities/ENT-1003/credit-limit', { amount: '51000.00', allowDecrease: false });
    await first.close();

    expect(readdirSync(dir).sort()).toEqual(['demo.json', 'other.json']); // no temp file left behind
    const snapshot = JSON.parse(readFileSync(join(dir, 'demo.json'), 'utf8'));
    expect(snapshot).toMatchObject({ format: 'cardline-mock-core-bank/1', bankId: 'demo' });

    const second = buildMockCore({ dataDir: dir });
    expect(await creditLimitOf(second)).toBe('80000.00');
    expect(await creditLimitOf(second, '/banks/other/v1/entities/ENT-1003')).toBe('51000.00');
    expect((await second.inject({ method: 'GET', url: '/banks/demo/v1/entities/ENT-1002' })).json().cards[0]).toMatchObject({ form: 'PHYSICAL', kitNo: 'KIT-2003' });
    // Idempotency outcomes persist too: the retry after the restart is not applied again.
    const retry = await post(second, LIMIT, { amount: '80000.00', allowDecrease: false }, { 'idempotency-key': 'persist-1' });
    expect(retry.json().previousLimit).toBe('50000.00');

    // Reset restores the fixtures of every bank, on disk as well.
    expect((await second.inject({ method: 'POST', url: '/__admin/reset' })).json()).toEqual({ reset: ['demo', 'other'] });
    await second.close();
    const third = buildMockCore({ dataDir: dir });
    expect(await creditLimitOf(third)).toBe('50000.00');
    expect(await creditLimitOf(third, '/banks/other/v1/entities/ENT-1003')).toBe('50000.00');
    await third.close();
  });

  it('reset of one bank leaves the others', async () => {
    const app = buildMockCore({ dataDir: dir });
    await post(app, LIMIT, { amount: '81000.00', allowDecrease: false });
    await post(app, '/banks/other/v1/entities/ENT-1001/credit-limit', { amount: '82000.00', allowDecrease: false });
    const res = await app.inject({ method: 'POST', url: '/__admin/reset', payload: { bankId: 'other' } });
    expect(res.json()).toEqual({ reset: ['other'] });
    expect(await creditLimitOf(app)).toBe('81000.00');
    expect(await creditLimitOf(app, '/banks/other/v1/entities/ENT-1001')).toBe('50000.00');
    expect((await app.inject({ method: 'POST', url: '/__admin/reset', payload: { bankId: '../x' } })).statusCode).toBe(400);
    await app.close();
  });

  it('a corrupt snapshot fails that bank with 500 CORE_STORAGE, not the others', async () => {
    const { writeFileSync } = await import('node:fs');
    writeFileSync(join(dir, 'broken.json'), '{not json');
    const app = buildMockCore({ dataDir: dir });
    const res = await app.inject({ method: 'GET', url: '/banks/broken/v1/entities/ENT-1001' });
    expect(res.statusCode).toBe(500);
    expect(res.json().error.code).toBe('CORE_STORAGE');
    expect((await app.inject({ method: 'GET', url: ENTITY })).statusCode).toBe(200);
    await app.close();
  });
});

describe('fault injection', () => {
  let app: FastifyInstance;
  let base: string;
  beforeAll(async () => {
    app = buildMockCore({ maxHoldMs: 5_000 });
    base = await app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(() => app.close());
  afterEach(async () => {
    await app.inject({ method: 'PUT', url: '/__admin/faults', payload: {} });
    await app.inject({ method: 'POST', url: '/__admin/reset' });
  });

  const send = (path: string, body: unknown, headers: Record<string, string> = {}, signal?: AbortSignal) =>
    request(`${base}${path}`, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json', ...headers }, ...(signal ? { signal } : {}) });
  const raise = { amount: '75000.00', allowDecrease: false };

  it('X-Mock-Fault: error → 503 CORE_UNAVAILABLE, nothing applied', async () => {
    const res = await send(LIMIT, raise, { 'x-mock-fault': 'error' });
    expect(res.statusCode).toBe(503);
    expect((await res.body.json()) as object).toMatchObject({ error: { code: 'CORE_UNAVAILABLE' } });
    expect(await creditLimitOf(app)).toBe('50000.00');
  });

  it('X-Mock-Fault: reset → the connection is destroyed, nothing applied', async () => {
    await expect(send(LIMIT, raise, { 'x-mock-fault': 'reset' })).rejects.toMatchObject({ code: expect.stringMatching(/UND_ERR_SOCKET|ECONNRESET/) });
    expect(await creditLimitOf(app)).toBe('50000.00');
  });

  it('X-Mock-Fault: timeout → no answer until the client gives up, nothing applied', async () => {
    const started = Date.now();
    await expect(send(LIMIT, raise, { 'x-mock-fault': 'timeout' }, AbortSignal.timeout(200))).rejects.toThrow();
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    expect(await creditLimitOf(app)).toBe('50000.00');
  });

  it('X-Mock-Fault: latency=<ms> → answers after the delay, applied', async () => {
    const started = Date.now();
    const res = await send(LIMIT, raise, { 'x-mock-fault': 'latency=150' });
    expect(res.statusCode).toBe(200);
    await res.body.dump();
    expect(Date.now() - started).toBeGreaterThanOrEqual(145);
    expect(await creditLimitOf(app)).toBe('75000.00');
  });

  it('latency longer than the client waits: the client times out, the core still applies (outcome unknown)', async () => {
    await expect(send(LIMIT, raise, { 'x-mock-fault': 'latency=300' }, AbortSignal.timeout(100))).rejects.toThrow();
    await new Promise((r) => setTimeout(r, 350));
    expect(await creditLimitOf(app)).toBe('75000.00');
  });

  it('refuses an unknown fault name', async () => {
    const res = await send(LIMIT, raise, { 'x-mock-fault': 'explode' });
    expect(res.statusCode).toBe(400);
    await res.body.dump();
  });

  it('PUT /__admin/faults: errorRate 1 fails every operation, not reads; GET shows the configuration', async () => {
    const put = await app.inject({ method: 'PUT', url: '/__admin/faults', payload: { errorRate: 1 } });
    expect(put.json()).toEqual({ latencyMs: 0, errorRate: 1, timeoutRate: 0, resetRate: 0, seed: 1 });
    expect((await app.inject({ method: 'GET', url: '/__admin/faults' })).json()).toEqual(put.json());
    const res = await send(UPGRADE, { kitNo: 'KIT-2001', entityId: 'ENT-1001', lockOnUpgrade: false });
    expect(res.statusCode).toBe(503);
    await res.body.dump();
    expect((await app.inject({ method: 'GET', url: ENTITY })).statusCode).toBe(200);
  });

  it('PUT /__admin/faults: timeoutRate 1 holds operations; resetRate 1 resets them', async () => {
    await app.inject({ method: 'PUT', url: '/__admin/faults', payload: { timeoutRate: 1 } });
    await expect(send(LIMIT, raise, {}, AbortSignal.timeout(150))).rejects.toThrow();
    await app.inject({ method: 'PUT', url: '/__admin/faults', payload: { resetRate: 1 } });
    await expect(send(LIMIT, raise)).rejects.toMatchObject({ code: expect.stringMatching(/UND_ERR_SOCKET|ECONNRESET/) });
    expect(await creditLimitOf(app)).toBe('50000.00');
  });

  it('PUT /__admin/faults: latencyMs delays every operation', async () => {
    await app.inject({ method: 'PUT', url: '/__admin/faults', payload: { latencyMs: 120 } });
    const started = Date.now();
    const res = await send(LIMIT, raise);
    await res.body.dump();
    expect(res.statusCode).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(115);
  });

  it('random faults follow the seed: the same seed replays the same sequence', async () => {
    const run = async () => {
      await app.inject({ method: 'PUT', url: '/__admin/faults', payload: { errorRate: 0.5, seed: 42 } });
      const statuses: number[] = [];
      for (let i = 0; i < 12; i++) statuses.push((await post(app, LIMIT, { amount: `${60_000 + i}.00`, allowDecrease: true })).statusCode);
      return statuses;
    };
    const first = await run();
    const draws = mulberry32(42);
    expect(first).toEqual(Array.from({ length: 12 }, () => (draws() < 0.5 ? 503 : 200)));
    expect(first).toContain(503);
    expect(first).toContain(200);
    expect(await run()).toEqual(first);
  });

  it('refuses a fault configuration out of range', async () => {
    const res = await app.inject({ method: 'PUT', url: '/__admin/faults', payload: { errorRate: 2 } });
    expect(res.statusCode).toBe(400);
  });

  it('close() releases held requests at once', async () => {
    const other = buildMockCore();
    const url = await other.listen({ host: '127.0.0.1', port: 0 });
    const held = request(`${url}${LIMIT}`, { method: 'POST', body: JSON.stringify(raise), headers: { 'content-type': 'application/json', 'x-mock-fault': 'timeout' } });
    held.catch(() => undefined);
    await new Promise((r) => setTimeout(r, 100));
    const started = Date.now();
    await other.close();
    expect(Date.now() - started).toBeLessThan(30_000); // a held request is otherwise held for good
    await expect(held).rejects.toThrow();
  });
});

describe('process configuration', () => {
  it('defaults: loopback 9090, ./data/mock-core, demo fixtures, no faults', () => {
    const c = parseMockCoreArgs([], {});
    expect(c).toMatchObject({ host: '127.0.0.1', port: 9090, fixtures: 'demo', faults: {}, auth: { type: 'none' }, maxHoldMs: 60_000 });
    expect(c.dataDir.endsWith(join('data', 'mock-core'))).toBe(true);
  });

  it('flags win over variables', () => {
    const c = parseMockCoreArgs(['--port', '9191', '--error-rate', '0.25', '--seed', '7', '--bearer-token', 't'], {
      MOCK_CORE_PORT: '9292',
      MOCK_CORE_TIMEOUT_RATE: '0.1',
      MOCK_CORE_DATA_DIR: '/tmp/x',
      MOCK_CORE_FIXTURES: 'empty',
    });
    expect(c).toMatchObject({ port: 9191, dataDir: '/tmp/x', fixtures: 'empty', faults: { errorRate: 0.25, timeoutRate: 0.1, seed: 7 }, auth: { type: 'bearer', token: 't' } });
  });

  it.each([
    [['--host', '0.0.0.0'], /not a loopback address/],
    [['--port', 'x'], /--port must be a whole number/],
    [['--error-rate', '1.5'], /--error-rate must be a number from 0 to 1/],
    [['--fixtures', 'full'], /--fixtures must be demo or empty/],
    [['--basic-auth', 'nocolon'], /--basic-auth must be <username>:<password>/],
    [['--bogus'], /Unknown option/],
  ])('refuses %j', (argv, message) => {
    expect(() => parseMockCoreArgs(argv, {})).toThrow(MockCoreConfigError);
    expect(() => parseMockCoreArgs(argv, {})).toThrow(message);
  });

  it('a non-loopback host needs --allow-remote', () => {
    expect(parseMockCoreArgs(['--host', '0.0.0.0', '--allow-remote'], {}).host).toBe('0.0.0.0');
  });
});
