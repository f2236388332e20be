// The key a new tenant's first Admin password is encrypted to while the tenant does not exist yet: a P-256
// key pair derived from the master key (nothing stored), the same in every process that shares that key.
import { createECDH, createHash, createPrivateKey, type webcrypto } from 'node:crypto';
import { importJWK } from 'jose';
import { ENC_ALG, type KeySource, type PublicJwk, type TenantKey, type TenantKeys } from './keys.js';
import type { MasterKey } from './master-key.js';

type CryptoKey = webcrypto.CryptoKey;

/** The order of P-256: a private scalar is in [1, n - 1] (an HMAC misses it about once in 2^32: the next is taken). */
const P256_ORDER = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;

const b64u = (bytes: Buffer): string => bytes.toString('base64url');

/** The onboarding key pair: derived, so a restart or another worker opens what this one's clients encrypted. */
export function onboardingKey(masterKey: MasterKey): TenantKey {
  const derived = masterKey.derive('onboarding-enc');
  let d: Buffer | undefined;
  for (let i = 0; !d; i += 1) {
    const candidate = Buffer.from(derived.mac(`p256:${i}`), 'hex');
    const scalar = BigInt(`0x${candidate.toString('hex')}`);
    if (scalar > 0n && scalar < P256_ORDER) d = candidate;
  }
  const ecdh = createECDH('prime256v1');
  ecdh.setPrivateKey(d);
  const point = ecdh.getPublicKey();
  const x = b64u(point.subarray(1, 33));
  const y = b64u(point.subarray(33, 65));
  const kid = `onboarding-${createHash('sha256').update(point).digest('hex').slice(0, 16)}`;
  const publicJwk: PublicJwk = { kty: 'EC', crv: 'P-256', x, y, kid, use: 'enc', alg: ENC_ALG };
  let privateKey: Promise<CryptoKey> | undefined;
  let publicKey: Promise<CryptoKey> | undefined;
  return {
    kid,
    use: 'enc',
    alg: ENC_ALG,
    status: 'active',
    publicJwk,
    privateKey: () => (privateKey ??= importJWK({ kty: 'EC', crv: 'P-256', x, y, d: b64u(d) }, ENC_ALG) as Promise<CryptoKey>),
    publicKey: () => (publicKey ??= importJWK({ kty: 'EC', crv: 'P-256', x, y }, ENC_ALG) as Promise<CryptoKey>),
    signingKey: () => createPrivateKey({ key: { kty: 'EC', crv: 'P-256', x, y, d: b64u(d) }, format: 'jwk' }),
  };
}

/** The onboarding key as a key source: the one set whatever is asked (the JWE primitive reads it so). */
export function onboardingKeySource(key: TenantKey): KeySource {
  const set: TenantKeys = { enc: [key], sig: [] };
  return { forTenant: async () => set };
}
