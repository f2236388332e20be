// Encrypted response fields: the tenant registers its client key (PUT /v1/admin/client-key); a card read
// then carries the PAN, CVV and expiry only as JWEs to that key, which the client decrypts; without a
// client key they are absent; everywhere else the PAN is masked (first six, last four).
import { compactDecrypt, decodeProtectedHeader, exportJWK, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoFixtures } from '../../connectors/mock/fixtures.js';
import type { Role } from '../../schemas/common.js';
import { ecThumbprint } from '../../src/crypto/client-keys.js';
import { PROBLEM_BASE, createTestApp, type TestApp } from '../helpers/app.js';
import { findPans, luhnValid } from '../helpers/log-scan.js';

const FIXTURE = demoFixtures().cards.get('CARD-3001')!;
const COMPACT_JWE = /^[\w-]+\.[\w-]+\.[\w-]+\.[\w-]+\.[\w-]+$/;

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

async function clientKeyPair() {
  const { publicKey, privateKey } = await generateKeyPair('ECDH-ES+A256KW', { crv: 'P-256', extractable: true });
  return { publicJwk: await exportJWK(publicKey), privateJwk: await exportJWK(privateKey), privateKey };
}

async function call(method: 'GET' | 'PUT', url: string, payload?: unknown, role: Role = 'Admin', tenant = 'demo') {
  return t.inject({
    method,
    url,
    headers: { 'X-TENANT-ID': tenant, authorization: `Bearer ${await t.token(role, tenant)}` },
    ...(payload === undefined ? {} : { payload: payload as object }),
  });
}

const decrypt = async (jwe: string, key: Parameters<typeof compactDecrypt>[1]) =>
  new TextDecoder().decode((await compactDecrypt(jwe, key, { keyManagementAlgorithms: ['ECDH-ES+A256KW'], contentEncryptionAlgorithms: ['A256GCM'] })).plaintext);

const validation = (...fields: [string, string][]) => ({
  type: `${PROBLEM_BASE}/constraint-violation`,
  title: 'Method argument not valid',
  status: 400,
  message: 'error.validation',
  fieldErrors: fields.map(([field, message]) => ({ field, message, objectName: 'clientKeyRequest' })),
});

describe('without a registered client key', () => {
  it('a card read carries no sensitive block, and the PAN only masked', async () => {
    const res = await call('GET', '/v1/cards/CARD-3001', undefined, 'Read-Only');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      result: { cardId: 'CARD-3001', entityId: 'ENT-1001', form: 'VIRTUAL', state: 'ACTIVE', panMasked: `${FIXTURE.pan.slice(0, 6)}******${FIXTURE.pan.slice(-4)}` },
      pagination: null,
    });
    expect(findPans(res.body)).toEqual([]);
  });

  it('GET /v1/admin/client-key answers 404 with what to do', async () => {
    const res = await call('GET', '/v1/admin/client-key');
    expect([res.statusCode, res.json()]).toEqual([
      404,
      {
        type: `${PROBLEM_BASE}/problem-with-message`,
        title: 'Not Found',
        status: 404,
        message: 'error.http.404',
        detail: 'No client key is registered for this tenant; register one with PUT /v1/admin/client-key.',
      },
    ]);
  });
});

describe('registering the client key', () => {
  it('refuses a private key, a point off the curve, another curve, and a non-Admin caller', async () => {
    const { publicJwk, privateJwk } = await clientKeyPair();
    expect((await call('PUT', '/v1/admin/client-key', { jwk: privateJwk })).json()).toEqual(validation(['jwk.d', 'UnknownProperty']));
    const offCurve = await call('PUT', '/v1/admin/client-key', { jwk: { ...publicJwk, y: publicJwk.x } });
    expect([offCurve.statusCode, offCurve.json()]).toEqual([400, validation(['jwk', 'Invalid'])]);
    expect((await call('PUT', '/v1/admin/client-key', { jwk: { ...publicJwk, crv: 'P-384' } })).json()).toEqual(validation(['jwk.crv', 'Invalid']));
    expect((await call('PUT', '/v1/admin/client-key', { jwk: { ...publicJwk, use: 'sig' } })).json()).toEqual(validation(['jwk.use', 'Invalid']));
    const ops = await call('PUT', '/v1/admin/client-key', { jwk: publicJwk }, 'Operations');
    expect(ops.statusCode).toBe(403);
    expect((await call('GET', '/v1/admin/client-key')).statusCode).toBe(404);
  });
});

describe('with a registered client key', () => {
  it('returns the PAN, CVV and expiry as JWEs to it, which the client decrypts; the list stays masked', async () => {
    const client = await clientKeyPair();
    const put = await call('PUT', '/v1/admin/client-key', { jwk: client.publicJwk });
    const kid = ecThumbprint(client.publicJwk as { crv: string; x: string; y: string });
    const registered = { kty: 'EC', crv: 'P-256', x: client.publicJwk.x, y: client.publicJwk.y, kid, use: 'enc', alg: 'ECDH-ES+A256KW' };
    expect(put.statusCode).toBe(200);
    expect(put.json()).toEqual({ result: { jwk: registered, registeredAt: expect.any(String) }, pagination: null });
    expect((await call('GET', '/v1/admin/client-key')).json()).toEqual(put.json());

    const res = await call('GET', '/v1/cards/CARD-3001', undefined, 'Read-Only');
    expect(res.statusCode).toBe(200);
    const { sensitive, ...view } = res.json().result as { sensitive: Record<string, string> };
    expect(view).toEqual({ cardId: 'CARD-3001', entityId: 'ENT-1001', form: 'VIRTUAL', state: 'ACTIVE', panMasked: `${FIXTURE.pan.slice(0, 6)}******${FIXTURE.pan.slice(-4)}` });
    expect(Object.keys(sensitive).sort()).toEqual(['cvv', 'expiry', 'pan']);
    for (const jwe of Object.values(sensitive)) {
      expect(jwe).toMatch(COMPACT_JWE);
      expect(decodeProtectedHeader(jwe)).toMatchObject({ alg: 'ECDH-ES+A256KW', enc: 'A256GCM', kid });
    }
    const pan = await decrypt(sensitive.pan!, client.privateKey);
    expect(pan).toBe(FIXTURE.pan);
    expect(pan).toMatch(/^\d{16}$/);
    expect(luhnValid(pan)).toBe(true);
    expect(await decrypt(sensitive.cvv!, client.privateKey)).toBe(FIXTURE.cvv);
    expect(await decrypt(sensitive.expiry!, client.privateKey)).toBe(FIXTURE.expiry);
    // Nothing in the response is a card number in clear.
    expect(findPans(res.body)).toEqual([]);
    expect(res.body).not.toContain(`"${FIXTURE.cvv}"`);
    expect(res.body).not.toContain(FIXTURE.expiry);

    const list = await call('GET', '/v1/entities/ENT-1001/cards', undefined, 'Read-Only');
    expect(list.json().result).toEqual([view]);
    expect(list.body).not.toContain('sensitive');
  });

  it('encrypts to the replacement once the tenant registers a new key; the old private key no longer opens it', async () => {
    const first = await clientKeyPair();
    await call('PUT', '/v1/admin/client-key', { jwk: { ...first.publicJwk, kid: 'bank-key-1' } });
    const second = await clientKeyPair();
    const put = await call('PUT', '/v1/admin/client-key', { jwk: { ...second.publicJwk, kid: 'bank-key-2' } });
    expect(put.json().result.jwk.kid).toBe('bank-key-2');
    const { sensitive } = (await call('GET', '/v1/cards/CARD-3001')).json().result as { sensitive: Record<string, string> };
    expect(decodeProtectedHeader(sensitive.pan!).kid).toBe('bank-key-2');
    expect(await decrypt(sensitive.pan!, second.privateKey)).toBe(FIXTURE.pan);
    await expect(decrypt(sensitive.pan!, first.privateKey)).rejects.toThrow();
  });

  it('is per tenant: another tenant without a key still gets no sensitive block', async () => {
    const res = await call('GET', '/v1/cards/CARD-3001', undefined, 'Admin', 'demo-b');
    expect(res.statusCode).toBe(200);
    expect(res.json().result).not.toHaveProperty('sensitive');
  });
});
