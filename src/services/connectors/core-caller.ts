// The call to a tenant's core: the operation routed to one of its connectors (501 when that one does not
// offer it), under the request's deadline, its outcome mapped to the catalogue's errors, counted for the
// metrics and the connectors view, and handed to the shadow when the tenant runs one.
import type { Context } from '@opentelemetry/api';
import type { FastifyBaseLogger } from 'fastify';
import type { Exemplar, Observer } from '../infrastructure/metrics.js';
import {
  isConnectorTimeoutError,
  isConnectorUnavailableError,
  type ConnectorContext,
  type ContractOperation,
  type OperationInput,
  type OperationResult,
  type OperationValue,
} from '../../../connectors/contract.js';
import { CALL_DEADLINE } from '../../../connectors/shared/deadline.js';
import { CardlineError, Errors } from '../../errors.js';
import { scrub } from '../../logging.js';
import { isSampled, tracing } from '../../telemetry/index.js';
import { reasonOf } from './connector-registry.js';
import type { ConnectorInstances, ConnectorLease } from './connector-instances.js';
import { ConnectorHealth } from './connector-health.js';
import { routesOf } from './routing.js';
import type { ShadowService } from './shadow.js';
import type { Tenant } from '../tenancy/tenants.js';

/** How a call ended. */
export type ErrorKind = 'business' | 'pending' | 'unavailable' | 'timeout' | 'internal';

/** What the request contributes to a call: the tenant and the deadline are the caller's. */
export interface CallContext {
  requestId: string;
  logger: FastifyBaseLogger;
  idempotencyKey?: string | undefined;
  /** Told which of the tenant's connectors the operation is routed to, before it is called (the audit record names it). */
  routed?: ((connector: string) => void) | undefined;
  /** The W3C trace context handed to the core, while tracing is on. */
  traceparent?: string | undefined;
  /** The call span's parent, while tracing is on: the request's step under way. */
  trace?: Context | undefined;
}

export interface CoreCallerOptions {
  /** The deadline of one call, in milliseconds. */
  timeoutMs: number;
  /** Monotonic clock in milliseconds (tests replace it). */
  now?: () => number;
  observer?: Pick<Observer, 'connectorCall'> | undefined;
  /** Each named connector's recent calls (the connectors view). */
  health?: ConnectorHealth | undefined;
  /** Answered calls of shadowed operations are handed to it (none: nothing is shadowed). */
  shadow?: Pick<ShadowService, 'offer'> | undefined;
}

/**
 * A call's deadline: a plain timer (AbortSignal.timeout() costs more), and its AbortSignal made only when the connector
 * reads `ctx.signal`: an AbortController costs 10-20 µs, and the mock core never reads it (decision 0402).
 */
class Deadline {
  expired = false;
  private controller: AbortController | undefined;
  private readonly timer: NodeJS.Timeout;

  constructor(ms: number) {
    this.timer = setTimeout(() => {
      this.expired = true;
      this.controller?.abort(timedOut());
    }, ms);
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.expired) this.controller.abort(timedOut());
    }
    return this.controller.signal;
  }

  clear(): void {
    clearTimeout(this.timer);
  }
}

const timedOut = () => new DOMException('connector deadline passed', 'TimeoutError');

/** `signal` read through the call's deadline: one descriptor (one getter) for every context. */
const SIGNAL: PropertyDescriptor = {
  get(this: { [CALL_DEADLINE]: Deadline }) {
    return this[CALL_DEADLINE].signal;
  },
  enumerable: true,
  configurable: true,
};

/**
 * The connector's context: a plain object with the keys, in the order, of `{ ...ctx, tenantId, signal }`; `signal` an
 * own enumerable getter (a spread copies it). Field by field: a spread with a getter cost 2.6 µs, this 0.2 (decision 0422).
 */
function contextOf(ctx: CallContext, tenantId: string, deadline: Deadline): ConnectorContext {
  const { requestId, logger, idempotencyKey, routed, traceparent } = ctx;
  const c: Record<PropertyKey, unknown> =
    traceparent === undefined ? { requestId, logger, idempotencyKey, routed, tenantId } : { requestId, logger, idempotencyKey, routed, traceparent, tenantId };
  Object.defineProperty(c, 'signal', SIGNAL);
  c[CALL_DEADLINE] = deadline;
  return c as unknown as ConnectorContext;
}

/** Not offered: answered here, never sent to the core. */
function offered({ connector }: ConnectorLease, operation: ContractOperation, name: string): void {
  if (typeof connector[operation] !== 'function') throw Errors.operationNotSupported(operation, name);
}

export class CoreCaller {
  private readonly timeoutMs: number;
  readonly health: ConnectorHealth;
  private readonly shadow: Pick<ShadowService, 'offer'> | undefined;
  private readonly now: () => number;

  constructor(
    private readonly instances: ConnectorInstances,
    opts: CoreCallerOptions,
  ) {
    this.timeoutMs = opts.timeoutMs;
    this.now = opts.now ?? (() => performance.now());
    this.observer = opts.observer;
    this.health = opts.health ?? new ConnectorHealth();
    this.shadow = opts.shadow;
  }

  private readonly observer: Pick<Observer, 'connectorCall'> | undefined;

  /** One call under the request's deadline: value, business error, 202 pending, or 502/504 for transport failures. */
  async invoke<O extends ContractOperation>(tenant: Tenant, operation: O, input: OperationInput<O>, ctx: CallContext): Promise<OperationValue<O>> {
    // The route is read once from the request's configuration; its lease keeps that connector open meanwhile.
    const name = routesOf(tenant.config).byOperation[operation];
    ctx.routed?.(name);
    const lease = await this.lease(tenant, name, ctx.logger);
    try {
      offered(lease, operation, name);
      const t = tracing();
      if (!t) return await this.call(lease, tenant, name, operation, input, ctx);
      const attributes = () => ({
        'cardline.tenant': tenant.id,
        'cardline.connector': name,
        'cardline.core.operation': operation,
        'cardline.core.role': 'routed',
        'cardline.core.breaker': lease.connector.breakerState?.() ?? 'none',
      });
      // The core receives this span's context (a REST core as the traceparent header).
      return await t.inSpan(
        `core ${operation}`,
        attributes,
        (span) => {
          const sc = span.spanContext();
          const traced = { requestId: ctx.requestId, logger: ctx.logger, idempotencyKey: ctx.idempotencyKey, routed: ctx.routed, traceparent: t.traceparentOf(sc) };
          return this.call(lease, tenant, name, operation, input, traced, isSampled(sc) ? sc : undefined);
        },
        { kind: t.api.SpanKind.CLIENT, parent: ctx.trace },
      );
    } finally {
      lease.release();
    }
  }

  /**
   * Refuses (501) an operation the connector it is routed to does not offer, without calling it: for a change that
   * must not be recorded when the core could never apply it later.
   */
  async ensureOffered(tenant: Tenant, operation: ContractOperation, logger: FastifyBaseLogger): Promise<void> {
    const name = routesOf(tenant.config).byOperation[operation];
    const lease = await this.lease(tenant, name, logger);
    try {
      offered(lease, operation, name);
    } finally {
      lease.release();
    }
  }

  private async lease(tenant: Tenant, name: string, logger: FastifyBaseLogger): Promise<ConnectorLease> {
    try {
      return await this.instances.acquire(tenant, name);
    } catch (err) {
      logger.error({ tenant: tenant.id, connector: name, reason: reasonOf(err) }, 'tenant connector is not available');
      throw Errors.unavailable(
        `The core-banking connector of tenant '${tenant.id}' could not be started; this is a configuration problem on the gateway and retrying will not help until its operator fixes it.`,
      );
    }
  }

  private async call<O extends ContractOperation>(
    { connector }: ConnectorLease,
    tenant: Tenant,
    name: string,
    operation: O,
    input: OperationInput<O>,
    ctx: CallContext,
    exemplar?: Exemplar,
  ): Promise<OperationValue<O>> {
    const deadline = new Deadline(this.timeoutMs);
    const started = this.now();
    const record = (kind: ErrorKind | 'succeeded') => this.record(tenant, name, operation, kind, this.now() - started, exemplar);
    let result: OperationResult<OperationValue<O>>;
    try {
      const method = connector[operation] as (i: OperationInput<O>, c: ConnectorContext) => Promise<OperationResult<OperationValue<O>>>;
      result = await method.call(connector, input, contextOf(ctx, tenant.id, deadline));
    } catch (err) {
      if (err instanceof CardlineError) {
        record('internal');
        throw err;
      }
      if (isConnectorTimeoutError(err) || deadline.expired) {
        record('timeout');
        throw Errors.coreTimeout();
      }
      if (isConnectorUnavailableError(err)) {
        record('unavailable');
        const e = err as Error;
        ctx.logger.warn({ err: { name: e.name, message: e.message } }, 'core unavailable');
        throw Errors.coreUnavailable();
      }
      record('internal');
      throw err;
    } finally {
      deadline.clear();
    }
    // A late success after the deadline is not reported as success: the caller already gave up.
    if (deadline.expired) {
      record('timeout');
      throw Errors.coreTimeout();
    }
    switch (result.status) {
      case 'succeeded':
        record('succeeded');
        this.shadow?.offer(tenant, operation, input, { status: 'succeeded', value: result.value }, ctx.requestId);
        return result.value;
      case 'rejected':
        record('business');
        this.shadow?.offer(tenant, operation, input, { status: 'rejected', code: result.code }, ctx.requestId);
        // A core's own words reach the caller, scrubbed of anything shaped like a card number or a token.
        throw Errors.business(result.code, scrub(result.message));
      case 'pending':
        record('pending');
        throw Errors.corePending();
      default:
        record('internal');
        throw new Error(`connector '${name}' returned an unknown status from ${operation}`);
    }
  }

  private record(tenant: Tenant, name: string, operation: string, kind: ErrorKind | 'succeeded', latencyMs: number, exemplar: Exemplar | undefined): void {
    const ms = Math.max(0, latencyMs);
    this.health.record(tenant.id, name, kind, ms);
    // The call's sampled span, while tracing is on, is its latency bucket's exemplar.
    this.observer?.connectorCall(tenant.id, name, operation, kind, ms / 1000, exemplar);
  }
}
