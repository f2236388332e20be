// Reports (spec §5.4), from the gateway's own events of record: activity per day and type, credit-limit
// changes with who made them, transactions per day. JSON, or CSV with Accept: text/csv. Every role reads them.
import type { FieldError } from '../../schemas/common.js';
import { ActivityReport, CreditLimitChangesReport, REPORT_MAX_DAYS, ReportQuery, TransactionsReport } from '../../schemas/reports.js';
import { DEFAULT_TIME_ZONE } from '../../schemas/tenant.js';
import { daysInRange, isDay } from '../domain/days.js';
import type { ReportRange } from '../reports/reports.js';
import type { Tenant } from '../services/tenancy/tenants.js';
import { defineOperation } from './define.js';

const OBJECT_NAME = 'reportQuery';
const fieldError = (field: string, message: string): FieldError => ({ field, message, objectName: OBJECT_NAME });

/** Real days, `from` not after `to`, at most REPORT_MAX_DAYS days counted both ends. */
function checkRange(q: ReportQuery): FieldError[] {
  const errors = (['from', 'to'] as const).filter((f) => !isDay(q[f])).map((f) => fieldError(f, 'Invalid'));
  if (errors.length) return errors;
  const days = daysInRange(q.from, q.to);
  if (days < 1) return [fieldError('to', 'Invalid')];
  // The constraint, then its bound: a caller learns the maximum from the answer.
  if (days > REPORT_MAX_DAYS) return [fieldError('to', `Size: at most ${REPORT_MAX_DAYS} days`)];
  return [];
}

const rangeOf = (q: ReportQuery, tenant: Tenant): ReportRange => ({ from: q.from, to: q.to, timeZone: tenant.config.timeZone ?? DEFAULT_TIME_ZONE });

const RANGE_DOC =
  `\`from\` and \`to\` are days (YYYY-MM-DD, both inclusive) of the tenant's time zone (configuration \`timeZone\`, default UTC), ` +
  `at most ${REPORT_MAX_DAYS} days. Built from the events of record, not from the core. With \`Accept: text/csv\` the answer is RFC 4180 ` +
  "CSV with a header row; a cell starting with =, +, -, @, a tab or a carriage return is prefixed with ' against formula injection.";

/** The parts every report shares: route shape, roles, query, checks and audit. */
const report = {
  method: 'GET',
  tag: 'Reports',
  dialect: 'problem',
  access: 'read',
  objectName: OBJECT_NAME,
  query: ReportQuery,
  check: ({ query }: { query: ReportQuery }) => checkRange(query),
  audit: { target: { from: 'query', to: 'query' } },
} as const;

export const reportOperations = [
  defineOperation({
    ...report,
    id: 'report.activity',
    url: '/v1/reports/activity',
    summary: 'Events of record per day and type',
    description: RANGE_DOC,
    response: ActivityReport,
    execute: ({ query, tenant, services }) => services.reports.activity(tenant.id, rangeOf(query, tenant)),
    view: (rows) => ({ result: rows, pagination: null }),
    csv: { columns: ['date', 'eventType', 'count'], rows: (rows) => rows },
  }),

  defineOperation({
    ...report,
    id: 'report.credit-limit-changes',
    url: '/v1/reports/credit-limit-changes',
    summary: 'Credit limits set, with the previous limit and who set them',
    description: `Limits raised or lowered, and the limit each entity was registered with (previousLimit null). ${RANGE_DOC}`,
    response: CreditLimitChangesReport,
    execute: ({ query, tenant, services }) => services.reports.creditLimitChanges(tenant.id, rangeOf(query, tenant)),
    view: (rows) => ({ result: rows, pagination: null }),
    csv: { columns: ['at', 'entityId', 'previousLimit', 'newLimit', 'actor'], rows: (rows) => rows },
  }),

  defineOperation({
    ...report,
    id: 'report.transactions',
    url: '/v1/reports/transactions',
    summary: 'Card transactions per day: authorizations approved and declined, holds, clearings, reversals and refunds',
    description:
      'Authorizations (the sandbox host\'s and the processor\'s holds) approved and declined, and the approved amount; clearings, ' +
      `reversals and refunds with their amounts (reversedAmount counts what final clearings released too). Days without any are left out. ${RANGE_DOC}`,
    response: TransactionsReport,
    execute: ({ query, tenant, services }) => services.reports.transactions(tenant.id, rangeOf(query, tenant)),
    view: (rows) => ({ result: rows, pagination: null }),
    csv: {
      columns: ['date', 'approved', 'declined', 'approvedAmount', 'clearings', 'clearedAmount', 'reversals', 'reversedAmount', 'refunds', 'refundedAmount'],
      rows: (rows) => rows,
    },
  }),
];
