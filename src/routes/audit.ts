// GET /v1/audit: the tenant's own audit trail, newest first, filtered and paged by an opaque cursor.
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { AUDIT_PAGE_DEFAULT, AUDIT_PAGE_MAX, AuditPage, AuditQuery, type AuditRecordView } from '../../schemas/audit.js';
import type { FieldError } from '../../schemas/common.js';
import { AUDIT_COLUMNS, fromRow, type AuditRow } from '../audit/chain.js';

const OBJECT_NAME = 'auditQuery';

/** The cursor is the base64url of the last seq shown; pages continue strictly below it. */
export const encodeCursor = (seq: number): string => Buffer.from(String(seq), 'utf8').toString('base64url');

export function decodeCursor(cursor: string): number | null {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  // Canonical form only: one spelling per cursor, and a seq a bigint column can hold.
  if (!/^[1-9]\d{0,15}$/.test(text) || encodeCursor(Number(text)) !== cursor) return null;
  return Number(text);
}

const fieldError = (field: string, message: string): FieldError => ({ field, message, objectName: OBJECT_NAME });

/** What the schema cannot say: the page size's range, the cursor's content, a non-empty time window. */
function checkQuery(request: FastifyRequest): FieldError[] {
  const q = request.query as AuditQuery;
  const errors: FieldError[] = [];
  if (q.limit !== undefined) {
    const n = Number(q.limit);
    if (n < 1) errors.push(fieldError('limit', 'Min'));
    else if (n > AUDIT_PAGE_MAX) errors.push(fieldError('limit', 'Max'));
  }
  if (q.cursor !== undefined && decodeCursor(q.cursor) === null) errors.push(fieldError('cursor', 'Invalid'));
  for (const field of ['from', 'to'] as const) {
    const value = q[field];
    if (value !== undefined && !storableInstant(value)) errors.push(fieldError(field, 'Invalid'));
  }
  if (q.from !== undefined && q.to !== undefined && Date.parse(q.to) <= Date.parse(q.from)) errors.push(fieldError('to', 'Invalid'));
  return errors;
}

/**
 * RFC 3339 allows instants PostgreSQL refuses (year 0000, offsets beyond ±15:59): those are field errors
 * here, not a 500 from the store.
 */
function storableInstant(value: string): boolean {
  const offset = /(Z|[+-](\d{2}):(\d{2}))$/i.exec(value);
  if (!offset || (offset[2] !== undefined && Number(offset[2]) > 15)) return false;
  const year = Number(value.slice(0, 4));
  return year >= 1 && Number.isFinite(Date.parse(value));
}

const view = (row: AuditRow): AuditRecordView => {
  const { tenantId: _tenant, at, ...rest } = fromRow('', row);
  return { ...rest, at: at.toISOString() };
};

const auditRoutes: FastifyPluginAsync = async (app) => {
  const { db } = app.cardline;

  app.get<{ Querystring: AuditQuery }>('/v1/audit', {
    schema: { querystring: AuditQuery, response: { 200: AuditPage } },
    config: {
      dialect: 'problem',
      // The table: API Integration (system-to-system traffic) does not read the trail.
      roles: ['Admin', 'Operations', 'Read-Only'],
      objectName: OBJECT_NAME,
      check: checkQuery,
    },
    handler: async (request) => {
      const q = request.query;
      const limit = q.limit === undefined ? AUDIT_PAGE_DEFAULT : Number(q.limit);
      // Every condition starts from the caller's own tenant; nothing else can widen it.
      const params: unknown[] = [request.tenant!.id];
      const where = ['tenant_id = $1'];
      const add = (sql: (p: string) => string, value: unknown) => {
        params.push(value);
        where.push(sql(`$${params.length}`));
      };
      if (q.cursor !== undefined) add((p) => `seq < ${p}`, decodeCursor(q.cursor));
      if (q.from !== undefined) add((p) => `at >= ${p}::timestamptz`, q.from);
      if (q.to !== undefined) add((p) => `at < ${p}::timestamptz`, q.to);
      if (q.actor !== undefined) add((p) => `actor = ${p}`, q.actor);
      if (q.action !== undefined) add((p) => `action = ${p}`, q.action);
      if (q.outcome !== undefined) add((p) => `outcome = ${p}`, q.outcome);
      if (q.route !== undefined) add((p) => `route = ${p}`, q.route);
      if (q.requestId !== undefined) add((p) => `request_id = ${p}`, q.requestId);
      if (q.targetId !== undefined) add((p) => `EXISTS (SELECT 1 FROM jsonb_each_text(target) AS t WHERE t.value = ${p})`, q.targetId);
      params.push(limit + 1);
      const r = await db.query<AuditRow>(
        `SELECT ${AUDIT_COLUMNS}
           FROM audit_log WHERE ${where.join(' AND ')}
          ORDER BY seq DESC LIMIT $${params.length}`,
        params,
      );
      // One row beyond the page tells whether an older page exists, without counting.
      const rows = r.rows.slice(0, limit);
      const next = r.rows.length > limit ? encodeCursor(Number(rows[rows.length - 1]!.seq)) : null;
      return { result: rows.map(view), pagination: { next, limit } };
    },
  });
};

export default auditRoutes;
