// Idempotency-Key on every write of both listeners (issue 20, point 7: ten writes ignored it; two channel
// creations with one key made two channels). The routes are enumerated from the apps themselves: each write
// has a request here, sent twice with one key (the second answer is the first, replayed) and once more with
// another body (422); a write added without one fails the test. The writes that cannot honour the key are
// exactly those docs/api.md lists. A replay of an answer holding a secret shown once (a channel's signing
// secret, an operator key) answers the same 201, stored sealed, never in clear and never logged.
import { readFileSync } from 'node:fs';
import Fastify, { type FastifyInstance, type LightMyRequestResponse, type RouteOptions } from 'fastify';
import { exportJWK, generateKeyPair } from 'jose';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import cardlineApp, { serverOptions } from '../../src/app.js';
import { loggerOptions } from '../../src/logging.js';
import { managementPlugin } from '../../src/management/app.js';
import { fingerprintOf } from '../../src/services/idempotency.js';
import { LIMIT_URL, PROBLEM_BASE, UPGRADE_URL, createTestApp, type TestApp } from '../helpers/app.js';

const REUSED =
  'This Idempotency-Key was already used for a different request to this operation; send the original request unchanged to get its response, or use a new key for a new request.';
const reusedProblem = {
  type: `${PROBLEM_BASE}/problem-with-message`,
  title: 'Unprocessable Entity',
  status: 422,
  message: 'error.http.422',
  detail: REUSED,
};
const reusedEnvelope = { result: null, exception: { errorCode: 'ERR_422', shortMessage: 'Unprocessable Entity', detailMessage: REUSED }, pagination: null };

/** The writes that do not take Idempotency-Key, each named in docs/api.md with its reason. */
const EXEMPT = [
  'public POST /api/authenticate',
  'public POST /credit-line-management/business-entity-manager/fetchLimit',
  'public PUT /v1/me/password',
  'management POST /console/session',
  'management DELETE /console/session',
  'management POST /v1/console/connectors/check',
];

let t: TestApp;
let m: FastifyInstance;
let operator: string;
const logLines: string[] = [];
const logged = () => logLines.join('');

beforeAll(async () => {
  const stream = { write: (chunk: string) => void logLines.push(chunk) };
  t = await createTestApp({ env: { LOG_LEVEL: 'debug' }, logger: pino(loggerOptions('debug'), stream) });
  m = await t.management();
  operator = await t.operatorKey('idempotency-operator');
});
afterAll(() => t?.close());

type Listener = 'public' | 'management';
interface Send {
  method: string;
  url: string;
  key?: string;
  body?: unknown;
}

async function send(listener: Listener, { method, url, key, body }: Send): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = {};
  if (key !== undefined) headers['idempotency-key'] = key;
  if (listener === 'public') {
    headers['x-tenant-id'] = 'demo';
    headers.authorization = `Bearer ${await t.token('Admin')}`;
    return t.inject({ method: method as 'POST', url, headers, ...(body === undefined ? {} : { payload: body as object }) });
  }
  headers.authorization = `Bearer ${operator}`;
  return m.inject({ method: method as 'POST', url, headers, ...(body === undefined ? {} : { payload: body as object }) });
}

const channelCount = async () => (await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM channels WHERE tenant_id = 'demo'`)).rows[0]!.n;
const storedRows = async () =>
  (await t.db.query<{ body: string | null; fingerprint: string; sealed?: boolean }>(`SELECT * FROM idempotency_keys`)).rows;

describe('an answer holding a secret shown once: the replay answers the same 201, stored sealed', () => {
  it('two channel creations with one key make one channel; the second answers the first 201, secret included', async () => {
    const before = await channelCount();
    const body = { type: 'webhook', url: 'http://127.0.0.1:1/once', eventTypes: ['card.blocked'], description: 'Once' };
    const first = await send('public', { method: 'POST', url: '/v1/admin/channels', key: 'create-channel-once', body });
    expect(first.statusCode).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const secret = first.json().result.secret as string;
    expect(secret).toMatch(/^whsec_/);

    const second = await send('public', { method: 'POST', url: '/v1/admin/channels', key: 'create-channel-once', body });
    expect(second.statusCode).toBe(201);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.body).toBe(first.body);
    expect(await channelCount()).toBe(before + 1);

    // Another body with the key: 422, nothing created.
    const other = await send('public', { method: 'POST', url: '/v1/admin/channels', key: 'create-channel-once', body: { ...body, description: 'Twice' } });
    expect(other.statusCode).toBe(422);
    expect(other.json()).toEqual(reusedProblem);
    expect(await channelCount()).toBe(before + 1);

    // At rest the answer is sealed: neither the secret nor any part of the answer is in the store in clear.
    const rows = await storedRows();
    expect(rows.some((r) => r.sealed === true)).toBe(true);
    const dump = JSON.stringify(rows);
    expect(dump).not.toContain(secret);
    expect(dump).not.toContain(secret.slice('whsec_'.length));
    expect(dump).not.toContain(first.json().result.channelId);
    expect(logged()).not.toContain(secret.slice('whsec_'.length));
  });

  it("a secret's rotation replays the same new secret; the channel is rotated once", async () => {
    const created = await send('public', { method: 'POST', url: '/v1/admin/channels', body: { type: 'webhook', url: 'http://127.0.0.1:1/rotate', eventTypes: ['*'] } });
    const { channelId } = created.json().result as { channelId: string };
    const url = `/v1/admin/channels/${channelId}/rotate-secret`;
    const first = await send('public', { method: 'POST', url, key: 'rotate-once', body: { overlapSeconds: 60 } });
    expect(first.statusCode).toBe(200);
    const second = await send('public', { method: 'POST', url, key: 'rotate-once', body: { overlapSeconds: 60 } });
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.body).toBe(first.body);
    const secret = first.json().result.secret as string;
    // The channel signs with the rotated secret and the one before it: rotated once, not twice.
    const signing = (await t.app.cardline.channels.forDelivery([{ tenantId: 'demo', channelId }])).get(`demo/${channelId}`)!.secrets;
    expect(signing).toEqual([secret, created.json().result.secret]);
    expect(JSON.stringify(await storedRows())).not.toContain(secret.slice('whsec_'.length));
    expect(logged()).not.toContain(secret.slice('whsec_'.length));
  });

  it('a new operator key (management listener) replays the same 201 with the same key; one key is made', async () => {
    const first = await send('management', { method: 'POST', url: '/v1/operator-keys', key: 'operator-key-once', body: { name: 'once-carol' } });
    expect(first.statusCode).toBe(201);
    const second = await send('management', { method: 'POST', url: '/v1/operator-keys', key: 'operator-key-once', body: { name: 'once-carol' } });
    expect(second.statusCode).toBe(201);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.body).toBe(first.body);
    const key = first.json().result.key as string;
    expect(JSON.stringify(await storedRows())).not.toContain(key.slice('clop_'.length));
    expect(logged()).not.toContain(key.slice('clop_'.length));
    const other = await send('management', { method: 'POST', url: '/v1/operator-keys', key: 'operator-key-once', body: { name: 'once-dave' } });
    expect(other.statusCode).toBe(422);
    expect(other.json()).toEqual(reusedProblem);
    expect((await t.app.cardline.operatorKeys.list()).filter((k) => k.name.startsWith('once-')).map((k) => k.name)).toEqual(['once-carol']);
  });

  it('a body holding a password is fingerprinted under a key of the gateway, not as a plain digest', async () => {
    const password = 'fingerprint-Passw0rd';
    const body = async () => ({ username: 'fp-user', role: 'Read-Only', password: await t.encrypt(password) });
    const first = await send('public', { method: 'POST', url: '/v1/admin/users', key: 'user-fp', body: await body() });
    expect(first.statusCode).toBe(201);
    // A retry is encrypted afresh (a JWE is accepted once); the key compares the decrypted body.
    const second = await send('public', { method: 'POST', url: '/v1/admin/users', key: 'user-fp', body: await body() });
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.body).toBe(first.body);
    const plain = fingerprintOf({ username: 'fp-user', role: 'Read-Only', password }, {});
    expect((await storedRows()).map((r) => r.fingerprint)).not.toContain(plain);
  });
});

// ---------------------------------------------------------------------------------------------------
// Every write, enumerated.

interface Recipe {
  /** The concrete URL. */
  url: string;
  /** The body, built afresh per request (a JWE is accepted once); none for a write without one. */
  body?: () => unknown;
  /** Another body for the same route: the key's 422. */
  other?: () => unknown;
}

/** Writes on each listener, as `listener METHOD pattern`, from the apps' own route tables. */
async function writesOf(): Promise<string[]> {
  const seen: string[] = [];
  const collect = (listener: Listener) => (route: RouteOptions) => {
    for (const method of [route.method].flat()) if (!['GET', 'HEAD'].includes(String(method))) seen.push(`${listener} ${String(method)} ${route.url}`);
  };
  const pub = Fastify(serverOptions(t.config));
  pub.addHook('onRoute', collect('public'));
  await pub.register(cardlineApp, { config: t.config, db: t.db, masterKey: t.masterKey, ownsDb: false });
  await pub.ready();
  await pub.close();
  const man = Fastify(serverOptions(t.config));
  man.addHook('onRoute', collect('management'));
  await man.register(managementPlugin, { services: t.app.cardline, config: t.config });
  await man.ready();
  await man.close();
  return seen.sort();
}

describe('every write of both listeners honours Idempotency-Key', () => {
  const recipes: Record<string, Recipe> = {};
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    const services = t.app.cardline;
    for (const u of ['idem-patch', 'idem-unlock', 'idem-password', 'idem-remove']) await services.users.add('demo', u, 'Read-Only', 'idem-Passw0rd-1');
    for (const u of ['m-patch', 'm-unlock', 'm-password', 'm-remove']) await services.users.add('demo-b', u, 'Read-Only', 'idem-Passw0rd-1');
    const channel = async (path: string) => (await services.channels.create('demo', true, { type: 'webhook', url: `http://127.0.0.1:1/${path}`, eventTypes: ['*'] })).channelId;
    for (const c of ['patch', 'remove', 'rotate', 'test', 'replay']) ids[c] = await channel(c);
    ids.delivery = (await services.deliveries.test('demo', ids.test!)).deliveryId;
    await t.operatorKey('idem-revoked');
    const jwk = async () => ({ ...(await exportJWK((await generateKeyPair('ECDH-ES+A256KW', { crv: 'P-256', extractable: true })).publicKey)) });
    const [jwkA, jwkB] = [await jwk(), await jwk()];
    // Keys a rotation replaced, for the retirements (encryption keys: the tokens in use stay valid).
    ids.retiring = (await services.keys.rotate('demo', 'enc', 3600)).replaced[0]!.kid;
    ids.retiringB = (await services.keys.rotate('demo-b', 'enc', 3600)).replaced[0]!.kid;
    const password = (p: string) => async () => ({ password: await t.encrypt(p) });
    // The management listener runs the same decrypt step (decision 0190): a retry re-encrypts, as on the public one.
    const passwordB = (p: string) => async () => ({ password: await t.encrypt(p, 'demo-b') });
    const entity = (name: string) => () => ({
      name,
      type: 'BUSINESS',
      contact: { email: 'finance@idem.example', mobile: '+351912345678' },
      primaryAddress: { address1: '5 Rua Augusta', city: 'Lisbon', state: 'Lisboa', country: 'PT', pin: '1100-048' },
      creditLimit: '25000.00',
    });
    const auth = (amount: string) => () => ({ amount, merchant: { name: 'Cafe Central', mcc: '5814', country: 'PT' }, channel: 'POS' });
    const add = (key: string, recipe: Recipe) => void (recipes[key] = recipe);

    // The public listener (tenant demo, its Admin).
    add(`public POST ${LIMIT_URL}`, { url: LIMIT_URL, body: () => ({ entityId: 'ENT-1002', amount: '60000.00' }), other: () => ({ entityId: 'ENT-1002', amount: '61000.00' }) });
    add(`public PUT ${UPGRADE_URL}`, {
      url: UPGRADE_URL,
      body: () => ({ kitNo: 'KIT-2002', cardId: 'CARD-3002', communicationAddress: { usePrimaryAddress: true } }),
      other: () => ({ kitNo: 'KIT-2003', cardId: 'CARD-3002', communicationAddress: { usePrimaryAddress: true } }),
    });
    add('public POST /card/activate', { url: '/card/activate', body: () => ({ kitNo: 'KIT-2002' }), other: () => ({ kitNo: 'KIT-2003' }) });
    add('public POST /v1/cards/:cardId/lock', { url: '/v1/cards/CARD-3001/lock' });
    add('public POST /v1/cards/:cardId/unlock', { url: '/v1/cards/CARD-3001/unlock' });
    add('public PUT /v1/cards/:cardId/preferences', { url: '/v1/cards/CARD-3001/preferences', body: () => ({ domestic: { enabled: true } }), other: () => ({ domestic: { enabled: false } }) });
    add('public PUT /v1/cards/:cardId/pin', { url: '/v1/cards/CARD-3001/pin', body: () => ({ pinBlock: '0412AC89ABCDEF67', format: 0 }), other: () => ({ pinBlock: '0412AC89ABCDEF68', format: 0 }) });
    add('public POST /v1/sandbox/cards/:cardId/authorizations', { url: '/v1/sandbox/cards/CARD-3001/authorizations', body: auth('10.00'), other: auth('11.00') });
    add('public POST /v1/sandbox/entities/:entityId/repayments', { url: '/v1/sandbox/entities/ENT-1001/repayments', body: () => ({ amount: '1.00' }), other: () => ({ amount: '2.00' }) });
    add('public POST /v1/sandbox/cards/:cardId/fulfilment/advance', { url: '/v1/sandbox/cards/CARD-3002/fulfilment/advance' });
    add('public POST /v1/cards/:cardId/block', { url: '/v1/cards/CARD-3003/block', body: () => ({ reasonCode: 'LOST' }), other: () => ({ reasonCode: 'STOLEN' }) });
    add('public POST /v1/cards/:cardId/replace', { url: '/v1/cards/CARD-3003/replace', body: () => ({ reason: 'LOST' }), other: () => ({ reason: 'STOLEN' }) });
    add('public POST /v1/entities', { url: '/v1/entities', body: entity('Idem Lda'), other: entity('Idem Two Lda') });
    add('public PATCH /v1/entities/:entityId', {
      url: '/v1/entities/ENT-1003',
      body: () => ({ contact: { email: 'a@idem.example', mobile: '+351912345678' } }),
      other: () => ({ contact: { email: 'b@idem.example', mobile: '+351912345678' } }),
    });
    add('public POST /v1/entities/:entityId/cards', { url: '/v1/entities/ENT-1003/cards' });
    add('public POST /v1/admin/keys/rotate', { url: '/v1/admin/keys/rotate', body: () => ({ use: 'enc' }), other: () => ({ use: 'enc', graceSeconds: 3600 }) });
    add('public POST /v1/admin/keys/:kid/retire', { url: `/v1/admin/keys/${ids.retiring}/retire` });
    add('public PUT /v1/admin/client-key', { url: '/v1/admin/client-key', body: () => ({ jwk: jwkA }), other: () => ({ jwk: jwkB }) });
    add('public POST /v1/admin/users', {
      url: '/v1/admin/users',
      body: async () => ({ username: 'idem-new', role: 'Read-Only', password: await t.encrypt('idem-Passw0rd-2') }),
      other: async () => ({ username: 'idem-other', role: 'Read-Only', password: await t.encrypt('idem-Passw0rd-2') }),
    });
    add('public PATCH /v1/admin/users/:username', { url: '/v1/admin/users/idem-patch', body: () => ({ role: 'Operations' }), other: () => ({ role: 'Admin' }) });
    add('public POST /v1/admin/users/:username/unlock', { url: '/v1/admin/users/idem-unlock/unlock' });
    add('public PUT /v1/admin/users/:username/password', { url: '/v1/admin/users/idem-password/password', body: password('idem-Passw0rd-3'), other: password('idem-Passw0rd-4') });
    add('public DELETE /v1/admin/users/:username', { url: '/v1/admin/users/idem-remove' });
    add('public PATCH /v1/admin/config', { url: '/v1/admin/config', body: () => ({ rateLimit: { perUserPerMinute: 6000 } }), other: () => ({ rateLimit: { perUserPerMinute: 6001 } }) });
    add('public POST /v1/admin/channels', {
      url: '/v1/admin/channels',
      body: () => ({ type: 'webhook', url: 'http://127.0.0.1:1/new', eventTypes: ['card.blocked'] }),
      other: () => ({ type: 'webhook', url: 'http://127.0.0.1:1/other', eventTypes: ['card.blocked'] }),
    });
    add('public PATCH /v1/admin/channels/:channelId', { url: `/v1/admin/channels/${ids.patch}`, body: () => ({ description: 'one' }), other: () => ({ description: 'two' }) });
    add('public DELETE /v1/admin/channels/:channelId', { url: `/v1/admin/channels/${ids.remove}` });
    add('public POST /v1/admin/channels/:channelId/rotate-secret', { url: `/v1/admin/channels/${ids.rotate}/rotate-secret`, body: () => ({ overlapSeconds: 60 }), other: () => ({ overlapSeconds: 120 }) });
    add('public POST /v1/admin/channels/:channelId/test', { url: `/v1/admin/channels/${ids.test}/test` });
    add('public POST /v1/admin/deliveries/:deliveryId/retry', { url: `/v1/admin/deliveries/${ids.delivery}/retry` });
    add('public POST /v1/admin/channels/:channelId/replay', {
      url: `/v1/admin/channels/${ids.replay}/replay`,
      body: () => ({ from: '2026-01-01T00:00:00Z', to: '2026-01-02T00:00:00Z' }),
      other: () => ({ from: '2026-01-01T00:00:00Z', to: '2026-01-03T00:00:00Z' }),
    });

    // The management listener (an operator key).
    const tenant = (name: string) => () => ({ id: 'idem-bank', name, config: { connector: { id: 'mock', options: { fixtures: 'demo' } } } });
    add('management POST /v1/tenants', { url: '/v1/tenants', body: tenant('Idem Bank'), other: tenant('Idem Bank Two') });
    add('management PATCH /v1/tenants/:tenantId', { url: '/v1/tenants/demo-b', body: () => ({ name: 'Demo B, renamed' }), other: () => ({ name: 'Demo B, again' }) });
    add('management POST /v1/tenants/:tenantId/disable', { url: '/v1/tenants/idem-bank/disable' });
    add('management POST /v1/tenants/:tenantId/enable', { url: '/v1/tenants/idem-bank/enable' });
    add('management POST /v1/tenants/:tenantId/users', {
      url: '/v1/tenants/demo-b/users',
      body: async () => ({ username: 'm-new', role: 'Admin', password: await t.encrypt('idem-Passw0rd-5', 'demo-b') }),
      other: async () => ({ username: 'm-other', role: 'Admin', password: await t.encrypt('idem-Passw0rd-5', 'demo-b') }),
    });
    add('management PATCH /v1/tenants/:tenantId/users/:username', { url: '/v1/tenants/demo-b/users/m-patch', body: () => ({ role: 'Operations' }), other: () => ({ role: 'Admin' }) });
    add('management POST /v1/tenants/:tenantId/users/:username/unlock', { url: '/v1/tenants/demo-b/users/m-unlock/unlock' });
    add('management PUT /v1/tenants/:tenantId/users/:username/password', { url: '/v1/tenants/demo-b/users/m-password/password', body: passwordB('idem-Passw0rd-6'), other: passwordB('idem-Passw0rd-7') });
    add('management DELETE /v1/tenants/:tenantId/users/:username', { url: '/v1/tenants/demo-b/users/m-remove' });
    // A tenant's keys, as its Admin's own entries served to an operator (src/operations/management-keys.ts).
    add('management POST /v1/tenants/:tenantId/keys/rotate', { url: '/v1/tenants/demo-b/keys/rotate', body: () => ({ use: 'enc' }), other: () => ({ use: 'enc', graceSeconds: 3600 }) });
    add('management POST /v1/tenants/:tenantId/keys/:kid/retire', { url: `/v1/tenants/demo-b/keys/${ids.retiringB}/retire` });
    add('management PUT /v1/tenants/:tenantId/client-key', { url: '/v1/tenants/demo-b/client-key', body: () => ({ jwk: jwkA }), other: () => ({ jwk: jwkB }) });
    add('management POST /v1/operator-keys', { url: '/v1/operator-keys', body: () => ({ name: 'idem-new-operator' }), other: () => ({ name: 'idem-other-operator' }) });
    add('management DELETE /v1/operator-keys/:name', { url: '/v1/operator-keys/idem-revoked' });
    // The console's writes on the management listener (src/operations/management-console.ts).
    add('management POST /v1/tenants/:tenantId/deliveries/:deliveryId/retry', { url: `/v1/tenants/demo/deliveries/${ids.delivery}/retry` });
    add('management POST /v1/tenants/:tenantId/channels/:channelId/rotate-secret', {
      url: `/v1/tenants/demo/channels/${ids.rotate}/rotate-secret`,
      body: () => ({ overlapSeconds: 30 }),
      other: () => ({ overlapSeconds: 90 }),
    });
    add('management POST /v1/tenants/:tenantId/channels/:channelId/replay', {
      url: `/v1/tenants/demo/channels/${ids.replay}/replay`,
      body: () => ({ from: '2026-02-01T00:00:00Z', to: '2026-02-02T00:00:00Z' }),
      other: () => ({ from: '2026-02-01T00:00:00Z', to: '2026-02-03T00:00:00Z' }),
    });
  });

  it('each write has a request here, or is one docs/api.md names as not taking the key', async () => {
    const writes = await writesOf();
    expect(writes.filter((w) => !EXEMPT.includes(w)).sort()).toEqual(Object.keys(recipes).sort());
    const api = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');
    const section = api.slice(api.indexOf('## Idempotency keys'), api.indexOf('\n## ', api.indexOf('## Idempotency keys') + 1));
    for (const w of EXEMPT) expect(section).toContain(`\`${w.split(' ').slice(1).join(' ')}\``);
  });

  it('same key, same body: the first answer again, Idempotent-Replayed: true; same key, another body: 422', async () => {
    const failures: string[] = [];
    for (const [name, recipe] of Object.entries(recipes)) {
      const [listener, method] = name.split(' ') as [Listener, string];
      const key = `every-write ${name}`;
      const first = await send(listener, { method, url: recipe.url, key, body: await recipe.body?.() });
      const second = await send(listener, { method, url: recipe.url, key, body: await recipe.body?.() });
      const outcome = `${name}: ${first.statusCode} then ${second.statusCode} replayed=${String(second.headers['idempotent-replayed'])}`;
      if (first.statusCode >= 500 || first.statusCode === 202 || first.headers['idempotent-replayed'] !== undefined) failures.push(`${outcome} (first: ${first.body})`);
      else if (second.headers['idempotent-replayed'] !== 'true' || second.statusCode !== first.statusCode || second.body !== first.body) failures.push(`${outcome} (${second.body})`);
      if (recipe.other) {
        const other = await send(listener, { method, url: recipe.url, key, body: await recipe.other() });
        const expected = name.endsWith(LIMIT_URL) ? reusedEnvelope : reusedProblem;
        if (other.statusCode !== 422 || JSON.stringify(other.json()) !== JSON.stringify(expected)) failures.push(`${name}, another body: ${other.statusCode} ${other.body}`);
      }
    }
    expect(failures).toEqual([]);
  });
});
