// Token attacks that test/routes/auth.test.ts does not already cover: hostile kid values, key-URL
// headers (jku, x5u, x5c), crit and b64, explicit typing (typ), algorithm spellings, signature encodings,
// claim types and malformed Authorization values. Most tokens are signed with the tenant's real key, so
// that the one hostile property is what gets them refused.
import { createVerify, randomUUID, type webcrypto } from 'node:crypto';
import { exportSPKI, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MockCore } from '../../connectors/mock/index.js';
import { PASSWORD, createTestApp, type TestApp } from '../helpers/app.js';
import { P256_N, TOKEN_TARGETS, challengeFor, lowS, malleate, sOf, type TokenTarget } from '../helpers/token-targets.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

type Target = TokenTarget;
const TARGETS = TOKEN_TARGETS;

const b64 = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');
const nowSeconds = () => Math.floor(Date.now() / 1000);

/**
 * Signs exactly the given header and payload (raw r||s ECDSA, as JWS ES256 requires), whatever they hold,
 * with a low-S signature as the gateway's own: the one hostile property is what gets a token refused.
 */
async function es256(header: unknown, payload: unknown, key: webcrypto.CryptoKey): Promise<string> {
  const input = `${b64(header)}.${b64(payload)}`;
  const sig = await crypto.subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, key, new TextEncoder().encode(input));
  const token = `${input}.${Buffer.from(sig).toString('base64url')}`;
  return lowS(token);
}

/** The same ECDSA signature as ASN.1 DER (SEQUENCE of two INTEGERs), the encoding JWS does not use. */
function toDer(raw: Buffer): Buffer {
  const int = (b: Buffer) => {
    let v = b;
    while (v.length > 1 && v[0] === 0 && v[1]! < 0x80) v = v.subarray(1);
    if (v[0]! >= 0x80) v = Buffer.concat([Buffer.from([0]), v]);
    return Buffer.concat([Buffer.from([0x02, v.length]), v]);
  };
  const body = Buffer.concat([int(raw.subarray(0, 32)), int(raw.subarray(32))]);
  return Buffer.concat([Buffer.from([0x30, body.length]), body]);
}

async function mockCore(tenant: string): Promise<MockCore> {
  return (await t.app.cardline.connectors.forTenant((await t.app.cardline.tenants.get(tenant))!)) as unknown as MockCore;
}

const call = (target: Target, authorization: string | undefined, payload = target.payload) =>
  t.inject({
    method: target.method,
    url: target.url,
    headers: { [target.tenantHeader]: 'demo', ...(authorization === undefined ? {} : { authorization }) },
    payload,
  });

describe('token attacks not covered by auth.test.ts', () => {
  const attacks = new Map<string, string>();
  let control: string;

  beforeAll(async () => {
    const sig = (await t.app.cardline.keys.forTenant('demo')).sig[0]!;
    const key = await sig.privateKey();
    const now = nowSeconds();
    const claims = (over: Record<string, unknown> = {}) => ({
      sub: 'admin',
      tenant: 'demo',
      role: 'Admin',
      iat: now,
      exp: now + 3600,
      jti: randomUUID(),
      iss: 'cardline',
      aud: 'cardline-api',
      ...over,
    });
    const header = (over: Record<string, unknown> = {}) => ({ alg: 'ES256', kid: sig.kid, typ: 'JWT', ...over });
    const signed = async (h: Record<string, unknown>, c = claims()) => `Bearer ${await es256(header(h), c, key)}`;

    control = await es256(header(), claims(), key);

    // kid: only the header's tenant's keys are candidates, looked up in memory, never as a path or query.
    attacks.set('kid with path traversal', await signed({ kid: '../../../../../../dev/null' }));
    attacks.set('kid with SQL', await signed({ kid: `${sig.kid}' OR '1'='1` }));
    attacks.set('kid empty', await signed({ kid: '' }));
    attacks.set('kid a number', await signed({ kid: 0 }));
    attacks.set('kid an array holding the real kid', await signed({ kid: [sig.kid] }));
    attacks.set('kid of 6000 characters', await signed({ kid: 'k'.repeat(6000) }));

    // Key-URL headers: the gateway never fetches keys, and refuses a token that asks it to.
    const attacker = await generateKeyPair('ES256', { extractable: true });
    const attackerSigned = async (h: Record<string, unknown>) =>
      `Bearer ${await es256({ alg: 'ES256', typ: 'JWT', kid: 'attacker-key', ...h }, claims(), attacker.privateKey)}`;
    attacks.set('jku pointing to an attacker key set (signed by the attacker)', await attackerSigned({ jku: 'https://attacker.example/jwks.json' }));
    attacks.set('x5u pointing to an attacker certificate (signed by the attacker)', await attackerSigned({ x5u: 'https://attacker.example/cert.pem' }));
    attacks.set('x5c holding an attacker certificate (signed by the attacker)', await attackerSigned({ x5c: [b64('not really a certificate')] }));
    attacks.set('jku on a token signed with the tenant key', await signed({ jku: 'https://attacker.example/jwks.json' }));

    // crit and b64 (RFC 7515 §4.1.11, RFC 7797): extensions the verifier does not understand are refused.
    attacks.set('crit naming an unknown extension', await signed({ crit: ['urn:example:ext'], 'urn:example:ext': true }));
    attacks.set('crit naming a claim', await signed({ crit: ['exp'] }));
    attacks.set('crit empty', await signed({ crit: [] }));
    // With b64: false the verifier would read the payload segment as raw bytes; JWTs may not do that.
    attacks.set('an unencoded payload (b64: false)', await signed({ b64: false, crit: ['b64'] }));

    // Explicit typing (RFC 8725 §3.11): another kind of JWT signed with the same key is not an access token.
    attacks.set("typ 'at+jwt' with the right signature", await signed({ typ: 'at+jwt' }));
    attacks.set('no typ, with the right signature', await signed({ typ: undefined }));

    // Algorithms: only ES256, spelt exactly.
    for (const alg of ['None', 'NONE', 'nOnE']) attacks.set(`alg '${alg}' (unsigned)`, `Bearer ${b64(header({ alg }))}.${b64(claims())}.`);
    attacks.set("alg 'ES384' over an ES256 signature", await signed({ alg: 'ES384' }));
    attacks.set("alg 'RS256' over an ES256 signature", await signed({ alg: 'RS256' }));
    attacks.set("alg 'EdDSA' over an ES256 signature", await signed({ alg: 'EdDSA' }));

    // Signature encodings: a DER-encoded ECDSA signature of the right input is not a JWS signature.
    const good = await es256(header(), claims(), key);
    const input = good.slice(0, good.lastIndexOf('.'));
    const der = toDer(Buffer.from(good.slice(good.lastIndexOf('.') + 1), 'base64url'));
    expect(createVerify('SHA256').update(input).verify(await exportSPKI(await sig.publicKey()), der)).toBe(true);
    attacks.set('a DER-encoded signature of the right input', `Bearer ${input}.${der.toString('base64url')}`);
    attacks.set('the signature left out', `Bearer ${input}.`);
    const [ch, cp, cs] = control.split('.') as [string, string, string];
    attacks.set('the signature doubled', `Bearer ${ch}.${cp}.${cs}${cs}`);
    attacks.set('the header of the control token with padding', `Bearer ${ch}=.${cp}.${cs}`);

    // ECDSA malleability: (r, n − s) verifies like (r, s), so a token the gateway issued could be
    // re-spelt into a second valid token text (a new cache key, a new string to block). Built from a
    // genuine token of the gateway's own login.
    const genuine = await t.token('Admin');
    attacks.set('a genuine token with its signature malleated (s → n − s)', `Bearer ${malleate(genuine)}`);

    // Claims of the wrong type or missing, with the right signature.
    attacks.set('exp a few seconds ago (no clock tolerance)', await signed({}, claims({ iat: now - 3600, exp: now - 5 })));
    attacks.set('exp as a string', await signed({}, claims({ exp: String(now + 3600) })));
    attacks.set('no exp', await signed({}, claims({ exp: undefined })));
    attacks.set('no sub', await signed({}, claims({ sub: undefined })));
    attacks.set('aud an array without the audience', await signed({}, claims({ aud: ['another-api', 'cardline'] })));
    attacks.set('tenant as an array', await signed({}, claims({ tenant: ['demo'] })));
    attacks.set("role spelt 'admin'", await signed({}, claims({ role: 'admin' })));
    attacks.set('the payload not JSON', `Bearer ${await es256(header(), 'not json', key)}`);

    // The Authorization value itself.
    attacks.set('two bearer tokens', `Bearer ${control}, Bearer ${control}`);
    attacks.set('the token without the Bearer scheme', control);
    attacks.set('Bearer twice', `Bearer Bearer ${control}`);
    attacks.set('JWS JSON serialization', `Bearer ${JSON.stringify({ protected: ch, payload: cp, signature: cs })}`);
    attacks.set('a compact JWE instead of a JWS', `Bearer ${await t.encrypt(control)}`);
  });

  it('control: a token from the same hand-made signer with valid header and claims is accepted', async () => {
    const res = await call(TARGETS[0]!, `Bearer ${control}`, { entityId: 'ENT-1003', amount: '50000.01' });
    expect(res.statusCode).toBe(200);
    expect((await mockCore('demo')).state.entities.get('ENT-1003')?.creditLimitMinor).toBe(5_000_001n);
  });

  const ATTACKS = [
    'kid with path traversal',
    'kid with SQL',
    'kid empty',
    'kid a number',
    'kid an array holding the real kid',
    'kid of 6000 characters',
    'jku pointing to an attacker key set (signed by the attacker)',
    'x5u pointing to an attacker certificate (signed by the attacker)',
    'x5c holding an attacker certificate (signed by the attacker)',
    'jku on a token signed with the tenant key',
    'crit naming an unknown extension',
    'crit naming a claim',
    'crit empty',
    'an unencoded payload (b64: false)',
    "typ 'at+jwt' with the right signature",
    'no typ, with the right signature',
    "alg 'None' (unsigned)",
    "alg 'NONE' (unsigned)",
    "alg 'nOnE' (unsigned)",
    "alg 'ES384' over an ES256 signature",
    "alg 'RS256' over an ES256 signature",
    "alg 'EdDSA' over an ES256 signature",
    'a DER-encoded signature of the right input',
    'the signature left out',
    'a genuine token with its signature malleated (s → n − s)',
    'the signature doubled',
    'the header of the control token with padding',
    'exp a few seconds ago (no clock tolerance)',
    'exp as a string',
    'no exp',
    'no sub',
    'aud an array without the audience',
    'tenant as an array',
    "role spelt 'admin'",
    'the payload not JSON',
    'two bearer tokens',
    'the token without the Bearer scheme',
    'Bearer twice',
    'JWS JSON serialization',
    'a compact JWE instead of a JWS',
  ];

  it('the malleated token is a valid ECDSA signature of the same input: only the high-S rule refuses it', async () => {
    const genuine = await t.token('Admin');
    const malleated = malleate(genuine);
    const publicKey = await (await t.app.cardline.keys.forTenant('demo')).sig[0]!.publicKey();
    for (const token of [genuine, malleated]) {
      const input = token.slice(0, token.lastIndexOf('.'));
      const sig = Buffer.from(token.split('.')[2]!, 'base64url');
      expect(createVerify('SHA256').update(input).verify({ key: await exportSPKI(publicKey), dsaEncoding: 'ieee-p1363' }, sig)).toBe(true);
    }
    expect(malleated).not.toBe(genuine);
    // The genuine one still works.
    expect((await call(TARGETS[0]!, `Bearer ${genuine}`, { entityId: 'ENT-1001', amount: '50000.01' })).statusCode).toBe(200);
  });

  it('the gateway issues only low-S signatures, so none of its own tokens is refused by that rule', async () => {
    for (let i = 0; i < 24; i++) {
      const res = await t.inject({
        method: 'POST',
        url: '/api/authenticate',
        headers: { TENANT: 'demo' },
        payload: { username: 'viewer', password: await t.encrypt(PASSWORD) },
      });
      expect(res.statusCode).toBe(200);
      expect(sOf(res.json<{ id_token: string }>().id_token) <= P256_N / 2n).toBe(true);
    }
  });

  it('every attack above is exercised', () => {
    expect([...attacks.keys()].sort()).toEqual([...ATTACKS].sort());
  });

  const cases = TARGETS.flatMap((target) => ATTACKS.map((attack) => [target.name, attack, target] as const));

  it.each(cases)('%s: %s → 401, nothing changes', async (_route, attack, target) => {
    const cores = [await mockCore('demo'), await mockCore('demo-b')];
    const before = cores.map((c) => structuredClone(c.state));
    const res = await call(target, attacks.get(attack));
    expect(res.statusCode).toBe(401);
    expect(res.headers['www-authenticate']).toBe(challengeFor(attack));
    expect(res.json()).toEqual(target.unauthorized);
    expect(cores.map((c) => c.state)).toEqual(before);
  });
});
