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
   * Every attempt is counted BEFORE the password is checked, atomically, so that a burst of concurrent
   * guesses cannot all slip past the lock while argon2 runs: attempts beyond the tenth within a lock
   * period are refused without being checked. A success clears the count.
   */
  async authenticate(tenantId: string, username: string, password: string): Promise<User | null> {
    const r = await this.db.query<UserRow>(
      'SELECT id, username, role, password_hash, disabled FROM users WHERE tenant_id = $1 AND username = $2',
      [tenantId, username],
    );
    const row = r.rows[0];
    if (!row || row.disabled) {
      await this.verifyDummy(password);
      return null;
    }
    const attempt = await this.countAttempt(tenantId, username);
    if (attempt > MAX_FAILURES) {
      await this.verifyDummy(password);
      return null;
    }
    if (!(await this.checkPassword(row.password_hash, password))) return null;
    await this.db.query('DELETE FROM login_attempts WHERE tenant_id = $1 AND username = $2', [tenantId, username]);
    return { id: row.id, tenantId, username: row.username, role: row.role };
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

  /**
   * Counts an attempt and returns its number within the current lock period. The tenth attempt sets
   * the lock (it is still checked: if it is right, the success clears the lock); later ones are refused
   * unchecked until the lock expires, when counting starts again at 1.
   */
  private async countAttempt(tenantId: string, username: string): Promise<number> {
    const r = await this.db.query<{ failures: number }>(
      `INSERT INTO login_attempts AS a (tenant_id, username, failures, last_failure_at)
            VALUES ($1, $2, 1, now())
       ON CONFLICT (tenant_id, username) DO UPDATE SET
         failures = CASE WHEN a.locked_until IS NOT NULL AND a.locked_until <= now() THEN 1 ELSE a.failures + 1 END,
         locked_until = CASE
           WHEN a.locked_until IS NOT NULL AND a.locked_until <= now() THEN NULL
           WHEN a.locked_until IS NULL AND a.failures + 1 >= $3 THEN now() + make_interval(mins => $4)
           ELSE a.locked_until END,
         last_failure_at = now()
       RETURNING failures`,
      [tenantId, username, MAX_FAILURES, LOCK_MINUTES],
    );
    return Number(r.rows[0]!.failures);
  }
}
