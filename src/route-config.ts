// What a route declares about itself; the pipeline's hooks read these and routes never re-do a step.
import type { FastifyRequest } from 'fastify';
import type { FieldError, Role } from '../schemas/common.js';
import type { Dialect } from './errors.js';
import type { Principal } from './services/tokens.js';
import type { Tenant } from './services/tenants.js';

export interface EncryptedField {
  /** Top-level body property that may arrive as a compact JWE string. */
  field: string;
  /** When this returns true for the tenant, a plain-text value is refused. */
  required?: (tenant: Tenant) => boolean;
}

export interface AuditSpec {
  action: string;
  /** Ids of what the request acts on, taken from the (validated) body. */
  target?: (request: FastifyRequest) => Record<string, unknown>;
  /** Who acts when there is no token yet (the authentication route names the username). */
  actor?: (request: FastifyRequest) => unknown;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Error format: 'envelope' (credit-line routes, spec 2.6) or 'problem' (spec 2.8). Default problem. */
    dialect?: Dialect;
    /** false: no tenant header needed (health, public key sets). */
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
  }
  interface FastifyRequest {
    tenant: Tenant | null;
    principal: Principal | null;
  }
}
