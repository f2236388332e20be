// What a route declares about itself; the pipeline's hooks read these and routes never re-do a step.
import type { FastifyRequest } from 'fastify';
import type { FieldError, Role } from '../schemas/common.js';
import type { EventPayload, EventType } from '../schemas/events.js';
import type { Dialect } from './errors.js';
import type { Principal } from './services/tokens.js';
import type { Tenant } from './services/tenants.js';

export interface EncryptedField {
  /**
   * Body property that may arrive as a compact JWE string: a top-level name or a dotted path
   * (`communicationAddress.address1`; `[]` for every item of an array: `cards[].pan`). Fields whose schema
   * is marked `sensitive()` (schemas/common.ts) are added at route registration (decision 0019).
   */
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
  /** The event of record a successful call adds to the outbox, in the audit record's transaction. */
  event?: EventSpec;
}

/**
 * An event of record (schemas/events.ts). It is written only for a 2xx other than 202, and only when the
 * handler carried the operation out in this request (`request.callCore` keeps the result in `request.operationResult`)
 * (an idempotent replay does not): `payload` builds the event from that result and the validated request.
 * The payload is checked against the type's schema; anything else in it (a PAN, an address) fails the call.
 */
export type EventSpec = {
  [T in EventType]: { type: T; payload: (request: FastifyRequest, result: unknown) => EventPayload<T> };
}[EventType];

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
    /**
     * false: no Idempotency-Key handling. By default every POST/PUT/PATCH/DELETE route that needs a
     * token honours the header (src/plugins/idempotency.ts); routes without a caller (auth: false) never do.
     */
    idempotency?: false;
  }
  interface FastifyRequest {
    tenant: Tenant | null;
    principal: Principal | null;
  }
}
