// What an operation declares about itself. One entry drives its route, roles, validation, core call, view,
// encrypted fields, audit record, event of record and OpenAPI description (decision 0031).
import type { Static, TSchema } from '@sinclair/typebox';
import type { FastifyBaseLogger } from 'fastify';
import type { BusinessCodeId } from '../../schemas/business-codes.js';
import type { FieldError } from '../../schemas/common.js';
import type { EventPayload, EventType } from '../../schemas/events.js';
import type { CardlineError, Dialect } from '../errors.js';
import type { Services } from '../services/index.js';
import type { Sealed, SensitiveValues } from '../crypto/response-fields.js';
import type { ConnectorOperation, InputOf, ValueOf } from '../services/connectors/index.js';
import type { Operator } from '../services/identity/operator-keys.js';
import type { Principal } from '../services/identity/tokens.js';
import type { Tenant } from '../services/tenancy/tenants.js';
import type { Access } from './access.js';
import type { ApprovableOperation, ApprovalCondition } from '../../schemas/approvals.js';
import type { ApprovalFacts } from '../domain/approval-policy.js';
import type { Approval } from '../services/tenancy/approvals.js';
import type { WriterEntry } from '../audit/writer.js';

export type { Sealed, SensitiveValues };

export interface EncryptedField {
  /**
   * Body property that may arrive as a JWE: a name or dotted path (`cards[].pan` for items); fields marked
   * `sensitive()` are added at registration (decision 0019).
   */
  field: string;
  /** When this returns true for the tenant, a plain-text value is refused. */
  required?: (tenant: Tenant) => boolean;
}

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** The listener: `public` (tenant header and token) or `management` (operator key, decision 0190). */
export type Listener = 'public' | 'management';

/** The static type of an optional schema: `undefined` when the operation declares none. */
export type StaticOf<T extends TSchema | undefined> = T extends TSchema ? Static<T> : undefined;

/** What an operation's functions see: the validated (and decrypted) request and who is asking. */
export interface OperationInput<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  /** The tenant the header names (public) or the path names, whatever its status (management); null if none. */
  tenant: Tenant;
  /** The caller; null on public operations (login) and on the management listener. */
  principal: Principal | null;
  /** The operator whose key authenticated the request (management listener); null on the public listener. */
  operator: Operator | null;
}

/** Calls the tenant's connector through the pipeline: deadline, idempotency key and outcome mapping included. */
export type CoreCall = <O extends ConnectorOperation>(operation: O, input: InputOf<O>) => Promise<ValueOf<O>>;

/** What `execute` may use besides the request: the tenant's core and the gateway's services. */
export interface ExecuteContext<P, Q, B> extends OperationInput<P, Q, B> {
  core: CoreCall;
  services: Services;
  log: FastifyBaseLogger;
  /** Records a security event with the audit record even when the request fails (a login locking its user). */
  securityEvent: (event: EventOf) => void;
  /** Inserts an authorization's row with the request's audit record, after `before` (decisions 0380, 0381); absent where no record follows. */
  recordAuthorization?: (row: Readonly<Record<string, unknown>>, also?: { before: readonly WriterEntry[]; committed: () => void }) => void;
  /**
   * Executes an approval its last checker completed (its row `executing`), once, through the pipeline's
   * operation step: the held operation's core call, its audit record (naming maker and checkers), its event
   * and approval.executed; the outcome, success or refusal, is stored on the approval, which is returned.
   */
  executeApproved: (approval: Approval) => Promise<Approval>;
  /** When the request executing was held for approval (null: it runs as it arrived); a write may refuse what changed since. */
  heldAt: Date | null;
}

/**
 * An operation a tenant's approval policy may hold (schemas/approvals.ts lists them): what it tells the
 * policy's condition about a request. `facts` may read the core (the current limit) when `when` needs it.
 */
export interface ApprovalDecl<I> {
  /** The policy that governs it when it is another operation's (a rule created already enforced: `auth-rules.promote`). */
  policy?: ApprovableOperation;
  /** `null`: this request is not one the policy governs (a rule created as shadow), and runs as today. */
  facts?: (ctx: I & { core: CoreCall; services: Services }, when: ApprovalCondition | undefined) => ApprovalFacts | null | Promise<ApprovalFacts | null>;
}

/** The event a completed call adds to the outbox with its record, checked against its closed schema. */
export type EventDecl<V, I> =
  | { [T in EventType]: { type: T; payload: (result: V, input: I) => EventPayload<T> } }[EventType]
  /** An event whose type depends on the result (an authorization approved or declined), or none (undefined). */
  | { of: (result: V, input: I) => EventOf | undefined };

/** One event of record: a type and its payload. */
export type EventOf = { [T in EventType]: { type: T; payload: EventPayload<T> } }[EventType];

type Source = 'params' | 'query' | 'body';
/**
 * Where audit target ids come from: `'params'`, `'query'`, `'body'` or a dotted path, read as the request
 * arrived; only short strings are kept.
 */
export type TargetSpec = Readonly<Record<string, Source | `${Source}.${string}`>>;

export interface AuditDecl<V> {
  /** The audit action; defaults to the operation id. */
  action?: string;
  target?: TargetSpec;
  /** Who acts when there is no token yet: a body field (login names its username). */
  actorField?: string;
  /** Who the request turned out to be (a successful login): its role joins the record. */
  principal?: (result: V) => Principal;
}

export interface OperationSpec<
  P extends TSchema | undefined,
  Q extends TSchema | undefined,
  B extends TSchema | undefined,
  R extends TSchema,
  V,
  S extends SensitiveValues,
> {
  /** Stable id, also the audit action unless `audit.action` says otherwise: `card.lock`. */
  id: string;
  /** The listener that serves it; default `public`. A management operation has `access: 'operator'`. */
  listener?: Listener;
  /**
   * Management: the path parameter naming the tenant, found first (404 if none, disabled too); its key opens
   * password fields and its trail takes the record.
   */
  tenantParam?: string;
  method: HttpMethod;
  /** Fastify path syntax: `/v1/cards/:cardId/lock`. */
  url: string;
  summary: string;
  description?: string;
  /** OpenAPI tag: the section of the API the operation belongs to. */
  tag: string;
  /** Error format: the envelope of spec 2.6 (credit-line routes) or the problem record of spec 2.8. */
  dialect: Dialect;
  access: Access;
  /** `objectName` of field errors. */
  objectName: string;
  params?: P;
  query?: Q;
  body?: B;
  /** The success body's schema; it also serialises the answer (nothing outside it can leave). */
  response: R;
  /** Success status; default 200. */
  status?: 200 | 201;
  /** Checks the schema cannot express, after it; field errors in the route's dialect. */
  check?: (input: OperationInput<StaticOf<P>, StaticOf<Q>, StaticOf<B>>) => FieldError[];
  /** Body fields that may arrive as JWEs (besides schema fields marked `sensitive()`), and when plain text is refused. */
  encryptedFields?: readonly EncryptedField[];
  /** Sandbox tenants only: for any other tenant the route answers as a route that does not exist (decision 0012). */
  sandbox?: true;
  /**
   * false: no Idempotency-Key handling; 'sealed': body or answer holds a secret, so the body is
   * fingerprinted under the gateway's key and the answer stored sealed (decision 0175).
   */
  idempotent?: false | 'sealed';
  /** Whether `execute` calls the core (documents 202/502/503/504); a call without it is refused as a bug. */
  callsCore?: true;
  /**
   * Four eyes: the tenant's approval policy for this operation may hold a request (answered 202, executed once
   * approved). Only for the operations schemas/approvals.ts names.
   */
  approval?: ApprovalDecl<OperationInput<StaticOf<P>, StaticOf<Q>, StaticOf<B>>>;
  /** Business refusals the operation can answer, for its documentation. */
  refusals?: readonly BusinessCodeId[];
  /** Other catalogue errors only this operation answers, for its documentation. */
  errors?: readonly CardlineError[];
  /** Carries the operation out; the result goes to `view`, `sensitive` and `event`. */
  execute: (ctx: ExecuteContext<StaticOf<P>, StaticOf<Q>, StaticOf<B>>) => Promise<V>;
  /** Values of the result that leave only encrypted to the tenant's client key; `view` places them. */
  sensitive?: (result: V) => S;
  /** The answer, built field by field from the result: nothing else the core returned can reach it. */
  view: (result: V, input: OperationInput<StaticOf<P>, StaticOf<Q>, StaticOf<B>>, sealed: Sealed<S> | undefined) => Static<R>;
  /** false: not audited (reads of the audit trail itself, public key sets). */
  audit: AuditDecl<V> | false;
  event?: EventDecl<V, OperationInput<StaticOf<P>, StaticOf<Q>, StaticOf<B>>>;
  /** With `Accept: text/csv`, the result's `rows` under `columns` (RFC 4180, formula cells neutralised). */
  csv?: { columns: readonly string[]; rows: (result: V) => readonly Record<string, unknown>[] };
  /** Documentation examples, from the demo data. */
  examples?: { body?: StaticOf<B>; response?: Static<R> };
}

/** An operation as the registrar and the pipeline hold it: the types were checked where it was declared. */
export type Operation = OperationSpec<TSchema | undefined, TSchema | undefined, TSchema | undefined, TSchema, unknown, SensitiveValues>;

/** Declares one operation; generics inferred from the schemas and `execute` type every function of the entry. */
export function defineOperation<
  Id extends string,
  M extends HttpMethod,
  P extends TSchema | undefined = undefined,
  Q extends TSchema | undefined = undefined,
  B extends TSchema | undefined = undefined,
  R extends TSchema = TSchema,
  V = unknown,
  S extends SensitiveValues = SensitiveValues,
>(spec: OperationSpec<P, Q, B, R, V, S> & { id: Id; method: M }): TypedOperation<Id, M> {
  // The table holds entries of many types; each was checked against its own schemas above.
  return spec as unknown as TypedOperation<Id, M>;
}

/** An entry with literal id and method, so tables keyed by id can be checked by the compiler. */
export type TypedOperation<Id extends string, M extends HttpMethod = HttpMethod> = Operation & { readonly id: Id; readonly method: M };

/**
 * Whether the body may be left out: a POST whose body declares every field optional (no `required`, no
 * `minProperties`), so that no body means what `{}` means. A PUT or PATCH still needs its body: an empty replacement is more likely a mistake than a wish.
 */
export function bodyMayBeOmitted(op: Operation): boolean {
  const body = op.body as { type?: unknown; required?: unknown[]; minProperties?: number } | undefined;
  return op.method === 'POST' && body?.type === 'object' && !body.required?.length && !body.minProperties;
}

/** A write declaring no body takes none, or `{}`; anything else is refused, not ignored (added by the registrar). */
export function checkNoBody(body: unknown, objectName: string): FieldError[] {
  if (body === undefined) return [];
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return [{ field: 'body', message: 'TypeMismatch', objectName }];
  return Object.keys(body).map((field) => ({ field, message: 'UnknownProperty', objectName }));
}

/** Whether the operation is a write that declares no body (the registrar refuses one, the document shows none). */
export const takesNoBody = (op: Operation): boolean => op.method !== 'GET' && op.body === undefined;
