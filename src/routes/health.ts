// Liveness and readiness probes: no tenant, no token.
import type { FastifyPluginAsync } from 'fastify';
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
    const ready = store === 'ok' && migrations === 'ok';
    reply.code(ready ? 200 : 503);
    return { status: ready ? 'ready' : 'not ready', checks: { store, migrations } };
  });
};

export default healthRoutes;
