// Gateway key primitives: the algorithms, a key's public JWK and loaded halves, rotation grace periods. The
// database-backed ring that creates, seals, caches and rotates a tenant's keys is a service (src/services/identity/key-ring.ts).
import type { KeyObject, webcrypto } from 'node:crypto';
import type { Context } from '@opentelemetry/api';

type CryptoKey = webcrypto.CryptoKey;

export type KeyUse = 'enc' | 'sig';
export const ENC_ALG = 'ECDH-ES+A256KW';
export const SIG_ALG = 'ES256';

/** How long a replaced encryption key still decrypts: clients that fetched the key set a day ago keep working. */
const DEFAULT_ENC_GRACE_SECONDS = 24 * 3600;
/** Added to the token lifetime for a replaced signing key: a token issued just before the rotation still verifies. */
const SIG_GRACE_SKEW_SECONDS = 300;
/** The longest grace a rotation may give (90 days). */
export const MAX_GRACE_SECONDS = 90 * 24 * 3600;

/** The grace a rotation gives the replaced key when none is asked for. */
export function defaultGraceSeconds(use: KeyUse, tokenLifetimeSeconds: number): number {
  return use === 'enc' ? DEFAULT_ENC_GRACE_SECONDS : tokenLifetimeSeconds + SIG_GRACE_SKEW_SECONDS;
}

const DURATION = /^(\d{1,10})([smhd]?)$/;
const UNIT_SECONDS: Record<string, number> = { '': 1, s: 1, m: 60, h: 3600, d: 86_400 };

/** `90s`, `15m`, `24h`, `7d` or bare seconds → seconds; null when malformed or above MAX_GRACE_SECONDS. */
export function parseDuration(text: string): number | null {
  const m = DURATION.exec(text.trim());
  if (!m) return null;
  const seconds = Number(m[1]) * UNIT_SECONDS[m[2]!]!;
  return seconds <= MAX_GRACE_SECONDS ? seconds : null;
}

export interface PublicJwk {
  kty: string;
  crv: string;
  x: string;
  y: string;
  kid: string;
  use: KeyUse;
  alg: string;
}

export interface TenantKey {
  kid: string;
  use: KeyUse;
  alg: string;
  status: 'active' | 'retiring';
  /** A retiring key's end: from then on it is neither accepted nor published. */
  retireAt?: Date | null;
  publicJwk: PublicJwk;
  /** The imported halves, on first use and LRU-bounded by the ring (about 7 KB of native memory each, 0214). */
  privateKey(): Promise<CryptoKey>;
  publicKey(): Promise<CryptoKey>;
  /** The private half for node:crypto's sign, unsealed and made on each call, never kept (checkpoints, decision 0435). */
  signingKey(): KeyObject;
}

export interface TenantKeys {
  /** Active first, newest first. */
  enc: TenantKey[];
  sig: TenantKey[];
}

/** Where a tenant's usable keys come from (the key ring): what the JWE and checkpoint primitives read. */
export interface KeySource {
  forTenant(tenantId: string, trace?: Context): Promise<TenantKeys>;
}
