// Reports from the events of record (the outbox) and, for who acted, the audit record each event committed
// with. Every query starts from the tenant's own rows and a time range; days are the tenant's time zone's.
import type { ActivityRow, CreditLimitChangeRow, TransactionDayRow } from '../../schemas/reports.js';
import { fromMinor } from '../../connectors/shared/money.js';
import { nextDay, startOfDay } from '../domain/days.js';
import type { Queryable } from '../store/db.js';

/** A report's range: from the start of `from` to the end of `to`, days of `timeZone`. */
export interface ReportRange {
  from: string;
  to: string;
  timeZone: string;
}

const bounds = (r: ReportRange) => [startOfDay(r.from, r.timeZone).toISOString(), startOfDay(nextDay(r.to), r.timeZone).toISOString(), r.timeZone];

export class Reports {
  constructor(private readonly db: Queryable) {}

  /** Events per day and type. */
  async activity(tenantId: string, range: ReportRange): Promise<ActivityRow[]> {
    const r = await this.db.query<{ date: string; event_type: string; count: number }>(
      `SELECT to_char(created_at AT TIME ZONE $4, 'YYYY-MM-DD') AS date, type AS event_type, count(*)::integer AS count
         FROM outbox
        WHERE tenant_id = $1 AND created_at >= $2::timestamptz AND created_at < $3::timestamptz
        GROUP BY 1, 2
        ORDER BY 1, 2`,
      [tenantId, ...bounds(range)],
    );
    return r.rows.map((row) => ({ date: row.date, eventType: row.event_type, count: Number(row.count) }));
  }

  /** Every limit set: raised or lowered, and the one an entity was registered with (previousLimit null). */
  async creditLimitChanges(tenantId: string, range: ReportRange): Promise<CreditLimitChangeRow[]> {
    const r = await this.db.query<{ at: Date | string; type: string; payload: Record<string, string | undefined>; actor: string | null }>(
      `SELECT o.created_at AS at, o.type, o.payload, a.actor
         FROM outbox o
         LEFT JOIN audit_log a ON a.tenant_id = o.tenant_id AND a.seq = o.audit_seq
        WHERE o.tenant_id = $1 AND o.type IN ('credit-limit.upgraded', 'entity.registered')
          AND o.created_at >= $2::timestamptz AND o.created_at < $3::timestamptz
        ORDER BY o.created_at, o.audit_seq`,
      [tenantId, ...bounds(range).slice(0, 2)],
    );
    return r.rows.map((row) => ({
      at: new Date(row.at).toISOString(),
      entityId: row.payload.entityId!,
      previousLimit: row.type === 'entity.registered' ? null : (row.payload.previousLimit ?? null),
      newLimit: (row.type === 'entity.registered' ? row.payload.creditLimit : row.payload.newLimit)!,
      actor: row.actor,
    }));
  }

  /**
   * Per day: authorizations approved and declined (the sandbox host's and the processor's) with the approved amount,
   * and clearings, reversals and refunds with their amounts; what a final clearing released counts as reversed.
   */
  async transactions(tenantId: string, range: ReportRange): Promise<TransactionDayRow[]> {
    type Column = 'date' | 'approved' | 'declined' | 'clearings' | 'reversals' | 'refunds' | 'approved_minor' | 'cleared_minor' | 'reversed_minor' | 'refunded_minor';
    const r = await this.db.query<Record<Column, string>>(
      `SELECT to_char(created_at AT TIME ZONE $4, 'YYYY-MM-DD') AS date,
              count(*) FILTER (WHERE type IN ('transaction.approved', 'authorization.approved'))::text AS approved,
              count(*) FILTER (WHERE type IN ('transaction.declined', 'authorization.declined'))::text AS declined,
              (coalesce(sum(round((payload->>'amount')::numeric * 100)) FILTER (WHERE type = 'transaction.approved'), 0)
                + coalesce(sum(round((payload->>'approvedAmount')::numeric * 100)) FILTER (WHERE type = 'authorization.approved'), 0))::bigint::text AS approved_minor,
              count(*) FILTER (WHERE type = 'authorization.cleared')::text AS clearings,
              (coalesce(sum(round((payload->>'amount')::numeric * 100)) FILTER (WHERE type = 'authorization.cleared'), 0))::bigint::text AS cleared_minor,
              count(*) FILTER (WHERE type = 'authorization.reversed')::text AS reversals,
              (coalesce(sum(round((payload->>'amount')::numeric * 100)) FILTER (WHERE type = 'authorization.reversed'), 0)
                + coalesce(sum(round((payload->>'released')::numeric * 100)) FILTER (WHERE type = 'authorization.cleared'), 0))::bigint::text AS reversed_minor,
              count(*) FILTER (WHERE type = 'transaction.refunded')::text AS refunds,
              (coalesce(sum(round((payload->>'amount')::numeric * 100)) FILTER (WHERE type = 'transaction.refunded'), 0))::bigint::text AS refunded_minor
         FROM outbox
        WHERE tenant_id = $1
          AND type IN ('transaction.approved', 'transaction.declined', 'authorization.approved', 'authorization.declined',
                       'authorization.cleared', 'authorization.reversed', 'transaction.refunded')
          AND created_at >= $2::timestamptz AND created_at < $3::timestamptz
        GROUP BY 1
        ORDER BY 1`,
      [tenantId, ...bounds(range)],
    );
    const money = (minor: string) => fromMinor(BigInt(minor));
    return r.rows.map((row) => ({
      date: row.date,
      approved: Number(row.approved),
      declined: Number(row.declined),
      approvedAmount: money(row.approved_minor),
      clearings: Number(row.clearings),
      clearedAmount: money(row.cleared_minor),
      reversals: Number(row.reversals),
      reversedAmount: money(row.reversed_minor),
      refunds: Number(row.refunds),
      refundedAmount: money(row.refunded_minor),
    }));
  }
}
