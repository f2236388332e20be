// Records every authentication attempt and every write, and holds the reply until the record commits;
// a successful write's event of record (route config audit.event) commits with its record.
import fp from 'fastify-plugin';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { maskCardNumbers } from '../../connectors/shared/pan.js';
import { Errors, renderEnvelope, renderProblem } from '../errors.js';
import { domainEvent, type DomainEvent } from '../events/outbox.js';

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * What the operation produced (the connector's result), set by the handler once it has carried the
     * operation out; the route's event of record is built from it. Null when nothing ran (a replay).
     */
    operationResult: unknown;
  }
}

/** How a call ended. A business refusal is 'refused' in both dialects (409 problem, 400/404 envelope). */
function outcomeOf(status: number, errorCode: string | null): string {
  if (errorCode === 'CL_BUSINESS') return 'refused';
  if (status < 202) return 'succeeded';
  if (status === 202) return 'pending';
  if (status === 401) return 'unauthenticated';
  if (status === 403) return 'forbidden';
  if (status === 409) return 'refused';
  if (status < 500) return 'invalid';
  return 'failed';
}

const JOSE = /eyJ[\w-]{8,}(?:\.[\w-]*)*/g;

/**
 * Ids come from the caller's body, valid or not, so a card number or a token sent in an id field must
 * not reach the record: Luhn-valid 13-19 digit runs are masked (first six, last four), JOSE strings dropped.
 */
export function scrubId(value: string): string {
  return maskCardNumbers(value.replace(JOSE, '[redacted]'), { luhnOnly: true });
}

/** Only short string ids reach the record; anything else in a body is ignored. */
function cleanTarget(raw: Record<string, unknown> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(raw ?? {})) {
    if (typeof v === 'string' && v.length > 0) out[k] = scrubId(v.slice(0, 4096)).slice(0, 128);
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

/** Events are of record only for a write that completed now: 2xx, not 202 (pending is not done). */
const isDone = (status: number): boolean => status >= 200 && status < 300 && status !== 202;

const auditPlugin: FastifyPluginAsync = async (app) => {
  app.decorateRequest('operationResult', null);

  /** The reply becomes a 500 in the route's dialect. */
  const internalError = (request: FastifyRequest, reply: FastifyReply): string => {
    const error = Errors.internal();
    if (request.routeOptions.config.dialect === 'envelope') {
      const r = renderEnvelope(error);
      reply.code(r.status).type('application/json; charset=utf-8');
      return JSON.stringify(r.body);
    }
    const r = renderProblem(error, app.cardline.config.problemBaseUrl);
    reply.code(r.status).type('application/problem+json');
    return JSON.stringify(r.body);
  };

  app.addHook('onSend', async (request: FastifyRequest, reply, payload) => {
    const spec = request.routeOptions.config.audit;
    const tenant = request.tenant;
    if (!spec || !tenant) return payload;
    const actor = request.principal?.sub ?? safely(() => spec.actor?.(request));
    let status = reply.statusCode;
    let event: DomainEvent | undefined;
    let eventError: unknown;
    if (spec.event && isDone(status) && request.operationResult != null) {
      try {
        event = domainEvent(spec.event.type, spec.event.payload(request, request.operationResult));
      } catch (err) {
        // A route that cannot say what it did answers 500, and the record says so (a bug, not the caller's).
        eventError = err;
        status = 500;
      }
    }
    try {
      await app.cardline.audit.record({
        tenantId: tenant.id,
        at: new Date(),
        actor: typeof actor === 'string' ? scrubId(actor.slice(0, 4096)).slice(0, 128) : null,
        role: request.principal?.role ?? null,
        action: spec.action,
        method: request.method,
        route: request.routeOptions.url ?? request.url,
        target: cleanTarget(safely(() => spec.target?.(request))),
        // A stored response answered again (Idempotency-Key) changed nothing: it is not a second success.
        outcome: request.idempotency?.replayed ? 'replayed' : outcomeOf(status, request.errorCode),
        status,
        // X-Request-Id is the caller's to choose: it gets the same treatment as an id from the body.
        requestId: scrubId(String(request.id).slice(0, 4096)).slice(0, 128),
        origin: request.ip ?? null,
        event,
      });
    } catch (err) {
      // An unrecorded write must not be acknowledged as done.
      request.log.error({ err }, 'audit record could not be committed');
      return internalError(request, reply);
    }
    if (eventError) {
      request.log.error({ err: eventError }, 'event of record could not be built; the write is not acknowledged');
      return internalError(request, reply);
    }
    return payload;
  });
};

export default fp(auditPlugin, { name: 'audit', dependencies: ['services'] });
