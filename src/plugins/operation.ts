// The pipeline's operation step: runs a route's operation and owns what follows the core call — the view,
// the sensitive fields sealed to the tenant's client key, and the event of record handed to the audit step.
import fp from 'fastify-plugin';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { sealFields } from '../crypto/response-fields.js';
import { Errors } from '../errors.js';
import { domainEvent, type DomainEvent } from '../events/outbox.js';
import type { CoreCall, EventOf, Operation } from '../operations/define.js';
import { inputOf } from '../operations/register.js';
import { prefersCsv, toCsv } from '../reports/csv.js';

/** What a request's operation did; the audit step records it. */
interface Outcome {
  /** The operation's result (a successful login's principal comes from it). */
  result: unknown;
  /** The event of record the write produced; committed with its audit record. */
  event: DomainEvent | undefined;
}

interface OperationStep {
  run(op: Operation, request: FastifyRequest, reply: FastifyReply): Promise<unknown>;
}

declare module 'fastify' {
  interface FastifyInstance {
    operation: OperationStep;
  }
  interface FastifyRequest {
    /** Set once the operation has run in this request; null before, and for an idempotent replay. */
    outcome: Outcome | null;
    /** A security event recorded whatever the answer (a lockout during a failed login). */
    securityEvent: DomainEvent | null;
    /** The tenant's connector the operation was routed to (decision 0111); the audit record names it. */
    coreConnector: string | null;
  }
}

const operationPlugin: FastifyPluginAsync = async (app) => {
  const services = app.cardline;
  app.decorateRequest('outcome', null);
  app.decorateRequest('securityEvent', null);
  app.decorateRequest('coreConnector', null);

  const run = async (op: Operation, request: FastifyRequest, reply: FastifyReply): Promise<unknown> => {
    const input = inputOf(request);
    const { tenant } = input;
    const core: CoreCall = (operation, coreInput) => {
      // The documentation promises 202/502/504 only where they can happen.
      if (!op.callsCore) throw new Error(`Operation ${op.id} calls the core but does not declare callsCore`);
      return services.core.invoke(tenant, operation, coreInput, {
        requestId: request.id,
        logger: request.log,
        idempotencyKey: request.idempotency?.connectorKey ?? undefined,
        // Named in the audit record where the tenant routes across several connectors (one is implied).
        routed: (connector) => {
          if (tenant.config.connectors) request.coreConnector = connector;
        },
      });
    };
    const securityEvent = (e: EventOf) => {
      request.securityEvent = domainEvent(e.type, e.payload);
    };
    const result = await op.execute({ ...input, core, services, log: request.log, securityEvent });
    let event: DomainEvent | undefined;
    if (op.event) {
      try {
        const built = 'of' in op.event ? op.event.of(result, input) : { type: op.event.type, payload: op.event.payload(result, input) };
        if (built) event = domainEvent(built.type, built.payload);
      } catch (err) {
        // An operation that cannot say what it did answers 500, and its record says so (a bug, not the caller's).
        request.log.error({ err }, 'event of record could not be built; the write is not acknowledged');
        throw Errors.internal();
      }
    }
    const sealed = op.sensitive ? await sealFields(services.clientKeys, tenant.id, op.sensitive(result)) : undefined;
    request.outcome = { result, event };
    reply.code(op.status ?? 200);
    if (op.csv && prefersCsv(request.headers.accept)) {
      reply.type('text/csv; charset=utf-8');
      return toCsv(op.csv.columns, op.csv.rows(result));
    }
    return op.view(result, input, sealed);
  };

  app.decorate('operation', { run });
};

// On both listeners: the management listener's services are the gateway's, decorated without the services step.
export default fp(operationPlugin, { name: 'operation', dependencies: ['idempotency'], decorators: { fastify: ['cardline'] } });
