// Identifiers, names and address lines refuse C0 and C1 control characters with a field error (issue 20: an
// entity id "Acme Ltd\n=2+5" reached a CSV report, where the line break started a row with a formula); text
// outside the Latin alphabet is still welcome. Nothing is created or changed by a refused request.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoFixtures } from '../../connectors/mock/fixtures.js';
import type { MockCore } from '../../connectors/mock/index.js';
import { LIMIT_URL, UPGRADE_URL, createTestApp, type TestApp } from '../helpers/app.js';
import { validationProblem } from '../helpers/problems.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t?.close());

const mockCore = async (): Promise<MockCore> =>
  (await t.app.cardline.connectors.forTenant((await t.app.cardline.tenants.get('demo'))!)) as unknown as MockCore;

const send = async (method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown) =>
  t.inject({
    method,
    url,
    headers: { 'X-TENANT-ID': 'demo', authorization: `Bearer ${await t.token('Admin')}` },
    ...(payload === undefined ? {} : { payload: payload as object }),
  });

const ADDRESS = { address1: '5 Rua Augusta', city: 'Lisbon', state: 'Lisboa', country: 'PT', pin: '1100-048' };
const REGISTRATION = { name: 'Oficina Lda', type: 'BUSINESS', contact: { email: 'f@oficina.example', mobile: '+351912345678' }, primaryAddress: ADDRESS, creditLimit: '25000.00' };
const MERCHANT = { name: 'Cafe', mcc: '5814', country: 'PT' };

// One C0 or C1 character each: LF and CR (a new row in a spreadsheet), TAB, DEL, NEL (U+0085), U+009F. (NUL is
// refused before validation, for the whole body.)
const CASES: { what: string; method: 'GET' | 'POST' | 'PUT'; url: string; payload?: unknown; objectName: string; field: string }[] = [
  { what: "the issue's entity id", method: 'POST', url: '/v1/entities', payload: { ...REGISTRATION, entityId: 'Acme Ltd\n=2+5' }, objectName: 'entityRegistrationRequest', field: 'entityId' },
  { what: 'an entity name (CR)', method: 'POST', url: '/v1/entities', payload: { ...REGISTRATION, name: 'Oficina\r=1+1' }, objectName: 'entityRegistrationRequest', field: 'name' },
  { what: 'an entity name (NEL, C1)', method: 'POST', url: '/v1/entities', payload: { ...REGISTRATION, name: 'Oficina\u0085Lda' }, objectName: 'entityRegistrationRequest', field: 'name' },
  { what: 'an address line', method: 'POST', url: '/v1/entities', payload: { ...REGISTRATION, primaryAddress: { ...ADDRESS, address1: '5 Rua\n=1+1' } }, objectName: 'entityRegistrationRequest', field: 'primaryAddress.address1' },
  { what: 'a city (TAB)', method: 'POST', url: '/v1/entities', payload: { ...REGISTRATION, primaryAddress: { ...ADDRESS, city: '\tLisbon' } }, objectName: 'entityRegistrationRequest', field: 'primaryAddress.city' },
  { what: 'a postal code (U+009F)', method: 'POST', url: '/v1/entities', payload: { ...REGISTRATION, primaryAddress: { ...ADDRESS, pin: '1100\u009f' } }, objectName: 'entityRegistrationRequest', field: 'primaryAddress.pin' },
  { what: 'a kit number (DEL)', method: 'PUT', url: UPGRADE_URL, payload: { kitNo: 'KIT\u007f2001', entityId: 'ENT-1001' }, objectName: 'physicalCardUpgradeRequest', field: 'kitNo' },
  { what: 'a communication address line', method: 'PUT', url: UPGRADE_URL, payload: { kitNo: 'KIT-2001', entityId: 'ENT-1001', communicationAddress: { ...ADDRESS, address2: 'Loja\n2' } }, objectName: 'physicalCardUpgradeRequest', field: 'communicationAddress.address2' },
  { what: 'a card id in the path (LF)', method: 'GET', url: '/v1/cards/CARD%0A3001', objectName: 'cardRequest', field: 'cardId' },
  { what: 'a merchant name', method: 'POST', url: '/v1/sandbox/cards/CARD-3001/authorizations', payload: { amount: '1.00', merchant: { ...MERCHANT, name: 'Cafe\n=1' }, channel: 'POS' }, objectName: 'authorizationRequest', field: 'merchant.name' },
];

describe('control characters are refused with a field error, nothing changed', () => {
  it.each(CASES)('$what', async ({ method, url, payload, objectName, field }) => {
    const core = await mockCore();
    Object.assign(core.state, demoFixtures());
    const before = structuredClone(core.state);
    const res = await send(method, url, payload);
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toEqual(validationProblem(objectName, [field, 'Pattern']));
    expect(core.state).toEqual(before);
  });

  it('a username', async () => {
    const res = await send('POST', '/v1/admin/users', { username: 'ev\u0085e', role: 'Operations', password: await t.encrypt('a-long-password-1') });
    expect(res.json()).toEqual(validationProblem('userRequest', ['username', 'Pattern']));
    expect((await t.app.cardline.users.list('demo')).map((u) => u.username)).not.toContain('ev\u0085e');
  });

  it('in the envelope dialect: upgradeLimit names the field (ESC)', async () => {
    const res = await send('POST', LIMIT_URL, { entityId: 'ENT-1001\u001b', amount: '60000.00' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ result: null, exception: { errorCode: 'ERR_400', shortMessage: 'Bad Request', detailMessage: 'entityId has the wrong format' }, pagination: null });
  });

  it('letters of any script, spaces and punctuation are still welcome', async () => {
    Object.assign((await mockCore()).state, demoFixtures());
    const res = await send('POST', '/v1/entities', { ...REGISTRATION, name: 'Ōkami Café — 東京 «Ünïcode» & Co.', primaryAddress: { ...ADDRESS, address1: 'Rua da Alegria, 5 – 2.º Esq.' } });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().result.entity.name).toBe('Ōkami Café — 東京 «Ünïcode» & Co.');
  });
});
