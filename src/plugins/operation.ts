// The pipeline's operation step: runs a route's operation and owns what follows the core call — the view,
// the sensitive fields sealed to the tenant's client key, the event of record — and answers: it serialises the
// answer and has the recorder record it (audit entry, event, Idempotency-Key settlement in one statement)
// before it is sent.
import fp from 'fastify-plugin';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { sealFields } from '../crypto/response-fields.js';
import { Errors } from '../errors.js';
import { domainEvent, type DomainEvent } from '../events/outbox.js';
import type { CoreCall, EventOf, Operation, OperationInput } from '../operations/define.js';
import { prefersCsv, toCsv } from '../reports/csv.js';
import { declareErrors, errorCase } from '../step-errors.js';
import { BUSINESS_CODES } from '../../schemas/business-codes.js';
import { inStep } from './tracing.js';

/** The validated request as an operation's functions see it. */
export function inputOf(request: FastifyRequest): OperationInput<unknown, unknown, unknown> {
  const { tenant, principal, operator } = request.ctx;
  return { params: request.params, query: request.query, body: request.body, tenant: tenant!, principal, operator };
}

/** What this step answers: the operation's declared errors and, when it calls the core, the core's answers. */
export const operationErrors = declareErrors('operation', (op) => [
  ...(op.id === 'authenticate' ? [errorCase('bad-credentials', 'Unknown user, wrong password or locked account', Errors.badCredentials())] : []),
  ...(op.refusals ?? []).map((code) => errorCase(code, BUSINESS_CODES[code].title, Errors.business(code, BUSINESS_CODES[code].description))),
  ...(op.errors ?? []).map((error, i) => errorCase(`${op.id}-${i}`, error.init.detail ?? error.code, error, false)),
  ...(op.callsCore
    ? [
        errorCase('pending', 'The core accepted the request but has not confirmed it', Errors.corePending()),
        errorCase('core-unavailable', 'The core-banking system is unavailable', Errors.coreUnavailable()),
        errorCase('core-timeout', 'The core did not answer in time; the outcome is unknown', Errors.coreTimeout()),
        errorCase('not-supported', "The tenant's connector for this operation does not offer it (nothing sent to the core)", Errors.operationNotSupported('getCreditLimit', 'processor')),
        errorCase(
          'connector-down',
          "The tenant's connector could not be started",
          Errors.unavailable(
            "The core-banking connector of tenant 'demo' could not be started; this is a configuration problem on the gateway and retrying will not help until its operator fixes it.",
          ),
        ),
      ]
    : []),
]);

interface OperationStep {
  run(op: Operation, request: FastifyRequest, reply: FastifyReply): Promise<unknown>;
}

declare module 'fastify' {
  interface FastifyInstance {
    operation: OperationStep;
  }
}

const operationPlugin: FastifyPluginAsync = async (app) => {
  const services = app.cardline;

  const run = (op: Operation, request: FastifyRequest, reply: FastifyReply): Promise<unknown> =>
    inStep(request, 'operation', () => execute(op, request, reply), { 'cardline.operation': op.id });

  const execute = async (op: Operation, request: FastifyRequest, reply: FastifyReply): Promise<unknown> => {
    const ctx = request.ctx;
    const input = inputOf(request);
    const { tenant } = input;
    const core: CoreCall = (operation, coreInput) => {
      // The documentation promises 202/502/504 only where they can happen.
      if (!op.callsCore) throw new Error(`Operation ${op.id} calls the core but does not declare callsCore`);
      return services.core.invoke(tenant, operation, coreInput, {
        requestId: request.id,
        logger: request.log,
        idempotencyKey: ctx.idempotency?.connectorKey ?? undefined,
        // Named in the audit record where the tenant routes across several connectors (one is implied).
        routed: (connector) => {
          if (tenant.config.connectors) ctx.coreConnector = connector;
        },
      });
    };
    const securityEvent = (e: EventOf) => {
      ctx.securityEvent = domainEvent(e.type, e.payload);
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
    ctx.outcome = { result, event };
    reply.code(op.status ?? 200);
    if (op.csv && prefersCsv(request.headers.accept)) {
      reply.type('text/csv; charset=utf-8');
      const csv = toCsv(op.csv.columns, op.csv.rows(result));
      await app.recorder.record(request, reply, csv);
      return csv;
    }
    return app.recorder.answer(request, reply, op.view(result, input, sealed));
  };

  app.decorate('operation', { run });
};

// On both listeners: the management listener's services are the gateway's, decorated without the services step.
export default fp(operationPlugin, { name: 'operation', dependencies: ['request-context', 'idempotency', 'audit'], decorators: { fastify: ['cardline'] } });
