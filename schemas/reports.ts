// Schemas of the reports (spec §5.4 "reports"): built from the gateway's own events of record, never from a
// copy of core data (DESIGN §8). Days are those of the tenant's time zone; JSON, or CSV with Accept: text/csv.
import { Type, type Static } from '@sinclair/typebox';
import { Day, cardEnvelopeOf } from './common.js';

/** The longest range a report covers, both ends counted (a leap year). */
export const REPORT_MAX_DAYS = 366;


export const ReportQuery = Type.Object(
  {
    from: Day('first day, YYYY-MM-DD, in the tenant time zone'),
    to: Day(`last day (inclusive), at most ${REPORT_MAX_DAYS} days after from counted both ends`),
  },
  { additionalProperties: false },
);
export type ReportQuery = Static<typeof ReportQuery>;

export const ActivityRow = Type.Object({ date: Type.String(), eventType: Type.String(), count: Type.Integer({ minimum: 1 }) });
export type ActivityRow = Static<typeof ActivityRow>;

export const CreditLimitChangeRow = Type.Object({
  at: Type.String({ format: 'date-time' }),
  entityId: Type.String(),
  previousLimit: Type.Union([Type.String(), Type.Null()], { description: 'null for the limit an entity was registered with' }),
  newLimit: Type.String(),
  actor: Type.Union([Type.String(), Type.Null()], { description: 'who made the change, from its audit record' }),
});
export type CreditLimitChangeRow = Static<typeof CreditLimitChangeRow>;

export const TransactionDayRow = Type.Object({
  date: Type.String(),
  approved: Type.Integer({ minimum: 0 }),
  declined: Type.Integer({ minimum: 0 }),
  approvedAmount: Type.String({ description: 'a decimal string' }),
  clearings: Type.Integer({ minimum: 0 }),
  clearedAmount: Type.String({ description: 'a decimal string' }),
  reversals: Type.Integer({ minimum: 0 }),
  reversedAmount: Type.String({ description: 'released by reversals and final clearings: a decimal string' }),
  refunds: Type.Integer({ minimum: 0 }),
  refundedAmount: Type.String({ description: 'a decimal string' }),
});
export type TransactionDayRow = Static<typeof TransactionDayRow>;

export const ActivityReport = cardEnvelopeOf(Type.Array(ActivityRow));
export const CreditLimitChangesReport = cardEnvelopeOf(Type.Array(CreditLimitChangeRow));
export const TransactionsReport = cardEnvelopeOf(Type.Array(TransactionDayRow));
