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
import type { Operation } from '../../src/operations/define.js';
import type { WriteOperationId } from '../../src/operations/index.js';
import { fingerprintOf } from '../../src/services/infrastructure/idempotency.js';
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

/** A write that does not take Idempotency-Key: docs/api.md names it with its reason. */
const EXEMPT = 'exempt';
/** The writes outside the operation tables (the console's session), which take no key either. */
const OUTSIDE_THE_TABLES = ['management POST /console/session', 'management DELETE /console/session'];

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

/** What the recipes address: rows made before they run, and two client keys. */
interface Fixtures {
  ids: Record<string, string>;
  jwkA: object;
  jwkB: object;
}

/**
 * A request for every write of both tables, keyed by operation id and checked by the compiler: an operation
 * added without its recipe (or EXEMPT) does not build.
 */
function recipesOf({ ids, jwkA, jwkB }: Fixtures) {
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
  const tenant = (name: string) => () => ({ id: 'idem-bank', name, config: { connector: { id: 'mock', options: { fixtures: 'demo' } } } });
  return {
    // The public listener (tenant demo, its Admin).
    authenticate: EXEMPT,
    'credit-limit.read': EXEMPT,
    'user.password-change': EXEMPT,
    'credit-limit.upgrade': { url: LIMIT_URL, body: () => ({ entityId: 'ENT-1002', amount: '60000.00' }), other: () => ({ entityId: 'ENT-1002', amount: '61000.00' }) },
    'card.upgrade-physical': {
      url: UPGRADE_URL,
      body: () => ({ kitNo: 'KIT-2002', cardId: 'CARD-3002', communicationAddress: { usePrimaryAddress: true } }),
      other: () => ({ kitNo: 'KIT-2003', cardId: 'CARD-3002', communicationAddress: { usePrimaryAddress: true } }),
    },
    'card.activate': { url: '/card/activate', body: () => ({ kitNo: 'KIT-2002' }), other: () => ({ kitNo: 'KIT-2003' }) },
    'card.lock': { url: '/v1/cards/CARD-3001/lock' },
    'card.unlock': { url: '/v1/cards/CARD-3001/unlock' },
    'card.preferences-update': { url: '/v1/cards/CARD-3001/preferences', body: () => ({ domestic: { enabled: true } }), other: () => ({ domestic: { enabled: false } }) },
    'card.set-pin': { url: '/v1/cards/CARD-3001/pin', body: () => ({ pinBlock: '0412AC89ABCDEF67', format: 0 }), other: () => ({ pinBlock: '0412AC89ABCDEF68', format: 0 }) },
    'transaction.authorize': { url: '/v1/sandbox/cards/CARD-3001/authorizations', body: auth('10.00'), other: auth('11.00') },
    'authorization.create': {
      url: '/v1/authorizations',
      body: () => ({ cardId: 'CARD-3001', ...auth('12.00')(), currency: 'EUR' }),
      other: () => ({ cardId: 'CARD-3001', ...auth('13.00')(), currency: 'EUR' }),
    },
    'repayment.receive': { url: '/v1/sandbox/entities/ENT-1001/repayments', body: () => ({ amount: '1.00' }), other: () => ({ amount: '2.00' }) },
    'card.fulfilment-advance': { url: '/v1/sandbox/cards/CARD-3002/fulfilment/advance' },
    'card.block': { url: '/v1/cards/CARD-3003/block', body: () => ({ reasonCode: 'LOST' }), other: () => ({ reasonCode: 'STOLEN' }) },
    'card.replace': { url: '/v1/cards/CARD-3003/replace', body: () => ({ reason: 'LOST' }), other: () => ({ reason: 'STOLEN' }) },
    'entity.register': { url: '/v1/entities', body: entity('Idem Lda'), other: entity('Idem Two Lda') },
    'entity.update': {
      url: '/v1/entities/ENT-1003',
      body: () => ({ contact: { email: 'a@idem.example', mobile: '+351912345678' } }),
      other: () => ({ contact: { email: 'b@idem.example', mobile: '+351912345678' } }),
    },
    'card.issue': { url: '/v1/entities/ENT-1003/cards' },
    'keys.rotate': { url: '/v1/admin/keys/rotate', body: () => ({ use: 'enc' }), other: () => ({ use: 'enc', graceSeconds: 3600 }) },
    'approvals.approve': { url: `/v1/approvals/${ids.approve}/approve` },
    'approvals.reject': { url: `/v1/approvals/${ids.reject}/reject`, body: () => ({ reason: 'No review on file' }), other: () => ({ reason: 'Not now' }) },
    'approvals.cancel': { url: `/v1/approvals/${ids.cancel}/cancel` },
    'keys.retire': { url: `/v1/admin/keys/${ids.retiring}/retire` },
    'client-key.register': { url: '/v1/admin/client-key', body: () => ({ jwk: jwkA }), other: () => ({ jwk: jwkB }) },
    'user.create': {
      url: '/v1/admin/users',
      body: async () => ({ username: 'idem-new', role: 'Read-Only', password: await t.encrypt('idem-Passw0rd-2') }),
      other: async () => ({ username: 'idem-other', role: 'Read-Only', password: await t.encrypt('idem-Passw0rd-2') }),
    },
    'user.update': { url: '/v1/admin/users/idem-patch', body: () => ({ role: 'Operations' }), other: () => ({ role: 'Admin' }) },
    'user.unlock': { url: '/v1/admin/users/idem-unlock/unlock' },
    'user.password-reset': { url: '/v1/admin/users/idem-password/password', body: password('idem-Passw0rd-3'), other: password('idem-Passw0rd-4') },
    'user.remove': { url: '/v1/admin/users/idem-remove' },
    'tenant.config-update': { url: '/v1/admin/config', body: () => ({ rateLimit: { perUserPerMinute: 6000 } }), other: () => ({ rateLimit: { perUserPerMinute: 6001 } }) },
    'channel.create': {
      url: '/v1/admin/channels',
      body: () => ({ type: 'webhook', url: 'http://127.0.0.1:1/new', eventTypes: ['card.blocked'] }),
      other: () => ({ type: 'webhook', url: 'http://127.0.0.1:1/other', eventTypes: ['card.blocked'] }),
    },
    'channel.update': { url: `/v1/admin/channels/${ids.patch}`, body: () => ({ description: 'one' }), other: () => ({ description: 'two' }) },
    'channel.remove': { url: `/v1/admin/channels/${ids.remove}` },
    'channel.rotate-secret': { url: `/v1/admin/channels/${ids.rotate}/rotate-secret`, body: () => ({ overlapSeconds: 60 }), other: () => ({ overlapSeconds: 120 }) },
    'channel.test': { url: `/v1/admin/channels/${ids.test}/test` },
    'delivery.retry': { url: `/v1/admin/deliveries/${ids.delivery}/retry` },
    'auth-rules.create': {
      url: '/v1/admin/auth-rules',
      body: () => ({ name: 'Idem rule', cardId: 'CARD-3001', conditions: [{ attribute: 'mcc', operation: 'is-one-of', values: ['7995'] }] }),
      other: () => ({ name: 'Idem rule two', cardId: 'CARD-3001', conditions: [{ attribute: 'mcc', operation: 'is-one-of', values: ['7995'] }] }),
    },
    'auth-rules.update': { url: `/v1/admin/auth-rules/${ids.rulePatch}`, body: () => ({ name: 'one' }), other: () => ({ name: 'two' }) },
    'auth-rules.remove': { url: `/v1/admin/auth-rules/${ids.ruleRemove}` },
    'auth-rules.promote': { url: `/v1/admin/auth-rules/${ids.rulePromote}/promote` },
    'auth-rules.backtest': {
      url: `/v1/admin/auth-rules/${ids.rulePatch}/backtest`,
      body: () => ({ from: '2026-01-01', to: '2026-01-02' }),
      other: () => ({ from: '2026-01-01', to: '2026-01-03' }),
    },
    'channel.replay': {
      url: `/v1/admin/channels/${ids.replay}/replay`,
      body: () => ({ from: '2026-01-01T00:00:00Z', to: '2026-01-02T00:00:00Z' }),
      other: () => ({ from: '2026-01-01T00:00:00Z', to: '2026-01-03T00:00:00Z' }),
    },

    // The management listener (an operator key).
    'gateway.connector-check': EXEMPT,
    'tenant.create': { url: '/v1/tenants', body: tenant('Idem Bank'), other: tenant('Idem Bank Two') },
    'tenant.update': { url: '/v1/tenants/demo-b', body: () => ({ name: 'Demo B, renamed' }), other: () => ({ name: 'Demo B, again' }) },
    'tenant.disable': { url: '/v1/tenants/idem-bank/disable' },
    'tenant.enable': { url: '/v1/tenants/idem-bank/enable' },
    'tenant-user.create': {
      url: '/v1/tenants/demo-b/users',
      body: async () => ({ username: 'm-new', role: 'Admin', password: await t.encrypt('idem-Passw0rd-5', 'demo-b') }),
      other: async () => ({ username: 'm-other', role: 'Admin', password: await t.encrypt('idem-Passw0rd-5', 'demo-b') }),
    },
    'tenant-user.update': { url: '/v1/tenants/demo-b/users/m-patch', body: () => ({ role: 'Operations' }), other: () => ({ role: 'Admin' }) },
    'tenant-user.unlock': { url: '/v1/tenants/demo-b/users/m-unlock/unlock' },
    'tenant-user.set-password': { url: '/v1/tenants/demo-b/users/m-password/password', body: passwordB('idem-Passw0rd-6'), other: passwordB('idem-Passw0rd-7') },
    'tenant-user.remove': { url: '/v1/tenants/demo-b/users/m-remove' },
    // A tenant's keys, as its Admin's own entries served to an operator (src/operations/management-keys.ts).
    'tenant-keys.rotate': { url: '/v1/tenants/demo-b/keys/rotate', body: () => ({ use: 'enc' }), other: () => ({ use: 'enc', graceSeconds: 3600 }) },
    'tenant-keys.retire': { url: `/v1/tenants/demo-b/keys/${ids.retiringB}/retire` },
    'tenant-client-key.register': { url: '/v1/tenants/demo-b/client-key', body: () => ({ jwk: jwkA }), other: () => ({ jwk: jwkB }) },
    'operator-key.create': { url: '/v1/operator-keys', body: () => ({ name: 'idem-new-operator' }), other: () => ({ name: 'idem-other-operator' }) },
    'operator-key.revoke': { url: '/v1/operator-keys/idem-revoked' },
    // The console's writes on the management listener (src/operations/management-console.ts).
    'tenant-delivery.retry': { url: `/v1/tenants/demo/deliveries/${ids.delivery}/retry` },
    'tenant-channel.rotate-secret': {
      url: `/v1/tenants/demo/channels/${ids.rotate}/rotate-secret`,
      body: () => ({ overlapSeconds: 30 }),
      other: () => ({ overlapSeconds: 90 }),
    },
    'tenant-channel.replay': {
      url: `/v1/tenants/demo/channels/${ids.replay}/replay`,
      body: () => ({ from: '2026-02-01T00:00:00Z', to: '2026-02-02T00:00:00Z' }),
      other: () => ({ from: '2026-02-01T00:00:00Z', to: '2026-02-03T00:00:00Z' }),
    },
    'tenant-approval.approve': { url: `/v1/tenants/demo/approvals/${ids.operatorApprove}/approve` },
    'tenant-approval.reject': {
      url: `/v1/tenants/demo/approvals/${ids.operatorReject}/reject`,
      body: () => ({ reason: 'No review on file' }),
      other: () => ({ reason: 'Not now' }),
    },
  } satisfies Record<WriteOperationId, Recipe | typeof EXEMPT>;
}
// Were an id widened to `string` (an entry without its literal), any table would satisfy the check above.
const _idsAreLiterals: string extends WriteOperationId ? never : true = true;

/** The writes each listener registers: an operation's by its id, any other route as `listener METHOD pattern`. */
async function writesOf(): Promise<{ operations: Map<string, Operation>; others: string[] }> {
  const operations = new Map<string, Operation>();
  const others: string[] = [];
  const collect = (listener: Listener) => (route: RouteOptions) => {
    for (const method of [route.method].flat()) {
      if (['GET', 'HEAD'].includes(String(method))) continue;
      if (route.config?.operation) operations.set(route.config.operation.id, route.config.operation);
      else others.push(`${listener} ${String(method)} ${route.url}`);
    }
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
  return { operations, others: others.sort() };
}

describe('every write of both listeners honours Idempotency-Key', () => {
  let recipes: Record<string, Recipe | typeof EXEMPT> = {};
  let writes: Awaited<ReturnType<typeof writesOf>>;

  beforeAll(async () => {
    const services = t.app.cardline;
    for (const u of ['idem-patch', 'idem-unlock', 'idem-password', 'idem-remove']) await services.users.add('demo', u, 'Read-Only', 'idem-Passw0rd-1');
    for (const u of ['m-patch', 'm-unlock', 'm-password', 'm-remove']) await services.users.add('demo-b', u, 'Read-Only', 'idem-Passw0rd-1');
    const ids: Record<string, string> = {};
    const channel = async (path: string) => (await services.channels.create('demo', true, { type: 'webhook', url: `http://127.0.0.1:1/${path}`, eventTypes: ['*'] })).channelId;
    for (const c of ['patch', 'remove', 'rotate', 'test', 'replay']) ids[c] = await channel(c);
    ids.delivery = (await services.deliveries.test('demo', ids.test!)).deliveryId;
    for (const r of ['rulePatch', 'ruleRemove', 'rulePromote']) {
      ids[r] = (await services.authRules.create('demo', { name: r, conditions: [{ attribute: 'channel', operation: 'is-one-of', values: ['ATM'] }] }, 'admin')).ruleId;
    }
    // Keys a rotation replaced, for the retirements (encryption keys: the tokens in use stay valid).
    ids.retiring = (await services.keys.rotate('demo', 'enc', 3600)).replaced[0]!.kid;
    ids.retiringB = (await services.keys.rotate('demo-b', 'enc', 3600)).replaced[0]!.kid;
    await t.operatorKey('idem-revoked');
    // Requests held for approval: two of another maker (approved, rejected by the demo Admin), one of the Admin's own (cancelled).
    const held = async (maker: string, approvers: ('Admin' | 'Operator')[] = ['Admin']) =>
      (
        await services.approvals.create(
          'demo',
          'credit-limit.upgrade',
          { operation: 'credit-limit.upgrade', approvers, approvals: 1, expiresAfterSeconds: 3600 },
          { username: maker, role: 'Admin', token: `token-of-${maker}` },
          { method: 'POST', route: LIMIT_URL, path: LIMIT_URL, params: {}, body: { entityId: 'ENT-1001', amount: '51000.00' }, sealed: [] },
        )
      ).id;
    ids.approve = await held('idem-maker');
    ids.reject = await held('idem-maker');
    ids.cancel = await held('admin');
    // And two the operator decides on the management listener (the policy names Operator).
    ids.operatorApprove = await held('idem-maker', ['Operator']);
    ids.operatorReject = await held('idem-maker', ['Operator']);
    const jwk = async () => ({ ...(await exportJWK((await generateKeyPair('ECDH-ES+A256KW', { crv: 'P-256', extractable: true })).publicKey)) });
    recipes = recipesOf({ ids, jwkA: await jwk(), jwkB: await jwk() });
    writes = await writesOf();
  });

  it('each write has a request here, or is one docs/api.md names as not taking the key', () => {
    expect([...writes.operations.keys()].sort()).toEqual(Object.keys(recipes).sort());
    expect(writes.others).toEqual([...OUTSIDE_THE_TABLES].sort());
    const api = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');
    const section = api.slice(api.indexOf('## Idempotency keys'), api.indexOf('\n## ', api.indexOf('## Idempotency keys') + 1));
    const exempt = Object.entries(recipes).filter(([, r]) => r === EXEMPT).map(([id]) => writes.operations.get(id)!);
    for (const route of [...exempt.map((op) => `${op.method} ${op.url}`), ...OUTSIDE_THE_TABLES.map((w) => w.split(' ').slice(1).join(' '))]) {
      expect(section).toContain(`\`${route}\``);
    }
  });

  it('same key, same body: the first answer again, Idempotent-Replayed: true; same key, another body: 422', async () => {
    const failures: string[] = [];
    for (const [id, recipe] of Object.entries(recipes)) {
      if (recipe === EXEMPT) continue;
      const op = writes.operations.get(id)!;
      const listener: Listener = op.listener ?? 'public';
      const name = `${id} (${listener} ${op.method} ${op.url})`;
      const key = `every-write ${id}`;
      const first = await send(listener, { method: op.method, url: recipe.url, key, body: await recipe.body?.() });
      const second = await send(listener, { method: op.method, url: recipe.url, key, body: await recipe.body?.() });
      const outcome = `${name}: ${first.statusCode} then ${second.statusCode} replayed=${String(second.headers['idempotent-replayed'])}`;
      if (first.statusCode >= 500 || first.statusCode === 202 || first.headers['idempotent-replayed'] !== undefined) failures.push(`${outcome} (first: ${first.body})`);
      else if (second.headers['idempotent-replayed'] !== 'true' || second.statusCode !== first.statusCode || second.body !== first.body) failures.push(`${outcome} (${second.body})`);
      if (recipe.other) {
        const other = await send(listener, { method: op.method, url: recipe.url, key, body: await recipe.other() });
        const expected = op.dialect === 'envelope' ? reusedEnvelope : reusedProblem;
        if (other.statusCode !== 422 || JSON.stringify(other.json()) !== JSON.stringify(expected)) failures.push(`${name}, another body: ${other.statusCode} ${other.body}`);
      }
    }
    expect(failures).toEqual([]);
  });
});
