// Authentication (spec 4.1) and the tenant's public encryption keys: the two operations without a token.
import { AuthenticateBody, Jwks, TokenResponse } from '../../schemas/auth.js';
import { Errors } from '../errors.js';
import { defineOperation } from './define.js';

export const authOperations = [
  defineOperation({
    id: 'authenticate',
    method: 'POST',
    url: '/api/authenticate',
    summary: 'Obtain a token',
    description:
      "Spec 4.1. `password` is a compact JWE (ECDH-ES+A256KW, A256GCM) to a key of GET /api/keys with `iat` and a unique `jti` " +
      'in its protected header; plain text only where the tenant allows it. Unknown user, wrong password and locked account ' +
      'answer the same 401; ten failures lock the user for 30 minutes.',
    tag: 'Authentication',
    dialect: 'problem',
    access: 'public',
    objectName: 'loginVM',
    body: AuthenticateBody,
    response: TokenResponse,
    encryptedFields: [{ field: 'password', required: (t) => !t.config.encryption.allowPlaintextPassword }],
    execute: async ({ tenant, body, services, log, securityEvent }) => {
      // The tenth failure locks the user: a security event, recorded with this (401) attempt.
      const user = await services.users.authenticate(tenant.id, body.username, body.password, log, (lock) =>
        securityEvent({ type: 'user.locked', payload: { username: body.username, ...lock } }),
      );
      if (!user) throw Errors.badCredentials();
      return services.tokens.issue(tenant, user);
    },
    view: ({ token }) => ({ id_token: token }),
    // The record of a login names who tried; a successful one also names the role it was granted.
    audit: { actorField: 'username', principal: ({ principal }) => principal },
    examples: { body: { username: 'integration', password: 'eyJhbGciOiJFQ0RILUVTK0EyNTZLVyIs…' } },
  }),

  defineOperation({
    id: 'keys.public',
    method: 'GET',
    url: '/api/keys',
    summary: "The tenant's public encryption keys (JWKS)",
    description: 'What a client encrypts passwords, bodies and fields to (ECDH-ES+A256KW, P-256).',
    tag: 'Authentication',
    dialect: 'problem',
    access: 'public',
    objectName: 'keysRequest',
    response: Jwks,
    execute: async ({ tenant, services }) => (await services.keys.forTenant(tenant.id)).enc.map((k) => k.publicJwk),
    view: (keys) => ({ keys }),
    audit: false,
  }),
];
