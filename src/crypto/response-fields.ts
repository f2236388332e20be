// Encrypted response fields (DESIGN §4): values such as a card's PAN, CVV and expiry leave only as JWEs to
// the tenant's registered client key, one compact JWE per field (decision 0020); without a client key they do not leave.
import { randomUUID } from 'node:crypto';
import { CompactEncrypt, importJWK } from 'jose';
import type { RegisteredClientJwk } from '../../schemas/keys.js';
import { DEFAULT_CONTENT_ENCS } from './jwe.js';
import { ENC_ALG } from './keys.js';

/** Values that leave only as JWEs to the tenant's registered client key (decision 0020); undefined ones are left out. */
export type SensitiveValues = Record<string, string | undefined>;
/** The same values, each sealed; the whole is undefined when the tenant registered no client key. */
export type Sealed<S extends SensitiveValues> = { [K in keyof S]: undefined extends S[K] ? string | undefined : string };

/** Where a tenant's registered client key comes from (the client-key store). */
export interface ClientKeySource {
  get(tenantId: string): Promise<{ jwk: RegisteredClientJwk } | null>;
}

const encoder = new TextEncoder();

/** Each defined value as a JWE to the tenant's client key; undefined as a whole when none is registered. */
export async function sealFields<S extends SensitiveValues>(clientKeys: ClientKeySource, tenantId: string, values: S): Promise<Sealed<S> | undefined> {
  const registered = await clientKeys.get(tenantId);
  if (!registered) return undefined;
  const key = await importJWK(registered.jwk, ENC_ALG);
  const iat = Math.floor(Date.now() / 1000);
  const sealed: Record<string, string> = {};
  for (const [name, value] of Object.entries(values)) {
    if (value === undefined) continue;
    sealed[name] = await new CompactEncrypt(encoder.encode(value))
      .setProtectedHeader({ alg: ENC_ALG, enc: DEFAULT_CONTENT_ENCS[0]!, kid: registered.jwk.kid, iat, jti: randomUUID() })
      .encrypt(key);
  }
  return sealed as Sealed<S>;
}
