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
  locked: boolean;
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
   */
  async authenticate(tenantId: string, username: string, password: string): Promise<User | null> {
    const r = await this.db.query<UserRow>(
      `SELECT u.id, u.username, u.role, u.password_hash, u.disabled,
              coalesce(a.locked_until > now(), false) AS locked
         FROM users u LEFT JOIN login_attempts a ON a.tenant_id = u.tenant_id AND a.username = u.username
        WHERE u.tenant_id = $1 AND u.username = $2`,
      [tenantId, username],
    );
    const row = r.rows[0];
    if (!row) {
      this.dummyHash ??= hash(randomUUID(), HASH_OPTIONS);
      await verify(await this.dummyHash, password).catch(() => false);
      return null;
    }
    const ok = await verify(row.password_hash, password).catch(() => false);
    if (row.locked || row.disabled) return null;
    if (!ok) {
      await this.recordFailure(tenantId, username);
      return null;
    }
    await this.db.query('DELETE FROM login_attempts WHERE tenant_id = $1 AND username = $2', [tenantId, username]);
    return { id: row.id, tenantId, username: row.username, role: row.role };
  }

  /** Counts a failure atomically; the tenth within a lock period locks the user. */
  private async recordFailure(tenantId: string, username: string): Promise<void> {
    await this.db.query(
      `INSERT INTO login_attempts AS a (tenant_id, username, failures, last_failure_at)
            VALUES ($1, $2, 1, now())
       ON CONFLICT (tenant_id, username) DO UPDATE SET
         failures = CASE WHEN a.locked_until IS NOT NULL AND a.locked_until <= now() THEN 1 ELSE a.failures + 1 END,
         locked_until = CASE
           WHEN a.locked_until IS NOT NULL AND a.locked_until <= now() THEN NULL
           WHEN a.failures + 1 >= $3 THEN now() + make_interval(mins => $4)
           ELSE a.locked_until END,
         last_failure_at = now()`,
      [tenantId, username, MAX_FAILURES, LOCK_MINUTES],
    );
  }
}
