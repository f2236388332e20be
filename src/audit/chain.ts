// The audit record's canonical form and hash: each record commits to its predecessor in its chain. A tenant's
// trail is the union of chains, one per writer (decision 0200); `seq` is unique per tenant and orders the
// trail, `position` numbers a record within its chain (1, 2, 3…).
import { createHash, hash as digest } from 'node:crypto';

export const GENESIS_HASH = '0'.repeat(64);

export interface AuditEntry {
  tenantId: string;
  at: Date;
  actor: string | null;
  role: string | null;
  action: string;
  method: string;
  route: string;
  target: Record<string, string>;
  outcome: string;
  status: number;
  requestId: string;
  origin: string | null;
}

export interface AuditRecord extends AuditEntry {
  seq: number;
  /** The writer's chain the record belongs to ('legacy': records written before chains per writer). */
  chain: string;
  /** Its place in that chain, from 1; not hashed (the links order a chain), only indexed. */
  position: number;
  id: string;
  prevHash: string;
  hash: string;
}

/** An audit_log row as the store returns it. */
export interface AuditRow {
  seq: string | number;
  chain: string;
  position: string | number;
  id: string;
  at: Date | string;
  actor: string | null;
  role: string | null;
  action: string;
  method: string;
  route: string;
  target: Record<string, string>;
  outcome: string;
  status: number;
  request_id: string;
  origin: string | null;
  prev_hash: string;
  hash: string;
}

/** The columns of AuditRow, for SELECT lists. */
export const AUDIT_COLUMNS = 'seq, chain, position, id, at, actor, role, action, method, route, target, outcome, status, request_id, origin, prev_hash, hash';

export const fromRow = (tenantId: string, r: AuditRow): AuditRecord => ({
  tenantId,
  seq: Number(r.seq),
  chain: r.chain,
  position: Number(r.position),
  id: r.id,
  at: new Date(r.at),
  actor: r.actor,
  role: r.role,
  action: r.action,
  method: r.method,
  route: r.route,
  target: r.target,
  outcome: r.outcome,
  status: Number(r.status),
  requestId: r.request_id,
  origin: r.origin,
  prevHash: r.prev_hash,
  hash: r.hash,
});

/** Field order is fixed: changing it breaks every stored chain. Chain and position are placed by the link, not hashed. */
export function recordHash(prevHash: string, r: Omit<AuditRecord, 'prevHash' | 'hash' | 'chain' | 'position'>): string {
  return recordHashAt(prevHash, r, r.at.toISOString());
}

/** recordHash with `at` given as its ISO 8601 text (verification reads it so from the store: no Date to parse). */
export function recordHashAt(prevHash: string, r: Omit<AuditRecord, 'prevHash' | 'hash' | 'chain' | 'position' | 'at'>, atIso: string): string {
  // One-shot (no Hash object per record: verification hashes a million, and each object costs the GC).
  return digest('sha256', canonicalText(prevHash, r, atIso), 'hex');
}

/** What a record's hash is computed over: the hash of the record before it in its chain, a newline, the canonical JSON. */
export function canonicalText(prevHash: string, r: Omit<AuditRecord, 'prevHash' | 'hash' | 'chain' | 'position' | 'at'>, atIso: string): string {
  const canonical = JSON.stringify([
    r.tenantId,
    r.seq,
    r.id,
    atIso,
    r.actor,
    r.role,
    r.action,
    r.method,
    r.route,
    targetPairs(r.target),
    r.outcome,
    r.status,
    r.requestId,
    r.origin,
  ]);
  return `${prevHash}\n${canonical}`;
}

/** `at` as toISOString() gives it, so verifications hash it as the writer did without a Date per record. */
export const AT_ISO_SQL = `to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** What a verification thread reads per record (decision 0211): all text, so nothing is parsed. */
export const QUICK_COLUMNS = `position::text AS pos, seq::text AS s, id::text AS i, ${AT_ISO_SQL} AS a,
  actor, role, action, method, route, target::text AS t, outcome, status::text AS st, request_id, origin, prev_hash, hash`;

/** A row of QUICK_COLUMNS. */
export type QuickRow = (string | null)[];

/**
 * canonicalText of a QUICK_COLUMNS row without parsing it, for the hash check only: a row rendered otherwise
 * fails the check and the exact walk decides.
 */
export function quickText(tenantId: string, row: QuickRow): string {
  const before = JSON.stringify([tenantId, Number(row[1]), row[2], row[3], row[4], row[5], row[6], row[7], row[8]]);
  const after = JSON.stringify([row[10], Number(row[11]), row[12], row[13]]);
  return `${row[14]}\n${before.slice(0, -1)},${targetForm(row[9]!)},${after.slice(1)}`;
}

/** The target's place in the canonical form: its pairs in key order. */
export const targetPairs = (target: Record<string, string>): [string, string | undefined][] =>
  Object.keys(target)
    .sort()
    .map((k) => [k, target[k]]);

/** jsonb's text of a one-pair object with nothing jsonb escapes: JSON.stringify writes it the same. */
const ONE_PLAIN_PAIR = /^\{"([^"\\]*)": "([^"\\]*)"\}$/;

/** The target's canonical JSON from `target::text`, without parsing the common shapes. */
export function targetForm(text: string): string {
  if (text === '{}') return '[]';
  const one = ONE_PLAIN_PAIR.exec(text);
  if (one) return `[["${one[1]}","${one[2]}"]]`;
  return JSON.stringify(targetPairs(JSON.parse(text) as Record<string, string>));
}

/** A trail as one hash over every chain's size and head: what a checkpoint signs. */
export function trailRoot(tenantId: string, chains: readonly { chain: string; size: number; head: string }[]): string {
  const h = createHash('sha256').update(`cardline-audit-trail\n${tenantId}\n`);
  for (const c of [...chains].sort((a, b) => (a.chain < b.chain ? -1 : a.chain > b.chain ? 1 : 0))) h.update(`${c.chain} ${c.size} ${c.head}\n`);
  return h.digest('hex');
}
