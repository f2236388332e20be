// Liveness and readiness probes (readiness lists degraded tenants): no tenant, no token.
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsync } from 'fastify';
import type { DegradedTenant } from '../services/connectors/index.js';
import { redisAnswers } from '../services/infrastructure/redis.js';
import { migrationsApplied } from '../store/migrate.js';

const Check = Type.Union([Type.Literal('ok'), Type.Literal('unreachable'), Type.Literal('pending'), Type.Literal('unknown')]);
/** The readiness answer, 200 ready or 503 not ready: the checks, and the tenants whose connector is degraded. */
const Readiness = Type.Object({
  status: Type.Union([Type.Literal('ready'), Type.Literal('not ready')]),
  checks: Type.Object({ store: Check, migrations: Check, redis: Type.Optional(Check) }),
  degraded: Type.Array(Type.Object({ tenant: Type.String(), reason: Type.String() })),
});

const healthRoutes: FastifyPluginAsync = async (app) => {
  const config = { auth: false, tenant: false } as const;

  app.get('/health/live', { config, schema: { response: { 200: Type.Object({ status: Type.Literal('ok') }) } } }, async () => ({ status: 'ok' as const }));

  app.get('/health/ready', { config, schema: { response: { 200: Readiness, 503: Readiness } } }, async (_request, reply) => {
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
      const { tenants, invalid } = await app.cardline.tenants.listCurrent();
      degraded = [...invalid, ...(await app.cardline.connectors.readiness(tenants))].sort((a, b) => a.tenant.localeCompare(b.tenant));
    }
    reply.code(ready ? 200 : 503);
    return { status: ready ? 'ready' : 'not ready', checks: { store, migrations, ...(redis ? { redis } : {}) }, degraded };
  });
};

export default healthRoutes;
