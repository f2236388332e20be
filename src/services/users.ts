// API users: argon2id password hashes and the lockout rule (10 failures lock a user for 30 minutes).
import { randomUUID } from 'node:crypto';
import { Algorithm, hash, verify } from '@node-rs/argon2';
import { ROLES, type Role } from '../../schemas/common.js';
import type { Db, Queryable } from '../store/db.js';

export const MAX_FAILURES = 10;
export const LOCK_MINUTES = 30;

export interface User {
  id: string;
  tenantId: string;
  username: string;
  role: Role;
}

interface UserRow {
  id: string;
  username: string;
  role: Role;
  password_hash: string;
  disabled: boolean;
}

const HASH_OPTIONS = { algorithm: Algorithm.Argon2id } as const;

/** Where a lockout is reported (the request's logger). */
export interface LockoutLogger {
  warn(obj: object, msg: string): void;
}

export class UserService {
  /** Verified against when the user is unknown, so that timing does not reveal which usernames exist. */
  private dummyHash: Promise<string> | undefined;

  constructor(private readonly db: Db) {}

  async add(tenantId: string, username: string, role: Role, password: string, db: Queryable = this.db): Promise<User> {
    if (!ROLES.includes(role)) throw new Error(`Unknown role '${role}'; one of ${ROLES.join(', ')}`);
    if (password.length < 8) throw new Error('A password needs at least 8 characters');
    // Adding an existing user resets it: new role and password, enabled, unlocked; its id is kept.
    const r = await db.query<{ id: string }>(
      `INSERT INTO users (tenant_id, username, id, role, password_hash) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (tenant_id, username) DO UPDATE SET role = EXCLUDED.role, password_hash = EXCLUDED.password_hash, disabled = false
       RETURNING id`,
      [tenantId, username, randomUUID(), role, await hash(password, HASH_OPTIONS)],
    );
    const id = r.rows[0]!.id;
    await db.query('DELETE FROM login_attempts WHERE tenant_id = $1 AND username = $2', [tenantId, username]);
    return { id, tenantId, username, role };
  }

  /**
   * Checks a password. Unknown user, wrong password, disabled and locked account all resolve null:
   * the caller answers them alike.
   *
   * An attempt is registered as "in flight" atomically BEFORE argon2 runs, and refused unchecked when
   * the user's confirmed failures plus the attempts already in flight reach ten: a burst of concurrent
   * guesses cannot all slip past the lock while the hashes are computed. Only checked, wrong passwords
   * count as failures (the tenth locks the user for 30 minutes); a success clears them.
   */
  async authenticate(tenantId: string, username: string, password: string, log?: LockoutLogger): Promise<User | null> {
    const r = await this.db.query<UserRow>(
      'SELECT id, username, role, password_hash, disabled FROM users WHERE tenant_id = $1 AND username = $2',
      [tenantId, username],
    );
    const row = r.rows[0];
    if (!row || row.disabled) {
      await this.verifyDummy(password);
      return null;
    }
    const admitted = await this.beginAttempt(tenantId, username);
    if (!admitted) {
      await this.verifyDummy(password);
      return null;
    }
    const ok = await this.checkPassword(row.password_hash, password);
    if ((await this.endAttempt(tenantId, username, ok)) === 'locked') {
      // One line per lock, for the operator (and a SIEM): who, never the password.
      log?.warn({ tenant: tenantId, user: username, failures: MAX_FAILURES, lockedMinutes: LOCK_MINUTES }, 'user locked after repeated failed logins');
    }
    return ok ? { id: row.id, tenantId, username: row.username, role: row.role } : null;
  }

  /**
   * Registers an attempt in flight; false (and nothing registered) when the user is locked or the
   * failures plus attempts in flight already reach the limit. An expired lock starts afresh; attempts
   * left in flight by a process that died are forgotten after 30 seconds.
   */
  private async beginAttempt(tenantId: string, username: string): Promise<boolean> {
    const r = await this.db.query<{ admitted: boolean }>(
      `INSERT INTO login_attempts AS a (tenant_id, username, failures, in_flight, in_flight_at)
            VALUES ($1, $2, 0, 1, now())
       ON CONFLICT (tenant_id, username) DO UPDATE SET
         failures = CASE WHEN a.locked_until <= now() THEN 0 ELSE a.failures END,
         locked_until = CASE WHEN a.locked_until <= now() THEN NULL ELSE a.locked_until END,
         in_flight = (CASE WHEN a.in_flight_at < now() - interval '30 seconds' THEN 0 ELSE a.in_flight END) + 1,
         in_flight_at = now()
       RETURNING locked_until IS NULL AND failures + in_flight <= $3 AS admitted`,
      [tenantId, username, MAX_FAILURES],
    );
    if (r.rows[0]!.admitted) return true;
    await this.db.query(
      'UPDATE login_attempts SET in_flight = greatest(in_flight - 1, 0) WHERE tenant_id = $1 AND username = $2',
      [tenantId, username],
    );
    return false;
  }

  /** Settles an attempt: a failure is counted (the tenth locks: 'locked'), a success clears the record. */
  private async endAttempt(tenantId: string, username: string, ok: boolean): Promise<'locked' | undefined> {
    if (ok) {
      const r = await this.db.query<{ in_flight: number }>(
        `UPDATE login_attempts SET failures = 0, in_flight = greatest(in_flight - 1, 0), locked_until = NULL
          WHERE tenant_id = $1 AND username = $2 RETURNING in_flight`,
        [tenantId, username],
      );
      if (r.rows[0]?.in_flight === 0) {
        await this.db.query(
          'DELETE FROM login_attempts WHERE tenant_id = $1 AND username = $2 AND in_flight = 0 AND failures = 0',
          [tenantId, username],
        );
      }
      return;
    }
    // At most ten attempts are admitted before a lock, and a lock that expires resets the count, so the
    // failure that sets the lock is the one that brings the count to exactly ten: that update reports it.
    const r = await this.db.query<{ locked_now: boolean }>(
      `UPDATE login_attempts SET
         failures = failures + 1,
         in_flight = greatest(in_flight - 1, 0),
         last_failure_at = now(),
         locked_until = CASE WHEN locked_until IS NULL AND failures + 1 >= $3 THEN now() + make_interval(mins => $4)
                             ELSE locked_until END
       WHERE tenant_id = $1 AND username = $2
       RETURNING locked_until IS NOT NULL AND failures = $3 AS locked_now`,
      [tenantId, username, MAX_FAILURES, LOCK_MINUTES],
    );
    return r.rows[0]?.locked_now ? 'locked' : undefined;
  }

  /** The argon2id check (the costly step the attempt counter guards). */
  checkPassword(passwordHash: string, password: string): Promise<boolean> {
    return verify(passwordHash, password).catch(() => false);
  }

  /** Spends the time a real check takes, so that timing does not tell which refusal it was. */
  private async verifyDummy(password: string): Promise<void> {
    this.dummyHash ??= hash(randomUUID(), HASH_OPTIONS);
    await verify(await this.dummyHash, password).catch(() => false);
  }
}
