// Failed operator-key attempts per client address and overall (in process, or in Redis when REDIS_URL is set).
// Past the global limit only addresses that already failed are refused, so operators elsewhere still get in.
import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { AuditWriter } from '../../audit/writer.js';
import { PLATFORM_TENANT } from '../tenancy/tenants.js';

export interface OperatorKeyLimits {
  perAddress: number;
  global: number;
  windowSeconds: number;
}

export const OPERATOR_KEY_LIMITS: OperatorKeyLimits = { perAddress: 10, global: 100, windowSeconds: 300 };

export interface Attempt {
  address: string;
  method: string;
  route: string;
  requestId: string;
}

export interface Throttled {
  retryAfterSeconds: number;
  scope: 'address' | 'all addresses';
}

interface Log {
  warn(obj: object, msg: string): void;
}

const GLOBAL_KEY = 'all';

export class OperatorKeyThrottle {
  private readonly byAddress: RateLimiterAbstract;
  private readonly overall: RateLimiterAbstract;

  constructor(
    private readonly audit: Pick<AuditWriter, 'record'>,
    private readonly log: Log,
    readonly limits: OperatorKeyLimits = OPERATOR_KEY_LIMITS,
    redis: { client: Redis; prefix: string } | null = null,
  ) {
    const limiter = (keyPrefix: string, points: number): RateLimiterAbstract => {
      const memory = new RateLimiterMemory({ keyPrefix, points, duration: limits.windowSeconds });
      return redis
        ? new RateLimiterRedis({ storeClient: redis.client, keyPrefix: `${redis.prefix}${keyPrefix}`, points, duration: limits.windowSeconds, insuranceLimiter: memory })
        : memory;
    };
    this.byAddress = limiter('operator-key-failures:address', limits.perAddress);
    this.overall = limiter('operator-key-failures:all', limits.global);
  }

  async refusal(address: string): Promise<Throttled | null> {
    const [mine, all] = await Promise.all([this.byAddress.get(address), this.overall.get(GLOBAL_KEY)]);
    if (mine && mine.consumedPoints >= this.limits.perAddress) return { retryAfterSeconds: seconds(mine.msBeforeNext), scope: 'address' };
    if (mine && mine.consumedPoints > 0 && all && all.consumedPoints >= this.limits.global) {
      return { retryAfterSeconds: seconds(all.msBeforeNext), scope: 'all addresses' };
    }
    return null;
  }

  /** A wrong key, counted; the one that blocks an address is recorded on the platform's trail and logged. */
  async failed(attempt: Attempt): Promise<void> {
    const [mine] = await Promise.all([this.byAddress.penalty(attempt.address, 1), this.overall.penalty(GLOBAL_KEY, 1)]);
    if (mine.consumedPoints !== this.limits.perAddress) return;
    this.log.warn(
      { origin: attempt.address, failures: mine.consumedPoints, retryAfterSeconds: seconds(mine.msBeforeNext) },
      'operator key attempts throttled after repeated failures',
    );
    await this.audit.record({
      tenantId: PLATFORM_TENANT,
      at: new Date(),
      actor: null,
      role: null,
      action: 'operator-key.throttled',
      method: attempt.method,
      route: attempt.route,
      target: { failures: String(mine.consumedPoints), windowSeconds: String(this.limits.windowSeconds) },
      outcome: 'unauthenticated',
      status: 429,
      requestId: attempt.requestId,
      origin: attempt.address,
    });
  }
}

const seconds = (ms: number): number => Math.max(1, Math.ceil(ms / 1000));
