// GET /v1/audit: the tenant's own audit trail, newest first, filtered and paged by an opaque cursor.
// GET /v1/audit/checkpoints/latest: the latest signed checkpoint of that trail (decision 0202).
import { AUDIT_PAGE_DEFAULT, AUDIT_PAGE_MAX, AuditCheckpointResponse, AuditPage, AuditQuery } from '../../schemas/audit.js';
import type { FieldError } from '../../schemas/common.js';
import { latestCheckpoint, publishCheckpoint } from '../audit/checkpoint.js';
import { decodeCursor } from '../audit/log.js';
import { defineOperation } from './define.js';

const OBJECT_NAME = 'auditQuery';

const fieldError = (field: string, message: string): FieldError => ({ field, message, objectName: OBJECT_NAME });

/** RFC 3339 instants PostgreSQL refuses (year 0000, offsets past ±15:59) are field errors, not a 500. */
function storableInstant(value: string): boolean {
  const offset = /(Z|[+-](\d{2}):(\d{2}))$/i.exec(value);
  if (!offset || (offset[2] !== undefined && Number(offset[2]) > 15)) return false;
  const year = Number(value.slice(0, 4));
  return year >= 1 && Number.isFinite(Date.parse(value));
}

/** What the schema cannot say: the page size's range, the cursor's content, a non-empty time window. */
function checkQuery(q: AuditQuery): FieldError[] {
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

/** The page size a query asks for (the default when it names none). */
export const auditLimitOf = (query: AuditQuery): number => (query.limit === undefined ? AUDIT_PAGE_DEFAULT : Number(query.limit));

/** What the schema cannot say about an audit query (the tenant's own trail and an operator's read of any trail). */
export const checkAuditQuery = checkQuery;

export const auditOperations = [
  defineOperation({
    id: 'audit.read',
    method: 'GET',
    url: '/v1/audit',
    summary: "The tenant's audit trail, newest first",
    description:
      'Filters: `from`/`to` (date-times with an offset), `actor`, `action`, `outcome`, `route`, `requestId`, `targetId` (any ' +
      'target value), `kind` (`write`: changes only; `read`: reads only). Pages: `limit` (1..500, default 50) and `cursor` (`pagination.nextCursor` of the previous page).',
    tag: 'Audit',
    dialect: 'problem',
    access: 'audit-read',
    objectName: OBJECT_NAME,
    query: AuditQuery,
    response: AuditPage,
    check: ({ query }) => checkQuery(query),
    execute: ({ tenant, query, services }) => services.auditLog.page(tenant.id, { ...query, limit: auditLimitOf(query) }),
    view: ({ records, next }, { query }) => ({ result: records, pagination: { nextCursor: next, next, limit: auditLimitOf(query) } }),
    audit: false,
  }),
  defineOperation({
    id: 'audit.checkpoint',
    method: 'GET',
    url: '/v1/audit/checkpoints/latest',
    summary: "The latest signed checkpoint of the tenant's audit trail",
    description:
      'Every chain of the trail (one per gateway process writing at the same time) with its size and head, the trail\'s size and root, and the time, ' +
      "signed as a compact JWS (ES256) with the tenant's token-signing key `kid` (published in /.well-known/jwks.json). The " +
      'gateway takes one every few seconds while the trail grows (CARDLINE_AUDIT_CHECKPOINT_MS), and one on first ask. Save ' +
      'the answer; `npx cardline audit verify --tenant T --checkpoint FILE` proves later, offline, that the trail still ' +
      'extends it: nothing removed or rewritten since.',
    tag: 'Audit',
    dialect: 'problem',
    access: 'admin',
    objectName: 'auditCheckpointRequest',
    response: AuditCheckpointResponse,
    execute: async ({ tenant, services }) =>
      (await latestCheckpoint(services.db, tenant.id)) ?? publishCheckpoint(services.db, services.keys, tenant.id),
    view: (checkpoint) => ({ result: checkpoint, pagination: null }),
    audit: false,
  }),
];
