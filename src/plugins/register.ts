// The registrar: turns the operation table into Fastify routes, on the listener each entry names (the public
// API and the management listener register theirs with it). Each route's config tells the pipeline's steps
// what they need (dialect, roles, encrypted fields, checks, audit); its handler is the operation step.
import type { FastifyPluginAsync, FastifyRequest, RouteOptions } from 'fastify';
import { isSensitive } from '../../schemas/common.js';
import { Errors } from '../errors.js';
import type { AuditSpec } from '../route-config.js';
import { declareErrors, errorCase, takesBody } from '../step-errors.js';
import { rolesOf } from '../operations/access.js';
import { bodyMayBeOmitted, type EncryptedField, type Listener, type Operation } from '../operations/define.js';
import { inputOf } from './operation.js';

/** For any tenant that is not a sandbox, a sandbox route answers exactly as a route that does not exist (decision 0012). */
async function sandboxOnly(request: FastifyRequest): Promise<void> {
  if (request.ctx.tenant?.config.sandbox !== true) throw Errors.notFound(request.method, request.url);
}

/** What the sandbox step answers: on a sandbox operation, for a tenant that is not a sandbox. */
export const sandboxErrors = declareErrors('sandbox', (op) =>
  op.sandbox ? [errorCase('not-sandbox', 'The tenant is not a sandbox', Errors.notFound(op.method, op.url), false)] : [],
);

const MAX_SCHEMA_DEPTH = 16;

/** Dotted paths of the string fields a body schema marks sensitive (through objects, arrays and unions). */
export function sensitivePaths(schema: unknown, prefix = '', depth = 0): string[] {
  if (typeof schema !== 'object' || schema === null || depth > MAX_SCHEMA_DEPTH) return [];
  if (isSensitive(schema)) return prefix ? [prefix] : [];
  const s = schema as { properties?: Record<string, unknown>; items?: unknown; anyOf?: unknown[]; oneOf?: unknown[]; allOf?: unknown[] };
  const out: string[] = [];
  for (const [name, sub] of Object.entries(s.properties ?? {})) out.push(...sensitivePaths(sub, prefix ? `${prefix}.${name}` : name, depth + 1));
  if (s.items) out.push(...sensitivePaths(s.items, `${prefix}[]`, depth + 1));
  for (const branch of [...(s.anyOf ?? []), ...(s.oneOf ?? []), ...(s.allOf ?? [])]) out.push(...sensitivePaths(branch, prefix, depth + 1));
  return [...new Set(out)];
}

/** Body fields that may arrive as JWEs: the declared ones, then those marked `sensitive()` (decision 0019). */
export function encryptedFieldsOf(op: Operation): readonly EncryptedField[] {
  const declared = op.encryptedFields ?? [];
  const fromSchema = sensitivePaths(op.body)
    .filter((path) => !declared.some((f) => f.field === path))
    .map((field): EncryptedField => ({ field }));
  return [...declared, ...fromSchema];
}

function auditSpecOf(op: Operation): AuditSpec | undefined {
  if (op.audit === false) {
    // Every change is recorded: only reads may opt out.
    if (takesBody(op)) throw new Error(`Operation ${op.id} (${op.method} ${op.url}) changes state and must be audited`);
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

/** The listener an entry belongs to, checked against its access: an operator key only where operators call. */
export function listenerOf(op: Operation): Listener {
  const listener = op.listener ?? 'public';
  if ((listener === 'management') !== (op.access === 'operator')) {
    throw new Error(`Operation ${op.id}: access 'operator' belongs to the management listener, and only it (listener '${listener}', access '${op.access}')`);
  }
  if (op.tenantParam && listener !== 'management') throw new Error(`Operation ${op.id}: tenantParam is for management operations (the public API's tenant is its header's)`);
  return listener;
}

function routeOf(op: Operation): RouteOptions {
  const roles = rolesOf(op.access);
  const operator = op.access === 'operator';
  const audit = auditSpecOf(op);
  const check = op.check;
  const encryptedFields = encryptedFieldsOf(op);
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
      // An operator route is authenticated by the management listener's own step (an operator key).
      ...(operator ? {} : roles ? { roles } : { auth: false }),
      ...(op.tenantParam ? { tenantParam: op.tenantParam } : {}),
      objectName: op.objectName,
      ...(encryptedFields.length ? { encryptedFields } : {}),
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
  /** The listener being assembled: every entry must name it (default `public`). */
  listener?: Listener;
}

const registrar: FastifyPluginAsync<RegistrarOptions> = async (app, opts) => {
  const listener = opts.listener ?? 'public';
  const seen = new Set<string>();
  for (const op of opts.operations) {
    if (seen.has(op.id)) throw new Error(`Two operations share the id '${op.id}'`);
    seen.add(op.id);
    if (listenerOf(op) !== listener) throw new Error(`Operation ${op.id} belongs to the ${listenerOf(op)} listener, not the ${listener} one`);
    app.route(routeOf(op));
  }
};

export default registrar;
