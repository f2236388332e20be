// Verifies a tenant's audit chain as stored: walks it in seq order, page by page, recomputing each hash,
// checking each link and the head. Used by `cardline audit verify` and by tests.
import type { Db, Queryable } from '../store/db.js';
import { AUDIT_COLUMNS, GENESIS_HASH, fromRow, recordHash, type AuditRecord, type AuditRow } from './chain.js';

/** Why the chain does not verify, at the first seq where it breaks. */
export type BreakReason =
  /** The record's contents no longer match its hash, or a record was rewritten with a fresh hash. */
  | 'edited'
  /** A seq is missing: the record was deleted (or the chain has a gap). */
  | 'deleted'
  /** The record is intact but sits at another seq than the one it was written at. */
  | 'reordered'
  /** audit_heads does not name the chain's last record (the last record deleted, or the head altered). */
  | 'head-mismatch';

export type VerifyResult =
  | { ok: true; records: number; head: string }
  | { ok: false; seq: number; reason: BreakReason; detail: string; records: number };

export const BREAK_LABELS: Record<BreakReason, string> = {
  edited: 'edited record',
  deleted: 'deleted record or gap',
  reordered: 'reordered records',
  'head-mismatch': 'head mismatch',
};

export interface VerifyOptions {
  /** Records read per query; memory stays bounded by one page whatever the chain's length. */
  pageSize?: number;
}

/**
 * Verifies the chain of one tenant in a read-only REPEATABLE READ transaction, so the pages and the head
 * are one consistent snapshot while gateways keep appending. Resolves the first break, or the count and head.
 */
export function verifyChain(db: Db, tenantId: string, opts: VerifyOptions = {}): Promise<VerifyResult> {
  return db.transaction(async (tx) => {
    await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
    return walk(tx, tenantId, opts.pageSize ?? 1000);
  });
}

async function walk(tx: Queryable, tenantId: string, pageSize: number): Promise<VerifyResult> {
  let expected = 1;
  let prev = GENESIS_HASH;
  const broken = (seq: number, reason: BreakReason, detail: string): VerifyResult => ({
    ok: false, seq, reason, detail, records: expected - 1,
  });

  for (;;) {
    const page = await tx.query<AuditRow>(
      `SELECT ${AUDIT_COLUMNS}
         FROM audit_log WHERE tenant_id = $1 AND seq >= $2 ORDER BY seq LIMIT $3`,
      [tenantId, expected, pageSize],
    );
    for (const row of page.rows) {
      const r = fromRow(tenantId, row);
      if (r.seq !== expected) {
        const missing = r.seq - 1 === expected ? `seq ${expected} is missing` : `seqs ${expected} to ${r.seq - 1} are missing`;
        return broken(expected, 'deleted', `${missing}; the next record is seq ${r.seq}`);
      }
      const intact = recordHash(r.prevHash, r) === r.hash;
      if (r.prevHash === prev) {
        if (!intact) return broken(r.seq, 'edited', "the record's contents do not match its hash");
      } else if (intact) {
        // The record is whole but commits to another predecessor: the one before it was rewritten and rehashed.
        return r.seq > 1
          ? broken(r.seq - 1, 'edited', `the record was rewritten: seq ${r.seq} commits to a different hash for it`)
          : broken(r.seq, 'edited', 'the first record does not start from the genesis hash');
      } else {
        const original = await writtenAt(tx, tenantId, r);
        return original !== null && original !== r.seq
          ? broken(r.seq, 'reordered', `the record at seq ${r.seq} was written as seq ${original}`)
          : broken(r.seq, 'edited', "the record's contents do not match its hash, and it does not link to seq " + (r.seq - 1));
      }
      prev = r.hash;
      expected += 1;
    }
    if (page.rows.length < pageSize) break;
  }

  const last = expected - 1;
  const head = await tx.query<{ seq: string | number; hash: string }>('SELECT seq, hash FROM audit_heads WHERE tenant_id = $1', [
    tenantId,
  ]);
  const h = head.rows[0];
  if (!h) {
    if (last === 0) return { ok: true, records: 0, head: GENESIS_HASH };
    return broken(last, 'head-mismatch', `there is no head, but the chain has ${last} records`);
  }
  const headSeq = Number(h.seq);
  if (headSeq !== last) {
    return headSeq > last
      ? broken(last + 1, 'head-mismatch', `the head names seq ${headSeq}, but the chain ends at seq ${last}: records were deleted from its end`)
      : broken(headSeq + 1, 'head-mismatch', `the head names seq ${headSeq}, but the chain goes on to seq ${last}`);
  }
  if (h.hash !== prev) return broken(last, 'head-mismatch', `the head's hash does not match record ${last}`);
  return { ok: true, records: last, head: prev };
}

/**
 * The seq a record was written at: where it is, if its hash holds there; else right after its
 * predecessor (named by prev_hash; itself perhaps moved, so found the same way), confirmed by the hash.
 */
async function writtenAt(tx: Queryable, tenantId: string, r: AuditRecord, depth = 8): Promise<number | null> {
  if (recordHash(r.prevHash, r) === r.hash) return r.seq;
  if (depth === 0) return null;
  let candidate: number;
  if (r.prevHash === GENESIS_HASH) candidate = 1;
  else {
    const p = await tx.query<AuditRow>(
      `SELECT ${AUDIT_COLUMNS}
         FROM audit_log WHERE tenant_id = $1 AND hash = $2 LIMIT 1`,
      [tenantId, r.prevHash],
    );
    if (!p.rows[0]) return null;
    const before = await writtenAt(tx, tenantId, fromRow(tenantId, p.rows[0]), depth - 1);
    if (before === null) return null;
    candidate = before + 1;
  }
  return recordHash(r.prevHash, { ...r, seq: candidate }) === r.hash ? candidate : null;
}
