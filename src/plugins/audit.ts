// The recorder: every authentication attempt and write is recorded before it is answered, by the answering
// step. Record, event and key settlement commit in one statement, so after a crash a retry replays the answer
// or finds nothing recorded.
import fp from 'fastify-plugin';
import type {
  FastifyBaseLogger,
  FastifyInstance,
  FastifyPluginAsync,
  FastifyReply,
  FastifyRequest,
  FastifySchema,
  FastifyTypeProvider,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerBase,
  RouteGenericInterface,
  RouteHandlerMethod,
  RouteOptions,
} from 'fastify';
import { maskCardNumbers } from '../../connectors/shared/pan.js';
import { outcomeOf } from '../audit/outcome.js';
import type { Settlement } from '../audit/writer.js';
import { tracing } from '../telemetry/index.js';
import { inStep } from './tracing.js';
import { Errors } from '../errors.js';
import type { TargetSpec } from '../operations/define.js';
import type { AuditSpec } from '../route-config.js';
import type { Principal } from '../services/identity/tokens.js';

/** Whose trail a record joins and who acted: the listener decides (public API: the tenant and its user). */
export interface AuditSubject {
  tenantId: string;
  actor: string | null;
  role: string | null;
  /** The request's origin when it is not its address: null for the CLI's in-process requests (they have none). */
  origin?: string | null;
}

interface AuditOptions {
  /** Null: the request is not recorded (no tenant resolved). Defaults to the public API's subject. */
  subject?: (request: FastifyRequest, spec: AuditSpec) => AuditSubject | null | Promise<AuditSubject | null>;
}

/** The recorder: the one call that records a request's answer, made by the step that answers it. */
interface Recorder {
  /**
   * Records an audited route's answer: entry, event and Idempotency-Key settlement in one statement, once.
   * Throws a 500 (the key given back) when it could not commit: the answer must not be sent.
   */
  record(request: FastifyRequest, reply: FastifyReply, body: string | null): Promise<void>;
  /** Serialises a JSON answer with the route's response schema, records it, and returns the text to send. */
  answer(request: FastifyRequest, reply: FastifyReply, value: unknown): Promise<string>;
}

declare module 'fastify' {
  interface FastifyInstance {
    recorder: Recorder;
  }
}

const JOSE = /eyJ[\w-]{8,}(?:\.[\w-]*)*/g;

/** Ids come from the caller's body: card numbers are masked and JOSE strings dropped before they reach a record. */
function scrubId(value: string): string {
  return maskCardNumbers(value.replace(JOSE, '[redacted]'), { luhnOnly: true });
}

const clip = (value: string): string => scrubId(value.slice(0, 4096)).slice(0, 128);

/** The parts of a request audit targets are read from. */
interface RequestParts {
  params: unknown;
  query: unknown;
  body: unknown;
}

/** Each dotted path split once: the paths are the routes' audit targets, a fixed few. */
const SEGMENTS = new Map<string, readonly string[]>();

/** The value at a dotted path of the request as it arrived; anything but a non-empty string is ignored. */
export function stringAt(request: RequestParts, path: string): string | undefined {
  let segments = SEGMENTS.get(path);
  if (!segments) SEGMENTS.set(path, (segments = path.split('.')));
  const root = segments[0];
  let value: unknown = root === 'params' ? request.params : root === 'query' ? request.query : root === 'body' ? request.body : undefined;
  if (value === undefined) return undefined;
  for (let i = 1; i < segments.length; i++) {
    const segment = segments[i]!;
    if (value === null || typeof value !== 'object' || !Object.hasOwn(value, segment)) return undefined;
    value = (value as Record<string, unknown>)[segment];
  }
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

/** Each route's target spec as [name, path] pairs, made once: the specs are the routes' own, a fixed few. */
const TARGET_PATHS = new WeakMap<TargetSpec, readonly (readonly [string, string])[]>();
const NO_TARGET: readonly (readonly [string, string])[] = [];

function targetPaths(spec: TargetSpec | undefined): readonly (readonly [string, string])[] {
  if (!spec) return NO_TARGET;
  let paths = TARGET_PATHS.get(spec);
  if (!paths) {
    paths = Object.entries(spec).map(([name, source]) => [name, source.includes('.') ? source : `${source}.${name}`] as const);
    TARGET_PATHS.set(spec, paths);
  }
  return paths;
}

export function targetOf(request: RequestParts, spec: TargetSpec | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, path] of targetPaths(spec)) {
    const value = stringAt(request, path);
    if (value !== undefined) out[name] = clip(value);
  }
  return out;
}

function targetWith(target: Record<string, string>, connector: string | null | undefined, approvalId: string | undefined): Record<string, string> {
  if (connector) target.connector = connector;
  if (approvalId !== undefined) target.approvalId = approvalId;
  return target;
}

/** Events are of record only for a write that completed now: 2xx, not 202 (pending is not done). */
const isDone = (status: number): boolean => status >= 200 && status < 300 && status !== 202;
/**
 * Only outcomes that are final are kept for an Idempotency-Key: a 5xx or a core's pending 202 leaves the client
 * free to retry. A write held for approval is final as far as the key goes: a retry answers the same approval.
 */
const isFinal = (status: number, heldForApproval: boolean): boolean => status < 500 && (status !== 202 || heldForApproval);

/** The public API's subject: the request's tenant, its user (or, for a login, who tried and what it got). */
function tenantSubject(request: FastifyRequest, spec: AuditSpec): AuditSubject | null {
  const { tenant, outcome } = request.ctx;
  if (!tenant) return null;
  let principal: Principal | null = request.ctx.principal;
  if (!principal && outcome && spec.principal) principal = spec.principal(outcome.result);
  const actor = principal?.sub ?? (spec.actorField ? stringAt(request, `body.${spec.actorField}`) : undefined);
  return { tenantId: tenant.id, actor: actor ?? null, role: principal?.role ?? null };
}

const auditPlugin: FastifyPluginAsync<AuditOptions> = async (app, opts) => {
  const subjectOf = opts.subject ?? tenantSubject;
  const services = app.cardline;

  const record = async (request: FastifyRequest, reply: FastifyReply, body: string | null): Promise<void> => {
    const spec = request.routeOptions.config.audit;
    const ctx = request.ctx;
    if (!spec || ctx.recorded) return;
    ctx.recorded = true;
    const status = reply.statusCode;
    // The Idempotency-Key this request holds is settled by the same statement as its record.
    const idem = ctx.idempotency;
    const held = idem?.token ? { tenantId: idem.tenantId, scope: idem.scope, token: idem.token, sealed: idem.sealed } : null;
    try {
      // Inside the try: a subject not found fails the record like the writer would, and the key is given back.
      const subject = await subjectOf(request, spec);
      if (!subject) return;
      let settlement: Settlement | undefined;
      if (held) {
        const contentType = reply.getHeader('content-type');
        const type = typeof contentType === 'string' ? contentType : null;
        // An answer holding a secret shown once is stored sealed, never in clear (decision 0175).
        const location = ctx.pendingApproval ? { location: String(reply.getHeader('location') ?? '') } : {};
        const response = isFinal(status, ctx.pendingApproval !== null) && body !== null
          ? held.sealed
            ? { status, contentType: type, body: services.idempotency.seal(held.tenantId, held.scope, body), sealed: true, ...location }
            : { status, contentType: type, body, ...location }
          : null;
        settlement = { tenantId: held.tenantId, scope: held.scope, token: held.token, response };
      }
      const trace = ctx.trace;
      const entry = {
        tenantId: subject.tenantId,
        at: new Date(),
        actor: subject.actor === null ? null : clip(subject.actor),
        role: subject.role,
        action: spec.action,
        method: request.method,
        route: request.routeOptions.url ?? request.url,
        // Which of the tenant's cores served the call, when it called one (decision 0111); the approval holding it.
        target: targetWith(targetOf(request, spec.target), ctx.coreConnector, ctx.pendingApproval?.id),
        // A stored response answered again (Idempotency-Key) changed nothing: it is not a second success.
        outcome: ctx.idempotency?.replayed ? 'replayed' : outcomeOf(status, ctx.errorCode),
        status,
        // Never scrubbed: genReqId admits no card number or token, and a UUID's digits can look like one.
        requestId: String(request.id),
        origin: subject.origin !== undefined ? subject.origin : (request.ip ?? null),
        event: (isDone(status) ? ctx.outcome?.event : undefined) ?? ctx.securityEvent ?? ctx.pendingApproval?.event ?? undefined,
        settlement,
        // The request's own span: an event's deliveries are traced as its children.
        traceparent: trace ? tracing()!.traceparent(trace.context) : undefined,
        authorization: ctx.authorization ?? undefined,
        before: ctx.recordsBefore ?? undefined,
      };
      // The wait for the batch that commits it (the group commit's span is linked to this one).
      await inStep(request, 'audit', () => services.audit.record(entry, ctx.trace?.step));
      ctx.afterRecord?.();
    } catch (err) {
      // An unrecorded write is not acknowledged: a 500 in the route's dialect, the key given back for a retry.
      request.log.error({ err }, 'audit record could not be committed');
      if (held) await services.idempotency.release(held.tenantId, held.scope, held.token).catch(() => undefined);
      throw Errors.internal();
    }
  };

  const answer = async (request: FastifyRequest, reply: FastifyReply, value: unknown): Promise<string> => {
    reply.type(JSON_MEDIA_TYPE);
    const serialized = reply.serialize(value);
    // The route's serializer (fast-json-stringify, or JSON.stringify without a schema) writes text.
    const body = typeof serialized === 'string' ? serialized : Buffer.from(serialized as Uint8Array).toString('utf8');
    await record(request, reply, body);
    return body;
  };

  app.decorate('recorder', { record, answer });
};

const JSON_MEDIA_TYPE = 'application/json; charset=utf-8';

type Handler = (this: FastifyInstance, request: FastifyRequest, reply: FastifyReply) => unknown;

/** The handlers `audited` made: each answers through the recorder. */
const RECORDED = new WeakSet<object>();

/**
 * A hand-written route's handler whose answer is recorded: `handler` returns the JSON answer, which is
 * serialised, recorded, then sent; a thrown error takes the error path, which records too.
 */
export function audited<
  S extends RawServerBase,
  Rq extends RawRequestDefaultExpression<S>,
  Rp extends RawReplyDefaultExpression<S>,
  G extends RouteGenericInterface,
  C,
  Sc extends FastifySchema,
  T extends FastifyTypeProvider,
  L extends FastifyBaseLogger,
>(handler: RouteHandlerMethod<S, Rq, Rp, G, C, Sc, T, L>): RouteHandlerMethod<S, Rq, Rp, G, C, Sc, T, L> {
  const run = handler as unknown as Handler;
  const answer = async function (this: FastifyInstance, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const value: unknown = await run.call(this, request, reply);
    return reply.send(await this.recorder.answer(request, reply, value));
  };
  RECORDED.add(answer);
  return answer as unknown as RouteHandlerMethod<S, Rq, Rp, G, C, Sc, T, L>;
}

/** onRoute check: a route declaring `audit` that would answer without the recorder does not start. */
export function refuseUnrecorded(route: RouteOptions): void {
  if (!route.config?.audit || route.config.operation || RECORDED.has(route.handler)) return;
  const methods = Array.isArray(route.method) ? route.method.join(',') : route.method;
  throw new Error(`Route ${methods} ${route.url} declares audit but does not answer through the recorder: wrap its handler in audited() (src/plugins/audit.ts)`);
}

// Before the errors step (its error path calls the recorder); over the services' writer and idempotency store.
export default fp(auditPlugin, { name: 'audit', dependencies: ['request-context'], decorators: { fastify: ['cardline'] } });
