// Customer routes: register, read, update, issue a card, replace a card. Whole bodies; contact and address
// lines masked in answers and in full only sealed to the client key; events of record without personal data.
import { compactDecrypt, exportJWK, generateKeyPair } from 'jose';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { demoFixtures } from '../../connectors/mock/fixtures.js';
import type { Role } from '../../schemas/common.js';
import { mockCoreOf, UPGRADE_URL, createTestApp, type TestApp } from '../helpers/app.js';
import { businessProblem, validationProblem } from '../helpers/problems.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const mockCore = (tenant = 'demo') => mockCoreOf(t, tenant);

beforeEach(async () => {
  Object.assign((await mockCore()).state, demoFixtures());
  await t.db.query(`DELETE FROM client_keys WHERE tenant_id = 'demo'`);
  t.app.cardline.clientKeys.invalidate?.('demo');
});

async function call(method: 'GET' | 'POST' | 'PATCH', url: string, payload?: unknown, role: Role = 'Operations', headers: Record<string, string> = {}) {
  return t.inject({
    method,
    url,
    headers: { 'X-TENANT-ID': 'demo', authorization: `Bearer ${await t.token(role)}`, ...headers },
    ...(payload === undefined ? {} : { payload: payload as string }),
  });
}


const CONTACT = { email: 'finance@oficina.example', mobile: '+351912345678' };
const ADDRESS = { address1: '5 Rua Augusta', address2: 'Loja 2', city: 'Lisbon', state: 'Lisboa', country: 'PT', pin: '1100-048' };
const REGISTRATION = { name: 'Oficina Lda', type: 'BUSINESS', contact: CONTACT, primaryAddress: ADDRESS, creditLimit: '25000.00' };
const MASKED = {
  contact: { email: 'f******@oficina.example', mobile: '+********5678' },
  primaryAddress: { address1: '5 R** A******', address2: 'L*** 2', city: 'Lisbon', state: 'Lisboa', country: 'PT', pin: '1100-048' },
};
const entityView = (patch: Record<string, unknown> = {}) => ({
  entityId: 'ENT-1004',
  name: 'Oficina Lda',
  type: 'BUSINESS',
  ...MASKED,
  creditLimit: '25000.00',
  outstanding: '0.00',
  availableCredit: '25000.00',
  cardCount: 1,
  ...patch,
});
const card3004 = { cardId: 'CARD-3004', entityId: 'ENT-1004', form: 'VIRTUAL', state: 'ACTIVE', panMasked: '400000******0041' };

async function events(type: string) {
  const r = await t.db.query<{ aggregate_id: string; payload: unknown }>(
    `SELECT aggregate_id, payload FROM outbox WHERE tenant_id = 'demo' AND type = $1 ORDER BY audit_seq`,
    [type],
  );
  return r.rows;
}

describe('POST /v1/entities', () => {
  it('registers the customer with its first virtual card: 201, masked contact and address, an event without personal data', async () => {
    await t.db.query(`DELETE FROM outbox WHERE tenant_id = 'demo'`);
    const res = await call('POST', '/v1/entities', REGISTRATION);
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual({
      result: { message: 'Entity ENT-1004 registered with virtual card CARD-3004', entity: entityView(), card: card3004 },
      pagination: null,
    });
    expect(await events('entity.registered')).toEqual([
      { aggregate_id: 'ENT-1004', payload: { entityId: 'ENT-1004', type: 'BUSINESS', creditLimit: '25000.00', cardId: 'CARD-3004' } },
    ]);
    expect((await mockCore()).state.entities.get('ENT-1004')).toMatchObject({ contact: CONTACT, primaryAddress: ADDRESS });
  });

  it('under the id it is given, without a card; the same id again is 409 ENTITY_EXISTS', async () => {
    const body = { ...REGISTRATION, entityId: 'ENT-7000', type: 'INDIVIDUAL', issueVirtualCard: false };
    const res = await call('POST', '/v1/entities', body);
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual({
      result: { message: 'Entity ENT-7000 registered', entity: entityView({ entityId: 'ENT-7000', type: 'INDIVIDUAL', cardCount: 0 }) },
      pagination: null,
    });
    const again = await call('POST', '/v1/entities', body);
    expect(again.statusCode).toBe(409);
    expect(again.json()).toEqual(businessProblem('Entity Exists', 'ENTITY_EXISTS', 'Entity ENT-7000 already exists.'));
  });

  it('a credit limit above the product maximum is 409 LIMIT_ABOVE_MAXIMUM, and nothing is registered', async () => {
    const res = await call('POST', '/v1/entities', { ...REGISTRATION, creditLimit: '1000000.01' });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual(businessProblem('Limit Above Maximum', 'LIMIT_ABOVE_MAXIMUM', 'The amount 1000000.01 exceeds the product maximum of 1000000.00.'));
    expect((await mockCore()).state.entities.size).toBe(3);
  });

  it('address lines and contact may arrive as JWEs to the tenant key', async () => {
    const res = await call('POST', '/v1/entities', {
      ...REGISTRATION,
      contact: { email: await t.encrypt(CONTACT.email), mobile: await t.encrypt(CONTACT.mobile) },
      primaryAddress: { ...ADDRESS, address1: await t.encrypt(ADDRESS.address1), address2: await t.encrypt(ADDRESS.address2) },
    });
    expect(res.statusCode).toBe(201);
    expect(res.json().result.entity).toEqual(entityView());
    expect((await mockCore()).state.entities.get('ENT-1004')).toMatchObject({ contact: CONTACT, primaryAddress: ADDRESS });
  });

  it.each([
    ['no name', { ...REGISTRATION, name: undefined }, [['name', 'NotNull']]],
    ['an unknown type', { ...REGISTRATION, type: 'TRUST' }, [['type', 'Invalid']]],
    ['a malformed email', { ...REGISTRATION, contact: { ...CONTACT, email: 'not-an-email' } }, [['contact.email', 'Pattern']]],
    ['a mobile without its country code', { ...REGISTRATION, contact: { ...CONTACT, mobile: '912345678' } }, [['contact.mobile', 'Pattern']]],
    ['no address line', { ...REGISTRATION, primaryAddress: { ...ADDRESS, address1: undefined } }, [['primaryAddress.address1', 'NotNull']]],
    ['a limit as a number', { ...REGISTRATION, creditLimit: 25000 }, [['creditLimit', 'TypeMismatch']]],
    ['a limit of zero', { ...REGISTRATION, creditLimit: '0.00' }, [['creditLimit', 'DecimalAmount']]],
    ['an unknown field', { ...REGISTRATION, vip: true }, [['vip', 'UnknownProperty']]],
  ])('%s → 400 with field errors', async (_, payload, fields) => {
    const res = await call('POST', '/v1/entities', JSON.parse(JSON.stringify(payload)));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(validationProblem('entityRegistrationRequest', ...(fields as [string, string][])));
  });
});

describe('GET /v1/entities/{entityId}', () => {
  it('profile, masked contact and address, credit line and card count', async () => {
    const core = await mockCore();
    core.state.entities.get('ENT-1002')!.outstandingMinor = 12_550n;
    const res = await call('GET', '/v1/entities/ENT-1002', undefined, 'Read-Only');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      result: {
        entityId: 'ENT-1002',
        name: 'Demo Business 2',
        type: 'BUSINESS',
        contact: { email: 'a*******@demo-business-2.example', mobile: '+********1002' },
        primaryAddress: { address1: '1* D*** S*****', city: 'Porto', state: 'Demo', country: 'PT', pin: '1001-001' },
        creditLimit: '50000.00',
        outstanding: '125.50',
        availableCredit: '49874.50',
        cardCount: 1,
      },
      pagination: null,
    });
    expect(res.body).not.toContain('accounts@');
    expect(res.body).not.toContain('Demo Street');
  });

  it("in full only under sensitive, each value a JWE to the tenant's client key", async () => {
    const { publicKey, privateKey } = await generateKeyPair('ECDH-ES+A256KW', { crv: 'P-256', extractable: true });
    const put = await call('PUT' as 'POST', '/v1/admin/client-key', { jwk: { ...(await exportJWK(publicKey)), kid: 'bank-1' } }, 'Admin');
    expect(put.statusCode).toBe(200);
    const res = await call('GET', '/v1/entities/ENT-1001');
    const { sensitive, ...rest } = res.json().result;
    expect(rest.contact).toEqual({ email: 'a*******@demo-business-1.example', mobile: '+********1001' });
    expect(Object.keys(sensitive).sort()).toEqual(['address1', 'email', 'mobile']);
    const open = async (jwe: string) => new TextDecoder().decode((await compactDecrypt(jwe, privateKey)).plaintext);
    expect({ email: await open(sensitive.email), mobile: await open(sensitive.mobile), address1: await open(sensitive.address1) }).toEqual({
      email: 'accounts@demo-business-1.example',
      mobile: '+351910001001',
      address1: '10 Demo Street',
    });
  });

  it('an unknown entity is 409 ENTITY_NOT_FOUND', async () => {
    const res = await call('GET', '/v1/entities/ENT-9999');
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual(businessProblem('Entity Not Found', 'ENTITY_NOT_FOUND', 'Entity ENT-9999 does not exist.'));
  });

  it('an identifier of 65 characters → 400 Size', async () => {
    const res = await call('GET', `/v1/entities/${'E'.repeat(65)}`);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(validationProblem('entityRequest', ['entityId', 'Size']));
  });
});

describe('PATCH /v1/entities/{entityId}', () => {
  const NEW_ADDRESS = { address1: '9 Avenida da Liberdade', city: 'Lisbon', state: 'Lisboa', country: 'PT', pin: '1250-096' };

  it('replaces the primary address, which a physical upgrade with usePrimaryAddress then uses', async () => {
    await t.db.query(`DELETE FROM outbox WHERE tenant_id = 'demo'`);
    const res = await call('PATCH', '/v1/entities/ENT-1001', { primaryAddress: NEW_ADDRESS });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      result: {
        message: 'Entity ENT-1001 updated',
        entity: {
          entityId: 'ENT-1001',
          name: 'Demo Business 1',
          type: 'BUSINESS',
          contact: { email: 'a*******@demo-business-1.example', mobile: '+********1001' },
          primaryAddress: { ...NEW_ADDRESS, address1: '9 A****** d* L********' },
          creditLimit: '50000.00',
          outstanding: '0.00',
          availableCredit: '50000.00',
          cardCount: 1,
        },
      },
      pagination: null,
    });
    expect(await events('entity.updated')).toEqual([{ aggregate_id: 'ENT-1001', payload: { entityId: 'ENT-1001', changed: ['primaryAddress'] } }]);
    const up = await call('PUT' as 'POST', UPGRADE_URL, { kitNo: 'KIT-2001', entityId: 'ENT-1001', communicationAddress: { usePrimaryAddress: true } });
    expect(up.statusCode).toBe(200);
    expect((await mockCore()).state.cards.get('CARD-3001')!.deliveryAddress).toEqual(NEW_ADDRESS);
  });

  it('neither part → 400 NotNull for both; an unknown entity → 409 ENTITY_NOT_FOUND', async () => {
    const none = await call('PATCH', '/v1/entities/ENT-1001', {});
    expect(none.statusCode).toBe(400);
    expect(none.json()).toEqual(validationProblem('entityUpdateRequest', ['contact', 'NotNull'], ['primaryAddress', 'NotNull']));
    const unknown = await call('PATCH', '/v1/entities/ENT-9999', { contact: CONTACT });
    expect(unknown.statusCode).toBe(409);
    expect(unknown.json()).toEqual(businessProblem('Entity Not Found', 'ENTITY_NOT_FOUND', 'Entity ENT-9999 does not exist.'));
  });

  it('a contact without its mobile → 400 NotNull (a part is replaced whole)', async () => {
    const res = await call('PATCH', '/v1/entities/ENT-1001', { contact: { email: CONTACT.email } });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(validationProblem('entityUpdateRequest', ['contact.mobile', 'NotNull']));
  });
});

describe('POST /v1/entities/{entityId}/cards', () => {
  it('issues another virtual card: 201 and card.issued', async () => {
    await t.db.query(`DELETE FROM outbox WHERE tenant_id = 'demo'`);
    const res = await call('POST', '/v1/entities/ENT-1001/cards');
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual({
      result: { message: 'Virtual card CARD-3004 issued to ENT-1001', card: { ...card3004, entityId: 'ENT-1001' } },
      pagination: null,
    });
    expect(await events('card.issued')).toEqual([{ aggregate_id: 'CARD-3004', payload: { cardId: 'CARD-3004', entityId: 'ENT-1001', form: 'VIRTUAL', state: 'ACTIVE' } }]);
    expect((await call('GET', '/v1/entities/ENT-1001/cards')).json().result).toHaveLength(2);
  });

  it('an unknown entity → 409 ENTITY_NOT_FOUND; a body → 400', async () => {
    const unknown = await call('POST', '/v1/entities/ENT-9999/cards');
    expect(unknown.statusCode).toBe(409);
    expect(unknown.json()).toEqual(businessProblem('Entity Not Found', 'ENTITY_NOT_FOUND', 'Entity ENT-9999 does not exist.'));
    const body = await call('POST', '/v1/entities/ENT-1001/cards', { form: 'PHYSICAL' });
    expect(body.statusCode).toBe(400);
    expect(body.json()).toEqual(validationProblem('cardIssueRequest', ['form', 'UnknownProperty']));
  });
});

describe('POST /v1/cards/{cardId}/replace', () => {
  async function block(cardId = 'CARD-3002', reasonCode = 'LOST') {
    expect((await call('POST', `/v1/cards/${cardId}/block`, { reasonCode })).statusCode).toBe(200);
  }

  it('replaces a blocked card with a virtual one that keeps its preferences: 201 and card.replaced', async () => {
    await t.db.query(`DELETE FROM outbox WHERE tenant_id = 'demo'`);
    const preferences = { domestic: { enabled: true, atm: { enabled: false } } };
    expect((await call('PUT' as 'POST', '/v1/cards/CARD-3002/preferences', preferences)).statusCode).toBe(200);
    await block();
    const res = await call('POST', '/v1/cards/CARD-3002/replace', { reason: 'LOST' });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual({
      result: {
        message: 'Card CARD-3002 replaced (LOST) by virtual card CARD-3004',
        replacedCardId: 'CARD-3002',
        card: { ...card3004, entityId: 'ENT-1002' },
      },
      pagination: null,
    });
    expect((await call('GET', '/v1/cards/CARD-3004/preferences')).json().result.preferences).toEqual(preferences);
    expect(await events('card.replaced')).toEqual([
      { aggregate_id: 'CARD-3004', payload: { cardId: 'CARD-3004', replacedCardId: 'CARD-3002', entityId: 'ENT-1002', reason: 'LOST', form: 'VIRTUAL' } },
    ]);
  });

  it('with a kit: a physical card, fulfilment ORDERED', async () => {
    await block('CARD-3003', 'DAMAGED');
    const res = await call('POST', '/v1/cards/CARD-3003/replace', { reason: 'DAMAGED', kitNo: 'KIT-2005' });
    expect(res.statusCode).toBe(201);
    expect(res.json().result).toEqual({
      message: 'Card CARD-3003 replaced (DAMAGED) by physical card CARD-3004',
      replacedCardId: 'CARD-3003',
      card: { ...card3004, entityId: 'ENT-1003', form: 'PHYSICAL', fulfilment: 'ORDERED', kitNo: 'KIT-2005' },
    });
  });

  it('refusals: not blocked, replaced already, an invalid kit, an unknown card', async () => {
    const active = await call('POST', '/v1/cards/CARD-3002/replace', { reason: 'EXPIRED' });
    expect(active.statusCode).toBe(409);
    expect(active.json()).toEqual(
      businessProblem('Card Not Blocked', 'CARD_NOT_BLOCKED', 'Card CARD-3002 is ACTIVE: only a BLOCKED card can be replaced; block it first.'),
    );
    await block();
    const kit = await call('POST', '/v1/cards/CARD-3002/replace', { reason: 'LOST', kitNo: 'KIT-9999' });
    expect(kit.statusCode).toBe(409);
    expect(kit.json()).toEqual(businessProblem('Invalid Kit', 'PPCUST_018', 'Kit KIT-9999 is not known to the core.'));
    expect((await call('POST', '/v1/cards/CARD-3002/replace', { reason: 'LOST' })).statusCode).toBe(201);
    const twice = await call('POST', '/v1/cards/CARD-3002/replace', { reason: 'LOST' });
    expect(twice.statusCode).toBe(409);
    expect(twice.json()).toEqual(businessProblem('Card Already Replaced', 'CARD_ALREADY_REPLACED', 'Card CARD-3002 was already replaced by CARD-3004.'));
    const unknown = await call('POST', '/v1/cards/CARD-9999/replace', { reason: 'LOST' });
    expect(unknown.statusCode).toBe(409);
    expect(unknown.json()).toEqual(businessProblem('Card Not Found', 'CARD_NOT_FOUND', 'Card CARD-9999 does not exist.'));
  });

  it.each([
    ['no reason', {}, [['reason', 'NotNull']]],
    ['a block reason that is no replacement reason', { reason: 'FRAUD' }, [['reason', 'Invalid']]],
    ['an empty kit', { reason: 'LOST', kitNo: '' }, [['kitNo', 'NotBlank']]],
  ])('%s → 400', async (_, payload, fields) => {
    const res = await call('POST', '/v1/cards/CARD-3002/replace', payload);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(validationProblem('cardReplacementRequest', ...(fields as [string, string][])));
  });
});
