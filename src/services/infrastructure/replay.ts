// The JWE replay cache: each (tenant, jti) is accepted once while its iat could still pass. Kept in the
// store's jwe_replay table, or in Redis (SET NX PX) when REDIS_URL is set, so every replica shares it.
import type { Redis } from 'ioredis';
import { Errors } from '../../errors.js';
import type { Db } from '../../store/db.js';

export interface ReplayCache {
  /** Resolves true the first time a jti is seen for the tenant, false on a replay. */
  firstUse(tenantId: string, jti: string, expiresAt: Date): Promise<boolean>;
  stop(): void;
}

const SWEEP_INTERVAL_MS = 60_000;

class StoreReplayCache implements ReplayCache {
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly db: Db) {
    this.timer = setInterval(() => void this.sweep().catch(() => undefined), SWEEP_INTERVAL_MS);
    this.timer.unref();
  }

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

/** Redis expires the keys itself: no sweep. Tenant ids hold no ':', so `<tenant>:<jti>` is unambiguous. */
export class RedisReplayCache implements ReplayCache {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  key(tenantId: string, jti: string): string {
    return `${this.prefix}jwe-replay:${tenantId}:${jti}`;
  }

  async firstUse(tenantId: string, jti: string, expiresAt: Date): Promise<boolean> {
    const ttlMs = Math.max(1, expiresAt.getTime() - Date.now());
    let reply: string | null;
    try {
      reply = await this.redis.set(this.key(tenantId, jti), '1', 'PX', ttlMs, 'NX');
    } catch {
      // Unknown whether the jti was seen: refusing is the only safe answer, and it is not the client's fault.
      throw Errors.unavailable('The replay cache is unavailable; retry with a freshly encrypted value shortly.');
    }
    return reply === 'OK';
  }

  stop(): void {}
}

export function createReplayCache(db: Db, redis: Redis | null, prefix: string): ReplayCache {
  return redis ? new RedisReplayCache(redis, prefix) : new StoreReplayCache(db);
}
