// Builds each tenant's connector from the registry (built-in or loaded from a module), validates its
// options, calls it with a deadline, probes its health and keeps per-operation counters.
import type { FastifyBaseLogger } from 'fastify';
import {
  isConnectorTimeoutError,
  isConnectorUnavailableError,
  type Connector,
  type ConnectorContext,
  type ConnectorDefinition,
  type ConnectorSecrets,
  type OperationResult,
} from '../../connectors/contract.js';
import { checkOptions, loadConnectorModule, moduleSpecifier } from '../../connectors/loader.js';
import type { TenantConfig } from '../../schemas/tenant.js';
import { ephemeralSecrets } from '../crypto/connector-secrets.js';
import { CardlineError, Errors } from '../errors.js';
import { scrub } from '../logging.js';
import type { Tenant } from './tenants.js';

/** A tenant's connector configuration cannot be used: unknown id, module not loadable, invalid options. */
export class ConnectorConfigError extends Error {
  constructor(
    readonly tenantId: string,
    readonly connectorId: string,
    readonly reason: string,
  ) {
    super(`Tenant '${tenantId}': connector '${connectorId}' ${reason}`);
    this.name = 'ConnectorConfigError';
  }
}

/** The operations the gateway routes: every method of the contract except the lifecycle hooks. */
export type ConnectorOperation = Exclude<keyof Connector, 'health' | 'close'>;
export type InputOf<O extends ConnectorOperation> = Parameters<Connector[O]>[0];
export type ValueOf<O extends ConnectorOperation> = Awaited<ReturnType<Connector[O]>> extends OperationResult<infer T> ? T : never;

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

export interface DegradedTenant {
  tenant: string;
  reason: string;
}

export interface ConnectorServiceOptions {
  /** How long a readiness probe waits for a connector's `health()`. */
  healthTimeoutMs?: number;
  /** How long a probe's outcome is reused. */
  healthCacheMs?: number;
  /** Base directory of relative module paths in tenant configuration. */
  cwd?: string;
  /** Monotonic clock in milliseconds (tests replace it). */
  now?: () => number;
  /**
   * Each tenant's connector secrets (derived from the master key). Without it, instances get secrets
   * under a random key: fine for connectors that keep nothing at rest, not for the file core's data.
   */
  secretsFor?: (tenantId: string) => ConnectorSecrets;
}

interface Registered {
  definition: ConnectorDefinition;
  /** 'built-in', or the import specifier of the module it came from. */
  source: string;
}

interface Instance {
  key: string;
  connector: Promise<Connector>;
}

type ConnectorConfig = TenantConfig['connector'];

const firstLine = (err: unknown): string => String((err as Error)?.message ?? err).split('\n')[0]!;

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export class ConnectorService {
  private readonly registry = new Map<string, Registered>();
  private readonly modules = new Map<string, Promise<ConnectorDefinition>>();
  private readonly instances = new Map<string, Instance>();
  private readonly probes = new Map<string, { at: number; reason: string | null }>();
  private readonly counters = new Map<string, OperationStats>();
  private readonly healthTimeoutMs: number;
  private readonly healthCacheMs: number;
  private readonly cwd: string;
  private readonly now: () => number;
  private readonly secretsFor: (tenantId: string) => ConnectorSecrets;

  constructor(
    definitions: ConnectorDefinition[],
    private readonly logger: FastifyBaseLogger,
    private readonly timeoutMs: number,
    opts: ConnectorServiceOptions = {},
  ) {
    for (const d of definitions) {
      if (this.registry.has(d.id)) throw new Error(`Two connectors share the id '${d.id}'`);
      this.registry.set(d.id, { definition: d, source: 'built-in' });
    }
    this.healthTimeoutMs = opts.healthTimeoutMs ?? Math.min(2000, timeoutMs);
    this.healthCacheMs = opts.healthCacheMs ?? 5000;
    this.cwd = opts.cwd ?? process.cwd();
    this.now = opts.now ?? (() => performance.now());
    this.secretsFor = opts.secretsFor ?? ((tenantId) => ephemeralSecrets(tenantId));
  }

  /** Every registered connector id: built-ins and external modules loaded so far. */
  ids(): string[] {
    return [...this.registry.keys()];
  }

  private builtIns(): string[] {
    return [...this.registry.values()].filter((r) => r.source === 'built-in').map((r) => r.definition.id);
  }

  /**
   * Validates a tenant's connector choice and options against a registered definition; errors name
   * the field. A connector named by `module` must have been loaded first (`prepare` does both).
   */
  validate(tenantId: string, connectorId: string, options: unknown): unknown {
    const registered = this.registry.get(connectorId);
    if (!registered) {
      throw new ConnectorConfigError(tenantId, connectorId, `is not registered (built in: ${this.builtIns().join(', ')}); name the module to load it from`);
    }
    const { value, problems } = checkOptions(registered.definition, options);
    if (problems.length) throw new ConnectorConfigError(tenantId, connectorId, `options are invalid: ${problems.join('; ')}`);
    return value;
  }

  /** Loads the connector's module when the configuration names one, then validates the options. */
  async prepare(tenantId: string, config: ConnectorConfig): Promise<{ definition: ConnectorDefinition; options: unknown }> {
    const definition = await this.definitionFor(tenantId, config);
    return { definition, options: this.validate(tenantId, config.id, config.options) };
  }

  /** The definition a tenant's configuration names, loading and registering an external module once. */
  private async definitionFor(tenantId: string, config: ConnectorConfig): Promise<ConnectorDefinition> {
    if (!config.module) {
      // Without a module only built-ins match, so the outcome never depends on which tenant loaded first.
      const registered = this.registry.get(config.id);
      if (registered?.source === 'built-in') return registered.definition;
      throw new ConnectorConfigError(tenantId, config.id, `is not a built-in connector (built in: ${this.builtIns().join(', ')}); name the module to load it from`);
    }
    const specifier = moduleSpecifier(config.module, this.cwd);
    let loading = this.modules.get(specifier);
    if (!loading) {
      loading = loadConnectorModule(config.module, this.cwd);
      this.modules.set(specifier, loading);
      // A module that failed (missing file, syntax error) is tried again next time, not cached broken.
      loading.catch(() => this.modules.delete(specifier));
    }
    let definition: ConnectorDefinition;
    try {
      definition = await loading;
    } catch (err) {
      throw new ConnectorConfigError(tenantId, config.id, `cannot be loaded: ${firstLine(err)}`);
    }
    if (definition.id !== config.id) {
      throw new ConnectorConfigError(tenantId, config.id, `is not what module '${config.module}' exports: it exports '${definition.id}'; set connector.id to '${definition.id}'`);
    }
    const registered = this.registry.get(definition.id);
    if (!registered) {
      this.registry.set(definition.id, { definition, source: specifier });
      this.logger.info({ connector: definition.id, version: definition.version, module: config.module }, 'external connector loaded');
    } else if (registered.source !== specifier) {
      const from = registered.source === 'built-in' ? 'a built-in connector' : `module ${registered.source}`;
      throw new ConnectorConfigError(tenantId, config.id, `from module '${config.module}' clashes with ${from} of the same id; give the plugin another id`);
    }
    return definition;
  }

  /** The tenant's connector, created on first use and rebuilt when its configuration changes. */
  forTenant(tenant: Tenant): Promise<Connector> {
    const config = tenant.config.connector;
    const key = JSON.stringify([config.id, config.module ?? null, config.options ?? {}]);
    const existing = this.instances.get(tenant.id);
    if (existing && existing.key === key) return existing.connector;
    if (existing) void existing.connector.then((c) => c.close?.()).catch(() => undefined);
    const connector = (async () => {
      const { definition, options } = await this.prepare(tenant.id, config);
      const logger = this.logger.child({ tenant: tenant.id, connector: definition.id });
      try {
        return await definition.create(options as never, { tenantId: tenant.id, logger, secrets: this.secretsFor(tenant.id) });
      } catch (err) {
        throw new ConnectorConfigError(tenant.id, definition.id, `failed to start: ${firstLine(err)}`);
      }
    })();
    this.instances.set(tenant.id, { key, connector });
    // A connector that fails to start is retried on the next request rather than cached broken.
    connector.catch(() => {
      if (this.instances.get(tenant.id)?.connector === connector) this.instances.delete(tenant.id);
    });
    return connector;
  }

  /**
   * Starts every active tenant's connector before the server listens. A tenant whose connector cannot
   * load or start is logged and returned, and does not stop the others: its requests answer 503.
   */
  async start(tenants: Tenant[]): Promise<DegradedTenant[]> {
    const degraded: DegradedTenant[] = [];
    await Promise.all(
      tenants
        .filter((t) => t.status === 'active')
        .map(async (tenant) => {
          try {
            await withTimeout(this.forTenant(tenant), this.timeoutMs, `connector '${tenant.config.connector.id}'`);
          } catch (err) {
            const reason = reasonOf(err);
            degraded.push({ tenant: tenant.id, reason });
            this.probes.set(tenant.id, { at: this.now(), reason });
            this.logger.error({ tenant: tenant.id, connector: tenant.config.connector.id, reason }, 'tenant connector could not start; its requests will answer 503 until its configuration is fixed');
          }
        }),
    );
    return degraded.sort((a, b) => a.tenant.localeCompare(b.tenant));
  }

  /**
   * Readiness of each active tenant's connector: started, and its `health()` (when it has one) answering
   * within a short timeout. Outcomes are reused for `healthCacheMs`, so probes do not load the cores.
   */
  async readiness(tenants: Tenant[]): Promise<DegradedTenant[]> {
    const results = await Promise.all(
      tenants.filter((t) => t.status === 'active').map(async (t) => ({ tenant: t.id, reason: await this.probe(t) })),
    );
    return results.filter((r): r is DegradedTenant => r.reason !== null).sort((a, b) => a.tenant.localeCompare(b.tenant));
  }

  private async probe(tenant: Tenant): Promise<string | null> {
    const cached = this.probes.get(tenant.id);
    if (cached && this.now() - cached.at < this.healthCacheMs) return cached.reason;
    let reason: string | null = null;
    try {
      const connector = await withTimeout(this.forTenant(tenant), this.healthTimeoutMs, 'connector start');
      if (connector.health) {
        try {
          await withTimeout(connector.health(), this.healthTimeoutMs, 'health check');
        } catch (err) {
          reason = `health check failed: ${firstLine(err)}`;
        }
      }
    } catch (err) {
      reason = reasonOf(err);
    }
    this.probes.set(tenant.id, { at: this.now(), reason });
    return reason;
  }

  /**
   * Calls one operation under the request's deadline and maps the outcome: succeeded → value;
   * rejected → business error; pending → 202; transport failures → 502/504.
   */
  async invoke<O extends ConnectorOperation>(
    tenant: Tenant,
    operation: O,
    input: InputOf<O>,
    ctx: Omit<ConnectorContext, 'signal' | 'tenantId'>,
  ): Promise<ValueOf<O>> {
    let connector: Connector;
    try {
      connector = await this.forTenant(tenant);
    } catch (err) {
      ctx.logger.error({ tenant: tenant.id, connector: tenant.config.connector.id, reason: reasonOf(err) }, 'tenant connector is not available');
      throw Errors.unavailable(
        `The core-banking connector of tenant '${tenant.id}' could not be started; this is a configuration problem on the gateway and retrying will not help until its operator fixes it.`,
      );
    }
    // A plain timer cleared on completion: AbortSignal.timeout() costs measurably more per call.
    const deadline = new AbortController();
    const signal = deadline.signal;
    const timer = setTimeout(() => deadline.abort(new DOMException('connector deadline passed', 'TimeoutError')), this.timeoutMs);
    const started = this.now();
    const record = (kind: ErrorKind | 'succeeded') => this.record(tenant, operation, kind, this.now() - started);
    let result: OperationResult<ValueOf<O>>;
    try {
      const method = connector[operation] as (i: InputOf<O>, c: ConnectorContext) => Promise<OperationResult<ValueOf<O>>>;
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
  }

  /** Per tenant, connector and operation: calls, outcomes and latency, for the metrics endpoint. A copy. */
  stats(): OperationStats[] {
    return [...this.counters.values()]
      .map((s) => structuredClone(s))
      .sort((a, b) => a.tenant.localeCompare(b.tenant) || a.connector.localeCompare(b.connector) || a.operation.localeCompare(b.operation));
  }

  async close(): Promise<void> {
    const all = [...this.instances.values()];
    this.instances.clear();
    await Promise.allSettled(all.map(async (i) => (await i.connector).close?.()));
  }
}

/** One line an operator can act on, without the tenant prefix the caller already shows. */
function reasonOf(err: unknown): string {
  if (err instanceof ConnectorConfigError) return `connector '${err.connectorId}' ${err.reason}`;
  return firstLine(err);
}
