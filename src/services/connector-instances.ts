// Connector instances and their health: one instance per tenant, created on first use and rebuilt when
// the tenant's connector configuration changes, started before listen, probed for readiness.
import type { FastifyBaseLogger } from 'fastify';
import type { Connector, ConnectorSecrets } from '../../connectors/contract.js';
import { ephemeralSecrets } from '../crypto/connector-secrets.js';
import { ConnectorConfigError, firstLine, reasonOf, type ConnectorRegistry } from './connector-registry.js';
import type { Tenant } from './tenants.js';

export interface DegradedTenant {
  tenant: string;
  reason: string;
}

export interface ConnectorInstancesOptions {
  /** How long `start` waits for one tenant's connector to be created. */
  startTimeoutMs: number;
  /** How long a readiness probe waits for a connector's `health()` (default: 2 s, at most startTimeoutMs). */
  healthTimeoutMs?: number;
  /** How long a probe's outcome is reused. */
  healthCacheMs?: number;
  /** Monotonic clock in milliseconds (tests replace it). */
  now?: () => number;
  /**
   * Each tenant's connector secrets (derived from the master key). Without it, instances get secrets
   * under a random key: fine for connectors that keep nothing at rest, not for the file core's data.
   */
  secretsFor?: (tenantId: string) => ConnectorSecrets;
}

/** A tenant's connector held for one call: `release()` once the call has returned (calling it twice is harmless). */
export interface ConnectorLease {
  connector: Connector;
  release(): void;
}

interface Instance {
  tenantId: string;
  /** The configuration it was built from; another key means another instance. */
  key: string;
  /** The tenant version it was built for: an older request never replaces it. */
  version: number;
  connectorId: string;
  connector: Promise<Connector>;
  /** The connector once it has started (for the metrics' breaker states). */
  started?: Connector;
  /** Calls holding a lease on it. */
  inFlight: number;
  /** Replaced by a newer configuration: closed as soon as `inFlight` is zero. */
  retired: boolean;
  closing?: Promise<void>;
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export class ConnectorInstances {
  private readonly instances = new Map<string, Instance>();
  /** Replaced instances that still have calls in flight. */
  private readonly retiring = new Set<Instance>();
  private readonly probes = new Map<string, { at: number; reason: string | null }>();
  private readonly startTimeoutMs: number;
  private readonly healthTimeoutMs: number;
  private readonly healthCacheMs: number;
  private readonly now: () => number;
  private readonly secretsFor: (tenantId: string) => ConnectorSecrets;

  constructor(
    private readonly registry: ConnectorRegistry,
    private readonly logger: FastifyBaseLogger,
    opts: ConnectorInstancesOptions,
  ) {
    this.startTimeoutMs = opts.startTimeoutMs;
    this.healthTimeoutMs = opts.healthTimeoutMs ?? Math.min(2000, opts.startTimeoutMs);
    this.healthCacheMs = opts.healthCacheMs ?? 5000;
    this.now = opts.now ?? (() => performance.now());
    this.secretsFor = opts.secretsFor ?? ((tenantId) => ephemeralSecrets(tenantId));
  }

  /** The tenant's connector, created on first use and rebuilt when its configuration changes. */
  forTenant(tenant: Tenant): Promise<Connector> {
    return this.instanceFor(tenant).connector;
  }

  /**
   * The tenant's connector for one call. While a lease is held the instance is not closed, even when the
   * tenant's configuration has moved on to a new instance: it is closed when its last lease is released.
   */
  async acquire(tenant: Tenant): Promise<ConnectorLease> {
    const instance = this.instanceFor(tenant);
    instance.inFlight++;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      if (--instance.inFlight === 0 && instance.retired) void this.closeInstance(instance);
    };
    try {
      return { connector: await instance.connector, release };
    } catch (err) {
      release();
      throw err;
    }
  }

  /** The current, started connector of each tenant, with the id its configuration names (for the metrics). */
  *started(): Iterable<{ tenantId: string; connectorId: string; connector: Connector }> {
    for (const instance of this.instances.values()) {
      if (instance.started) yield { tenantId: instance.tenantId, connectorId: instance.connectorId, connector: instance.started };
    }
  }

  /** Calls in flight on the tenant's current instance (for tests and diagnostics). */
  inFlight(tenantId: string): number {
    return this.instances.get(tenantId)?.inFlight ?? 0;
  }

  private instanceFor(tenant: Tenant): Instance {
    const config = tenant.config.connector;
    const key = JSON.stringify([config.id, config.module ?? null, config.options ?? {}]);
    const version = tenant.version ?? 0;
    const existing = this.instances.get(tenant.id);
    if (existing && existing.key === key) return existing;
    // A request that started on an older configuration uses the instance of the newer one rather than
    // bringing its own back: requests already holding the old instance finish on it (leases).
    if (existing && version < existing.version) return existing;
    if (existing) this.retire(existing);
    const connector = (async () => {
      const { definition, options } = await this.registry.prepare(tenant.id, config);
      const logger = this.logger.child({ tenant: tenant.id, connector: definition.id });
      try {
        return await definition.create(options as never, { tenantId: tenant.id, logger, secrets: this.secretsFor(tenant.id) });
      } catch (err) {
        throw new ConnectorConfigError(tenant.id, definition.id, `failed to start: ${firstLine(err)}`);
      }
    })();
    const instance: Instance = { tenantId: tenant.id, key, version, connectorId: config.id, connector, inFlight: 0, retired: false };
    this.instances.set(tenant.id, instance);
    connector.then((c) => (instance.started = c), () => undefined);
    // A connector that fails to start is retried on the next request rather than cached broken.
    connector.catch(() => {
      if (this.instances.get(tenant.id) === instance) this.instances.delete(tenant.id);
    });
    return instance;
  }

  /** Takes a replaced instance out of service; it closes now, or when its last call returns. */
  private retire(instance: Instance): void {
    instance.retired = true;
    this.instances.delete(instance.tenantId);
    if (instance.inFlight === 0) void this.closeInstance(instance);
    else this.retiring.add(instance);
  }

  private closeInstance(instance: Instance): Promise<void> {
    this.retiring.delete(instance);
    instance.closing ??= instance.connector.then(
      async (c) => {
        try {
          await c.close?.();
        } catch (err) {
          this.logger.warn({ tenant: instance.tenantId, reason: firstLine(err) }, 'connector instance failed to close');
        }
      },
      // One that never started has nothing to close.
      () => undefined,
    );
    return instance.closing;
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
            await withTimeout(this.forTenant(tenant), this.startTimeoutMs, `connector '${tenant.config.connector.id}'`);
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
      const leasing = this.acquire(tenant);
      let lease: ConnectorLease;
      try {
        lease = await withTimeout(leasing, this.healthTimeoutMs, 'connector start');
      } catch (err) {
        // A start slower than the probe still gets its lease back, or its instance could never close.
        void leasing.then((l) => l.release(), () => undefined);
        throw err;
      }
      try {
        if (lease.connector.health) await withTimeout(lease.connector.health(), this.healthTimeoutMs, 'health check');
      } catch (err) {
        reason = `health check failed: ${firstLine(err)}`;
      } finally {
        lease.release();
      }
    } catch (err) {
      reason = reasonOf(err);
    }
    this.probes.set(tenant.id, { at: this.now(), reason });
    return reason;
  }

  /** Closes every instance, retired ones with calls still in flight included: the process is stopping. */
  async close(): Promise<void> {
    const all = [...this.instances.values(), ...this.retiring];
    this.instances.clear();
    await Promise.allSettled(all.map((i) => this.closeInstance(i)));
  }
}
