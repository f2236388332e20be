// The pipeline's connector step as a request method: routes name the operation and its input; the
// tenant, request id, logger, deadline and idempotency key are filled in here, once.
import fp from 'fastify-plugin';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { ConnectorOperation, InputOf, ValueOf } from '../services/connectors.js';
import { idempotencyKeyOf } from './idempotency.js';

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * Calls the tenant's connector. The value of the last call is kept as `operationResult`, from which
     * the audit hook builds the route's event of record.
     */
    callCore<O extends ConnectorOperation>(operation: O, input: InputOf<O>): Promise<ValueOf<O>>;
  }
}

const corePlugin: FastifyPluginAsync = async (app) => {
  app.decorateRequest('callCore', async function callCore<O extends ConnectorOperation>(
    this: FastifyRequest,
    operation: O,
    input: InputOf<O>,
  ): Promise<ValueOf<O>> {
    const value = await app.cardline.core.invoke(this.tenant!, operation, input, {
      requestId: this.id,
      logger: this.log,
      idempotencyKey: idempotencyKeyOf(this),
    });
    this.operationResult = value;
    return value;
  });
};

export default fp(corePlugin, { name: 'core', dependencies: ['services', 'audit'] });
