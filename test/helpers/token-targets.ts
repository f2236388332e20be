// The two business routes that token tests attack, one per error dialect, with the exact 401 body each
// answers. Shared by test/routes/auth.test.ts and test/routes/jwt-attacks.test.ts.
import { LIMIT_URL, PROBLEM_BASE, UPGRADE_URL } from './app.js';

export const UNAUTHORIZED_DETAIL = 'A valid bearer token for this tenant is required; obtain one from POST /api/authenticate.';

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
