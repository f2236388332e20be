// The management listener's second way in (decision 0161): the console's session cookie, taken as the
// operator key it was opened with. Reads need the cookie; a change also needs the session's CSRF token in
// X-CSRF-Token, so another site cannot make the browser send one. An operator key in Authorization wins.
import type { FastifyRequest } from 'fastify';
import { CardlineError } from '../errors.js';
import type { Operator } from '../services/identity/operator-keys.js';
import { declareErrors, errorCase, isManagement, isWrite } from '../step-errors.js';
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
  /** `adminUrl`: this listener as the browser reached it, where the CLI's --admin-url points. */
  badKey: (adminUrl: string) =>
    new CardlineError('CL_OPERATOR_UNAUTHORIZED', {
      status: 401,
      detail:
        'This operator key is unknown or revoked: check it (the demo printed one at its first start), or have an operator with a key create one while the gateway runs: ' +
        `\`CARDLINE_OPERATOR_KEY=<their key> npx cardline --admin-url ${adminUrl} operator-key create --name <name>\`.`,
    }),
  noSession: () =>
    new CardlineError('CL_OPERATOR_UNAUTHORIZED', {
      status: 401,
      detail: 'There is no console session: sign in with an operator key.',
    }),
};

/** What the session answers on a management operation called with its cookie instead of an operator key. */
export const consoleSessionErrors = declareErrors('console-session', (op) =>
  isManagement(op)
    ? [
        errorCase('console-session-expired', 'The console session (its cookie instead of an operator key) ended after its idle timeout', ConsoleErrors.sessionExpired(15)),
        ...(isWrite(op.method) ? [errorCase('console-csrf', "A change sent with the console session's cookie without the session's CSRF token (X-CSRF-Token)", ConsoleErrors.csrf())] : []),
      ]
    : [],
);

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
