// The crypto module's JWE decryption: RFC 7520 vectors, allow-lists, freshness and replay.
import { describe, expect, it } from 'vitest';
import { generateKeyPair, exportJWK, importJWK, type JWK } from 'jose';
import { readFileSync } from 'node:fs';
import { createPrivateKey, type JsonWebKey, type webcrypto } from 'node:crypto';
import { decryptCompact, encryptCompact, JweError } from '../../src/crypto/jwe.js';
import type { TenantKey } from '../../src/crypto/keys.js';

const rfc = JSON.parse(readFileSync(new URL('../fixtures/jwe-rfc7520.json', import.meta.url), 'utf8')) as {
  plaintext: string;
  vectors: { section: string; alg: string; enc: string; recipientKey: JWK & { kid: string }; compact: string }[];
};

async function keyOf(jwk: JWK & { kid: string }, alg: string): Promise<TenantKey> {
  const { d: _d, ...pub } = jwk;
  return {
    kid: jwk.kid,
    use: 'enc',
    alg,
    status: 'active',
    publicJwk: pub as TenantKey['publicJwk'],
    privateKey: async () => (await importJWK(jwk, alg)) as webcrypto.CryptoKey,
    publicKey: async () => (await importJWK(pub, alg)) as webcrypto.CryptoKey,
    signingKey: () => createPrivateKey({ key: jwk as JsonWebKey, format: 'jwk' }),
  };
}

async function freshKey(): Promise<{ key: TenantKey; publicJwk: JWK }> {
  const { publicKey, privateKey } = await generateKeyPair('ECDH-ES+A256KW', { crv: 'P-256', extractable: true });
  const publicJwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ECDH-ES+A256KW' };
  const priv = { ...(await exportJWK(privateKey)), kid: 'k1' } as JWK & { kid: string };
  return { key: await keyOf(priv, 'ECDH-ES+A256KW'), publicJwk };
}

describe('RFC 7520 vectors', () => {
  it.each(rfc.vectors.map((v) => [v.section, v] as const))('§%s decrypts to the cookbook text', async (_s, v) => {
    const key = await keyOf(v.recipientKey, v.alg);
    const plain = await decryptCompact(v.compact, {
      keys: [key],
      keyManagementAlgorithms: [v.alg],
      contentEncryptionAlgorithms: [v.enc],
    });
    expect(new TextDecoder().decode(plain)).toBe(rfc.plaintext);
  });

  it('the same vector is refused under the default allow-list', async () => {
    const v = rfc.vectors[0]!;
    await expect(decryptCompact(v.compact, { keys: [await keyOf(v.recipientKey, v.alg)] })).rejects.toBeInstanceOf(JweError);
  });
});

describe('freshness and replay', () => {
  it('accepts a fresh JWE once, then refuses the replay', async () => {
    const { key, publicJwk } = await freshKey();
    const seen = new Set<string>();
    const replayGuard = async (jti: string) => !seen.has(jti) && !!seen.add(jti);
    const jwe = await encryptCompact('s3cret', publicJwk);
    expect(new TextDecoder().decode(await decryptCompact(jwe, { keys: [key], replayGuard }))).toBe('s3cret');
    await expect(decryptCompact(jwe, { keys: [key], replayGuard })).rejects.toMatchObject({ reason: 'replay' });
  });

  it.each([
    ['301 s old', -301, 'iat outside window'],
    ['310 s ahead', 310, 'iat outside window'],
  ])('refuses iat %s', async (_label, offset, reason) => {
    const { key, publicJwk } = await freshKey();
    const jwe = await encryptCompact('x', publicJwk, { iat: Math.floor(Date.now() / 1000) + offset });
    await expect(decryptCompact(jwe, { keys: [key], replayGuard: async () => true })).rejects.toMatchObject({ reason });
  });

  it('accepts iat within ±300 s', async () => {
    const { key, publicJwk } = await freshKey();
    const jwe = await encryptCompact('x', publicJwk, { iat: Math.floor(Date.now() / 1000) - 290 });
    await expect(decryptCompact(jwe, { keys: [key], replayGuard: async () => true })).resolves.toBeInstanceOf(Uint8Array);
  });

  it('refuses an unknown kid and garbage', async () => {
    const { key, publicJwk } = await freshKey();
    const other = await encryptCompact('x', { ...publicJwk, kid: 'nope' });
    await expect(decryptCompact(other, { keys: [key] })).rejects.toBeInstanceOf(JweError);
    await expect(decryptCompact('a.b.c.d.e', { keys: [key] })).rejects.toBeInstanceOf(JweError);
    await expect(decryptCompact('plain text', { keys: [key] })).rejects.toBeInstanceOf(JweError);
  });
});
