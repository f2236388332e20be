// The tenants' authorizations as the pipeline decided them: one row each, with the trail of its steps.
import type { AuthorizationMerchant, AuthorizationStatus, AuthorizationStep } from '../../../schemas/authorizations.js';
import type { Channel, DeclineReason } from '../../../schemas/transactions.js';
import type { Queryable } from '../../store/db.js';
import { insertAuthorizationsFrom } from '../../store/authorization-rows.js';
import { decidedTrail, storedTrail, type StoredStep, type TrailStep } from '../../store/authorization-trail.js';
import type { VelocityCount } from './spend-controls.js';

export type { TrailStep };

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
  trail: TrailStep[];
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
  trail: StoredStep[];
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
  trail: decidedTrail(r.trail),
  at: new Date(r.created_at),
});

/** A decided authorization before it is stored. */
export type NewAuthorization = Omit<AuthorizationRecord, 'heldMinor' | 'clearedMinor' | 'reversedMinor' | 'refundedMinor' | 'creditedMinor'> & {
  velocity?: readonly VelocityCount[];
};

/** The row of a new authorization, as JSON: one object for the insert here or in the audit writer's statement. */
export const authorizationRow = (tenantId: string, a: NewAuthorization): Readonly<Record<string, unknown>> => ({
  tenant_id: tenantId,
  id: a.id,
  card_id: a.cardId,
  entity_id: a.entityId,
  status: a.status,
  decline_reason: a.declineReason,
  decided_by: a.decidedBy,
  amount_minor: a.amountMinor.toString(),
  approved_minor: a.approvedMinor.toString(),
  currency: a.currency,
  merchant: a.merchant,
  channel: a.channel,
  network_reference: a.networkReference,
  trail: storedTrail(a.trail),
  created_at: a.at.toISOString(),
  velocity: a.velocity?.length ? a.velocity : null,
});

export class AuthorizationStore {
  constructor(private readonly db: Queryable) {}

  /**
   * Records a decided authorization; approved ones hold what was approved. `velocity`: the counter buckets its
   * approval is counted in, which its reversals give back to (decision 0354). `withRecord`: inserted by the
   * statement that appends the request's audit record instead (decision 0380).
   */
  async insert(tenantId: string, a: NewAuthorization, withRecord?: (row: Readonly<Record<string, unknown>>) => void): Promise<AuthorizationRecord> {
    const row = authorizationRow(tenantId, a);
    if (withRecord) withRecord(row);
    else
      await this.db.query(insertAuthorizationsFrom('jsonb_to_record($1::jsonb)'), [JSON.stringify(row)], { name: 'authorizations-insert' });
    return {
      id: a.id, cardId: a.cardId, entityId: a.entityId, status: a.status, declineReason: a.declineReason, decidedBy: a.decidedBy,
      amountMinor: a.amountMinor, approvedMinor: a.approvedMinor, heldMinor: a.approvedMinor, clearedMinor: 0n, reversedMinor: 0n,
      refundedMinor: 0n, creditedMinor: 0n, currency: a.currency, merchant: a.merchant, channel: a.channel, networkReference: a.networkReference,
      trail: a.trail, at: a.at,
    };
  }

  async get(tenantId: string, id: string): Promise<AuthorizationRecord | null> {
    const r = await this.db.query<Row>(`SELECT ${COLUMNS} FROM authorizations WHERE tenant_id = $1 AND id = $2`, [tenantId, id], { name: 'authorizations-get' });
    return r.rows[0] ? fromRow(r.rows[0]) : null;
  }
}
