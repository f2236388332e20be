// The management listener's second way in (decision 0161): the console's session cookie, taken as the
// operator key it was opened with. Reads need the cookie; a change also needs the session's CSRF token in
// X-CSRF-Token, so another site cannot make the browser send one. An operator key in Authorization wins.
import type { FastifyRequest } from 'fastify';
import { CardlineError } from '../errors.js';
import type { Operator } from '../services/identity/operator-keys.js';
import { CSRF_HEADER, ConsoleSessions, sessionIdOf } from './sessions.js';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export const ConsoleErrors = {
  sessionExpired: (minutes: number) =>
    new CardlineError('CL_CONSOLE_SESSION_EXPIRED', {
      status: 401,
      detail: `The console session ended after ${minutes} minutes without use; sign in again with your operator key.`,
      headers: { 'www-authenticate': 'Bearer' },
    }),
  csrf: () =>
    new CardlineError('CL_CONSOLE_CSRF', {
      status: 403,
      detail: `A change made with the console session needs the session's CSRF token in the ${CSRF_HEADER} header; reload the console and try again.`,
    }),
  badKey: () =>
    new CardlineError('CL_OPERATOR_UNAUTHORIZED', {
      status: 401,
      detail: 'This operator key is unknown or revoked: check it, or create one with `npx cardline operator-key create --name <name>`.',
    }),
  noSession: () =>
    new CardlineError('CL_OPERATOR_UNAUTHORIZED', {
      status: 401,
      detail: 'There is no console session: sign in with an operator key.',
    }),
};

/** The console session's operator or null; throws for an idle session and for a change without its CSRF token. */
export async function consoleOperator(sessions: ConsoleSessions, request: FastifyRequest): Promise<Operator | null> {
  const sessionId = sessionIdOf(request.headers.cookie);
  if (!sessionId) return null;
  if (!SAFE_METHODS.has(request.method)) {
    const presented = request.headers[CSRF_HEADER];
    if (!ConsoleSessions.csrfMatches(sessionId, typeof presented === 'string' ? presented : undefined)) throw ConsoleErrors.csrf();
  }
  const used = await sessions.use(sessionId);
  if (used === 'expired') throw ConsoleErrors.sessionExpired(sessions.idleMinutes);
  if (used === 'unknown') return null;
  request.ctx.consoleSession = sessionId;
  return used;
}
