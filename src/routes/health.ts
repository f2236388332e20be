// Liveness and readiness probes (readiness lists degraded tenants): no tenant, no token.
import type { FastifyPluginAsync } from 'fastify';
import type { DegradedTenant } from '../services/connectors.js';
import { redisAnswers } from '../services/redis.js';
import { migrationsApplied } from '../store/migrate.js';

const healthRoutes: FastifyPluginAsync = async (app) => {
  const config = { auth: false, tenant: false } as const;

  app.get('/health/live', { config }, async () => ({ status: 'ok' }));

  app.get('/health/ready', { config }, async (_request, reply) => {
    let store = 'ok';
    let migrations = 'ok';
    try {
      await app.cardline.db.query('SELECT 1');
      if (!(await migrationsApplied(app.cardline.db))) migrations = 'pending';
    } catch {
      store = 'unreachable';
      migrations = 'unknown';
    }
    // With REDIS_URL, rate limits and the replay cache live in Redis: without it, logins answer 503.
    const redis = app.cardline.redis ? ((await redisAnswers(app.cardline.redis)) ? 'ok' : 'unreachable') : undefined;
    const ready = store === 'ok' && migrations === 'ok' && redis !== 'unreachable';
    // Degraded tenants leave the gateway ready: it still serves every other tenant (decision 0009).
    let degraded: DegradedTenant[] = [];
    if (ready) {
      const { tenants, invalid } = await app.cardline.tenants.listChecked();
      degraded = [...invalid, ...(await app.cardline.connectors.readiness(tenants))].sort((a, b) => a.tenant.localeCompare(b.tenant));
    }
    reply.code(ready ? 200 : 503);
    return { status: ready ? 'ready' : 'not ready', checks: { store, migrations, ...(redis ? { redis } : {}) }, degraded };
  });
};

export default healthRoutes;
