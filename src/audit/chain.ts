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
