// POST /api/authenticate (spec 4.1) and the public key sets.
import type { FastifyPluginAsync } from 'fastify';
import { AuthenticateBody, Jwks, TokenResponse } from '../../schemas/auth.js';
import { Errors } from '../errors.js';

const authRoutes: FastifyPluginAsync = async (app) => {
  const { users, tokens, keys } = app.cardline;

  app.post<{ Body: AuthenticateBody }>('/api/authenticate', {
    schema: { body: AuthenticateBody, response: { 200: TokenResponse } },
    config: {
      auth: false,
      objectName: 'loginVM',
      encryptedFields: [{ field: 'password', required: (t) => !t.config.encryption.allowPlaintextPassword }],
      audit: {
        action: 'authenticate',
        actor: (req) => (req.body as Partial<AuthenticateBody> | undefined)?.username,
      },
    },
    handler: async (request) => {
      const tenant = request.tenant!;
      const user = await users.authenticate(tenant.id, request.body.username, request.body.password, request.log);
      if (!user) throw Errors.badCredentials();
      const { token, principal } = await tokens.issue(tenant, user);
      // The request is now the user's: the audit record of a successful login names its role too.
      request.principal = principal;
      return { id_token: token };
    },
  });

  // The tenant's gateway encryption keys, for encrypting passwords and payloads (DESIGN §4).
  app.get('/api/keys', {
    schema: { response: { 200: Jwks } },
    config: { auth: false },
    handler: async (request) => {
      const { enc } = await keys.forTenant(request.tenant!.id);
      return { keys: enc.map((k) => k.publicJwk) };
    },
  });

  app.get('/.well-known/jwks.json', {
    schema: { response: { 200: Jwks } },
    config: { auth: false, tenant: false },
    handler: async (_request, reply) => {
      reply.header('cache-control', 'public, max-age=300');
      return { keys: await keys.allSigningJwks() };
    },
  });
};

export default authRoutes;
