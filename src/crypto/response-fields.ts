// Encrypted response fields (DESIGN §4): a card's PAN, CVV and expiry leave only as JWEs to the tenant's
// registered client key, one compact JWE per field (decision 0020); without a client key they do not leave.
import { randomUUID } from 'node:crypto';
import { CompactEncrypt, importJWK } from 'jose';
import type { CardDetails } from '../../connectors/contract.js';
import type { SensitiveCardFields } from '../../schemas/keys.js';
import type { ClientKeyStore } from './client-keys.js';
import { DEFAULT_CONTENT_ENCS } from './jwe.js';
import { ENC_ALG } from './keys.js';

const encoder = new TextEncoder();

/**
 * The card's sensitive values, each a compact JWE to the tenant's client key (protected header: alg, enc,
 * kid of the client key, iat, jti); undefined when the tenant registered no client key.
 */
export async function encryptSensitive(
  clientKeys: ClientKeyStore,
  tenantId: string,
  card: Pick<CardDetails, 'sensitive' | 'expiry'>,
): Promise<SensitiveCardFields | undefined> {
  const registered = await clientKeys.get(tenantId);
  if (!registered) return undefined;
  const key = await importJWK(registered.jwk, ENC_ALG);
  const iat = Math.floor(Date.now() / 1000);
  const seal = (value: string) =>
    new CompactEncrypt(encoder.encode(value))
      .setProtectedHeader({ alg: ENC_ALG, enc: DEFAULT_CONTENT_ENCS[0]!, kid: registered.jwk.kid, iat, jti: randomUUID() })
      .encrypt(key);
  const pan = await seal(card.sensitive.pan);
  const cvv = card.sensitive.cvv === undefined ? undefined : await seal(card.sensitive.cvv);
  const expiry = await seal(card.expiry);
  return cvv === undefined ? { pan, expiry } : { pan, cvv, expiry };
}
