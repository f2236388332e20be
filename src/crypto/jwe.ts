// Compact JWE: decryption with allow-listed algorithms, freshness (iat) and one-time jti; encryption for clients.
import { CompactEncrypt, compactDecrypt, errors as joseErrors, type JWK, importJWK } from 'jose';
import { randomUUID } from 'node:crypto';
import type { TenantKey } from './keys.js';

export const DEFAULT_KEY_ALGS = ['ECDH-ES+A256KW'];
export const DEFAULT_CONTENT_ENCS = ['A256GCM'];
const MAX_CLOCK_SKEW_SECONDS = 300;

/** Every JWE failure is this one error: the caller learns nothing about which check failed. */
export class JweError extends Error {
  constructor(readonly reason: string) {
    super('The encrypted payload could not be processed');
    this.name = 'JweError';
  }
}

/** Records a jti; resolves false when it was already seen (a replay). */
type ReplayGuard = (jti: string, expiresAt: Date) => Promise<boolean>;

export interface DecryptOptions {
  keys: TenantKey[];
  keyManagementAlgorithms?: string[];
  contentEncryptionAlgorithms?: string[];
  /** When set, the protected header must carry iat within ±300 s and a jti accepted once. */
  replayGuard?: ReplayGuard;
  now?: () => number;
}

/** Five base64url parts; the encrypted key (`dir`) and the ciphertext (an empty plaintext) may be empty. */
export const looksLikeCompactJwe = (value: string): boolean => /^[\w-]+\.[\w-]*\.[\w-]+\.[\w-]*\.[\w-]+$/.test(value);

export async function decryptCompact(jwe: string, opts: DecryptOptions): Promise<Uint8Array> {
  if (!looksLikeCompactJwe(jwe)) throw new JweError('not a compact JWE');
  let result;
  try {
    result = await compactDecrypt(
      jwe,
      (header) => {
        const key = header.kid ? opts.keys.find((k) => k.kid === header.kid) : opts.keys[0];
        if (!key) throw new JweError('unknown kid');
        return key.privateKey();
      },
      {
        keyManagementAlgorithms: opts.keyManagementAlgorithms ?? DEFAULT_KEY_ALGS,
        contentEncryptionAlgorithms: opts.contentEncryptionAlgorithms ?? DEFAULT_CONTENT_ENCS,
      },
    );
  } catch (err) {
    if (err instanceof JweError) throw err;
    throw new JweError(err instanceof joseErrors.JOSEError ? err.code : 'decrypt failed');
  }
  if (opts.replayGuard) {
    const { iat, jti } = result.protectedHeader as { iat?: unknown; jti?: unknown };
    const nowSeconds = Math.floor((opts.now?.() ?? Date.now()) / 1000);
    if (typeof iat !== 'number' || !Number.isInteger(iat)) throw new JweError('iat missing');
    if (Math.abs(nowSeconds - iat) > MAX_CLOCK_SKEW_SECONDS) throw new JweError('iat outside window');
    if (typeof jti !== 'string' || jti.length < 8 || jti.length > 128) throw new JweError('jti missing');
    // Keep the jti as long as the token could still pass the iat check.
    const expiresAt = new Date((iat + MAX_CLOCK_SKEW_SECONDS + 1) * 1000);
    if (!(await opts.replayGuard(jti, expiresAt))) throw new JweError('replay');
  }
  return result.plaintext;
}

export interface EncryptOptions {
  iat?: number;
  jti?: string;
  alg?: string;
  enc?: string;
}

/** Encrypts to a recipient's public JWK the way Cardline expects (iat and jti in the protected header). */
export async function encryptCompact(plaintext: string | Uint8Array, recipient: JWK, opts: EncryptOptions = {}): Promise<string> {
  const alg = opts.alg ?? (recipient.alg as string | undefined) ?? DEFAULT_KEY_ALGS[0]!;
  const key = await importJWK(recipient, alg);
  const data = typeof plaintext === 'string' ? new TextEncoder().encode(plaintext) : plaintext;
  return new CompactEncrypt(data)
    .setProtectedHeader({
      alg,
      enc: opts.enc ?? DEFAULT_CONTENT_ENCS[0]!,
      ...(recipient.kid ? { kid: recipient.kid } : {}),
      iat: opts.iat ?? Math.floor(Date.now() / 1000),
      jti: opts.jti ?? randomUUID(),
    })
    .encrypt(key);
}
