// Checks a schema cannot express (conditional requirements), run after schema validation and answered
// in the same field-error format.
import fp from 'fastify-plugin';
import type { FastifyPluginAsync } from 'fastify';
import { Errors } from '../errors.js';

const validatePlugin: FastifyPluginAsync = async (app) => {
  app.addHook('preHandler', async (request) => {
    const check = request.routeOptions.config.check;
    if (!check) return;
    const fieldErrors = check(request);
    if (fieldErrors.length) throw Errors.validation(fieldErrors);
  });
};

export default fp(validatePlugin, { name: 'validate', dependencies: ['decrypt'] });
