// The state one request carries through the pipeline, declared here and nowhere else (decision 0220): each
// step writes its own fields, and the recorder reads them when the answering step calls it.
import fp from 'fastify-plugin';
import type { FastifyRequest } from 'fastify';
import type { WriterEntry } from './audit/writer.js';
import type { DomainEvent } from './events/outbox.js';
import type { Operator } from './services/identity/operator-keys.js';
import type { Tenant } from './services/tenancy/tenants.js';
import type { Principal } from './services/identity/tokens.js';
import type { RequestTrace } from './telemetry/index.js';

/** A request's hold on its Idempotency-Key (src/plugins/idempotency.ts). */
export interface IdempotencyHold {
  key: string;
  /** The tenant the key's row belongs to (the operators' keys: the platform's). */
  tenantId: string;
  scope: string;
  /**
   * The key handed to the connector: derived per tenant, caller, route and client key, so two callers
   * choosing the same key never share an outcome in the core while a retry reaches it with the same key.
   */
  connectorKey: string | null;
  /** The lock token while this request holds the key (it is settled with the request's record); null for a replay. */
  token: string | null;
  /** The response is a stored one, answered again. */
  replayed: boolean;
  /** The answer is stored sealed (the route's `idempotency: 'sealed'`). */
  sealed: boolean;
}

/** What a request's operation did. */
export interface OperationOutcome {
  /** The operation's result (a successful login's principal comes from it). */
  result: unknown;
  /** The event of record the write produced; committed with its audit record when the write is done. */
  event: DomainEvent | undefined;
}

export class RequestContext {
  /** The tenant the request is for: its header's (public API) or its path's (management listener); null before, or none. */
  tenant: Tenant | null = null;
  /** Who the bearer token names (public API); null on routes without a token. */
  principal: Principal | null = null;
  /** The operator whose key (or console session) authenticated the request (management listener). */
  operator: Operator | null = null;
  /** The console session the request came with (its id), when it was authenticated by one (src/console/auth.ts). */
  consoleSession: string | null = null;
  /** The request was injected by the CLI in this process with its principal (src/cli/in-process.ts). */
  inProcess = false;
  /** The Idempotency-Key this request holds or replays; null when it sent none or the route takes none. */
  idempotency: IdempotencyHold | null = null;
  /** Set once the operation has run; null before, and for an idempotent replay. */
  outcome: OperationOutcome | null = null;
  /** A security event recorded whatever the answer (a lockout during a failed login). */
  securityEvent: DomainEvent | null = null;
  /** The authorization the operation decided, inserted with its audit record whatever the answer (decision 0380). */
  authorization: Readonly<Record<string, unknown>> | null = null;
  /** Records appended just before the request's own by its statement, then `afterRecord` (decision 0381). */
  recordsBefore: readonly WriterEntry[] | null = null;
  afterRecord: (() => void) | null = null;
  /** The tenant's connector the operation was routed to (decision 0111); the audit record names it. */
  coreConnector: string | null = null;
  /**
   * The approval a tenant's policy held this write in (answered 202): its record names it and carries
   * approval.requested, and its Idempotency-Key keeps the 202 (a retry must not hold the request twice).
   */
  pendingApproval: { id: string; event: DomainEvent } | null = null;
  /** The catalogue code of the error this request was answered with (the audit's outcome reads it). */
  errorCode: string | null = null;
  /** The request's record was attempted: an error answered after a failed record is not recorded twice. */
  recorded = false;
  /** The request's server span while tracing is on (src/plugins/tracing.ts); null when off. */
  trace: RequestTrace | null = null;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The request's pipeline state (src/request-context.ts): created on first use, once. */
    readonly ctx: RequestContext;
  }
}

const CONTEXT = Symbol('cardline.requestContext');
type Holder = FastifyRequest & { [CONTEXT]: RequestContext | null };

/** Declares `request.ctx` on the listener: the first read creates the request's context, later reads return it. */
export const requestContext = fp(
  async (app) => {
    app.decorateRequest(CONTEXT, null);
    app.decorateRequest('ctx', {
      getter(this: FastifyRequest): RequestContext {
        return ((this as Holder)[CONTEXT] ??= new RequestContext());
      },
    });
  },
  { name: 'request-context' },
);
