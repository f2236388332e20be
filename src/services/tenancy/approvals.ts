// Four eyes: the requests a tenant's approval policy holds (decision 0320). A pending approval is a row of the
// tenant's store holding the request as validated, its secret fields sealed under a key of its own; each
// decision on it (approve, reject, cancel, expire) is ONE conditional UPDATE, so that of two checkers deciding
// at once only one moves it, and only the one whose approval completes it gets to execute it.
import { randomUUID } from 'node:crypto';
import { uuidv7 } from 'uuidv7';
import { APPROVAL_EXPIRY_DEFAULT, type ApprovalPolicy, type ApprovalStatus, type ApprovalView, type ApproverRole } from '../../../schemas/approvals.js';
import type { AuditWriter } from '../../audit/writer.js';
import type { MasterKey } from '../../crypto/master-key.js';
import { Errors } from '../../errors.js';
import { domainEvent } from '../../events/outbox.js';
import { decodeKeyCursor, keyPage, type KeyPage } from '../../paging/key-cursor.js';
import type { Db } from '../../store/db.js';

/** Who made the request: its user, role and the token it came with. */
export interface Maker {
  username: string;
  role: string;
  /** The token's id (jti): a checker presenting the same token is the maker, whichever user it claims. */
  token: string;
}

/** Who decides: a tenant user (its token's id) or the platform operator (no token). */
export interface Checker {
  by: string;
  role: ApproverRole;
  token: string | null;
}

/** The request as the pipeline validated it; `sealed` names the body paths whose values are sealed at rest. */
export interface HeldRequest {
  method: string;
  /** The route pattern (`/v1/admin/users/:username`) and the concrete path. */
  route: string;
  path: string;
  params: Record<string, string>;
  body: unknown;
  sealed: string[];
}

export interface ApprovalOutcome {
  status: number;
  body: unknown;
}

export interface Approval {
  tenantId: string;
  id: string;
  operation: string;
  status: ApprovalStatus;
  maker: Maker;
  request: HeldRequest;
  approvers: ApproverRole[];
  approvalsNeeded: number;
  approvals: { by: string; role: string; at: string; token: string | null }[];
  rejection: { by: string; role: string; reason: string; at: string } | null;
  outcome: ApprovalOutcome | null;
  createdAt: string;
  expiresAt: string;
}

interface ApprovalRow {
  tenant_id: string;
  id: string;
  operation: string;
  status: ApprovalStatus;
  maker: string;
  maker_role: string;
  maker_token: string;
  request: HeldRequest | string;
  approvers: ApproverRole[] | string;
  approvals_needed: number;
  approvals: Approval['approvals'] | string;
  rejection: Approval['rejection'] | string;
  outcome: ApprovalOutcome | string | null;
  created_at: Date | string;
  expires_at: Date | string;
  expired: boolean;
}

const json = <T>(v: T | string): T => (typeof v === 'string' ? (JSON.parse(v) as T) : v);
const iso = (v: Date | string): string => new Date(v).toISOString();

const COLUMNS = `tenant_id, id::text AS id, operation, status, maker, maker_role, maker_token, request, approvers, approvals_needed,
  approvals, rejection, outcome, created_at, expires_at, (status = 'pending' AND expires_at <= now()) AS expired`;

function fromRow(r: ApprovalRow): Approval {
  return {
    tenantId: r.tenant_id,
    id: r.id,
    operation: r.operation,
    // A pending request past its expiry is expired, whether or not the sweep has marked it yet.
    status: r.expired ? 'expired' : r.status,
    maker: { username: r.maker, role: r.maker_role, token: r.maker_token },
    request: json(r.request),
    approvers: json(r.approvers),
    approvalsNeeded: r.approvals_needed,
    approvals: json(r.approvals),
    rejection: r.rejection === null ? null : json(r.rejection),
    outcome: r.outcome === null ? null : json(r.outcome),
    createdAt: iso(r.created_at),
    expiresAt: iso(r.expires_at),
  };
}

/** What a checker is shown: everything that will execute, secret fields as "[encrypted]", never a token id. */
export function approvalView(a: Approval): ApprovalView {
  return {
    approvalId: a.id,
    operation: a.operation,
    status: a.status,
    maker: { username: a.maker.username, role: a.maker.role },
    request: { method: a.request.method, path: a.request.path, params: a.request.params, body: mapPaths(a.request.body, a.request.sealed, () => '[encrypted]') },
    approvers: a.approvers,
    approvalsNeeded: a.approvalsNeeded,
    approvals: a.approvals.map(({ by, role, at }) => ({ by, role, at })),
    rejection: a.rejection && { by: a.rejection.by, reason: a.rejection.reason, at: a.rejection.at },
    createdAt: a.createdAt,
    expiresAt: a.expiresAt,
    outcome: a.outcome,
  };
}

/** `a.b[].c` → ['a', 'b', '[]', 'c']. */
const segmentsOf = (path: string): string[] => path.split('.').flatMap((p) => (p.endsWith('[]') ? [p.slice(0, -2), '[]'] : [p])).filter(Boolean);

/** A copy of `value` with each string at one of `paths` replaced by `fn(string, path)`. */
export function mapPaths(value: unknown, paths: readonly string[], fn: (s: string, path: string) => string): unknown {
  const copy = structuredClone(value);
  for (const path of paths) {
    const walk = (holder: unknown, segments: string[]): void => {
      if (holder === null || typeof holder !== 'object') return;
      const [head, ...rest] = segments;
      if (head === undefined) return;
      if (head === '[]') {
        if (!Array.isArray(holder)) return;
        holder.forEach((item, i) => (rest.length ? walk(item, rest) : typeof item === 'string' && (holder[i] = fn(item, path))));
        return;
      }
      if (Array.isArray(holder) || !Object.hasOwn(holder, head)) return;
      const record = holder as Record<string, unknown>;
      if (rest.length) walk(record[head], rest);
      else if (typeof record[head] === 'string') record[head] = fn(record[head], path);
    };
    walk(copy, segmentsOf(path));
  }
  return copy;
}

const STATUS_WORDS: Record<ApprovalStatus, string> = {
  pending: 'is pending',
  executing: 'is being executed',
  executed: 'was executed',
  rejected: 'was rejected',
  cancelled: 'was cancelled by its maker',
  expired: 'expired',
};

/** How often each process marks the approvals past their expiry (and sends approval.expired). */
const SWEEP_INTERVAL_MS = 30_000;

export interface ApprovalListFilter {
  status?: ApprovalStatus | undefined;
  operation?: string | undefined;
  maker?: string | undefined;
}

export class ApprovalService {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Db,
    /** Seals the secret fields of held requests (derived from the master key for this purpose only). */
    private readonly key: MasterKey,
    private readonly audit: AuditWriter,
  ) {}

  private aad = (tenantId: string, id: string, path: string): string => `approval:${tenantId}:${id}:${path}`;

  /** Holds a request under a policy: pending until approved, rejected, cancelled or expired. */
  async create(tenantId: string, operation: string, policy: ApprovalPolicy, maker: Maker, request: Omit<HeldRequest, 'body'> & { body: unknown }): Promise<Approval> {
    const id = uuidv7();
    const body = mapPaths(request.body, request.sealed, (s, path) => this.key.seal(s, this.aad(tenantId, id, path)));
    const r = await this.db.query<ApprovalRow>(
      `INSERT INTO approvals (tenant_id, id, operation, maker, maker_role, maker_token, request, approvers, approvals_needed, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8::jsonb, $9, now() + make_interval(secs => $10))
       RETURNING ${COLUMNS}`,
      [tenantId, id, operation, maker.username, maker.role, maker.token, JSON.stringify({ ...request, body }), JSON.stringify(policy.approvers), policy.approvals ?? 1, policy.expiresAfterSeconds ?? APPROVAL_EXPIRY_DEFAULT],
    );
    return fromRow(r.rows[0]!);
  }

  async get(tenantId: string, id: string): Promise<Approval | null> {
    const r = await this.db.query<ApprovalRow>(`SELECT ${COLUMNS} FROM approvals WHERE tenant_id = $1 AND id = $2::uuid`, [tenantId, id]);
    return r.rows[0] ? fromRow(r.rows[0]) : null;
  }

  private async found(tenantId: string, id: string): Promise<Approval> {
    const a = await this.get(tenantId, id);
    if (!a) throw Errors.approvalNotFound(id);
    return a;
  }

  /** The body to execute: the held one with its sealed fields opened. */
  bodyOf(a: Approval): unknown {
    return mapPaths(a.request.body, a.request.sealed, (s, path) => this.key.open(s, this.aad(a.tenantId, a.id, path)));
  }

  /** The tenant's approvals in id (creation) order, filtered, paged by key. */
  async page(tenantId: string, filter: ApprovalListFilter, bounds: { limit: number; after: string | null }): Promise<KeyPage<Approval>> {
    const params: unknown[] = [tenantId, bounds.limit + 1];
    const where = ['tenant_id = $1'];
    const add = (sql: string, value: unknown) => {
      params.push(value);
      where.push(sql.replace('?', `$${params.length}`));
    };
    if (bounds.after) add('id > ?::uuid', bounds.after);
    if (filter.operation) add('operation = ?', filter.operation);
    if (filter.maker) add('maker = ?', filter.maker);
    if (filter.status === 'expired') where.push("(status = 'expired' OR (status = 'pending' AND expires_at <= now()))");
    else if (filter.status === 'pending') where.push("status = 'pending' AND expires_at > now()");
    else if (filter.status) add('status = ?', filter.status);
    const r = await this.db.query<ApprovalRow>(`SELECT ${COLUMNS} FROM approvals WHERE ${where.join(' AND ')} ORDER BY id LIMIT $2`, params);
    return keyPage(r.rows, bounds.limit, (row) => row.id, fromRow);
  }

  /** Why this checker may not decide on this approval, thrown; nothing when they may. */
  private refuse(a: Approval, checker: Checker, action: 'approve' | 'reject'): void {
    if (checker.by === a.maker.username || (checker.token !== null && checker.token === a.maker.token)) {
      throw Errors.business('APPROVAL_BY_MAKER', `'${checker.by}' made this request and cannot ${action} it; ${action === 'reject' ? 'cancel it instead' : 'a second person must'}.`);
    }
    if (!a.approvers.includes(checker.role)) {
      throw Errors.business('APPROVAL_ROLE', `The role '${checker.role}' may not ${action} ${a.operation}; its policy names ${a.approvers.join(', ')}.`);
    }
    this.refuseDecided(a);
    if (action === 'approve' && a.approvals.some((g) => g.by === checker.by || (checker.token !== null && g.token === checker.token))) {
      throw Errors.business('APPROVAL_ALREADY_GIVEN', `'${checker.by}' approved this request already; the next approval must come from another person.`);
    }
  }

  private refuseDecided(a: Approval): void {
    if (a.status === 'expired') throw Errors.business('APPROVAL_EXPIRED', `Approval ${a.id} expired at ${a.expiresAt}; nothing was executed.`);
    if (a.status !== 'pending') throw Errors.business('APPROVAL_NOT_PENDING', `Approval ${a.id} ${STATUS_WORDS[a.status]}; nothing more can be decided on it.`);
  }

  /**
   * Adds the checker's approval. The approval that completes the count moves the row to `executing` in the same
   * statement: the caller that gets `executing` back is the one (the only one) that executes it.
   */
  async approve(tenantId: string, id: string, checker: Checker): Promise<Approval> {
    this.refuse(await this.found(tenantId, id), checker, 'approve');
    const given = JSON.stringify([{ by: checker.by, role: checker.role, at: new Date().toISOString(), token: checker.token }]);
    const r = await this.db.query<ApprovalRow>(
      `UPDATE approvals
          SET approvals = approvals || $3::jsonb,
              status = CASE WHEN jsonb_array_length(approvals) + 1 >= approvals_needed THEN 'executing' ELSE 'pending' END,
              decided_at = CASE WHEN jsonb_array_length(approvals) + 1 >= approvals_needed THEN now() END
        WHERE tenant_id = $1 AND id = $2::uuid AND status = 'pending' AND expires_at > now()
          AND maker <> $4 AND maker_token <> $5
          AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements(approvals) g WHERE g->>'by' = $4 OR g->>'token' = $5)
        RETURNING ${COLUMNS}`,
      [tenantId, id, given, checker.by, checker.token ?? ''],
    );
    if (r.rows[0]) return fromRow(r.rows[0]);
    // Another decision came first: say which, as if it had come before this one.
    this.refuse(await this.found(tenantId, id), checker, 'approve');
    throw Errors.business('APPROVAL_NOT_PENDING', `Approval ${id} is no longer pending.`);
  }

  async reject(tenantId: string, id: string, checker: Checker, reason: string): Promise<Approval> {
    this.refuse(await this.found(tenantId, id), checker, 'reject');
    const rejection = JSON.stringify({ by: checker.by, role: checker.role, reason, at: new Date().toISOString() });
    const r = await this.db.query<ApprovalRow>(
      `UPDATE approvals SET status = 'rejected', rejection = $3::jsonb, decided_at = now()
        WHERE tenant_id = $1 AND id = $2::uuid AND status = 'pending' AND expires_at > now()
        RETURNING ${COLUMNS}`,
      [tenantId, id, rejection],
    );
    if (r.rows[0]) return fromRow(r.rows[0]);
    this.refuseDecided(await this.found(tenantId, id));
    throw Errors.business('APPROVAL_NOT_PENDING', `Approval ${id} is no longer pending.`);
  }

  /** The maker withdraws a pending request. */
  async cancel(tenantId: string, id: string, username: string): Promise<Approval> {
    const a = await this.found(tenantId, id);
    if (a.maker.username !== username) throw Errors.business('APPROVAL_NOT_MAKER', `Only '${a.maker.username}', who made this request, may cancel it.`);
    this.refuseDecided(a);
    const r = await this.db.query<ApprovalRow>(
      `UPDATE approvals SET status = 'cancelled', decided_at = now()
        WHERE tenant_id = $1 AND id = $2::uuid AND status = 'pending' AND expires_at > now()
        RETURNING ${COLUMNS}`,
      [tenantId, id],
    );
    if (r.rows[0]) return fromRow(r.rows[0]);
    this.refuseDecided(await this.found(tenantId, id));
    throw Errors.business('APPROVAL_NOT_PENDING', `Approval ${id} is no longer pending.`);
  }

  /** Stores what the execution answered; only the executor (the row is `executing`) gets here. */
  async finish(tenantId: string, id: string, outcome: ApprovalOutcome): Promise<Approval> {
    const r = await this.db.query<ApprovalRow>(
      `UPDATE approvals SET status = 'executed', outcome = $3::jsonb WHERE tenant_id = $1 AND id = $2::uuid AND status = 'executing' RETURNING ${COLUMNS}`,
      [tenantId, id, JSON.stringify(outcome)],
    );
    return r.rows[0] ? fromRow(r.rows[0]) : this.found(tenantId, id);
  }

  /**
   * Marks the approvals past their expiry (all tenants') expired, each with an audit record carrying
   * approval.expired. The UPDATE decides which process reports each one: only one can move a row.
   */
  async expireDue(): Promise<number> {
    const r = await this.db.query<{ tenant_id: string; id: string; operation: string; expires_at: Date | string }>(
      `UPDATE approvals SET status = 'expired', decided_at = now()
        WHERE status = 'pending' AND expires_at <= now()
        RETURNING tenant_id, id::text AS id, operation, expires_at`,
    );
    for (const row of r.rows) {
      await this.audit.record({
        tenantId: row.tenant_id,
        at: new Date(),
        actor: null,
        role: null,
        action: 'approvals.expire',
        method: 'POST',
        route: '/v1/approvals/:approvalId',
        target: { approvalId: row.id, operation: row.operation },
        outcome: 'succeeded',
        status: 200,
        requestId: randomUUID(),
        origin: null,
        event: domainEvent('approval.expired', { approvalId: row.id, operation: row.operation }),
      });
    }
    return r.rows.length;
  }

  start(): void {
    this.timer = setInterval(() => void this.expireDue().catch(() => undefined), SWEEP_INTERVAL_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}

/** A key cursor of the approvals list names an approval id. */
export const isApprovalId = (key: string): boolean => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(key);
export const approvalCursorValid = (cursor: string): boolean => decodeKeyCursor(cursor, isApprovalId) !== null;
