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
