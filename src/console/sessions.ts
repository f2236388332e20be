// The operations console's sessions (decision 0161): an operator key exchanged for a random session id held
// in an HttpOnly cookie. The store keeps only the id's SHA-256 hash, the operator key's row and when the
// session was last used, so every gateway process behind a load balancer knows every session, and revoking
// the key ends them. The CSRF token is an HMAC of the session id: the page reads it once after sign-in and
// sends it back as a header on every change; nothing stores it.
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Db } from '../store/db.js';
import type { Operator, OperatorKeys } from '../services/identity/operator-keys.js';
import { PLATFORM_TENANT } from '../services/tenancy/tenants.js';

const SESSION_COOKIE = 'cardline_console';
export const CSRF_HEADER = 'x-csrf-token';

const hashOf = (value: string) => createHash('sha256').update(value, 'utf8').digest('hex');

/** What a sign-in answers the page: who it is, the CSRF token, and how long an idle session lasts. */
interface SessionInfo {
  operator: string;
  csrfToken: string;
  idleTimeoutSeconds: number;
}

/** Why a cookie does not open the console: no such session (signed out, never was) or one idle too long. */
type SessionRefusal = 'unknown' | 'expired';

export class ConsoleSessions {
  constructor(
    private readonly db: Db,
    private readonly operatorKeys: OperatorKeys,
    readonly idleMinutes: number,
  ) {}

  static csrfOf(sessionId: string): string {
    return createHmac('sha256', sessionId).update('cardline-console-csrf').digest('base64url');
  }

  /** Whether a presented CSRF token is the one of this session (constant time). */
  static csrfMatches(sessionId: string, presented: string | undefined): boolean {
    if (!presented) return false;
    const expected = Buffer.from(ConsoleSessions.csrfOf(sessionId));
    const given = Buffer.from(presented);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  info(sessionId: string, operator: string): SessionInfo {
    return { operator, csrfToken: ConsoleSessions.csrfOf(sessionId), idleTimeoutSeconds: this.idleMinutes * 60 };
  }

  /** Opens a session for a valid operator key; null when the key is unknown or revoked. */
  async signIn(key: string): Promise<{ sessionId: string; operator: Operator } | null> {
    const operator = await this.operatorKeys.verify(key);
    if (!operator) return null;
    const row = await this.db.query<{ id: string }>(
      'SELECT id FROM operator_keys WHERE tenant_id = $1 AND key_hash = $2 AND revoked_at IS NULL',
      [PLATFORM_TENANT, hashOf(key)],
    );
    if (!row.rows[0]) return null;
    const sessionId = randomBytes(32).toString('base64url');
    await this.db.query('INSERT INTO console_sessions (tenant_id, id_hash, key_id, operator) VALUES ($1, $2, $3, $4)', [PLATFORM_TENANT, hashOf(sessionId), row.rows[0].id, operator.name]);
    // Sessions idle for a day past the timeout are of no use to anyone: cleared as new ones open.
    await this.db.query(`DELETE FROM console_sessions WHERE tenant_id = $1 AND seen_at < now() - make_interval(mins => $2::int)`, [PLATFORM_TENANT, this.idleMinutes + 1440]);
    return { sessionId, operator };
  }

  /** A live session's operator, touched by the store's clock in one statement, or why none (a revoked key ends it). */
  async use(sessionId: string): Promise<Operator | SessionRefusal> {
    const idHash = hashOf(sessionId);
    const r = await this.db.query<{ operator: string }>(
      `UPDATE console_sessions s SET seen_at = now()
        WHERE s.tenant_id = $3 AND s.id_hash = $1 AND s.seen_at > now() - make_interval(mins => $2::int)
          AND EXISTS (SELECT 1 FROM operator_keys k WHERE k.tenant_id = $3 AND k.id = s.key_id AND k.revoked_at IS NULL)
        RETURNING s.operator`,
      [idHash, this.idleMinutes, PLATFORM_TENANT],
    );
    if (r.rows[0]) return { name: r.rows[0].operator };
    const gone = await this.db.query('DELETE FROM console_sessions WHERE tenant_id = $1 AND id_hash = $2', [PLATFORM_TENANT, idHash]);
    return gone.rowCount ? 'expired' : 'unknown';
  }

  async signOut(sessionId: string): Promise<void> {
    await this.db.query('DELETE FROM console_sessions WHERE tenant_id = $1 AND id_hash = $2', [PLATFORM_TENANT, hashOf(sessionId)]);
  }
}

/** The session id in a Cookie header, if any (only our cookie is read; its value is base64url). */
export function sessionIdOf(cookieHeader: string | undefined): string | null {
  if (!cookieHeader) return null;
  for (const part of cookieHeader.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === SESSION_COOKIE) {
      const value = part.slice(eq + 1).trim();
      return /^[\w-]{43}$/.test(value) ? value : null;
    }
  }
  return null;
}

/** The Set-Cookie value that holds a session, or (sessionId null) that clears it. */
export function sessionCookie(sessionId: string | null, secure: boolean): string {
  const attributes = ['Path=/', 'HttpOnly', 'SameSite=Strict', ...(secure ? ['Secure'] : [])];
  return sessionId === null
    ? [`${SESSION_COOKIE}=`, 'Max-Age=0', ...attributes].join('; ')
    : [`${SESSION_COOKIE}=${sessionId}`, ...attributes].join('; ');
}
