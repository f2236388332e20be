// The registrar: turns the operation table into Fastify routes. Each route's config tells the pipeline's
// steps what they need (dialect, roles, encrypted fields, checks, audit); its handler is the operation step.
import type { FastifyPluginAsync, FastifyRequest, RouteOptions } from 'fastify';
import { Errors } from '../errors.js';
import type { AuditSpec } from '../route-config.js';
import { rolesOf } from './access.js';
import { bodyMayBeOmitted, type Operation, type OperationInput } from './define.js';

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** The validated request as an operation's functions see it. */
export function inputOf(request: FastifyRequest): OperationInput<unknown, unknown, unknown> {
  return { params: request.params, query: request.query, body: request.body, tenant: request.tenant!, principal: request.principal };
}

/** For any tenant that is not a sandbox, a sandbox route answers exactly as a route that does not exist (decision 0012). */
async function sandboxOnly(request: FastifyRequest): Promise<void> {
  if (request.tenant?.config.sandbox !== true) throw Errors.notFound(request.method, request.url);
}

function auditSpecOf(op: Operation): AuditSpec | undefined {
  if (op.audit === false) {
    // Every change is recorded: only reads may opt out.
    if (MUTATING.has(op.method)) throw new Error(`Operation ${op.id} (${op.method} ${op.url}) changes state and must be audited`);
    return undefined;
  }
  return {
    action: op.audit.action ?? op.id,
    ...(op.audit.target ? { target: op.audit.target } : {}),
    ...(op.audit.actorField ? { actorField: op.audit.actorField } : {}),
    ...(op.audit.principal ? { principal: op.audit.principal } : {}),
  };
}

/** A body that may be left out is then the empty object, as `{}` would be. */
async function emptyBody(request: FastifyRequest): Promise<void> {
  request.body ??= {};
}

function routeOf(op: Operation): RouteOptions {
  const roles = rolesOf(op.access);
  const audit = auditSpecOf(op);
  const check = op.check;
  return {
    method: op.method,
    url: op.url,
    schema: {
      ...(op.params ? { params: op.params } : {}),
      ...(op.query ? { querystring: op.query } : {}),
      ...(op.body ? { body: op.body } : {}),
      response: { [op.status ?? 200]: op.response },
    },
    config: {
      dialect: op.dialect,
      ...(roles ? { roles } : { auth: false }),
      objectName: op.objectName,
      ...(op.encryptedFields ? { encryptedFields: op.encryptedFields } : {}),
      // Runs after schema validation (src/plugins/validate.ts), so the input has the schema's types.
      ...(check ? { check: (request: FastifyRequest) => check(inputOf(request)) } : {}),
      ...(audit ? { audit } : {}),
      ...(op.idempotent !== undefined ? { idempotency: op.idempotent } : {}),
      operation: op,
    },
    ...(op.sandbox ? { onRequest: sandboxOnly } : {}),
    ...(bodyMayBeOmitted(op) ? { preValidation: emptyBody } : {}),
    handler: function (request, reply) {
      return this.operation.run(op, request, reply);
    },
  };
}

interface RegistrarOptions {
  operations: readonly Operation[];
}

const registrar: FastifyPluginAsync<RegistrarOptions> = async (app, opts) => {
  const seen = new Set<string>();
  for (const op of opts.operations) {
    if (seen.has(op.id)) throw new Error(`Two operations share the id '${op.id}'`);
    seen.add(op.id);
    app.route(routeOf(op));
  }
};

export default registrar;
