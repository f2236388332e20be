// Validation rejects; it never strips, coerces or defaults its way to a different request. Every
// rejected request leaves the core's data exactly as it was.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { demoFixtures } from '../../connectors/mock/fixtures.js';
import { mockCoreOf, LIMIT_URL, PASSWORD, PROBLEM_BASE, UPGRADE_URL, createTestApp, type TestApp } from '../helpers/app.js';
import { problem } from '../helpers/problems.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({
    // Same product as demo but decreases allowed, so that small amounts can be shown to pass validation.
    tenants: [{ id: 'lenient', config: { creditLimit: { maximum: '1000000.00', allowDecrease: true } } }],
  });
  await t.app.cardline.users.add('lenient', 'admin', 'Admin', PASSWORD);
});
afterAll(() => t.close());

const mockCore = (tenant = 'demo') => mockCoreOf(t, tenant);

beforeEach(async () => {
  for (const tenant of ['demo', 'lenient']) Object.assign((await mockCore(tenant)).state, demoFixtures());
});

const CARD_OBJECT = 'physicalCardUpgradeRequest';

const envelope400 = (detailMessage: string) => ({
  result: null,
  exception: { errorCode: 'ERR_400', shortMessage: 'Bad Request', detailMessage },
  pagination: null,
});

const constraintViolation = (...fields: [field: string, message: string][]) => ({
  type: `${PROBLEM_BASE}/constraint-violation`,
  title: 'Method argument not valid',
  status: 400,
  message: 'error.validation',
  fieldErrors: fields.map(([field, message]) => ({ field, message, objectName: CARD_OBJECT })),
});

interface Sent {
  payload?: unknown;
  headers?: Record<string, string>;
  tenant?: string;
}

async function limit({ payload, headers = {}, tenant = 'demo' }: Sent) {
  return t.inject({
    method: 'POST',
    url: LIMIT_URL,
    headers: { TENANT: tenant, authorization: `Bearer ${await t.token('Admin', tenant)}`, ...headers },
    ...(payload === undefined ? {} : { payload: payload as string }),
  });
}

async function upgrade({ payload, headers = {}, tenant = 'demo' }: Sent) {
  return t.inject({
    method: 'PUT',
    url: UPGRADE_URL,
    headers: { 'X-TENANT-ID': tenant, authorization: `Bearer ${await t.token('Admin', tenant)}`, ...headers },
    ...(payload === undefined ? {} : { payload: payload as string }),
  });
}

/** Runs a request that must be refused and checks that the core's data did not change. */
async function refused(send: () => ReturnType<typeof limit>, tenant = 'demo') {
  const core = await mockCore(tenant);
  const before = structuredClone(core.state);
  const res = await send();
  expect(core.state).toEqual(before);
  return res;
}

describe('credit line: the body', () => {
  it('an unknown top-level property → 400, not stripped', async () => {
    const res = await refused(() => limit({ payload: { entityId: 'ENT-1001', amount: '60000.00', currency: 'EUR' } }));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(envelope400('currency is not a known field'));
  });

  it('amount as a number (50000) → 400, not coerced', async () => {
    const res = await refused(() => limit({ payload: { entityId: 'ENT-1001', amount: 60000 } }));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(envelope400('amount has the wrong type: send a decimal string such as "75000.00", not a number'));
  });

  it('amount as a float (60000.5) → 400', async () => {
    const res = await refused(() => limit({ payload: { entityId: 'ENT-1001', amount: 60000.5 } }));
    expect(res.json()).toEqual(envelope400('amount has the wrong type: send a decimal string such as "75000.00", not a number'));
  });

  it('entityId as a number → 400', async () => {
    const res = await refused(() => limit({ payload: { entityId: 1001, amount: '60000.00' } }));
    expect(res.json()).toEqual(envelope400('entityId has the wrong type'));
  });

  it('both fields missing → 400 naming both', async () => {
    const res = await refused(() => limit({ payload: {} }));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(envelope400('entityId is required; amount is required'));
  });

  it.each(['0', '0.00', '-1', '1.234', '1e5', ' 100', '100 ', '1,000.00', '', '.50', '1.', '+1', '0x10', '1000000000000000.00'])(
    'amount %j → 400',
    async (amount) => {
      const res = await refused(() => limit({ payload: { entityId: 'ENT-1001', amount } }));
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual(envelope400('amount must be a positive decimal string with at most two decimals'));
    },
  );

  it.each([
    ['0.01', 1n],
    ['1', 100n],
    ['999999.99', 99_999_999n],
    ['1000000.00', 100_000_000n],
  ])('amount %j is accepted (200) and stored exactly', async (amount, minor) => {
    // On the lenient tenant: demo refuses decreases, which is a product rule, not validation.
    const res = await limit({ payload: { entityId: 'ENT-1001', amount }, tenant: 'lenient' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ result: true, exception: null, pagination: null });
    expect((await mockCore('lenient')).state.entities.get('ENT-1001')?.creditLimitMinor).toBe(minor);
  });

  it('the product maximum itself (1000000.00) is accepted on demo', async () => {
    const res = await limit({ payload: { entityId: 'ENT-1001', amount: '1000000.00' } });
    expect(res.statusCode).toBe(200);
    expect((await mockCore()).state.entities.get('ENT-1001')?.creditLimitMinor).toBe(100_000_000n);
  });

  it('1000000.01, above the product maximum → 400 with a clear detailMessage', async () => {
    const res = await refused(() => limit({ payload: { entityId: 'ENT-1001', amount: '1000000.01' } }));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(envelope400('The amount 1000000.01 exceeds the product maximum of 1000000.00.'));
  });

  it('a decrease below 50000.00 → 400 (the demo product refuses decreases)', async () => {
    const res = await refused(() => limit({ payload: { entityId: 'ENT-1001', amount: '49999.99' } }));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(
      envelope400('The product does not allow lowering the limit of ENT-1001 from 50000.00 to 49999.99.'),
    );
  });

  it('the same amount as the current limit is not a decrease → 200', async () => {
    const res = await limit({ payload: { entityId: 'ENT-1001', amount: '50000' } });
    expect(res.statusCode).toBe(200);
  });

  it('an unknown entity → 404 ERR_404', async () => {
    const res = await refused(() => limit({ payload: { entityId: 'ENT-9999', amount: '60000.00' } }));
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({
      result: null,
      exception: { errorCode: 'ERR_404', shortMessage: 'Not Found', detailMessage: 'Entity ENT-9999 does not exist.' },
      pagination: null,
    });
  });
});

describe('card upgrade: the body', () => {
  const valid = { kitNo: 'KIT-2001', entityId: 'ENT-1001' };

  it('an unknown top-level property → 400 UnknownProperty, not stripped', async () => {
    const res = await refused(() => upgrade({ payload: { ...valid, cvv: '123' } }));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(constraintViolation(['cvv', 'UnknownProperty']));
  });

  it('lockOnUpgrade "true" (a string) → 400 TypeMismatch, not coerced', async () => {
    const res = await refused(() => upgrade({ payload: { ...valid, lockOnUpgrade: 'true' } }));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(constraintViolation(['lockOnUpgrade', 'TypeMismatch']));
  });

  it('kitNo as a number → 400 TypeMismatch', async () => {
    const res = await refused(() => upgrade({ payload: { kitNo: 2001, entityId: 'ENT-1001' } }));
    expect(res.json()).toEqual(constraintViolation(['kitNo', 'TypeMismatch']));
  });

  it('an unknown property inside communicationAddress → 400 communicationAddress.foo', async () => {
    const res = await refused(() => upgrade({ payload: { ...valid, communicationAddress: { usePrimaryAddress: true, foo: 'x' } } }));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(constraintViolation(['communicationAddress.foo', 'UnknownProperty']));
  });

  it('usePrimaryAddress "true" (a string) → 400 TypeMismatch', async () => {
    const res = await refused(() => upgrade({ payload: { ...valid, communicationAddress: { usePrimaryAddress: 'true' } } }));
    expect(res.json()).toEqual(constraintViolation(['communicationAddress.usePrimaryAddress', 'TypeMismatch']));
  });

  it('an unknown property deep inside preferences → 400 with its path', async () => {
    const res = await refused(() =>
      upgrade({ payload: { ...valid, preferences: { domestic: { atm: { enabled: true, perTxn: '10.00' } } } } }),
    );
    expect(res.json()).toEqual(constraintViolation(['preferences.domestic.atm.perTxn', 'UnknownProperty']));
  });

  it('a preference dailyLimit as a number → 400 TypeMismatch', async () => {
    const res = await refused(() =>
      upgrade({ payload: { ...valid, preferences: { international: { enabled: false, ecom: { enabled: true, dailyLimit: 100 } } } } }),
    );
    expect(res.json()).toEqual(constraintViolation(['preferences.international.ecom.dailyLimit', 'TypeMismatch']));
  });

  it('communicationAddress without usePrimaryAddress and no lines → 400 NotNull for address1, city, state, country, pin', async () => {
    const res = await refused(() => upgrade({ payload: { ...valid, communicationAddress: {} } }));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(
      constraintViolation(
        ['communicationAddress.address1', 'NotNull'],
        ['communicationAddress.city', 'NotNull'],
        ['communicationAddress.state', 'NotNull'],
        ['communicationAddress.country', 'NotNull'],
        ['communicationAddress.pin', 'NotNull'],
      ),
    );
  });

  it('usePrimaryAddress false with only address1 and city → 400 NotNull for state, country, pin', async () => {
    const res = await refused(() =>
      upgrade({ payload: { ...valid, communicationAddress: { usePrimaryAddress: false, address1: '1 Rua Augusta', city: 'Lisbon' } } }),
    );
    expect(res.json()).toEqual(
      constraintViolation(
        ['communicationAddress.state', 'NotNull'],
        ['communicationAddress.country', 'NotNull'],
        ['communicationAddress.pin', 'NotNull'],
      ),
    );
  });

  it('address2 alone is not enough → 400 NotNull for the five required fields', async () => {
    const res = await refused(() => upgrade({ payload: { ...valid, communicationAddress: { address2: 'Floor 2' } } }));
    expect(res.json().fieldErrors.map((e: { field: string }) => e.field)).toEqual([
      'communicationAddress.address1',
      'communicationAddress.city',
      'communicationAddress.state',
      'communicationAddress.country',
      'communicationAddress.pin',
    ]);
  });

  it('usePrimaryAddress true and nothing else → 200, the primary address is used', async () => {
    const res = await upgrade({ payload: { ...valid, communicationAddress: { usePrimaryAddress: true } } });
    expect(res.statusCode).toBe(200);
    const card = (await mockCore()).state.cards.get('CARD-3001');
    expect(card?.deliveryAddress).toEqual({ address1: '10 Demo Street', city: 'Lisbon', state: 'Demo', country: 'PT', pin: '1000-001' });
  });

  it('a complete address → 200, that address is used', async () => {
    const address = { address1: '1 Rua Augusta', address2: 'Floor 2', city: 'Lisbon', state: 'Lisboa', country: 'PT', pin: '1100-048' };
    const res = await upgrade({ payload: { ...valid, communicationAddress: address } });
    expect(res.statusCode).toBe(200);
    expect((await mockCore()).state.cards.get('CARD-3001')?.deliveryAddress).toEqual(address);
  });
});

describe('the body as a whole (both dialects)', () => {
  const routes = [
    {
      name: 'credit line',
      send: limit,
      expect400: (detail: string) => envelope400(detail),
      typeMismatch: envelope400('body has the wrong type'),
      expect415: {
        result: null,
        exception: {
          errorCode: 'ERR_415',
          shortMessage: 'Unsupported Media Type',
          detailMessage: "Content-Type 'text/plain' is not accepted; send application/json.",
        },
        pagination: null,
      },
    },
    {
      name: 'card upgrade',
      send: upgrade,
      expect400: (detail: string) => problem(400, 'Bad Request', detail),
      typeMismatch: constraintViolation(['body', 'TypeMismatch']),
      expect415: problem(415, 'Unsupported Media Type', "Content-Type 'text/plain' is not accepted; send application/json."),
    },
  ];

  const TOO_LARGE = 'The request body is larger than 65536 bytes (CARDLINE_BODY_LIMIT).';
  it.each([
    { ...routes[0]!, expect413: { result: null, exception: { errorCode: 'ERR_413', shortMessage: 'Payload Too Large', detailMessage: TOO_LARGE }, pagination: null } },
    { ...routes[1]!, expect413: problem(413, 'Payload Too Large', TOO_LARGE) },
  ])('$name: a body over the limit → 413 naming the limit and its variable', async ({ send, expect413 }) => {
    const body = JSON.stringify({ entityId: 'ENT-1001', amount: '60000.00', kitNo: 'KIT-2001', note: 'x'.repeat(70_000) });
    const res = await refused(() => send({ payload: body, headers: { 'content-type': 'application/json' } }));
    expect(res.statusCode).toBe(413);
    expect(res.json()).toEqual(expect413);
  });

  it.each(routes)('$name: a body that is not JSON → 400', async ({ send, expect400 }) => {
    const res = await refused(() => send({ payload: '{"entityId": "ENT-1001", ', headers: { 'content-type': 'application/json' } }));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(expect400('The request body is not valid JSON.'));
  });

  it.each(routes)('$name: Content-Type text/plain → 415', async ({ send, expect415 }) => {
    const res = await refused(() =>
      send({ payload: JSON.stringify({ entityId: 'ENT-1001', amount: '60000.00' }), headers: { 'content-type': 'text/plain' } }),
    );
    expect(res.statusCode).toBe(415);
    expect(res.json()).toEqual(expect415);
  });

  it.each(routes)('$name: an empty JSON body → 400', async ({ send, expect400 }) => {
    const res = await refused(() => send({ payload: '', headers: { 'content-type': 'application/json' } }));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(expect400('The request body is empty; send a JSON object.'));
  });

  it.each(routes)('$name: no body at all → 400', async ({ send, typeMismatch }) => {
    const res = await refused(() => send({}));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(typeMismatch);
  });

  it.each(routes)('$name: a JSON array body → 400', async ({ send, typeMismatch }) => {
    const res = await refused(() => send({ payload: JSON.stringify([{ entityId: 'ENT-1001', amount: '60000.00' }]), headers: { 'content-type': 'application/json' } }));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(typeMismatch);
  });

  it.each(routes)('$name: JSON null → 400', async ({ send, typeMismatch }) => {
    const res = await refused(() => send({ payload: 'null', headers: { 'content-type': 'application/json' } }));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(typeMismatch);
  });
});
