// GET /.well-known/jwks.json: every tenant's public token-signing keys, for verifiers. No tenant, no token.
import type { FastifyPluginAsync } from 'fastify';
import { Jwks } from '../../schemas/auth.js';

const wellKnownRoutes: FastifyPluginAsync = async (app) => {
  app.get('/.well-known/jwks.json', {
    schema: { response: { 200: Jwks } },
    config: { auth: false, tenant: false },
    handler: async (_request, reply) => {
      reply.header('cache-control', 'public, max-age=300');
      return { keys: await app.cardline.keys.allSigningJwks() };
    },
  });
};

export default wellKnownRoutes;
