// Names that lie: tenant names, entity names and usernames refuse bidirectional controls (Bidi_Control) and
// zero-width format characters with a field error, so that the console cannot show one tenant's name reversed
// or looking like another's. Nothing is created or changed by a refused request; scripts written right to left
// are still welcome.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoFixtures } from '../../connectors/mock/fixtures.js';
import type { MockCore } from '../../connectors/mock/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { validationProblem } from '../helpers/problems.js';

let t: TestApp;
let m: FastifyInstance;
let key: string;
beforeAll(async () => {
  t = await createTestApp();
  m = await t.management();
  key = await t.operatorKey('ops-names');
});
afterAll(() => t?.close());

const mockCore = async (): Promise<MockCore> =>
  (await t.app.cardline.connectors.forTenant((await t.app.cardline.tenants.get('demo'))!)) as unknown as MockCore;

const asAdmin = async (method: 'POST', url: string, payload: unknown) =>
  t.inject({ method, url, headers: { 'X-TENANT-ID': 'demo', authorization: `Bearer ${await t.token('Admin')}` }, payload: payload as object });
const asOperator = (method: 'POST' | 'PATCH', url: string, payload: unknown) =>
  m.inject({ method, url, headers: { authorization: `Bearer ${key}` }, payload: payload as object });

const ADDRESS = { address1: '5 Rua Augusta', city: 'Lisbon', state: 'Lisboa', country: 'PT', pin: '1100-048' };
const REGISTRATION = { name: 'Oficina Lda', type: 'BUSINESS', contact: { email: 'f@oficina.example', mobile: '+351912345678' }, primaryAddress: ADDRESS, creditLimit: '25000.00' };

/** Every Bidi_Control character, and the zero-width format (Cf) characters. */
const INVISIBLE: [string, string][] = [
  ['U+061C ARABIC LETTER MARK', '\u061c'],
  ['U+180E MONGOLIAN VOWEL SEPARATOR', '\u180e'],
  ['U+200B ZERO WIDTH SPACE', '\u200b'],
  ['U+200C ZERO WIDTH NON-JOINER', '\u200c'],
  ['U+200D ZERO WIDTH JOINER', '\u200d'],
  ['U+200E LEFT-TO-RIGHT MARK', '\u200e'],
  ['U+200F RIGHT-TO-LEFT MARK', '\u200f'],
  ['U+202A LEFT-TO-RIGHT EMBEDDING', '\u202a'],
  ['U+202B RIGHT-TO-LEFT EMBEDDING', '\u202b'],
  ['U+202C POP DIRECTIONAL FORMATTING', '\u202c'],
  ['U+202D LEFT-TO-RIGHT OVERRIDE', '\u202d'],
  ['U+202E RIGHT-TO-LEFT OVERRIDE', '\u202e'],
  ['U+2060 WORD JOINER', '\u2060'],
  ['U+2061 FUNCTION APPLICATION', '\u2061'],
  ['U+2062 INVISIBLE TIMES', '\u2062'],
  ['U+2063 INVISIBLE SEPARATOR', '\u2063'],
  ['U+2064 INVISIBLE PLUS', '\u2064'],
  ['U+2066 LEFT-TO-RIGHT ISOLATE', '\u2066'],
  ['U+2067 RIGHT-TO-LEFT ISOLATE', '\u2067'],
  ['U+2068 FIRST STRONG ISOLATE', '\u2068'],
  ['U+2069 POP DIRECTIONAL ISOLATE', '\u2069'],
  ['U+FEFF ZERO WIDTH NO-BREAK SPACE', '\ufeff'],
];

describe('a tenant name (management listener)', () => {
  it.each(INVISIBLE)('refuses %s at creation, creating nothing', async (_what, ch) => {
    const res = await asOperator('POST', '/v1/tenants', { id: 'lying-bank', name: `Acme ${ch}Bank` });
    expect(res.json()).toEqual(validationProblem('tenantRequest', ['name', 'Pattern']));
    expect(await t.app.cardline.tenants.stored('lying-bank')).toBeFalsy();
  });

  it('refuses the issue\'s reversed name in a patch, changing nothing', async () => {
    const before = await t.app.cardline.tenants.stored('demo-b');
    const res = await asOperator('PATCH', '/v1/tenants/demo-b', { name: '\u202eknaB omeD' });
    expect(res.json()).toEqual(validationProblem('tenantPatch', ['name', 'Pattern']));
    expect(await t.app.cardline.tenants.stored('demo-b')).toEqual(before);
  });
});

describe('an entity name', () => {
  it.each(INVISIBLE)('refuses %s, registering nothing', async (_what, ch) => {
    const core = await mockCore();
    Object.assign(core.state, demoFixtures());
    const before = structuredClone(core.state);
    const res = await asAdmin('POST', '/v1/entities', { ...REGISTRATION, name: `Oficina${ch} Lda` });
    expect(res.json()).toEqual(validationProblem('entityRegistrationRequest', ['name', 'Pattern']));
    expect(core.state).toEqual(before);
  });
});

describe('a username', () => {
  it.each(INVISIBLE)('refuses %s from the Admin and from an operator, creating no user', async (_what, ch) => {
    const admin = await asAdmin('POST', '/v1/admin/users', { username: `ev${ch}e`, role: 'Operations', password: await t.encrypt('a-long-password-1') });
    expect(admin.json()).toEqual(validationProblem('userRequest', ['username', 'Pattern']));
    const operator = await asOperator('POST', '/v1/tenants/demo/users', { username: `${ch}root`, role: 'Admin', password: await t.encrypt('a-long-password-1') });
    expect(operator.json()).toEqual(validationProblem('userRequest', ['username', 'Pattern']));
    const names = (await t.app.cardline.users.list('demo')).map((u) => u.username);
    expect(names).not.toContain(`ev${ch}e`);
    expect(names).not.toContain(`${ch}root`);
  });
});

describe('what is still welcome', () => {
  it('names in scripts written right to left, and every other letter, mark and punctuation', async () => {
    Object.assign((await mockCore()).state, demoFixtures());
    const entity = await asAdmin('POST', '/v1/entities', { ...REGISTRATION, name: 'شركة الأمل — חברת תקווה · Ōkami 東京' });
    expect(entity.statusCode, entity.body).toBe(201);
    expect(entity.json().result.entity.name).toBe('شركة الأمل — חברת תקווה · Ōkami 東京');
    const tenant = await asOperator('POST', '/v1/tenants', { id: 'bank-rtl', name: 'بنك الأمل' });
    expect(tenant.statusCode, tenant.body).toBe(201);
    const user = await asAdmin('POST', '/v1/admin/users', { username: 'مريم', role: 'Read-Only', password: await t.encrypt('a-long-password-1') });
    expect(user.statusCode, user.body).toBe(201);
  });
});
