// Durable audit with group commit: records queue up while a batch commits, and the next batch takes
// them all in one transaction. A write is acknowledged only after its batch has committed.
import { uuidv7 } from 'uuidv7';
import type { Db, Queryable } from '../store/db.js';
import { GENESIS_HASH, recordHash, type AuditEntry } from './chain.js';

const MAX_BATCH = 500;
const COLUMNS = 16;

interface Pending {
  entry: AuditEntry;
  resolve: () => void;
  reject: (err: unknown) => void;
}

export class AuditWriter {
  private queue: Pending[] = [];
  private draining: Promise<void> | null = null;
  private closed = false;

  constructor(private readonly db: Db) {}

  /** Resolves once the record is committed. */
  record(entry: AuditEntry): Promise<void> {
    if (this.closed) return Promise.reject(new Error('audit writer closed'));
    return new Promise((resolve, reject) => {
      this.queue.push({ entry, resolve, reject });
      this.draining ??= this.drain();
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length) {
      const batch = this.queue.splice(0, MAX_BATCH);
      try {
        await this.db.transaction((tx) => this.writeBatch(tx, batch.map((p) => p.entry)));
        for (const p of batch) p.resolve();
      } catch (err) {
        for (const p of batch) p.reject(err);
      }
    }
    this.draining = null;
  }

  private async writeBatch(tx: Queryable, entries: AuditEntry[]): Promise<void> {
    const byTenant = new Map<string, AuditEntry[]>();
    for (const e of entries) {
      const list = byTenant.get(e.tenantId);
      if (list) list.push(e);
      else byTenant.set(e.tenantId, [e]);
    }
    // Heads are locked in a fixed order, so two replicas' batches never deadlock.
    for (const tenantId of [...byTenant.keys()].sort()) {
      const list = byTenant.get(tenantId)!;
      await tx.query('INSERT INTO audit_heads (tenant_id, seq, hash) VALUES ($1, 0, $2) ON CONFLICT DO NOTHING', [tenantId, GENESIS_HASH]);
      const head = await tx.query<{ seq: string | number; hash: string }>(
        'SELECT seq, hash FROM audit_heads WHERE tenant_id = $1 FOR UPDATE',
        [tenantId],
      );
      let seq = Number(head.rows[0]!.seq);
      let prev = head.rows[0]!.hash;
      const params: unknown[] = [];
      const tuples: string[] = [];
      for (const e of list) {
        seq += 1;
        const id = uuidv7();
        const hash = recordHash(prev, { ...e, seq, id });
        const base = params.length;
        tuples.push(`(${Array.from({ length: COLUMNS }, (_, i) => `$${base + i + 1}`).join(', ')})`);
        params.push(
          e.tenantId, seq, id, e.at.toISOString(), e.actor, e.role, e.action, e.method, e.route,
          JSON.stringify(e.target), e.outcome, e.status, e.requestId, e.origin, prev, hash,
        );
        prev = hash;
      }
      await tx.query(
        `INSERT INTO audit_log (tenant_id, seq, id, at, actor, role, action, method, route, target, outcome, status,
                                request_id, origin, prev_hash, hash) VALUES ${tuples.join(', ')}`,
        params,
      );
      await tx.query('UPDATE audit_heads SET seq = $2, hash = $3 WHERE tenant_id = $1', [tenantId, seq, prev]);
    }
  }

  /** Waits for queued records to commit; later records are refused. */
  async close(): Promise<void> {
    this.closed = true;
    while (this.draining) await this.draining;
  }
}
