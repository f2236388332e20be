// The Redis connection for shared counters (rate limits, the JWE replay cache), when REDIS_URL is set.
// ioredis is loaded by openRedis: a process without REDIS_URL (the CLI, the embedded demo) never loads it.
import type { Redis } from 'ioredis';
import type { FastifyBaseLogger } from 'fastify';
import { ConfigError, type Config } from '../../config.js';

/** How long a command may take before the caller treats Redis as unavailable. */
const REDIS_COMMAND_TIMEOUT_MS = 1_000;

/**
 * Connects before listening, so a bad REDIS_URL fails at boot naming the variable (never the URL). Later a lost
 * connection fails callers fast (rate limits let requests through, replay answers 503) while ioredis reconnects.
 */
export async function openRedis(config: Config, log: FastifyBaseLogger): Promise<Redis> {
  if (!config.redisUrl) throw new ConfigError('REDIS_URL', 'is not set');
  let booted = false;
  const { Redis } = await import('ioredis');
  const redis = new Redis(config.redisUrl, {
    lazyConnect: true,
    // At boot one failed attempt is the answer; later, reconnect with a growing pause (at most 2 s).
    retryStrategy: (times) => (booted ? Math.min(times * 100, 2_000) : null),
    connectTimeout: 2_000,
    commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    connectionName: 'cardline',
  });
  let lastError = '';
  redis.on('error', (err: Error) => {
    // One line per distinct failure, not one per reconnect attempt.
    if (err.message === lastError) return;
    lastError = err.message;
    log.error({ reason: err.message }, 'Redis connection error');
  });
  redis.on('ready', () => {
    if (lastError) log.info('Redis connection restored');
    lastError = '';
  });
  try {
    await redis.connect();
    await redis.ping();
  } catch (err) {
    redis.disconnect();
    throw new ConfigError('REDIS_URL', `names a Redis server that does not answer (${lastError || (err as Error).message})`);
  }
  booted = true;
  return redis;
}

/** Closes the connection, waiting for pending replies; never throws (the process is shutting down). */
export async function closeRedis(redis: Redis): Promise<void> {
  try {
    await redis.quit();
  } catch {
    redis.disconnect();
  }
}

/** Readiness: true when Redis answers PING within the command timeout (never throws, never waits longer). */
export async function redisAnswers(redis: Pick<Redis, 'ping'>, timeoutMs = REDIS_COMMAND_TIMEOUT_MS): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('timeout')), timeoutMs)));
    return (await Promise.race([redis.ping(), timeout])) === 'PONG';
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}
