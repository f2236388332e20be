// A password for a tenant's user, encrypted in the browser to the tenant's key as the CLI does it
// (ECDH-ES+A256KW / A256GCM, iat and a one-time jti in the header): the plain text never leaves the page.
import { CompactEncrypt, importJWK, type JWK } from 'jose';
import { api, enc } from './api.js';

export async function encryptForTenant(tenantId: string, plaintext: string): Promise<string> {
  const { keys } = await api<{ keys: (JWK & { alg?: string; kid?: string })[] }>('GET', `/v1/tenants/${enc(tenantId)}/keys`);
  const key = keys[0];
  if (!key) throw new Error(`Tenant '${tenantId}' has no encryption key yet; try again in a moment.`);
  const alg = key.alg ?? 'ECDH-ES+A256KW';
  return new CompactEncrypt(new TextEncoder().encode(plaintext))
    .setProtectedHeader({ alg, enc: 'A256GCM', ...(key.kid ? { kid: key.kid } : {}), iat: Math.floor(Date.now() / 1000), jti: crypto.randomUUID() })
    .encrypt(await importJWK(key, alg));
}
