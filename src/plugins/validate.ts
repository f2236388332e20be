// Checks a schema cannot express (conditional requirements), run after schema validation and answered
// in the same field-error format.
import fp from 'fastify-plugin';
import type { FastifyPluginAsync } from 'fastify';
import { Errors } from '../errors.js';
import { declareErrors, errorCase, settle } from '../step-errors.js';
import { inStep } from './tracing.js';

/** What validation answers: the route's schema, then this step's checks, both as field errors. */
export const validationErrors = declareErrors('validation', (op) => [
  errorCase('validation', 'The request fails validation', Errors.validation([{ field: 'body', message: 'NotNull', objectName: op.objectName }]), false),
]);

const validatePlugin: FastifyPluginAsync = async (app) => {
  app.addHook('preHandler', (request, _reply, done) => {
    const check = request.routeOptions.config.check;
    if (!check) return done();
    settle(inStep(request, 'validate', async () => {
      const fieldErrors = check(request);
      if (fieldErrors.length) throw Errors.validation(fieldErrors);
    }), done);
  });
};

export default fp(validatePlugin, { name: 'validate', dependencies: ['decrypt'] });
