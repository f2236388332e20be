// What follows an authorization, on the gateway's side: a change reserves its amount (of what is held, or of
// what was cleared) under the authorization's row lock before the core is called, so that changes admitted
// together never go beyond the amount; the core's answer is then merged into the row. Disputes claim what was
// cleared while open and are resolved once (decision 0344).
import { randomUUID } from 'node:crypto';
import type { DisputeOutcome, DisputeReason, DisputeStatus } from '../../../schemas/authorization-lifecycle.js';
import type { Db, Queryable } from '../../store/db.js';
import { COLUMNS, fromRow, type AuthorizationRecord, type Row } from './authorizations.js';
import { giveBack, type VelocityCount } from './spend-controls.js';

/** A hold's amounts as the core answered them (contract.ts, HoldState), in minor units. */
export interface CoreAmounts {
  authorized: bigint;
  held: bigint;
  cleared: bigint;
  reversed: bigint;
  refunded: bigint;
  credited: bigint;
}

/** An authorization and what is free of it: held and not reserved; cleared and not given back, claimed or reserved. */
export interface Standing {
  record: AuthorizationRecord;
  heldFree: bigint;
  clearedFree: bigint;
  /** Claimed by open disputes (and those being resolved). */
  disputed: bigint;
}

export type Pool = 'held' | 'cleared';

export interface ReserveAsk {
  pool: Pool;
  /** null: all that is free (a reversal without an amount). */
  amountMinor: bigint | null;
  /** A final clearing reserves all that is free, the amount cleared and the rest it releases. */
  final?: boolean;
  currency?: string | undefined;
}

export type Refusal = 'not-found' | 'declined' | 'currency' | 'exceeds' | 'not-cleared';

export type Admission = { ok: true; reservationId: string; reservedMinor: bigint; standing: Standing } | { ok: false; reason: Refusal; standing: Standing | null };

export interface DisputeRecord {
  id: string;
  authorizationId: string;
  cardId: string;
  entityId: string;
  amountMinor: bigint;
  currency: string;
  reason: DisputeReason;
  note: string | null;
  status: DisputeStatus;
  openedBy: string | null;
  resolvedBy: string | null;
  openedAt: Date;
  resolvedAt: Date | null;
}

interface DisputeRow {
  id: string;
  authorization_id: string;
  card_id: string;
  entity_id: string;
  amount_minor: string;
  currency: string;
  reason: DisputeReason;
  note: string | null;
  status: DisputeStatus;
  opened_by: string | null;
  resolved_by: string | null;
  created_at: Date | string;
  resolved_at: Date | string | null;
}

const DISPUTE_COLUMNS = 'id, authorization_id, card_id, entity_id, amount_minor::text, currency, reason, note, status, opened_by, resolved_by, created_at, resolved_at';

const disputeOf = (r: DisputeRow): DisputeRecord => ({
  id: r.id,
  authorizationId: r.authorization_id,
  cardId: r.card_id,
  entityId: r.entity_id,
  amountMinor: BigInt(r.amount_minor),
  currency: r.currency,
  reason: r.reason,
  note: r.note,
  status: r.status,
  openedBy: r.opened_by,
  resolvedBy: r.resolved_by,
  openedAt: new Date(r.created_at),
  resolvedAt: r.resolved_at === null ? null : new Date(r.resolved_at),
});

export type DisputeOpening = { ok: true; dispute: DisputeRecord; standing: Standing } | { ok: false; reason: Refusal; standing: Standing | null };

export type ResolveStart = { ok: true; dispute: DisputeRecord } | { ok: false; dispute: DisputeRecord | null };

export interface LedgerOptions {
  /**
   * How long a reservation (or a dispute being resolved) stands when its gateway stopped mid-call: after it, the
   * amount is free again and the core, which applies a change once, refuses what it already applied.
   */
  inFlightSeconds: number;
}

export class AuthorizationLedger {
  constructor(
    private readonly db: Db,
    private readonly opts: LedgerOptions = { inFlightSeconds: 300 },
  ) {}

  /** The authorization and what is free of it, read under its row lock inside `tx` (or without one). */
  private async standingIn(tx: Queryable, tenantId: string, id: string, lock: boolean): Promise<Standing | null> {
    const r = await tx.query<Row>(`SELECT ${COLUMNS} FROM authorizations WHERE tenant_id = $1 AND id = $2${lock ? ' FOR UPDATE' : ''}`, [tenantId, id]);
    if (!r.rows[0]) return null;
    const record = fromRow(r.rows[0]);
    const claims = await tx.query<{ held: string; cleared: string; disputed: string }>(
      `SELECT (SELECT coalesce(sum(amount_minor), 0) FROM authorization_reservations
                WHERE tenant_id = $1 AND authorization_id = $2 AND pool = 'held' AND expires_at > now())::text AS held,
              (SELECT coalesce(sum(amount_minor), 0) FROM authorization_reservations
                WHERE tenant_id = $1 AND authorization_id = $2 AND pool = 'cleared' AND expires_at > now())::text AS cleared,
              (SELECT coalesce(sum(amount_minor), 0) FROM disputes
                WHERE tenant_id = $1 AND authorization_id = $2 AND status IN ('OPEN', 'RESOLVING'))::text AS disputed`,
      [tenantId, id],
    );
    const c = claims.rows[0]!;
    const disputed = BigInt(c.disputed);
    return {
      record,
      heldFree: record.heldMinor - BigInt(c.held),
      clearedFree: record.clearedMinor - record.refundedMinor - record.creditedMinor - disputed - BigInt(c.cleared),
      disputed,
    };
  }

  standing(tenantId: string, id: string): Promise<Standing | null> {
    return this.standingIn(this.db, tenantId, id, false);
  }

  /** Admits a change of `ask.amountMinor` (or reserves all that is free) or says why not; nothing changes on a refusal. */
  reserve(tenantId: string, id: string, ask: ReserveAsk): Promise<Admission> {
    return this.db.transaction(async (tx) => {
      const standing = await this.standingIn(tx, tenantId, id, true);
      if (!standing) return { ok: false, reason: 'not-found', standing: null };
      if (standing.record.status !== 'APPROVED') return { ok: false, reason: 'declined', standing };
      if (ask.currency !== undefined && ask.currency !== standing.record.currency) return { ok: false, reason: 'currency', standing };
      const free = ask.pool === 'held' ? standing.heldFree : standing.clearedFree;
      const amount = ask.amountMinor ?? free;
      if (amount <= 0n || amount > free) return { ok: false, reason: 'exceeds', standing };
      const reservedMinor = ask.final ? free : amount;
      const reservationId = randomUUID();
      await tx.query(`DELETE FROM authorization_reservations WHERE tenant_id = $1 AND authorization_id = $2 AND expires_at <= now()`, [tenantId, id]);
      await tx.query(
        `INSERT INTO authorization_reservations (tenant_id, id, authorization_id, pool, amount_minor, expires_at)
         VALUES ($1, $2, $3, $4, $5, now() + make_interval(secs => $6))`,
        [tenantId, reservationId, id, ask.pool, reservedMinor.toString(), this.opts.inFlightSeconds],
      );
      return { ok: true, reservationId, reservedMinor, standing };
    });
  }

  /**
   * Ends a reservation and merges what the core answered (none: the change failed or its outcome is unknown). Every
   * amount of a hold only grows, but `held`, which only shrinks: the merge keeps the latest answer whatever the order
   * answers arrive in. An answer about another amount than the one approved is not merged.
   */
  async settle(tenantId: string, id: string, reservationId: string, core: CoreAmounts | null): Promise<Standing> {
    return this.db.transaction(async (tx) => {
      await tx.query(`DELETE FROM authorization_reservations WHERE tenant_id = $1 AND id = $2`, [tenantId, reservationId]);
      if (core) await this.merge(tx, tenantId, id, core);
      return (await this.standingIn(tx, tenantId, id, false))!;
    });
  }

  private async merge(tx: Queryable, tenantId: string, id: string, core: CoreAmounts): Promise<void> {
    await tx.query(
      `UPDATE authorizations
          SET held_minor = LEAST(held_minor, $4), cleared_minor = GREATEST(cleared_minor, $5), reversed_minor = GREATEST(reversed_minor, $6),
              refunded_minor = GREATEST(refunded_minor, $7), credited_minor = GREATEST(credited_minor, $8)
        WHERE tenant_id = $1 AND id = $2 AND approved_minor = $3
          AND LEAST(held_minor, $4) + GREATEST(cleared_minor, $5) + GREATEST(reversed_minor, $6) = approved_minor
          AND GREATEST(refunded_minor, $7) + GREATEST(credited_minor, $8) <= GREATEST(cleared_minor, $5)`,
      [tenantId, id, ...[core.authorized, core.held, core.cleared, core.reversed, core.refunded, core.credited].map(String)],
    );
    await this.giveBackVelocity(tx, tenantId, id);
  }

  /**
   * Velocity counts what is held net of reversals (decision 0354): what `reversed` grew by since last given back leaves
   * the authorization's counters (its count too once nothing is held or cleared), once, under the row's lock.
   */
  private async giveBackVelocity(tx: Queryable, tenantId: string, id: string): Promise<void> {
    const r = await tx.query<{ velocity: VelocityCount[]; amount: string; count: boolean }>(
      `WITH before AS (
         SELECT velocity_returned_minor AS returned, velocity_count_returned AS count_returned FROM authorizations
          WHERE tenant_id = $1 AND id = $2 AND velocity IS NOT NULL FOR UPDATE
       )
       UPDATE authorizations a
          SET velocity_returned_minor = a.reversed_minor,
              velocity_count_returned = before.count_returned OR a.held_minor + a.cleared_minor = 0
         FROM before
        WHERE a.tenant_id = $1 AND a.id = $2
          AND (a.reversed_minor > before.returned OR (NOT before.count_returned AND a.held_minor + a.cleared_minor = 0))
        RETURNING a.velocity, (a.reversed_minor - before.returned)::text AS amount, (NOT before.count_returned AND a.held_minor + a.cleared_minor = 0) AS count`,
      [tenantId, id],
      { name: 'authorizations-velocity-give-back' },
    );
    const given = r.rows[0];
    if (given) await giveBack(tx, tenantId, given.velocity, BigInt(given.amount), given.count ? 1 : 0);
  }

  /** Opens a dispute of `amountMinor` of what was cleared and not given back or claimed; nothing changes on a refusal. */
  openDispute(
    tenantId: string,
    transactionId: string,
    d: { amountMinor: bigint; currency: string; reason: DisputeReason; note: string | null; openedBy: string | null; at: Date },
  ): Promise<DisputeOpening> {
    return this.db.transaction(async (tx) => {
      const standing = await this.standingIn(tx, tenantId, transactionId, true);
      if (!standing) return { ok: false, reason: 'not-found', standing: null };
      const record = standing.record;
      if (record.status !== 'APPROVED') return { ok: false, reason: 'declined', standing };
      if (d.currency !== record.currency) return { ok: false, reason: 'currency', standing };
      if (record.clearedMinor === 0n) return { ok: false, reason: 'not-cleared', standing };
      if (d.amountMinor > standing.clearedFree) return { ok: false, reason: 'exceeds', standing };
      const r = await tx.query<DisputeRow>(
        `INSERT INTO disputes (tenant_id, id, authorization_id, card_id, entity_id, amount_minor, currency, reason, note, status, opened_by, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'OPEN', $10, $11)
         RETURNING ${DISPUTE_COLUMNS}`,
        [tenantId, `dsp_${randomUUID().replaceAll('-', '')}`, transactionId, record.cardId, record.entityId, d.amountMinor.toString(), d.currency, d.reason, d.note, d.openedBy, d.at.toISOString()],
      );
      return { ok: true, dispute: disputeOf(r.rows[0]!), standing: { ...standing, clearedFree: standing.clearedFree - d.amountMinor, disputed: standing.disputed + d.amountMinor } };
    });
  }

  async dispute(tenantId: string, id: string): Promise<DisputeRecord | null> {
    const r = await this.db.query<DisputeRow>(`SELECT ${DISPUTE_COLUMNS} FROM disputes WHERE tenant_id = $1 AND id = $2`, [tenantId, id]);
    return r.rows[0] ? disputeOf(r.rows[0]) : null;
  }

  /**
   * Takes an open dispute for resolution, once: a second resolution meanwhile is refused. A dispute left being
   * resolved by a gateway that stopped is open again after `inFlightSeconds`.
   */
  async beginResolve(tenantId: string, id: string): Promise<ResolveStart> {
    const r = await this.db.query<DisputeRow>(
      `UPDATE disputes SET status = 'RESOLVING', resolving_since = now()
        WHERE tenant_id = $1 AND id = $2
          AND (status = 'OPEN' OR (status = 'RESOLVING' AND resolving_since <= now() - make_interval(secs => $3)))
        RETURNING ${DISPUTE_COLUMNS}`,
      [tenantId, id, this.opts.inFlightSeconds],
    );
    return r.rows[0] ? { ok: true, dispute: disputeOf(r.rows[0]) } : { ok: false, dispute: await this.dispute(tenantId, id) };
  }

  /** The resolution's outcome: WON merges the core's credit, LOST gives the claim back; either releases the claim. */
  finishResolve(tenantId: string, dispute: DisputeRecord, outcome: DisputeOutcome, resolvedBy: string | null, core: CoreAmounts | null): Promise<{ dispute: DisputeRecord; standing: Standing }> {
    return this.db.transaction(async (tx) => {
      await tx.query(`SELECT 1 FROM authorizations WHERE tenant_id = $1 AND id = $2 FOR UPDATE`, [tenantId, dispute.authorizationId]);
      const r = await tx.query<DisputeRow>(
        `UPDATE disputes SET status = $3, resolved_by = $4, resolved_at = now(), resolving_since = NULL
          WHERE tenant_id = $1 AND id = $2 AND status = 'RESOLVING'
          RETURNING ${DISPUTE_COLUMNS}`,
        [tenantId, dispute.id, outcome, resolvedBy],
      );
      if (core) await this.merge(tx, tenantId, dispute.authorizationId, core);
      return { dispute: disputeOf(r.rows[0]!), standing: (await this.standingIn(tx, tenantId, dispute.authorizationId, false))! };
    });
  }

  /** A resolution that failed (the core refused, was unreachable or did not answer in time): the dispute is open again. */
  async abortResolve(tenantId: string, id: string): Promise<void> {
    await this.db.query(`UPDATE disputes SET status = 'OPEN', resolving_since = NULL WHERE tenant_id = $1 AND id = $2 AND status = 'RESOLVING'`, [tenantId, id]);
  }
}
