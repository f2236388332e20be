// The tenants' authorizations as the pipeline decided them: one row each, with the trail of its steps.
import type { AuthorizationMerchant, AuthorizationStatus, AuthorizationStep, StepRecord } from '../../../schemas/authorizations.js';
import type { Channel, DeclineReason } from '../../../schemas/transactions.js';
import type { Queryable } from '../../store/db.js';
import type { VelocityCount } from './spend-controls.js';

export interface AuthorizationRecord {
  id: string;
  cardId: string;
  entityId: string | null;
  status: AuthorizationStatus;
  declineReason: DeclineReason | null;
  decidedBy: AuthorizationStep;
  amountMinor: bigint;
  approvedMinor: bigint;
  heldMinor: bigint;
  clearedMinor: bigint;
  reversedMinor: bigint;
  refundedMinor: bigint;
  creditedMinor: bigint;
  currency: string;
  merchant: AuthorizationMerchant;
  channel: Channel;
  networkReference: string | null;
  trail: StepRecord[];
  at: Date;
}

export interface Row {
  id: string;
  card_id: string;
  entity_id: string | null;
  status: AuthorizationStatus;
  decline_reason: DeclineReason | null;
  decided_by: AuthorizationStep;
  amount_minor: string;
  approved_minor: string;
  held_minor: string;
  cleared_minor: string;
  reversed_minor: string;
  refunded_minor: string;
  credited_minor: string;
  currency: string;
  merchant: AuthorizationMerchant;
  channel: Channel;
  network_reference: string | null;
  trail: StepRecord[];
  created_at: Date | string;
}

export const COLUMNS =
  'id, card_id, entity_id, status, decline_reason, decided_by, amount_minor::text, approved_minor::text, held_minor::text, cleared_minor::text, ' +
  'reversed_minor::text, refunded_minor::text, credited_minor::text, currency, merchant, channel, network_reference, trail, created_at';

export const fromRow = (r: Row): AuthorizationRecord => ({
  id: r.id,
  cardId: r.card_id,
  entityId: r.entity_id,
  status: r.status,
  declineReason: r.decline_reason,
  decidedBy: r.decided_by,
  amountMinor: BigInt(r.amount_minor),
  approvedMinor: BigInt(r.approved_minor),
  heldMinor: BigInt(r.held_minor),
  clearedMinor: BigInt(r.cleared_minor),
  reversedMinor: BigInt(r.reversed_minor),
  refundedMinor: BigInt(r.refunded_minor),
  creditedMinor: BigInt(r.credited_minor),
  currency: r.currency,
  merchant: r.merchant,
  channel: r.channel,
  networkReference: r.network_reference,
  trail: r.trail,
  at: new Date(r.created_at),
});

export class AuthorizationStore {
  constructor(private readonly db: Queryable) {}

  /**
   * Records a decided authorization; approved ones hold what was approved. `velocity`: the counter buckets its
   * approval is counted in, which its reversals give back to (decision 0354). Committed without waiting for the
   * WAL flush: the request's audit record, committed before the answer, flushes it (decision 0379).
   */
  async insert(
    tenantId: string,
    a: Omit<AuthorizationRecord, 'heldMinor' | 'clearedMinor' | 'reversedMinor' | 'refundedMinor' | 'creditedMinor'> & { velocity?: readonly VelocityCount[] },
  ): Promise<AuthorizationRecord> {
    const { velocity, ...record } = a;
    await this.db.query(
      `INSERT INTO authorizations (tenant_id, id, card_id, entity_id, status, decline_reason, decided_by, amount_minor, approved_minor, held_minor,
         currency, merchant, channel, network_reference, trail, created_at, velocity)
       SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $9, $10, $11::jsonb, $12, $13, $14::jsonb, $15, $16::jsonb
        WHERE set_config('synchronous_commit', 'off', true) IS NOT NULL`,
      [
        tenantId,
        a.id,
        a.cardId,
        a.entityId,
        a.status,
        a.declineReason,
        a.decidedBy,
        a.amountMinor.toString(),
        a.approvedMinor.toString(),
        a.currency,
        JSON.stringify(a.merchant),
        a.channel,
        a.networkReference,
        JSON.stringify(a.trail),
        a.at.toISOString(),
        velocity?.length ? JSON.stringify(velocity) : null,
      ],
      { name: 'authorizations-insert' },
    );
    return { ...record, heldMinor: a.approvedMinor, clearedMinor: 0n, reversedMinor: 0n, refundedMinor: 0n, creditedMinor: 0n };
  }

  async get(tenantId: string, id: string): Promise<AuthorizationRecord | null> {
    const r = await this.db.query<Row>(`SELECT ${COLUMNS} FROM authorizations WHERE tenant_id = $1 AND id = $2`, [tenantId, id], { name: 'authorizations-get' });
    return r.rows[0] ? fromRow(r.rows[0]) : null;
  }
}
