// The call to a tenant's core: the connector operation under the request's deadline, its outcome mapped
// to the catalogue's errors, and per-operation counters and latency histogram.
import type { FastifyBaseLogger } from 'fastify';
import type { Observer } from './metrics.js';
import {
  isConnectorTimeoutError,
  isConnectorUnavailableError,
  type ConnectorContext,
  type ContractOperation,
  type OperationInput,
  type OperationResult,
  type OperationValue,
} from '../../connectors/contract.js';
import { CardlineError, Errors } from '../errors.js';
import { scrub } from '../logging.js';
import { reasonOf } from './connector-registry.js';
import type { ConnectorInstances, ConnectorLease } from './connector-instances.js';
import type { Tenant } from './tenants.js';

/** How a call ended, as counted by `stats()`. */
export type ErrorKind = 'business' | 'pending' | 'unavailable' | 'timeout' | 'internal';
export const ERROR_KINDS: readonly ErrorKind[] = ['business', 'pending', 'unavailable', 'timeout', 'internal'];

/** Upper bounds (ms) of the latency buckets; one more bucket counts everything slower. */
export const LATENCY_BUCKETS_MS = [5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10_000] as const;

export interface OperationStats {
  tenant: string;
  connector: string;
  operation: string;
  /** Calls that reached the connector. */
  count: number;
  succeeded: number;
  errors: Record<ErrorKind, number>;
  latencyMs: {
    sum: number;
    max: number;
    /** Non-cumulative: `buckets[i]` counts calls ≤ LATENCY_BUCKETS_MS[i] and above the previous bound; the last counts the rest. */
    buckets: number[];
  };
}

/** What the request contributes to a call: the tenant and the deadline are the caller's. */
export interface CallContext {
  requestId: string;
  logger: FastifyBaseLogger;
  idempotencyKey?: string | undefined;
}

export interface CoreCallerOptions {
  /** The deadline of one call, in milliseconds. */
  timeoutMs: number;
  /** Monotonic clock in milliseconds (tests replace it). */
  now?: () => number;
  /** Told of every call (the metrics). */
  observer?: Pick<Observer, 'connectorCall'> | undefined;
}

export class CoreCaller {
  private readonly counters = new Map<string, OperationStats>();
  private readonly timeoutMs: number;
  private readonly now: () => number;

  constructor(
    private readonly instances: ConnectorInstances,
    opts: CoreCallerOptions,
  ) {
    this.timeoutMs = opts.timeoutMs;
    this.now = opts.now ?? (() => performance.now());
    this.observer = opts.observer;
  }

  private readonly observer: Pick<Observer, 'connectorCall'> | undefined;

  /**
   * Calls one operation under the request's deadline and maps the outcome: succeeded → value;
   * rejected → business error; pending → 202; transport failures → 502/504.
   */
  async invoke<O extends ContractOperation>(tenant: Tenant, operation: O, input: OperationInput<O>, ctx: CallContext): Promise<OperationValue<O>> {
    let lease: ConnectorLease;
    try {
      lease = await this.instances.acquire(tenant);
    } catch (err) {
      ctx.logger.error({ tenant: tenant.id, connector: tenant.config.connector.id, reason: reasonOf(err) }, 'tenant connector is not available');
      throw Errors.unavailable(
        `The core-banking connector of tenant '${tenant.id}' could not be started; this is a configuration problem on the gateway and retrying will not help until its operator fixes it.`,
      );
    }
    try {
      return await this.call(lease, tenant, operation, input, ctx);
    } finally {
      lease.release();
    }
  }

  private async call<O extends ContractOperation>(
    { connector }: ConnectorLease,
    tenant: Tenant,
    operation: O,
    input: OperationInput<O>,
    ctx: CallContext,
  ): Promise<OperationValue<O>> {
    // A plain timer cleared on completion: AbortSignal.timeout() costs measurably more per call.
    const deadline = new AbortController();
    const signal = deadline.signal;
    const timer = setTimeout(() => deadline.abort(new DOMException('connector deadline passed', 'TimeoutError')), this.timeoutMs);
    const started = this.now();
    const record = (kind: ErrorKind | 'succeeded') => this.record(tenant, operation, kind, this.now() - started);
    let result: OperationResult<OperationValue<O>>;
    try {
      const method = connector[operation] as (i: OperationInput<O>, c: ConnectorContext) => Promise<OperationResult<OperationValue<O>>>;
      result = await method.call(connector, input, { ...ctx, tenantId: tenant.id, signal });
    } catch (err) {
      if (err instanceof CardlineError) {
        record('internal');
        throw err;
      }
      if (isConnectorTimeoutError(err) || signal.aborted) {
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
      clearTimeout(timer);
    }
    // A late success after the deadline is not reported as success: the caller already gave up.
    if (signal.aborted) {
      record('timeout');
      throw Errors.coreTimeout();
    }
    switch (result.status) {
      case 'succeeded':
        record('succeeded');
        return result.value;
      case 'rejected':
        record('business');
        // A core's own words reach the caller, scrubbed of anything shaped like a card number or a token.
        throw Errors.business(result.code, scrub(result.message));
      case 'pending':
        record('pending');
        throw Errors.corePending();
      default:
        record('internal');
        throw new Error(`connector '${tenant.config.connector.id}' returned an unknown status from ${operation}`);
    }
  }

  private record(tenant: Tenant, operation: string, kind: ErrorKind | 'succeeded', latencyMs: number): void {
    const connector = tenant.config.connector.id;
    const key = `${tenant.id}\u0000${connector}\u0000${operation}`;
    let s = this.counters.get(key);
    if (!s) {
      s = {
        tenant: tenant.id,
        connector,
        operation,
        count: 0,
        succeeded: 0,
        errors: { business: 0, pending: 0, unavailable: 0, timeout: 0, internal: 0 },
        latencyMs: { sum: 0, max: 0, buckets: new Array<number>(LATENCY_BUCKETS_MS.length + 1).fill(0) },
      };
      this.counters.set(key, s);
    }
    s.count++;
    if (kind === 'succeeded') s.succeeded++;
    else s.errors[kind]++;
    const ms = Math.max(0, latencyMs);
    s.latencyMs.sum += ms;
    s.latencyMs.max = Math.max(s.latencyMs.max, ms);
    const bucket = LATENCY_BUCKETS_MS.findIndex((le) => ms <= le);
    s.latencyMs.buckets[bucket === -1 ? LATENCY_BUCKETS_MS.length : bucket]!++;
    this.observer?.connectorCall(tenant.id, connector, operation, kind, ms / 1000);
  }

  /** Per tenant, connector and operation: calls, outcomes and latency, for the metrics endpoint. A copy. */
  stats(): OperationStats[] {
    return [...this.counters.values()]
      .map((s) => structuredClone(s))
      .sort((a, b) => a.tenant.localeCompare(b.tenant) || a.connector.localeCompare(b.connector) || a.operation.localeCompare(b.operation));
  }
}
