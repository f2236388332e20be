// The management listener's routes outside its operation table: liveness and Prometheus metrics, both without
// an operator key (Prometheus scrapes without one, like its exporters; the listener stays on a private
// network, decision 0070).
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsync } from 'fastify';

const managementProbes: FastifyPluginAsync = async (app) => {
  const config = { operator: false } as const;
  app.get('/health/live', { config, schema: { response: { 200: Type.Object({ status: Type.Literal('ok') }) } } }, async () => ({ status: 'ok' as const }));
  app.get('/metrics', { config }, async (request, reply) => {
    // OpenMetrics (with exemplars linking latency buckets to traces) when the scrape asks for it and tracing is on.
    const { body, contentType } = await app.cardline.metrics.scrape(request.headers.accept);
    reply.type(contentType);
    return body;
  });
};

export default managementProbes;
