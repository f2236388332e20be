// Records every authentication attempt and every write, and holds the reply until the record commits.
import fp from 'fastify-plugin';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { Errors, renderEnvelope, renderProblem } from '../errors.js';

function outcomeOf(status: number): string {
  if (status < 202) return 'succeeded';
  if (status === 202) return 'pending';
  if (status === 401) return 'unauthenticated';
  if (status === 403) return 'forbidden';
  if (status === 409) return 'refused';
  if (status < 500) return 'invalid';
  return 'failed';
}

/** Only short string ids reach the record; anything else in a body is ignored. */
function cleanTarget(raw: Record<string, unknown> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(raw ?? {})) {
    if (typeof v === 'string' && v.length > 0) out[k] = v.slice(0, 128);
  }
  return out;
}

const safely = <T>(fn: () => T): T | undefined => {
  try {
    return fn();
  } catch {
    return undefined;
  }
};

const auditPlugin: FastifyPluginAsync = async (app) => {
  app.addHook('onSend', async (request: FastifyRequest, reply, payload) => {
    const spec = request.routeOptions.config.audit;
    const tenant = request.tenant;
    if (!spec || !tenant) return payload;
    const actor = request.principal?.sub ?? safely(() => spec.actor?.(request));
    try {
      await app.cardline.audit.record({
        tenantId: tenant.id,
        at: new Date(),
        actor: typeof actor === 'string' ? actor.slice(0, 128) : null,
        role: request.principal?.role ?? null,
        action: spec.action,
        method: request.method,
        route: request.routeOptions.url ?? request.url,
        target: cleanTarget(safely(() => spec.target?.(request))),
        outcome: outcomeOf(reply.statusCode),
        status: reply.statusCode,
        requestId: request.id,
        origin: request.ip ?? null,
      });
      return payload;
    } catch (err) {
      // An unrecorded write must not be acknowledged as done.
      request.log.error({ err }, 'audit record could not be committed');
      const error = Errors.internal();
      if (request.routeOptions.config.dialect === 'envelope') {
        const r = renderEnvelope(error);
        reply.code(r.status).type('application/json; charset=utf-8');
        return JSON.stringify(r.body);
      }
      const r = renderProblem(error, app.cardline.config.problemBaseUrl);
      reply.code(r.status).type('application/problem+json');
      return JSON.stringify(r.body);
    }
  });
};

export default fp(auditPlugin, { name: 'audit', dependencies: ['services'] });
