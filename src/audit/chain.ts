// The audit record's canonical form and hash: each record commits to its predecessor, per tenant.
import { createHash } from 'node:crypto';

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
  id: string;
  prevHash: string;
  hash: string;
}

/** An audit_log row as the store returns it. */
export interface AuditRow {
  seq: string | number;
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
export const AUDIT_COLUMNS = 'seq, id, at, actor, role, action, method, route, target, outcome, status, request_id, origin, prev_hash, hash';

export const fromRow = (tenantId: string, r: AuditRow): AuditRecord => ({
  tenantId,
  seq: Number(r.seq),
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

/** Field order is fixed here; changing it breaks every stored chain. */
export function recordHash(prevHash: string, r: Omit<AuditRecord, 'prevHash' | 'hash'>): string {
  const canonical = JSON.stringify([
    r.tenantId,
    r.seq,
    r.id,
    r.at.toISOString(),
    r.actor,
    r.role,
    r.action,
    r.method,
    r.route,
    Object.keys(r.target)
      .sort()
      .map((k) => [k, r.target[k]]),
    r.outcome,
    r.status,
    r.requestId,
    r.origin,
  ]);
  return createHash('sha256').update(prevHash).update('\n').update(canonical).digest('hex');
}
