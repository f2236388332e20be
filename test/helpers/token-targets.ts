// The two business routes that token tests attack, one per error dialect, with the exact 401 body each
// answers, and ES256 signature helpers. Shared by test/routes/auth.test.ts and test/routes/jwt-attacks.test.ts.
import { LIMIT_URL, PROBLEM_BASE, UPGRADE_URL } from './app.js';

const UNAUTHORIZED_DETAIL = 'A valid bearer token for this tenant is required; obtain one from POST /api/authenticate.';

export const UNAUTHORIZED_ENVELOPE = {
  result: null,
  exception: { errorCode: 'ERR_401', shortMessage: 'Unauthorized', detailMessage: UNAUTHORIZED_DETAIL },
  pagination: null,
};

export const UNAUTHORIZED_PROBLEM = {
  type: `${PROBLEM_BASE}/problem-with-message`,
  title: 'Unauthorized',
  status: 401,
  message: 'error.http.401',
  detail: UNAUTHORIZED_DETAIL,
};

/**
 * The WWW-Authenticate challenge of each kind of 401 (RFC 6750 §3, decision 0171), written out here rather than
 * imported, so that a change to the gateway's shows: no bearer token at all, a refused one, an expired one.
 */
export const CHALLENGE = {
  missing: 'Bearer realm="cardline"',
  invalid: 'Bearer error="invalid_token"',
  expired: 'Bearer error="invalid_token", error_description="The access token expired"',
} as const;

/** The attacks that send no bearer token at all, and those whose token is genuine but expired. */
const NO_BEARER_TOKEN = new Set(['no Authorization header', 'an empty bearer', 'a Basic credential', 'the token without the Bearer scheme']);
const EXPIRED = new Set(['expired', 'exp a few seconds ago (no clock tolerance)']);

/** The challenge a 401 to the named attack carries. */
export const challengeFor = (attack: string): string =>
  NO_BEARER_TOKEN.has(attack) ? CHALLENGE.missing : EXPIRED.has(attack) ? CHALLENGE.expired : CHALLENGE.invalid;

export interface TokenTarget {
  name: string;
  method: 'POST' | 'PUT';
  url: string;
  /** The spec names TENANT on the credit-line route and X-TENANT-ID on the card route. */
  tenantHeader: string;
  payload: Record<string, unknown>;
  unauthorized: unknown;
}

export const TOKEN_TARGETS: TokenTarget[] = [
  {
    name: 'credit line (envelope)',
    method: 'POST',
    url: LIMIT_URL,
    tenantHeader: 'TENANT',
    payload: { entityId: 'ENT-1002', amount: '60000.00' },
    unauthorized: UNAUTHORIZED_ENVELOPE,
  },
  {
    name: 'card upgrade (problem)',
    method: 'PUT',
    url: UPGRADE_URL,
    tenantHeader: 'X-TENANT-ID',
    payload: { kitNo: 'KIT-2002', entityId: 'ENT-1002', communicationAddress: { usePrimaryAddress: true } },
    unauthorized: UNAUTHORIZED_PROBLEM,
  },
];

/** The order n of P-256: an ECDSA signature (r, s) and (r, n − s) verify alike. */
export const P256_N = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;

/** The s of a compact ES256 JWS (its signature is raw r‖s). */
export const sOf = (token: string): bigint =>
  BigInt(`0x${Buffer.from(token.split('.')[2]!, 'base64url').subarray(32).toString('hex')}`);

/** The same token with the signature's s replaced by n − s: still a valid ECDSA signature of the same input. */
export function malleate(token: string): string {
  const raw = Buffer.from(token.split('.')[2]!, 'base64url');
  const s = Buffer.from((P256_N - sOf(token)).toString(16).padStart(64, '0'), 'hex');
  return `${token.slice(0, token.lastIndexOf('.'))}.${Buffer.concat([raw.subarray(0, 32), s]).toString('base64url')}`;
}

/** The token with a low-S signature, as the gateway signs and requires (s ≤ n/2). */
export const lowS = (token: string): string => (sOf(token) > P256_N / 2n ? malleate(token) : token);
