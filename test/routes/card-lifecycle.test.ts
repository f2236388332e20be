// The card lifecycle routes: activate, lock, unlock, block, card reads, preferences and the sandbox
// fulfilment helper. Whole bodies; every refusal leaves the core as it was; no response ever carries
// a full card number or a CVV.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { demoFixtures } from '../../connectors/mock/fixtures.js';
import type { Role } from '../../schemas/common.js';
import { mockCoreOf, PASSWORD, PROBLEM_BASE, UPGRADE_URL, createTestApp, type TestApp } from '../helpers/app.js';
import { findPans } from '../helpers/log-scan.js';
import { maskPan } from '../../connectors/shared/pan.js';

let t: TestApp;
beforeAll(async () => {
  // `live` is a tenant like any bank's: not a sandbox.
  t = await createTestApp({ tenants: [{ id: 'live', config: { connector: { id: 'mock', options: { fixtures: 'demo' } } } }] });
  for (const [username, role] of [['admin', 'Admin'], ['ops', 'Operations']] as const) {
    await t.app.cardline.users.add('live', username, role, PASSWORD);
  }
});
afterAll(() => t.close());

const mockCore = (tenant = 'demo') => mockCoreOf(t, tenant);

beforeEach(async () => {
  for (const tenant of ['demo', 'live']) Object.assign((await mockCore(tenant)).state, demoFixtures());
});

/** The fixture PAN (CARD-3001..3003 share it) as the gateway shows it. */
/** The demo cards' masked PANs: 4000000000030017, …0025, …0033. */
const panMaskedOf = (n: 1 | 2 | 3) => `400000******00${[17, 25, 33][n - 1]}`;

/** Every response body of this file, scanned for card numbers and CVVs at the end. */
const bodies: string[] = [];

interface Call {
  role?: Role;
  tenant?: string;
  payload?: unknown;
  headers?: Record<string, string>;
}

async function call(method: 'GET' | 'POST' | 'PUT', url: string, { role = 'Admin', tenant = 'demo', payload, headers = {} }: Call = {}) {
  const res = await t.inject({
    method,
    url,
    headers: { 'X-TENANT-ID': tenant, authorization: `Bearer ${await t.token(role, tenant)}`, ...headers },
    ...(payload === undefined ? {} : { payload: payload as string }),
  });
  bodies.push(res.body);
  return res;
}

/** Runs a request that must be refused and checks that the core's data did not change. */
async function refused(send: () => ReturnType<typeof call>, tenant = 'demo') {
  const core = await mockCore(tenant);
  const before = structuredClone(core.state);
  const res = await send();
  expect(core.state).toEqual(before);
  return res;
}

const business = (title: string, businessCode: string, detail: string) => ({
  type: `${PROBLEM_BASE}/problem-with-message`,
  title,
  status: 409,
  message: 'error.business',
  detail,
  businessCode,
});
const illegal = (detail: string) => business('Illegal Card Transition', 'CARD_STATE_INVALID', detail);

const constraintViolation = (objectName: string, ...fields: [field: string, message: string][]) => ({
  type: `${PROBLEM_BASE}/constraint-violation`,
  title: 'Method argument not valid',
  status: 400,
  message: 'error.validation',
  fieldErrors: fields.map(([field, message]) => ({ field, message, objectName })),
});

const forbidden = (role: Role) => ({
  type: `${PROBLEM_BASE}/problem-with-message`,
  title: 'Forbidden',
  status: 403,
  message: 'error.http.403',
  detail: `The role '${role}' may not call this operation.`,
});

const virtualCard = (n: 1 | 2 | 3, patch: Record<string, unknown> = {}) => ({
  cardId: `CARD-300${n}`,
  entityId: `ENT-100${n}`,
  form: 'VIRTUAL',
  state: 'ACTIVE',
  panMasked: panMaskedOf(n),
  ...patch,
});

const physicalCard = (patch: Record<string, unknown> = {}) =>
  virtualCard(1, { form: 'PHYSICAL', fulfilment: 'ORDERED', kitNo: 'KIT-2001', ...patch });

const operation = (message: string, card: unknown) => ({ result: { message, card }, pagination: null });

/** CARD-3001 of ENT-1001, upgraded with KIT-2001; lockOnUpgrade leaves it PENDING_ACTIVATION. */
async function upgradeCard3001(lockOnUpgrade: boolean) {
  const res = await call('PUT', UPGRADE_URL, {
    payload: { kitNo: 'KIT-2001', entityId: 'ENT-1001', communicationAddress: { usePrimaryAddress: true }, lockOnUpgrade },
  });
  expect(res.statusCode).toBe(200);
}

async function lock(cardId = 'CARD-3001') {
  const res = await call('POST', `/v1/cards/${cardId}/lock`);
  expect(res.statusCode).toBe(200);
}

async function block(cardId = 'CARD-3001', reasonCode = 'LOST') {
  const res = await call('POST', `/v1/cards/${cardId}/block`, { payload: { reasonCode } });
  expect(res.statusCode).toBe(200);
}

const LONG_ID = 'C'.repeat(65);

describe('POST /card/activate', () => {
  it.each([
    ['cardId', { cardId: 'CARD-3001' }],
    ['entityId', { entityId: 'ENT-1001' }],
    ['kitNo', { kitNo: 'KIT-2001' }],
  ])('activates a PENDING_ACTIVATION card named by %s → 200 with the card', async (_, payload) => {
    await upgradeCard3001(true);
    const res = await call('POST', '/card/activate', { role: 'Operations', payload });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(operation('Card CARD-3001 activated', physicalCard({ state: 'ACTIVE' })));
    expect((await mockCore()).state.cards.get('CARD-3001')?.state).toBe('ACTIVE');
  });

  it('an ACTIVE card → 409 CARD_STATE_INVALID, nothing changes', async () => {
    await upgradeCard3001(false);
    const res = await refused(() => call('POST', '/card/activate', { payload: { cardId: 'CARD-3001' } }));
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual(illegal('Card CARD-3001: only a PENDING_ACTIVATION card can be activated; this one is ACTIVE.'));
  });

  it('no identifier at all → 400 naming the three it accepts', async () => {
    const res = await refused(() => call('POST', '/card/activate', { payload: {} }));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(
      constraintViolation('cardActivationRequest', ['cardId', 'NotNull'], ['entityId', 'NotNull'], ['kitNo', 'NotNull']),
    );
    // No body at all is `{}`: every field of this body is optional (issue 20 point 12).
    const none = await refused(() => call('POST', '/card/activate'));
    expect(none.json()).toEqual(res.json());
  });

  it('wrong types, empty and over-long identifiers, unknown fields → 400 with each field', async () => {
    const res = await refused(() =>
      call('POST', '/card/activate', { payload: { cardId: '', entityId: 1001, kitNo: 'K'.repeat(65), pan: 'x' } }),
    );
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(
      constraintViolation(
        'cardActivationRequest',
        ['pan', 'UnknownProperty'],
        ['cardId', 'NotBlank'],
        ['entityId', 'TypeMismatch'],
        ['kitNo', 'Size'],
      ),
    );
  });

  it('an unknown card → 409 CARD_NOT_FOUND', async () => {
    const res = await refused(() => call('POST', '/card/activate', { payload: { cardId: 'CARD-9999' } }));
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual(business('Card Not Found', 'CARD_NOT_FOUND', 'Card CARD-9999 does not exist.'));
  });

  it('Read-Only → 403, nothing changes', async () => {
    await upgradeCard3001(true);
    const res = await refused(() => call('POST', '/card/activate', { role: 'Read-Only', payload: { cardId: 'CARD-3001' } }));
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual(forbidden('Read-Only'));
  });
});

describe('POST /v1/cards/{cardId}/lock, /unlock, /block', () => {
  it('lock: ACTIVE → LOCKED', async () => {
    const res = await call('POST', '/v1/cards/CARD-3001/lock', { role: 'API Integration' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(operation('Card CARD-3001 locked', virtualCard(1, { state: 'LOCKED' })));
    expect((await mockCore()).state.cards.get('CARD-3001')?.state).toBe('LOCKED');
  });

  it('lock with an empty JSON object as body is the same as no body', async () => {
    const res = await call('POST', '/v1/cards/CARD-3002/lock', { payload: {} });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(operation('Card CARD-3002 locked', virtualCard(2, { state: 'LOCKED' })));
  });

  it('unlock: LOCKED → ACTIVE', async () => {
    await lock();
    const res = await call('POST', '/v1/cards/CARD-3001/unlock', { role: 'Operations' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(operation('Card CARD-3001 unlocked', virtualCard(1)));
  });

  it('block: ACTIVE → BLOCKED with its reason', async () => {
    const res = await call('POST', '/v1/cards/CARD-3001/block', { payload: { reasonCode: 'STOLEN' } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(
      operation('Card CARD-3001 blocked permanently (STOLEN)', virtualCard(1, { state: 'BLOCKED', blockReason: 'STOLEN' })),
    );
  });

  it('block: LOCKED → BLOCKED', async () => {
    await lock();
    const res = await call('POST', '/v1/cards/CARD-3001/block', { payload: { reasonCode: 'FRAUD' } });
    expect(res.statusCode).toBe(200);
    expect(res.json().result.card).toEqual(virtualCard(1, { state: 'BLOCKED', blockReason: 'FRAUD' }));
  });

  it('unlock an ACTIVE card → 409, nothing changes', async () => {
    const res = await refused(() => call('POST', '/v1/cards/CARD-3001/unlock'));
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual(illegal('Card CARD-3001: only a LOCKED card can be unlocked; this one is ACTIVE.'));
  });

  it('lock a LOCKED card → 409', async () => {
    await lock();
    const res = await refused(() => call('POST', '/v1/cards/CARD-3001/lock'));
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual(illegal('Card CARD-3001: only an ACTIVE card can be locked; this one is LOCKED.'));
  });

  it('lock a PENDING_ACTIVATION card → 409', async () => {
    await upgradeCard3001(true);
    const res = await refused(() => call('POST', '/v1/cards/CARD-3001/lock'));
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual(illegal('Card CARD-3001: only an ACTIVE card can be locked; this one is PENDING_ACTIVATION.'));
  });

  describe('anything on a BLOCKED card → 409, nothing changes', () => {
    const attempts: [string, 'POST' | 'PUT', string, unknown][] = [
      ['lock', 'POST', '/v1/cards/CARD-3001/lock', undefined],
      ['unlock', 'POST', '/v1/cards/CARD-3001/unlock', undefined],
      ['block again', 'POST', '/v1/cards/CARD-3001/block', { reasonCode: 'FRAUD' }],
      ['activate', 'POST', '/card/activate', { cardId: 'CARD-3001' }],
      ['update preferences', 'PUT', '/v1/cards/CARD-3001/preferences', { domestic: { enabled: true } }],
    ];
    it.each(attempts)('%s', async (_, method, url, payload) => {
      await block();
      const res = await refused(() => call(method, url, { payload }));
      expect(res.statusCode).toBe(409);
      expect(res.json()).toEqual(illegal('Card CARD-3001: the card is blocked permanently.'));
    });
  });

  it.each(['lock', 'unlock'])('%s an unknown card → 409 CARD_NOT_FOUND', async (verb) => {
    const res = await refused(() => call('POST', `/v1/cards/CARD-9999/${verb}`));
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual(business('Card Not Found', 'CARD_NOT_FOUND', 'Card CARD-9999 does not exist.'));
  });

  it('block an unknown card → 409 CARD_NOT_FOUND', async () => {
    const res = await refused(() => call('POST', '/v1/cards/CARD-9999/block', { payload: { reasonCode: 'LOST' } }));
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual(business('Card Not Found', 'CARD_NOT_FOUND', 'Card CARD-9999 does not exist.'));
  });

  it.each([
    ['missing', {}, [['reasonCode', 'NotNull']]],
    ['not one of the reasons', { reasonCode: 'BORED' }, [['reasonCode', 'Invalid']]],
    ['lower case', { reasonCode: 'lost' }, [['reasonCode', 'Invalid']]],
    ['a number', { reasonCode: 3 }, [['reasonCode', 'TypeMismatch'], ['reasonCode', 'Invalid']]],
    ['with an unknown field', { reasonCode: 'LOST', note: 'x' }, [['note', 'UnknownProperty']]],
  ] as [string, unknown, [string, string][]][])('block: reasonCode %s → 400', async (_, payload, fields) => {
    const res = await refused(() => call('POST', '/v1/cards/CARD-3001/block', { payload }));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(constraintViolation('cardBlockRequest', ...fields));
  });

  it('block without a body → 400', async () => {
    const res = await refused(() => call('POST', '/v1/cards/CARD-3001/block'));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(constraintViolation('cardBlockRequest', ['body', 'TypeMismatch']));
  });

  it.each([
    ['an unknown field', { reason: 'x' }, [['reason', 'UnknownProperty']]],
    ['an array', [], [['body', 'TypeMismatch']]],
  ] as [string, unknown, [string, string][]][])('lock with %s as body → 400, not ignored', async (_, payload, fields) => {
    const res = await refused(() => call('POST', '/v1/cards/CARD-3001/lock', { payload }));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(constraintViolation('cardLockRequest', ...fields));
  });

  it.each([
    ['lock', 'cardLockRequest'],
    ['unlock', 'cardUnlockRequest'],
  ])('%s: a card id longer than 64 characters → 400 Size', async (verb, objectName) => {
    const res = await refused(() => call('POST', `/v1/cards/${LONG_ID}/${verb}`));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(constraintViolation(objectName, ['cardId', 'Size']));
  });

  it('block: an empty card id → 400 NotBlank, before the body is read', async () => {
    const res = await refused(() => call('POST', '/v1/cards//block', { payload: { reasonCode: 'nope' } }));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(constraintViolation('cardBlockRequest', ['cardId', 'NotBlank']));
  });

  it.each([
    ['lock', undefined],
    ['unlock', undefined],
    ['block', { reasonCode: 'LOST' }],
  ])('%s as Read-Only → 403, nothing changes', async (verb, payload) => {
    const res = await refused(() => call('POST', `/v1/cards/CARD-3001/${verb}`, { role: 'Read-Only', payload }));
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual(forbidden('Read-Only'));
  });

  it('a lock retried with the same Idempotency-Key answers the first 200 again, not 409', async () => {
    const headers = { 'idempotency-key': 'lock-3002-retry' };
    const first = await call('POST', '/v1/cards/CARD-3002/lock', { headers });
    const retry = await call('POST', '/v1/cards/CARD-3002/lock', { headers });
    expect(first.statusCode).toBe(200);
    expect(retry.statusCode).toBe(200);
    expect(retry.json()).toEqual(operation('Card CARD-3002 locked', virtualCard(2, { state: 'LOCKED' })));
    const fresh = await call('POST', '/v1/cards/CARD-3002/lock', { headers: { 'idempotency-key': 'lock-3002-again' } });
    expect(fresh.statusCode).toBe(409);
  });

  it('each write is in the audit trail with who, what and on which card', async () => {
    await call('POST', '/v1/cards/CARD-3003/lock', { role: 'Operations' });
    await call('POST', '/v1/cards/CARD-3003/block', { role: 'Operations', payload: { reasonCode: 'DAMAGED' } });
    const r = await t.db.query<{ actor: string; role: string; action: string; target: unknown; outcome: string; status: number }>(
      `SELECT actor, role, action, target, outcome, status FROM audit_log
        WHERE tenant_id = 'demo' AND target->>'cardId' = 'CARD-3003' ORDER BY seq`,
    );
    expect(r.rows).toEqual([
      { actor: 'ops', role: 'Operations', action: 'card.lock', target: { cardId: 'CARD-3003' }, outcome: 'succeeded', status: 200 },
      {
        actor: 'ops',
        role: 'Operations',
        action: 'card.block',
        target: { cardId: 'CARD-3003', reasonCode: 'DAMAGED' },
        outcome: 'succeeded',
        status: 200,
      },
    ]);
  });
});

describe('card reads', () => {
  it('GET /v1/entities/{entityId}/cards → the entity cards, PAN masked', async () => {
    await upgradeCard3001(true);
    const res = await call('GET', '/v1/entities/ENT-1001/cards', { role: 'Read-Only' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ result: [physicalCard({ state: 'PENDING_ACTIVATION' })], pagination: null });
  });

  it('an unknown entity → 409 ENTITY_NOT_FOUND', async () => {
    const res = await call('GET', '/v1/entities/ENT-9999/cards');
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual(business('Entity Not Found', 'ENTITY_NOT_FOUND', 'Entity ENT-9999 does not exist.'));
  });

  it('GET /v1/cards/{cardId} → the card with its masked PAN; no PAN, CVV or expiry', async () => {
    await block('CARD-3002', 'CUSTOMER_REQUEST');
    const res = await call('GET', '/v1/cards/CARD-3002', { role: 'Read-Only' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      result: virtualCard(2, { state: 'BLOCKED', blockReason: 'CUSTOMER_REQUEST' }),
      pagination: null,
    });
    const card = (await mockCore()).state.cards.get('CARD-3002')!;
    expect(res.body).not.toContain(card.pan);
    expect(res.body).not.toMatch(new RegExp(`"${card.cvv}"|\\b${card.cvv}\\b`));
    expect(res.body).not.toContain(card.expiry);
  });

  it('a physical card read shows its plastic, fulfilment and preferences', async () => {
    const preferences = { domestic: { enabled: true, atm: { enabled: true, dailyLimit: '500.00', dailyCount: 5 } } };
    const ok = await call('PUT', UPGRADE_URL, {
      payload: {
        kitNo: 'KIT-2001',
        entityId: 'ENT-1001',
        communicationAddress: { usePrimaryAddress: true },
        plasticCodeDto: { code: 'GOLD', description: 'Gold plastic' },
        preferences,
      },
    });
    expect(ok.statusCode).toBe(200);
    const res = await call('GET', '/v1/cards/CARD-3001');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      result: physicalCard({ plasticCode: { code: 'GOLD', description: 'Gold plastic' }, preferences }),
      pagination: null,
    });
  });

  it('an unknown card → 409 CARD_NOT_FOUND', async () => {
    const res = await call('GET', '/v1/cards/CARD-9999');
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual(business('Card Not Found', 'CARD_NOT_FOUND', 'Card CARD-9999 does not exist.'));
  });

  it.each([
    ['/v1/cards/' + LONG_ID, 'cardRequest', 'cardId'],
    ['/v1/entities/' + 'E'.repeat(65) + '/cards', 'cardListRequest', 'entityId'],
    ['/v1/cards/' + LONG_ID + '/preferences', 'cardPreferencesRequest', 'cardId'],
  ])('GET %s → 400 Size', async (url, objectName, field) => {
    const res = await call('GET', url);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(constraintViolation(objectName, [field, 'Size']));
  });

  it('reads are audited too, with the card read', async () => {
    await call('GET', '/v1/cards/CARD-3003', { role: 'Read-Only' });
    const r = await t.db.query<{ actor: string; action: string; target: unknown }>(
      `SELECT actor, action, target FROM audit_log WHERE tenant_id = 'demo' AND action = 'card.read' AND target->>'cardId' = 'CARD-3003'`,
    );
    expect(r.rows).toEqual([{ actor: 'viewer', action: 'card.read', target: { cardId: 'CARD-3003' } }]);
  });
});

describe('preferences', () => {
  const stored = {
    domestic: { enabled: true, pos: { enabled: true, dailyLimit: '2000.00', dailyCount: 20 } },
    international: {
      enabled: false,
      atm: { enabled: true, dailyLimit: '300.00', dailyCount: 3 },
      ecom: { enabled: false },
    },
  };
  // What applies: the channels a category does not name are off once it names one (decision 0176).
  const effective = {
    domestic: { ...stored.domestic, atm: { enabled: false }, ecom: { enabled: false }, contactless: { enabled: false } },
    international: {
      enabled: false,
      atm: { enabled: false, dailyLimit: '300.00', dailyCount: 3 },
      ecom: { enabled: false },
      pos: { enabled: false },
      contactless: { enabled: false },
    },
  };

  it('PUT replaces them and answers what is stored and what applies (international switched off)', async () => {
    const res = await call('PUT', '/v1/cards/CARD-3001/preferences', { role: 'API Integration', payload: stored });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      result: { message: 'Preferences of card CARD-3001 updated', cardId: 'CARD-3001', preferences: stored, effective },
      pagination: null,
    });
    expect((await mockCore()).state.cards.get('CARD-3001')?.preferences).toEqual(stored);
  });

  it('GET answers the same to Read-Only; switching international back on restores the channel settings', async () => {
    await call('PUT', '/v1/cards/CARD-3001/preferences', { payload: stored });
    const res = await call('GET', '/v1/cards/CARD-3001/preferences', { role: 'Read-Only' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ result: { cardId: 'CARD-3001', preferences: stored, effective }, pagination: null });

    const on = { ...stored, international: { ...stored.international, enabled: true } };
    const again = await call('PUT', '/v1/cards/CARD-3001/preferences', { payload: on });
    expect(again.json().result.effective).toEqual({
      domestic: effective.domestic,
      international: { ...on.international, pos: { enabled: false }, contactless: { enabled: false } },
    });
  });

  it('domestic.enabled false gates the domestic channels the same way', async () => {
    const prefs = { domestic: { enabled: false, contactless: { enabled: true } } };
    const res = await call('PUT', '/v1/cards/CARD-3002/preferences', { payload: prefs });
    expect(res.json().result).toEqual({
      message: 'Preferences of card CARD-3002 updated',
      cardId: 'CARD-3002',
      preferences: prefs,
      effective: { domestic: { enabled: false, contactless: { enabled: false }, atm: { enabled: false }, pos: { enabled: false }, ecom: { enabled: false } } },
    });
  });

  it('a card with none set → empty preferences', async () => {
    const res = await call('GET', '/v1/cards/CARD-3003/preferences');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ result: { cardId: 'CARD-3003', preferences: {}, effective: {} }, pagination: null });
  });

  it.each([
    ['a float limit', { domestic: { atm: { enabled: true, dailyLimit: 100.5 } } }, [['domestic.atm.dailyLimit', 'TypeMismatch']]],
    ['three decimals', { domestic: { atm: { enabled: true, dailyLimit: '1.234' } } }, [['domestic.atm.dailyLimit', 'DecimalAmount']]],
    ['a negative count', { international: { pos: { enabled: true, dailyCount: -1 } } }, [['international.pos.dailyCount', 'Min']]],
    ['a channel without enabled', { domestic: { ecom: { dailyLimit: '10.00' } } }, [['domestic.ecom.enabled', 'NotNull']]],
    ['an unknown channel', { domestic: { wire: { enabled: true } } }, [['domestic.wire', 'UnknownProperty']]],
    ['an unknown category', { regional: {} }, [['regional', 'UnknownProperty']]],
    ['enabled as a string', { international: { enabled: 'false' } }, [['international.enabled', 'TypeMismatch']]],
  ] as [string, unknown, [string, string][]][])('PUT with %s → 400, nothing changes', async (_, payload, fields) => {
    const res = await refused(() => call('PUT', '/v1/cards/CARD-3001/preferences', { payload }));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(constraintViolation('cardPreferences', ...fields));
  });

  it('PUT as Read-Only → 403, nothing changes', async () => {
    const res = await refused(() => call('PUT', '/v1/cards/CARD-3001/preferences', { role: 'Read-Only', payload: stored }));
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual(forbidden('Read-Only'));
  });

  it.each(['GET', 'PUT'] as const)('%s on an unknown card → 409 CARD_NOT_FOUND', async (method) => {
    const res = await refused(() => call(method, '/v1/cards/CARD-9999/preferences', { payload: method === 'PUT' ? stored : undefined }));
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual(business('Card Not Found', 'CARD_NOT_FOUND', 'Card CARD-9999 does not exist.'));
  });
});

describe('POST /v1/sandbox/cards/{cardId}/fulfilment/advance', () => {
  const url = '/v1/sandbox/cards/CARD-3001/fulfilment/advance';

  it('walks a physical card ORDERED → EMBOSSED → DISPATCHED → DELIVERED, then refuses', async () => {
    await upgradeCard3001(false);
    for (const step of ['EMBOSSED', 'DISPATCHED', 'DELIVERED']) {
      const res = await call('POST', url, { role: 'Operations' });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual(
        operation(`Card CARD-3001 fulfilment advanced to ${step}`, physicalCard({ state: 'ACTIVE', fulfilment: step })),
      );
    }
    const res = await refused(() => call('POST', url));
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual(illegal('Card CARD-3001: the card is already DELIVERED.'));
  });

  it('a virtual card has no fulfilment → 409', async () => {
    const res = await refused(() => call('POST', url));
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual(illegal('Card CARD-3001: only a physical card has a fulfilment to advance.'));
  });

  it('a BLOCKED card → 409', async () => {
    await upgradeCard3001(false);
    await block();
    const res = await refused(() => call('POST', url));
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual(illegal('Card CARD-3001: the card is blocked permanently.'));
  });

  it('a tenant that is not a sandbox → 404, as if the route did not exist; nothing changes', async () => {
    const core = await mockCore('live');
    core.state.cards.get('CARD-3001')!.form = 'PHYSICAL';
    core.state.cards.get('CARD-3001')!.fulfilment = 'ORDERED';
    const res = await refused(() => call('POST', url, { tenant: 'live' }), 'live');
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({
      type: `${PROBLEM_BASE}/problem-with-message`,
      title: 'Not Found',
      status: 404,
      message: 'error.http.404',
      detail: `No route POST ${url}.`,
    });
    const unknown = await call('POST', '/v1/sandbox/cards/CARD-3001/fulfilment/rewind', { tenant: 'live' });
    expect(unknown.json()).toEqual({ ...res.json(), detail: 'No route POST /v1/sandbox/cards/CARD-3001/fulfilment/rewind.' });
  });

  it('Read-Only → 403', async () => {
    await upgradeCard3001(false);
    const res = await refused(() => call('POST', url, { role: 'Read-Only' }));
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual(forbidden('Read-Only'));
  });

  it('a body is refused, a long card id too', async () => {
    const body = await refused(() => call('POST', url, { payload: { step: 'DELIVERED' } }));
    expect(body.json()).toEqual(constraintViolation('fulfilmentAdvanceRequest', ['step', 'UnknownProperty']));
    const long = await call('POST', `/v1/sandbox/cards/${LONG_ID}/fulfilment/advance`);
    expect(long.json()).toEqual(constraintViolation('fulfilmentAdvanceRequest', ['cardId', 'Size']));
  });
});

describe('no response carries a card number or a CVV', () => {
  it('every body of this file is free of Luhn-valid 13-19 digit runs and of the fixture CVVs', () => {
    expect(bodies.length).toBeGreaterThan(50);
    const all = bodies.join('\n');
    expect(findPans(all)).toEqual([]);
    const cvvs = [...demoFixtures().cards.values()].map((c) => c.cvv);
    for (const cvv of cvvs) expect(all).not.toMatch(new RegExp(`"cvv"|(?<!\\d)${cvv}(?!\\d)`));
  });

  it('the gateway masks again whatever a connector sends as panMasked', () => {
    expect(maskPan('4000000000030017')).toBe('400000******0017');
    expect(maskPan('4000001234567899017')).toBe('400000*********9017');
    expect(maskPan('400000******0017')).toBe('400000******0017');
    expect(maskPan('123456')).toBe('**3456');
    expect(findPans(maskPan('4111111111111111'))).toEqual([]);
  });

  it('the scan itself finds a PAN where there is one', () => {
    expect(findPans(JSON.stringify({ pan: demoFixtures().cards.get('CARD-3001')!.pan }))).toEqual(['4000000000030017']);
  });
});
