// What a route declares about itself in its config; the pipeline's hooks read these and routes never re-do
// a step. Business routes get theirs from their operation declaration (src/plugins/register.ts).
import type { FastifyRequest } from 'fastify';
import type { FieldError, Role } from '../schemas/common.js';
import type { Dialect } from './errors.js';
import type { EncryptedField, Operation, TargetSpec } from './operations/define.js';
import type { Principal } from './services/identity/tokens.js';

/** How a request is recorded in the audit trail (src/plugins/audit.ts). */
export interface AuditSpec {
  action: string;
  /** Ids of what the request acts on, from the request as it arrived (valid or not). */
  target?: TargetSpec;
  /** Who acts when there is no token yet: a body field (the login's username). */
  actorField?: string;
  /** Who the request turned out to be, from the operation's result (a successful login). */
  principal?: (result: unknown) => Principal;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Error format: 'envelope' (credit-line routes, spec 2.6) or 'problem' (spec 2.8). Default problem. */
    dialect?: Dialect;
    /** false: no tenant header needed (health, public key sets, the API's documentation). */
    tenant?: false;
    /** false: no bearer token needed. Every other route must list its roles. */
    auth?: false;
    roles?: readonly Role[];
    /** objectName reported in fieldErrors. */
    objectName?: string;
    encryptedFields?: readonly EncryptedField[];
    /** Checks that the schema cannot express; returns field errors. */
    check?: (request: FastifyRequest) => FieldError[];
    audit?: AuditSpec;
    /** false: no Idempotency-Key handling (default: every authenticated write honours it); 'sealed' (decision 0175). */
    idempotency?: false | 'sealed';
    /** Management listener: the path parameter naming the tenant the route acts on (src/plugins/operator-auth.ts). */
    tenantParam?: string;
    /** The operation a business route was registered from (its OpenAPI description reads it). */
    operation?: Operation;
  }
}
