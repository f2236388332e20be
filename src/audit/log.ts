// Reads of the audit trail: one tenant's records, newest first, filtered and paged by an opaque cursor.
// Every query starts from the tenant's own rows; nothing a caller sends can widen it.
import type { AuditOutcome, AuditRecordView } from '../../schemas/audit.js';
import type { Queryable } from '../store/db.js';
import { AUDIT_COLUMNS, fromRow, type AuditRow } from './chain.js';

/** The cursor is the base64url of the last seq shown; pages continue strictly below it. */
const encodeCursor = (seq: number): string => Buffer.from(String(seq), 'utf8').toString('base64url');

/** The cursor of the page whose first (newest) record is `seq`: a page holds the records before its cursor. */
export const cursorAt = (seq: number): string => encodeCursor(seq + 1);

/** The seq a cursor names, or null when it is not a cursor this service issued. */
export function decodeCursor(cursor: string): number | null {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  // Canonical form only: one spelling per cursor, and a seq a bigint column can hold.
  if (!/^[1-9]\d{0,15}$/.test(text) || encodeCursor(Number(text)) !== cursor) return null;
  return Number(text);
}

export interface AuditFilter {
  /** A cursor from a previous page (checked with decodeCursor). */
  cursor?: string | undefined;
  /** Inclusive lower and exclusive upper bound of `at`, RFC 3339 instants the store can hold. */
  from?: string | undefined;
  to?: string | undefined;
  actor?: string | undefined;
  action?: string | undefined;
  outcome?: AuditOutcome | undefined;
  route?: string | undefined;
  requestId?: string | undefined;
  /** Matches any value of the record's target. */
  targetId?: string | undefined;
  /** `write`: records of requests that change state (any method but GET); `read`: of reads (GET). */
  kind?: 'write' | 'read' | undefined;
  limit: number;
}

export interface AuditPageResult {
  records: AuditRecordView[];
  /** The cursor of the next (older) page, or null on the last. */
  next: string | null;
}

const view = (row: AuditRow): AuditRecordView => {
  const { tenantId: _tenant, at, ...rest } = fromRow('', row);
  return { ...rest, at: at.toISOString() };
};

export class AuditLog {
  constructor(private readonly db: Queryable) {}

  async page(tenantId: string, f: AuditFilter): Promise<AuditPageResult> {
    const params: unknown[] = [tenantId];
    const where = ['tenant_id = $1'];
    const add = (sql: (p: string) => string, value: unknown) => {
      if (value === undefined) return;
      params.push(value);
      where.push(sql(`$${params.length}`));
    };
    add((p) => `seq < ${p}`, f.cursor === undefined ? undefined : decodeCursor(f.cursor));
    add((p) => `at >= ${p}::timestamptz`, f.from);
    add((p) => `at < ${p}::timestamptz`, f.to);
    add((p) => `actor = ${p}`, f.actor);
    add((p) => `action = ${p}`, f.action);
    add((p) => `outcome = ${p}`, f.outcome);
    add((p) => `route = ${p}`, f.route);
    add((p) => `request_id = ${p}`, f.requestId);
    add((p) => `EXISTS (SELECT 1 FROM jsonb_each_text(target) AS t WHERE t.value = ${p})`, f.targetId);
    add((p) => `(method = 'GET') = (${p} = 'read')`, f.kind);
    params.push(f.limit + 1);
    const r = await this.db.query<AuditRow>(
      `SELECT ${AUDIT_COLUMNS}
         FROM audit_log WHERE ${where.join(' AND ')}
        ORDER BY seq DESC LIMIT $${params.length}`,
      params,
    );
    // One row beyond the page tells whether an older page exists, without counting.
    const rows = r.rows.slice(0, f.limit);
    const next = r.rows.length > f.limit ? encodeCursor(Number(rows[rows.length - 1]!.seq)) : null;
    return { records: rows.map(view), next };
  }
}
