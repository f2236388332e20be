// API users: argon2id password hashes, the lockout rule (10 failures lock a user for 30 minutes), the
// administration a tenant's Admin does (the last Admin cannot go), and token generations: a change that
// must end a user's sessions (disabled, removed, role or password changed) bumps the generation its tokens
// carry, and every process refuses older ones once it hears of the change (decision 0034).
import { randomUUID } from 'node:crypto';
import type { Context } from '@opentelemetry/api';
import { Algorithm, hash, verify } from '@node-rs/argon2';
import { LRUCache } from 'lru-cache';
import { entryBound } from '../infrastructure/cache-ttl.js';
import { ROLES, type Role } from '../../../schemas/common.js';
import { Errors } from '../../errors.js';
import type { Db, Queryable } from '../../store/db.js';
import { tracedUnder } from '../../store/traced.js';
import { keyPage, type KeyPage } from '../../paging/key-cursor.js';
import type { ChangeFeed } from '../infrastructure/changes.js';
import type { Observer } from '../infrastructure/metrics.js';

const MAX_FAILURES = 10;
const LOCK_MINUTES = 30;

export const PASSWORD_MIN = 8;
const PASSWORD_MAX = 1024;

export interface User {
  id: string;
  tenantId: string;
  username: string;
  role: Role;
  /** Tokens carry it; a token of an older generation is refused. */
  generation: number;
}

/** A user as a tenant's Admin sees it: never a hash. */
export interface UserView {
  username: string;
  role: Role;
  disabled: boolean;
  /** Locked by ten failed logins, until the lock expires or an Admin unlocks it. */
  locked: boolean;
  lastLoginAt: string | null;
}

/** A new tenant's first Admin, its password checked and hashed (UserService.firstAdmin). */
export interface FirstAdmin {
  username: string;
  passwordHash: string;
}

/** What verifying a token needs to know of its user, cached per process until the user changes. */
export interface UserState {
  generation: number;
  disabled: boolean;
}

interface UserRow {
  id: string;
  username: string;
  role: Role;
  password_hash: string;
  disabled: boolean;
  token_generation: number;
}

interface ViewRow {
  username: string;
  role: Role;
  disabled: boolean;
  locked: boolean;
  last_login_at: Date | string | null;
}

const toView = (r: ViewRow): UserView => ({
  username: r.username,
  role: r.role,
  disabled: r.disabled,
  locked: r.locked,
  lastLoginAt: r.last_login_at === null ? null : new Date(r.last_login_at).toISOString(),
});

const VIEW_SELECT = `SELECT u.username, u.role, u.disabled, u.last_login_at,
         COALESCE(a.locked_until > now(), false) AS locked
    FROM users u LEFT JOIN login_attempts a ON a.tenant_id = u.tenant_id AND a.username = u.username`;

/** A password rule the API and the CLI share; the message says what to send. */
export function passwordProblem(password: string): string | null {
  if (password.length < PASSWORD_MIN) return `A password needs at least ${PASSWORD_MIN} characters.`;
  if (password.length > PASSWORD_MAX) return `A password has at most ${PASSWORD_MAX} characters.`;
  return null;
}

/** The argon2id cost of new hashes: the library's defaults, less only in the suite's test gateways (decision 0378). */
export interface PasswordHashing {
  /** KiB of memory; at least 8. */
  memoryCost: number;
  /** Passes over the memory; at least 1. */
  timeCost: number;
}

const HASH_OPTIONS = { algorithm: Algorithm.Argon2id } as const;

/** Where a lockout is reported (the request's logger). */
export interface LockoutLogger {
  warn(obj: object, msg: string): void;
}

export class UserService {
  /** Verified against when the user is unknown, so that timing does not reveal which usernames exist. */
  private dummyHash: Promise<string> | undefined;
  private readonly states = new LRUCache<string, { state: UserState | null }>(entryBound(200_000));

  constructor(
    private readonly db: Db,
    private readonly changes?: ChangeFeed,
    /** Told of failed logins and lockouts (the metrics). */
    private readonly observer?: Pick<Observer, 'loginFailed' | 'lockedOut'>,
    /** The cost of new hashes; the library's defaults unless a test gateway asks for less. */
    hashing?: PasswordHashing,
  ) {
    this.hashOptions = hashing ? { ...HASH_OPTIONS, memoryCost: hashing.memoryCost, timeCost: hashing.timeCost } : HASH_OPTIONS;
  }

  private readonly hashOptions: typeof HASH_OPTIONS & Partial<PasswordHashing>;

  /** Tells every process that the user changed (in `tx`, delivered at commit), then this one at once. */
  private async changed(tenantId: string, username: string, tx?: Queryable): Promise<void> {
    const change = { kind: 'user', tenantId, username } as const;
    await this.changes?.publish(change, tx);
    if (!tx) this.told(change.tenantId, change.username);
  }

  private told(tenantId: string, username: string): void {
    this.forget(tenantId, username);
    this.changes?.told({ kind: 'user', tenantId, username });
  }

  /**
   * Adds or resets a user (the CLI's and demo's `user add`), revoking its tokens; resetting to the same role and
   * password only unlocks, so a restarted demo's tokens stay valid.
   */
  async add(tenantId: string, username: string, role: Role, password: string, db: Queryable = this.db): Promise<User> {
    if (!ROLES.includes(role)) throw new Error(`Unknown role '${role}'; one of ${ROLES.join(', ')}`);
    const problem = passwordProblem(password);
    if (problem) throw new Error(problem);
    const current = await db.query<UserRow>(
      'SELECT id, username, role, password_hash, disabled, token_generation FROM users WHERE tenant_id = $1 AND username = $2',
      [tenantId, username],
    );
    const same = current.rows[0];
    if (same && same.role === role && !same.disabled && (await this.checkPassword(same.password_hash, password))) {
      await db.query('DELETE FROM login_attempts WHERE tenant_id = $1 AND username = $2', [tenantId, username]);
      return { id: same.id, tenantId, username, role, generation: Number(same.token_generation) };
    }
    const r = await db.query<{ id: string; token_generation: number }>(
      `INSERT INTO users (tenant_id, username, id, role, password_hash) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (tenant_id, username) DO UPDATE SET role = EXCLUDED.role, password_hash = EXCLUDED.password_hash, disabled = false,
         token_generation = users.token_generation + 1, updated_at = now()
       RETURNING id, token_generation`,
      [tenantId, username, randomUUID(), role, await hash(password, this.hashOptions)],
    );
    const row = r.rows[0]!;
    await db.query('DELETE FROM login_attempts WHERE tenant_id = $1 AND username = $2', [tenantId, username]);
    await this.changed(tenantId, username, db === this.db ? undefined : db);
    return { id: row.id, tenantId, username, role, generation: Number(row.token_generation) };
  }

  /** A first Admin, checked (400 naming the rule) and hashed before its tenant's transaction opens. */
  async firstAdmin(username: string, password: string): Promise<FirstAdmin> {
    const problem = passwordProblem(password);
    if (problem) throw Errors.badRequest(problem);
    return { username, passwordHash: await hash(password, this.hashOptions) };
  }

  /** Stores a new tenant's first Admin in the tenant's own transaction (`tx`); told to every process at commit. */
  async insertFirstAdmin(tenantId: string, admin: FirstAdmin, tx: Queryable): Promise<void> {
    await tx.query('INSERT INTO users (tenant_id, username, id, role, password_hash) VALUES ($1, $2, $3, $4, $5)', [
      tenantId,
      admin.username,
      randomUUID(),
      'Admin',
      admin.passwordHash,
    ]);
    await this.changes?.publish({ kind: 'user', tenantId, username: admin.username }, tx);
  }

  /** Creates a user; refused (409 USER_EXISTS) when the name is taken. */
  async create(tenantId: string, username: string, role: Role, password: string): Promise<UserView> {
    const problem = passwordProblem(password);
    if (problem) throw Errors.badRequest(problem);
    const r = await this.db.query(
      `INSERT INTO users (tenant_id, username, id, role, password_hash) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (tenant_id, username) DO NOTHING`,
      [tenantId, username, randomUUID(), role, await hash(password, this.hashOptions)],
    );
    if (r.rowCount !== 1) throw Errors.business('USER_EXISTS', `Tenant '${tenantId}' already has a user '${username}'.`);
    await this.changed(tenantId, username);
    return (await this.view(tenantId, username))!;
  }

  async list(tenantId: string): Promise<UserView[]> {
    const r = await this.db.query<ViewRow>(`${VIEW_SELECT} WHERE u.tenant_id = $1 ORDER BY u.username`, [tenantId]);
    return r.rows.map(toView);
  }

  /** One page of the tenant's users in username order: `limit` after the username `after` (key-cursor.ts). */
  async page(tenantId: string, { limit, after }: { limit: number; after: string | null }): Promise<KeyPage<UserView>> {
    const r = await this.db.query<ViewRow>(
      `${VIEW_SELECT} WHERE u.tenant_id = $1 AND ($2::text IS NULL OR u.username > $2) ORDER BY u.username LIMIT $3`,
      [tenantId, after, limit + 1],
    );
    return keyPage(r.rows, limit, (row) => row.username, toView);
  }

  async view(tenantId: string, username: string): Promise<UserView | null> {
    const r = await this.db.query<ViewRow>(`${VIEW_SELECT} WHERE u.tenant_id = $1 AND u.username = $2`, [tenantId, username]);
    return r.rows[0] ? toView(r.rows[0]) : null;
  }

  /** Changes a role or disables (revoking tokens); the Admins are locked so two cannot demote each other to none. */
  async update(tenantId: string, username: string, change: { role?: Role | undefined; disabled?: boolean | undefined }): Promise<UserView> {
    await this.db.transaction(async (tx) => {
      const user = await this.lockForChange(tx, tenantId, username);
      const role = change.role ?? user.role;
      const disabled = change.disabled ?? user.disabled;
      if (user.role === 'Admin' && !user.disabled && (role !== 'Admin' || disabled)) await this.keepAnAdmin(tx, tenantId, username);
      const revokes = role !== user.role || (disabled && !user.disabled);
      await tx.query(
        `UPDATE users SET role = $3, disabled = $4, token_generation = token_generation + $5, updated_at = now()
          WHERE tenant_id = $1 AND username = $2`,
        [tenantId, username, role, disabled, revokes ? 1 : 0],
      );
      await this.changes?.publish({ kind: 'user', tenantId, username }, tx);
    });
    this.told(tenantId, username);
    return (await this.view(tenantId, username))!;
  }

  /** Removes a user (its tokens stop working); never the tenant's last enabled Admin. */
  async remove(tenantId: string, username: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      const user = await this.lockForChange(tx, tenantId, username);
      if (user.role === 'Admin' && !user.disabled) await this.keepAnAdmin(tx, tenantId, username);
      await tx.query('DELETE FROM users WHERE tenant_id = $1 AND username = $2', [tenantId, username]);
      await this.changes?.publish({ kind: 'user', tenantId, username }, tx);
    });
    this.told(tenantId, username);
  }

  /** Lifts a lockout (and forgets the failures that led to it). */
  async unlock(tenantId: string, username: string): Promise<UserView> {
    if (!(await this.view(tenantId, username))) throw Errors.userNotFound(username);
    await this.db.query('DELETE FROM login_attempts WHERE tenant_id = $1 AND username = $2', [tenantId, username]);
    return (await this.view(tenantId, username))!;
  }

  /** Sets a new password (an Admin's reset): the user's tokens are revoked and any lockout lifted. */
  async setPassword(tenantId: string, username: string, password: string): Promise<void> {
    const problem = passwordProblem(password);
    if (problem) throw Errors.badRequest(problem);
    const passwordHash = await hash(password, this.hashOptions);
    const r = await this.db.query(
      `UPDATE users SET password_hash = $3, token_generation = token_generation + 1, updated_at = now()
        WHERE tenant_id = $1 AND username = $2`,
      [tenantId, username, passwordHash],
    );
    if (r.rowCount !== 1) throw Errors.userNotFound(username);
    await this.db.query('DELETE FROM login_attempts WHERE tenant_id = $1 AND username = $2', [tenantId, username]);
    await this.changed(tenantId, username);
  }

  /** A user changes its own password: checked like a login, and every token of the user revoked. */
  async changeOwnPassword(tenantId: string, username: string, current: string, next: string): Promise<void> {
    const problem = passwordProblem(next);
    if (problem) throw Errors.badRequest(problem);
    if (!(await this.authenticate(tenantId, username, current))) {
      throw Errors.badRequest('currentPassword is not the current password of this user.');
    }
    await this.setPassword(tenantId, username, next);
  }

  /** The token-relevant state of a user, cached until it changes; null when the user does not exist. */
  async state(tenantId: string, username: string, trace?: Context): Promise<UserState | null> {
    const key = `${tenantId}\u0000${username}`;
    const hit = this.states.get(key);
    if (hit) return hit.state;
    const seen = this.forgotten;
    const r = await tracedUnder(this.db, trace).query<{ token_generation: number; disabled: boolean }>(
      'SELECT token_generation, disabled FROM users WHERE tenant_id = $1 AND username = $2',
      [tenantId, username],
    );
    const row = r.rows[0];
    const state = row ? { generation: Number(row.token_generation), disabled: row.disabled } : null;
    // A change told while the row was read may be newer than it: caching the older state would keep it.
    if (seen === this.forgotten) this.states.set(key, { state });
    return state;
  }

  /** Changes told so far: a read that saw one arrive meanwhile does not cache what it read. */
  private forgotten = 0;

  forget(tenantId: string, username: string): void {
    this.forgotten += 1;
    this.states.delete(`${tenantId}\u0000${username}`);
  }

  clear(): void {
    this.forgotten += 1;
    this.states.clear();
  }

  private async lockForChange(tx: Queryable, tenantId: string, username: string): Promise<{ role: Role; disabled: boolean }> {
    // Every enabled Admin is locked in a fixed order first, so changes that could remove the last Admin take turns.
    await tx.query("SELECT username FROM users WHERE tenant_id = $1 AND role = 'Admin' AND NOT disabled ORDER BY username FOR UPDATE", [tenantId]);
    const r = await tx.query<{ role: Role; disabled: boolean }>('SELECT role, disabled FROM users WHERE tenant_id = $1 AND username = $2 FOR UPDATE', [
      tenantId,
      username,
    ]);
    if (!r.rows[0]) throw Errors.userNotFound(username);
    return r.rows[0];
  }

  private async keepAnAdmin(tx: Queryable, tenantId: string, username: string): Promise<void> {
    const r = await tx.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM users WHERE tenant_id = $1 AND role = 'Admin' AND NOT disabled AND username <> $2",
      [tenantId, username],
    );
    if ((r.rows[0]?.n ?? 0) === 0) {
      throw Errors.business('LAST_ADMIN', `'${username}' is the tenant's last Admin; make another user Admin first.`);
    }
  }

  /**
   * Checks a password; unknown, wrong, disabled and locked all resolve null alike. The attempt is registered
   * in flight before argon2 runs, so a burst of concurrent guesses cannot slip past the lock of ten failures.
   */
  async authenticate(
    tenantId: string,
    username: string,
    password: string,
    log?: LockoutLogger,
    onLocked?: (lock: { failures: number; lockedMinutes: number }) => void,
  ): Promise<User | null> {
    const r = await this.db.query<UserRow>(
      'SELECT id, username, role, password_hash, disabled, token_generation FROM users WHERE tenant_id = $1 AND username = $2',
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
    const ended = await this.endAttempt(tenantId, username, ok);
    if (!ok) this.observer?.loginFailed(tenantId);
    if (ended === 'locked') {
      // One line per lock, for the operator (and a SIEM): who, never the password.
      log?.warn({ tenant: tenantId, user: username, failures: MAX_FAILURES, lockedMinutes: LOCK_MINUTES }, 'user locked after repeated failed logins');
      this.observer?.lockedOut(tenantId);
      onLocked?.({ failures: MAX_FAILURES, lockedMinutes: LOCK_MINUTES });
    }
    return ok ? { id: row.id, tenantId, username: row.username, role: row.role, generation: Number(row.token_generation) } : null;
  }

  /** Registers an attempt in flight, or false when locked or at the limit; a dead process's attempts expire in 30 s. */
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
      await this.db.query('UPDATE users SET last_login_at = now() WHERE tenant_id = $1 AND username = $2', [tenantId, username]);
      return;
    }
    // The failure that sets the lock is the one bringing the count to exactly ten: that update reports it.
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
    this.dummyHash ??= hash(randomUUID(), this.hashOptions);
    await verify(await this.dummyHash, password).catch(() => false);
  }
}
