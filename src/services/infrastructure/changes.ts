// Configuration changes told to every gateway process, so that caches refresh on change instead of
// expiring (decision 0034). On PostgreSQL a change is a NOTIFY sent in the transaction that makes it —
// delivered at commit, to every process LISTENing, and to none if it rolls back. The embedded store has one
// process: the writer tells itself.
import type { FastifyBaseLogger } from 'fastify';
import type { Db, Listener, Queryable } from '../../store/db.js';

export type Change =
  /** Created, reconfigured, enabled or disabled. */
  | { kind: 'tenant'; tenantId: string }
  /** Gateway keys created, rotated or retired. */
  | { kind: 'keys'; tenantId: string }
  | { kind: 'client-key'; tenantId: string }
  /** Created, changed (role, disabled, password: its tokens are revoked), unlocked or removed. */
  | { kind: 'user'; tenantId: string; username: string }
  | { kind: 'operator-keys' }
  /** A spend-control rule created, changed, promoted or removed (decision 0359). */
  | { kind: 'auth-rules'; tenantId: string }
  /** Changes may have been missed (the listening connection was lost): forget everything cached. */
  | { kind: 'all' };

const CHANGE_CHANNEL = 'cardline_changes';

const isChange = (value: unknown): value is Change =>
  typeof value === 'object' && value !== null && typeof (value as { kind?: unknown }).kind === 'string';

export class ChangeFeed {
  private readonly listeners = new Set<(change: Change) => void>();
  private listener: Listener | null = null;

  constructor(
    private readonly db: Db,
    private readonly logger?: FastifyBaseLogger,
  ) {}

  /** Subscribes to every change, this process's own and (on PostgreSQL) other processes'. */
  subscribe(listener: (change: Change) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Starts hearing other processes' changes (PostgreSQL); the embedded store has no others. */
  async start(): Promise<void> {
    if (!this.db.listen || this.listener) return;
    this.listener = await this.db.listen(CHANGE_CHANNEL, {
      onMessage: (payload) => {
        try {
          const change = JSON.parse(payload) as unknown;
          if (isChange(change)) this.tell(change);
        } catch {
          this.logger?.warn('unreadable change notification ignored');
        }
      },
      onReconnect: () => {
        this.logger?.warn('change notifications were interrupted; every cache is refreshed');
        this.tell({ kind: 'all' });
      },
      onError: (err) => this.logger?.warn({ reason: (err as Error)?.message }, 'change notification connection failed; reconnecting'),
    });
  }

  /** Records a change made in `tx`, heard by other processes on commit; call `told` after it to apply it here. */
  async publish(change: Change, tx: Queryable = this.db): Promise<void> {
    if (this.db.kind === 'postgres') await tx.query('SELECT pg_notify($1, $2)', [CHANGE_CHANNEL, JSON.stringify(change)]);
  }

  /** Applies a committed change in this process (its own NOTIFY arrives later and is harmless). */
  told(change: Change): void {
    this.tell(change);
  }

  /** publish + told, for a change already committed. */
  async changed(change: Change): Promise<void> {
    await this.publish(change);
    this.tell(change);
  }

  private tell(change: Change): void {
    for (const listener of this.listeners) {
      try {
        listener(change);
      } catch (err) {
        this.logger?.error({ err }, 'a change listener failed');
      }
    }
  }

  async close(): Promise<void> {
    await this.listener?.close();
    this.listener = null;
  }
}
