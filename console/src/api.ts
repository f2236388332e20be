// The console's one client of the management API: the SDK's CardlineAdmin (generated from the management table,
// bundled from the SDK's sources), in its console variant: same origin, the session cookie the browser sends
// (the page never sees it) and, on every change, the session's CSRF token, held in memory only. The session
// itself (sign in, the CSRF token, sign out) is the console's own three routes, not operations of the table.
import { CardlineAdmin } from '../../sdk/src/admin.js';
import { CardlineConnectionError, CardlineProblemError } from '../../sdk/src/errors.js';

let csrf = '';
let onSignedOut: (message: string) => void = () => undefined;

export const session = {
  set(token: string): void {
    csrf = token;
  },
  clear(): void {
    csrf = '';
  },
  onSignedOut(handler: (message: string) => void): void {
    onSignedOut = handler;
  },
};

const detailOf = async (res: Response): Promise<string | undefined> => {
  const body = (await res.clone().json().catch(() => null)) as { detail?: unknown } | null;
  return typeof body?.detail === 'string' ? body.detail : undefined;
};

/** Every answer passes here first: a 401 means the session ended (idle, signed out elsewhere, key revoked). */
const watched: typeof fetch = async (input, init) => {
  const res = await fetch(input, init);
  if (res.status === 401) onSignedOut((await detailOf(res)) ?? 'The console session ended; sign in again.');
  return res;
};

/** The management API, as this console's signed-in operator. */
export const admin = new CardlineAdmin({ baseUrl: location.origin, session: { csrfToken: () => csrf }, fetch: watched });

/** What the session routes answer the page: who it is, the CSRF token, and how long an idle session lasts. */
export interface SessionInfo {
  operator: string;
  csrfToken: string;
  idleTimeoutSeconds: number;
}

class SessionError extends Error {
  constructor(readonly status: number, detail: string) {
    super(detail);
  }
}

/** The console's session routes: sign in (POST), CSRF token (GET), sign out (DELETE). */
export async function sessionRequest(method: 'GET' | 'POST' | 'DELETE', body?: { key: string }): Promise<SessionInfo | null> {
  const headers: Record<string, string> = { accept: 'application/json, application/problem+json' };
  if (body) headers['content-type'] = 'application/json';
  if (method === 'DELETE') headers['x-csrf-token'] = csrf;
  const send = method === 'DELETE' ? watched : fetch;
  const res = await send('/console/session', { method, headers, credentials: 'same-origin', ...(body ? { body: JSON.stringify(body) } : {}) });
  if (!res.ok) throw new SessionError(res.status, (await detailOf(res)) ?? `The gateway answered ${res.status}.`);
  return method === 'DELETE' ? null : ((await res.json()) as { result: SessionInfo }).result;
}

/** The message a person reads: what went wrong (the API's detail) and, for a form, which field. */
export function messageOf(err: unknown): string {
  if (err instanceof CardlineProblemError) {
    const detail = err.detail ?? `The gateway answered ${err.status}.`;
    const fields = err.fieldErrors.map((f) => `${f.field}: ${f.message}`).join('; ');
    return fields && !detail.includes(fields) ? `${detail} (${fields})` : detail;
  }
  if (err instanceof CardlineConnectionError) {
    return err.status === 0 ? 'The gateway did not answer: check that it is running and reachable, then try again.' : `The gateway answered ${err.status}.`;
  }
  if (err instanceof SessionError) return err.message;
  if (err instanceof TypeError) return 'The gateway did not answer: check that it is running and reachable, then try again.';
  return String((err as Error)?.message ?? err);
}
