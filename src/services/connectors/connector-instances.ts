// Connector instances and their health: one instance per tenant, created on first use and rebuilt when
// the tenant's connector configuration changes, started before listen, probed for readiness.
import type { FastifyBaseLogger } from 'fastify';
import type { Connector, ConnectorSecrets } from '../../../connectors/contract.js';
import { DEFAULT_MAX_INSTANCES } from '../../config.js';
import { ephemeralSecrets } from '../../../connectors/shared/ephemeral-secrets.js';
import { ConnectorConfigError, firstLine, reasonOf, type ConnectorRegistry } from './connector-registry.js';
import { routesOf } from './routing.js';
import type { Tenant } from '../tenancy/tenants.js';

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
  /** Each tenant's connector secrets; without it a random key (fine for connectors that keep nothing at rest). */
  secretsFor?: (tenantId: string) => ConnectorSecrets;
  /** Instances kept started at most (decision 0210); past it the least recently used idle one closes. */
  maxInstances?: number;
}


/** A tenant's connector held for one call: `release()` once the call has returned (calling it twice is harmless). */
export interface ConnectorLease {
  connector: Connector;
  release(): void;
}

interface Instance {
  tenantId: string;
  /** The connector's name in the tenant's configuration (its id when the tenant has one connector). */
  name: string;
  /** The configuration it was built from; another key means another instance. */
  key: string;
  /** The tenant version it was built for: an older request never replaces it. */
  version: number;
  connectorId: string;
  connector: Promise<Connector>;
  /** The connector once it has started (for the metrics' breaker states). */
  started?: Connector;
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

const keyOf = (tenantId: string, name: string) => `${tenantId}\u0000${name}`;
/** What identifies a connector's configuration, per configuration object (a tenant's configuration is not changed in place, as routesOf assumes). */
const configKeys = new WeakMap<object, string>();
const configKeyOf = (config: { id: string; module?: string | undefined; options?: unknown }): string => {
  let key = configKeys.get(config);
  if (key === undefined) configKeys.set(config, (key = JSON.stringify([config.id, config.module ?? null, config.options ?? {}])));
  return key;
};

export class ConnectorInstances {
  private readonly instances = new Map<string, Instance>();
  /** The newest configuration version seen per tenant: a newer one retires connectors it no longer names. */
  private readonly versions = new Map<string, number>();
  /** Replaced instances that still have calls in flight. */
  private readonly retiring = new Set<Instance>();
  private readonly probes = new Map<string, { at: number; reason: string | null }>();
  private readonly startTimeoutMs: number;
  private readonly healthTimeoutMs: number;
  private readonly healthCacheMs: number;
  private readonly now: () => number;
  private readonly secretsFor: (tenantId: string) => ConnectorSecrets;
  private readonly maxInstances: number;
  /** Instances created (tests, diagnostics). */
  created = 0;
  /** Idle instances closed to stay within maxInstances (tests, diagnostics). */
  evicted = 0;

  constructor(
    private readonly registry: ConnectorRegistry,
    private readonly logger: FastifyBaseLogger,
    opts: ConnectorInstancesOptions,
  ) {
    this.startTimeoutMs = opts.startTimeoutMs;
    this.healthTimeoutMs = opts.healthTimeoutMs ?? Math.min(2000, opts.startTimeoutMs);
    this.healthCacheMs = opts.healthCacheMs ?? 5000;
    this.now = opts.now ?? (() => performance.now());
    this.secretsFor = opts.secretsFor ?? (() => ephemeralSecrets());
    this.maxInstances = Math.max(1, opts.maxInstances ?? DEFAULT_MAX_INSTANCES);
  }

  /** Instances currently held (started or starting). */
  get size(): number {
    return this.instances.size;
  }

  /** The tenant's connector `name` (default: its default one), created on first use and rebuilt when its configuration changes. */
  forTenant(tenant: Tenant, name = routesOf(tenant.config).defaultName): Promise<Connector> {
    return this.instanceFor(tenant, name).connector;
  }

  /** The tenant's connector for one call; a leased instance is closed only when its last lease is released. */
  async acquire(tenant: Tenant, name = routesOf(tenant.config).defaultName): Promise<ConnectorLease> {
    const instance = this.instanceFor(tenant, name);
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

  /** The current, started connectors of each tenant, with their names and ids (for the metrics and the admin view). */
  *started(): Iterable<{ tenantId: string; name: string; connectorId: string; connector: Connector }> {
    for (const instance of this.instances.values()) {
      if (instance.started) yield { tenantId: instance.tenantId, name: instance.name, connectorId: instance.connectorId, connector: instance.started };
    }
  }

  /** The started instance of one of a tenant's connectors, if it has started (the admin view reads its offer and breaker). */
  startedOf(tenantId: string, name: string): Connector | undefined {
    return this.instances.get(keyOf(tenantId, name))?.started;
  }

  /** Calls in flight on the tenant's current instance of a connector (for tests and diagnostics). */
  inFlight(tenantId: string, name?: string): number {
    if (name !== undefined) return this.instances.get(keyOf(tenantId, name))?.inFlight ?? 0;
    let n = 0;
    for (const i of this.instances.values()) if (i.tenantId === tenantId) n += i.inFlight;
    return n;
  }

  private instanceFor(tenant: Tenant, name: string): Instance {
    const version = tenant.version ?? 0;
    this.sweep(tenant, version);
    const config = routesOf(tenant.config).connectors[name];
    if (!config) throw new ConnectorConfigError(tenant.id, name, 'is not a connector of this tenant');
    const key = configKeyOf(config);
    const at = keyOf(tenant.id, name);
    const existing = this.instances.get(at);
    if (existing && existing.key === key) {
      // Most recently used last: eviction takes the first idle one.
      this.instances.delete(at);
      this.instances.set(at, existing);
      return existing;
    }
    // A request begun on an older configuration uses the newer instance; holders of the old one finish on it.
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
    const instance: Instance = { tenantId: tenant.id, name, key, version, connectorId: config.id, connector, inFlight: 0, retired: false };
    this.instances.set(keyOf(tenant.id, name), instance);
    this.created += 1;
    this.evictIdle();
    connector.then((c) => (instance.started = c), () => undefined);
    // A connector that fails to start is retried on the next request rather than cached broken.
    connector.catch((err: unknown) => {
      if (this.instances.get(keyOf(tenant.id, name)) === instance) this.instances.delete(keyOf(tenant.id, name));
      // Readiness lists it (and probes it again after healthCacheMs) though it is no longer held.
      this.probes.set(keyOf(tenant.id, name), { at: this.now(), reason: this.named(tenant, name, reasonOf(err)) });
    });
    return instance;
  }

  /** Past maxInstances, closes the least recently used idle instances; their next call starts them again. */
  private evictIdle(): void {
    if (this.instances.size <= this.maxInstances) return;
    for (const [k, instance] of this.instances) {
      if (this.instances.size <= this.maxInstances) break;
      if (instance.inFlight > 0) continue;
      this.instances.delete(k);
      this.probes.delete(k);
      this.evicted += 1;
      void this.closeInstance(instance);
    }
  }

  /** On a newer configuration, retires the tenant's connectors it no longer names (their calls in flight finish first). */
  private sweep(tenant: Tenant, version: number): void {
    const seen = this.versions.get(tenant.id);
    if (seen !== undefined && version <= seen) return;
    this.versions.set(tenant.id, version);
    const named = routesOf(tenant.config).connectors;
    for (const instance of [...this.instances.values()]) {
      if (instance.tenantId === tenant.id && !Object.hasOwn(named, instance.name) && instance.version < version) this.retire(instance);
    }
  }

  /** Takes a replaced instance out of service; it closes now, or when its last call returns. */
  private retire(instance: Instance): void {
    instance.retired = true;
    if (this.instances.get(keyOf(instance.tenantId, instance.name)) === instance) this.instances.delete(keyOf(instance.tenantId, instance.name));
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

  /** Starts every active tenant's connector before listening; a failing one is logged and returned, not fatal. */
  async start(tenants: Tenant[]): Promise<DegradedTenant[]> {
    const degraded: DegradedTenant[] = [];
    const all = tenants
      .filter((t) => t.status === 'active')
      .flatMap((tenant) => Object.entries(routesOf(tenant.config).connectors).map(([name, choice]) => ({ tenant, name, choice })));
    // Past maxInstances each is only loaded and validated now, and starts on its tenant's first call.
    const eager = all.length <= this.maxInstances;
    await Promise.all(
      all.map(async ({ tenant, name, choice }) => {
          try {
            if (eager) await withTimeout(this.forTenant(tenant, name), this.startTimeoutMs, `connector '${choice.id}'`);
            else await withTimeout(this.registry.prepare(tenant.id, choice), this.startTimeoutMs, `connector '${choice.id}'`);
          } catch (err) {
            const reason = this.named(tenant, name, reasonOf(err));
            degraded.push({ tenant: tenant.id, reason });
            this.probes.set(keyOf(tenant.id, name), { at: this.now(), reason });
            this.logger.error({ tenant: tenant.id, connector: name, reason }, 'tenant connector could not start; its requests will answer 503 until its configuration is fixed');
          }
        }),
    );
    return degraded.sort((a, b) => a.tenant.localeCompare(b.tenant));
  }

  /**
   * Readiness of each active tenant's connector (started, `health()` answering), cached for `healthCacheMs`.
   * Past maxInstances an idle, never-failed one is not started for a probe (decision 0210).
   */
  async readiness(tenants: Tenant[]): Promise<DegradedTenant[]> {
    const all = tenants.filter((t) => t.status === 'active').flatMap((t) => Object.keys(routesOf(t.config).connectors).map((name) => ({ t, name })));
    // Within the bound every connector may be started, as before listening: all are probed.
    const everyOne = all.length <= this.maxInstances;
    const results = await Promise.all(
      all
        .filter(({ t, name }) => everyOne || this.instances.has(keyOf(t.id, name)) || (this.probes.get(keyOf(t.id, name))?.reason ?? null) !== null)
        .map(async ({ t, name }) => ({ tenant: t.id, reason: await this.probe(t, name) })),
    );
    return results.filter((r): r is DegradedTenant => r.reason !== null).sort((a, b) => a.tenant.localeCompare(b.tenant));
  }

  /** A tenant with several connectors says which one a reason is about. */
  private named(tenant: Tenant, name: string, reason: string): string {
    return tenant.config.connectors ? `connector '${name}': ${reason}` : reason;
  }

  private async probe(tenant: Tenant, name: string): Promise<string | null> {
    const cached = this.probes.get(keyOf(tenant.id, name));
    if (cached && this.now() - cached.at < this.healthCacheMs) return cached.reason;
    let reason: string | null = null;
    try {
      const leasing = this.acquire(tenant, name);
      let lease: ConnectorLease;
      try {
        lease = await withTimeout(leasing, this.healthTimeoutMs, 'connector start');
      } catch (err) {
        // A start slower than the probe still gets its lease back, or its instance could never close.
        void leasing.then((l) => l.release(), () => undefined);
        throw err;
      }
      try {
        // A core whose every call fails trips its breaker: degraded, even if its health path still answers.
        if (lease.connector.breakerState?.() === 'open') reason = 'circuit breaker open: the core failed its recent calls';
        else if (lease.connector.health) await withTimeout(lease.connector.health(), this.healthTimeoutMs, 'health check');
      } catch (err) {
        reason = `health check failed: ${firstLine(err)}`;
      } finally {
        lease.release();
      }
    } catch (err) {
      reason = reasonOf(err);
    }
    if (reason !== null) reason = this.named(tenant, name, reason);
    this.probes.set(keyOf(tenant.id, name), { at: this.now(), reason });
    return reason;
  }

  /** Closes every instance, retired ones with calls still in flight included: the process is stopping. */
  async close(): Promise<void> {
    const all = [...this.instances.values(), ...this.retiring];
    this.instances.clear();
    await Promise.allSettled(all.map((i) => this.closeInstance(i)));
  }
}
