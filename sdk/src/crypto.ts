// JWE as the gateway requires it (spec 5.3, decisions 0019-0020): ECDH-ES+A256KW with A256GCM to the tenant's
// gateway key, its kid, a fresh `iat` and a unique `jti` in the protected header (a JWE is accepted once);
// and the opening of sealed response fields with the client's own private key.
import { CompactEncrypt, compactDecrypt, importJWK, type JWK } from 'jose';

export type { JWK };

/** Encrypts `plaintext` to `key` (a public JWK of GET /api/keys). Encrypt anew for every attempt. */
export async function encryptTo(key: JWK, plaintext: string, now: () => number = Date.now): Promise<string> {
  if (!key.kid) throw new Error('The gateway key has no kid');
  return new CompactEncrypt(new TextEncoder().encode(plaintext))
    .setProtectedHeader({ alg: 'ECDH-ES+A256KW', enc: 'A256GCM', kid: key.kid, iat: Math.floor(now() / 1000), jti: globalThis.crypto.randomUUID() })
    .encrypt(await importJWK(key, 'ECDH-ES+A256KW'));
}

/** A compact JWE: five base64url parts. */
export const isCompactJwe = (value: unknown): value is string =>
  typeof value === 'string' && /^[\w-]+\.[\w-]*\.[\w-]+\.[\w-]+\.[\w-]+$/.test(value);

const PINNED = { keyManagementAlgorithms: ['ECDH-ES+A256KW'], contentEncryptionAlgorithms: ['A256GCM'] };

/** Opens every compact JWE string in `value` (the `sensitive` fields of a card read) with the client's private key. */
export async function openSealed<T>(value: T, privateKey: JWK): Promise<T> {
  const key = await importJWK(privateKey, 'ECDH-ES+A256KW');
  const open = async (v: unknown): Promise<unknown> => {
    // The algorithms are pinned: never let the message choose them.
    if (isCompactJwe(v)) return new TextDecoder().decode((await compactDecrypt(v, key, PINNED)).plaintext);
    if (Array.isArray(v)) return Promise.all(v.map(open));
    if (typeof v === 'object' && v !== null) {
      const out: Record<string, unknown> = {};
      for (const [k, sub] of Object.entries(v)) out[k] = await open(sub);
      return out;
    }
    return v;
  };
  return (await open(value)) as T;
}

/**
 * Encrypts the string values at `paths` (dotted, `[]` for each array item) in a copy of `body`: the address
 * lines of a card upgrade, a PIN block. Values that already are JWEs are left as they are.
 */
export async function encryptFields(body: unknown, paths: readonly string[], encrypt: (v: string) => Promise<string>): Promise<unknown> {
  const copy = structuredClone(body);
  const walk = async (node: unknown, parts: string[]): Promise<unknown> => {
    if (parts.length === 0) return typeof node === 'string' && !isCompactJwe(node) ? encrypt(node) : node;
    const [head, ...rest] = parts as [string, ...string[]];
    if (head.endsWith('[]')) {
      const name = head.slice(0, -2);
      const list = name ? (node as Record<string, unknown> | undefined)?.[name] : node;
      if (!Array.isArray(list)) return node;
      for (let i = 0; i < list.length; i++) list[i] = await walk(list[i], rest);
      return node;
    }
    if (typeof node !== 'object' || node === null || !(head in node)) return node;
    (node as Record<string, unknown>)[head] = await walk((node as Record<string, unknown>)[head], rest);
    return node;
  };
  for (const path of paths) await walk(copy, path.split('.'));
  return copy;
}
