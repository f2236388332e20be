// The JWE replay cache: each (tenant, jti) is accepted once while its iat could still pass.
import type { Db } from '../store/db.js';

const SWEEP_INTERVAL_MS = 60_000;

export class ReplayCache {
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly db: Db) {
    this.timer = setInterval(() => void this.sweep().catch(() => undefined), SWEEP_INTERVAL_MS);
    this.timer.unref();
  }

  /** Resolves true the first time a jti is seen for the tenant, false on a replay. */
  async firstUse(tenantId: string, jti: string, expiresAt: Date): Promise<boolean> {
    const r = await this.db.query(
      'INSERT INTO jwe_replay (tenant_id, jti, expires_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING',
      [tenantId, jti, expiresAt.toISOString()],
    );
    return r.rowCount === 1;
  }

  async sweep(): Promise<number> {
    const r = await this.db.query('DELETE FROM jwe_replay WHERE expires_at < now()');
    return r.rowCount;
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
