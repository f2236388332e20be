// The operations console's own assembly on the management listener (decision 0165): its files under
// /console and its session (sign in with an operator key, read the CSRF token, sign out). Everything its pages
// read or change is a management operation (src/operations/management-console.ts and the rest of the table).
import { Type } from '@sinclair/typebox';
import { type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { audited } from '../plugins/audit.js';
import { ConsoleErrors } from './auth.js';
import { ConsoleSessions, sessionCookie } from './sessions.js';
import { consoleFiles } from './static.js';

const SignInBody = Type.Object({ key: Type.String({ minLength: 1, maxLength: 512 }) }, { additionalProperties: false });
const SessionResponse = Type.Object({
  result: Type.Object({ operator: Type.String(), csrfToken: Type.String(), idleTimeoutSeconds: Type.Integer() }),
  pagination: Type.Null(),
});
const MessageResponse = Type.Object({ result: Type.Object({ message: Type.String() }), pagination: Type.Null() });
const envelope = <T>(result: T) => ({ result, pagination: null });

interface ConsoleRoutesOptions {
  sessions: ConsoleSessions;
}

const consoleRoutes: FastifyPluginAsync<ConsoleRoutesOptions> = async (plain, opts) => {
  const app = plain.withTypeProvider<TypeBoxTypeProvider>();
  const { sessions } = opts;

  await app.register(consoleFiles);

  // ── The session ───────────────────────────────────────────────────────────────────────────────────

  app.post('/console/session', {
    schema: { body: SignInBody, response: { 201: SessionResponse } },
    config: { operator: false, objectName: 'signInRequest', idempotency: false, audit: { action: 'console.sign-in' } },
    // Answered through the recorder: the sign-in's audit entry commits before the answer is sent.
    handler: audited(async (request, reply) => {
      const opened = await sessions.signIn(request.body.key);
      if (!opened) throw ConsoleErrors.badKey();
      // Audited as the operator it names, like any call made with the key.
      request.ctx.operator = opened.operator;
      reply.header('set-cookie', sessionCookie(opened.sessionId, request.protocol === 'https'));
      reply.header('cache-control', 'no-store');
      reply.code(201);
      return envelope(sessions.info(opened.sessionId, opened.operator.name));
    }),
  });

  // A page that reloads asks again for the CSRF token it keeps only in memory (never in storage).
  app.get('/console/session', {
    schema: { response: { 200: SessionResponse } },
    handler: async (request, reply) => {
      const { consoleSession, operator } = request.ctx;
      if (!consoleSession || !operator) throw ConsoleErrors.noSession();
      reply.header('cache-control', 'no-store');
      return envelope(sessions.info(consoleSession, operator.name));
    },
  });

  app.delete('/console/session', {
    schema: { response: { 200: MessageResponse } },
    config: { idempotency: false, audit: { action: 'console.sign-out' } },
    handler: audited(async (request, reply) => {
      const { consoleSession } = request.ctx;
      if (!consoleSession) throw ConsoleErrors.noSession();
      await sessions.signOut(consoleSession);
      reply.header('set-cookie', sessionCookie(null, request.protocol === 'https'));
      return envelope({ message: 'Signed out' });
    }),
  });
};

export default consoleRoutes;
