// The gateway's services (store, keys, tenants, users, tokens, audit, connectors) as one decorator.
import fp from 'fastify-plugin';
import type { FastifyPluginAsync } from 'fastify';
import type { ConnectorDefinition } from '../../connectors/contract.js';
import { builtInConnectors } from '../../connectors/index.js';
import { AuditLog } from '../audit/log.js';
import { AuditWriter } from '../audit/writer.js';
import { CheckpointPublisher } from '../audit/checkpoint.js';
import type { Config } from '../config.js';
import { ClientKeyStore } from '../crypto/client-keys.js';
import { connectorSecrets } from '../crypto/connector-secrets.js';
import { KeyRing, checkMasterKey } from '../crypto/keys.js';
import { MasterKey } from '../crypto/master-key.js';
import { HsmError, type HsmProvider } from '../crypto/hsm/index.js';
import { SoftwareHsmProvider } from '../crypto/hsm/software.js';
import { createConnectorServices, type ConnectorInstances, type ConnectorRegistry, type CoreCaller } from '../services/connectors.js';
import type { Redis } from 'ioredis';
import { closeRedis, openRedis } from '../services/redis.js';
import { createReplayCache, type ReplayCache } from '../services/replay.js';
import { IdempotencyStore } from '../services/idempotency.js';
import { PinService } from '../services/pins.js';
import { TenantService } from '../services/tenants.js';
import { TokenService } from '../services/tokens.js';
import { UserService } from '../services/users.js';
import { Reports } from '../reports/reports.js';
import type { Db } from '../store/db.js';
import { ChangeFeed } from '../services/changes.js';
import { ConfigSecrets } from '../crypto/config-secrets.js';
import { OperatorKeys } from '../services/operator-keys.js';
import { Metrics } from '../services/metrics.js';
import { sealLegacySecrets } from '../services/tenant-admin.js';
import { migrate } from '../store/migrate.js';
import { ChannelService } from '../notify/channels.js';
import { DeliveryService } from '../notify/deliveries.js';
import { ShadowService } from '../services/shadow.js';
import { ChannelSenders } from '../notify/channel-types/registry.js';

export interface Services {
  config: Config;
  db: Db;
  keys: KeyRing;
  /** Tenants' registered client keys, for encrypted response fields. */
  clientKeys: ClientKeyStore;
  tenants: TenantService;
  users: UserService;
  tokens: TokenService;
  audit: AuditWriter;
  /** Signed checkpoints of the tenants' trails, published as they grow (decision 0202). */
  checkpoints: CheckpointPublisher;
  /** Reads of the audit trail (GET /v1/audit). */
  auditLog: AuditLog;
  /** Reports built from the events of record. */
  reports: Reports;
  /**
   * The tenants' HSM (software for development, PKCS#11 in production): PIN keys, one `Hsm` per tenant
   * (`hsm.forTenant(id)`). Opened with the services; null in a one-command process (it sets no PIN).
   */
  hsm: HsmProvider | null;
  /** PIN changes through the tenant's HSM. */
  pins: PinService;
  connectorRegistry: ConnectorRegistry;
  /** Each tenant's connector instance: forTenant, start, readiness, close. */
  connectors: ConnectorInstances;
  /** Calls a tenant's core with a deadline and counts the outcomes. */
  core: CoreCaller;
  replay: ReplayCache;
  /** The shared-counter connection when REDIS_URL is set (rate limits, replay cache), else null. */
  redis: Redis | null;
  /** Configuration changes told to every process; caches refresh on them (decision 0034). */
  changes: ChangeFeed;
  /** Seals and opens the secrets of tenants' connector options (decision 0035). */
  secrets: ConfigSecrets;
  /** The platform operators' API keys (the management listener). */
  operatorKeys: OperatorKeys;
  /** Prometheus metrics, served by the management listener's GET /metrics. */
  metrics: Metrics;
  /** The tenants' notification channels (decision 0080). */
  channels: ChannelService;
  /** Deliveries to the channels: the worker, and what the Admin routes ask of it. */
  deliveries: DeliveryService;
  /** Shadow cores: comparisons, divergences and their summary (decision 0112). */
  shadow: ShadowService;
  /** Idempotency-Key state, for the writes of both listeners (decisions 0016, 0175). */
  idempotency: IdempotencyStore;
}

/** An in-flight claim older than this is taken over; never shorter than twice a connector call's deadline. */
const MIN_LEASE_SECONDS = 60;

declare module 'fastify' {
  interface FastifyInstance {
    cardline: Services;
  }
}

interface ServicesOptions {
  config: Config;
  db: Db;
  masterKey: string;
  connectors?: ConnectorDefinition[];
  /** Close the store when the app closes (false when the caller owns it). */
  ownsDb?: boolean;
  /**
   * A one-command process (the CLI's in-process management API, decision 0198): no tenant's connector is
   * started, no delivery worker runs, no legacy secret is sealed, no HSM is opened; the services are otherwise
   * the gateway's.
   */
  oneShot?: boolean;
}

const servicesPlugin: FastifyPluginAsync<ServicesOptions> = async (app, opts) => {
  const { config, db } = opts;
  await migrate(db);
  const masterKey = new MasterKey(opts.masterKey);
  // Before anything is served or sealed: a wrong master key fails the boot with a message, not 500s later.
  await checkMasterKey(db, masterKey);
  const redis = config.redisUrl ? await openRedis(config, app.log) : null;
  const changes = new ChangeFeed(db, app.log);
  // The gauges read the services when Prometheus scrapes; `services` exists by then.
  const metrics = new Metrics(
    { tenantLabel: config.metricsTenantLabel },
    {
      outboxDepth: async () => (await db.query<{ n: number }>("SELECT count(*)::int AS n FROM outbox WHERE status = 'pending'")).rows[0]?.n ?? 0,
      deliveryDepth: () => services.deliveries.depth(),
      breakers: () => breakerStates(services.connectors),
    },
  );
  const keys = new KeyRing(db, masterKey, config.tenantCacheTtlMs, changes, config.keyCacheMax);
  const secrets = new ConfigSecrets(masterKey);
  const users = new UserService(db, changes, metrics);
  const tenants = new TenantService(db, config.tenantCacheTtlMs, secrets);
  const channels = new ChannelService(db, masterKey, config.notify);
  await channels.registerTypes();
  const senders = new ChannelSenders({ config: config.notify });
  const deliveries = new DeliveryService(db, { config: config.notify, channels, tenants, senders, observer: metrics, log: app.log });
  const hsm = opts.oneShot ? null : await openHsm(config, db, masterKey);
  if (hsm) app.log.info({ hsm: hsm.kind }, 'PIN HSM ready');
  const checkpoints = new CheckpointPublisher(db, keys, config.auditCheckpointMs, (tenant, err) =>
    app.log.warn({ tenant, reason: err instanceof Error ? err.message : String(err) }, 'audit checkpoint not published'),
  );
  const services: Services = {
    config,
    db,
    keys,
    clientKeys: new ClientKeyStore(db, config.tenantCacheTtlMs, changes),
    tenants,
    users,
    tokens: new TokenService(keys, config.issuer, config.audience, users),
    audit: new AuditWriter(db, metrics, () => deliveries.wake(), (written) => checkpoints.wrote(written)),
    checkpoints,
    auditLog: new AuditLog(db),
    reports: new Reports(db),
    hsm,
    pins: new PinService(hsm),
    ...createConnectorServices(opts.connectors ?? builtInConnectors, app.log, config.connectorTimeoutMs, {
      secretsFor: (tenantId) => connectorSecrets(masterKey, tenantId),
      observer: metrics,
      maxInstances: config.connectorInstancesMax,
    }),
    replay: createReplayCache(db, redis, config.redisPrefix),
    redis,
    changes,
    secrets,
    operatorKeys: new OperatorKeys(db, changes),
    metrics,
    channels,
    deliveries,
    shadow: undefined as unknown as ShadowService,
    // Answers holding a secret are sealed, and bodies holding one fingerprinted, under a key of their own.
    idempotency: new IdempotencyStore(db, {
      ttlHours: config.idempotencyTtlHours,
      leaseSeconds: Math.max(MIN_LEASE_SECONDS, Math.ceil((2 * config.connectorTimeoutMs) / 1000)),
      key: masterKey.derive('idempotency:v1'),
    }),
  };
  services.shadow = new ShadowService(db, services.connectors, app.log, metrics);
  services.core.shadow = services.shadow;
  // Caches refresh on change, whichever process made it.
  changes.subscribe((change) => {
    switch (change.kind) {
      case 'tenant':
        // A tenant created elsewhere may have been looked up here before it existed: nothing of it is kept.
        services.tenants.invalidate(change.tenantId);
        services.keys.invalidate(change.tenantId);
        return services.clientKeys.invalidate(change.tenantId);
      case 'keys':
        return services.keys.invalidate(change.tenantId);
      case 'client-key':
        return services.clientKeys.invalidate(change.tenantId);
      case 'user':
        return services.users.forget(change.tenantId, change.username);
      case 'operator-keys':
        return services.operatorKeys.clear();
      case 'all':
        services.tenants.clear();
        services.keys.clear();
        services.clientKeys.clear();
        services.users.clear();
        services.operatorKeys.clear();
    }
  });
  await changes.start();
  // Everything opened above, closed when the app closes: a worker or publisher never started stops at once.
  const close = async (): Promise<void> => {
    services.idempotency.stop();
    await deliveries.stop();
    await services.shadow.close();
    await senders.close();
    await changes.close();
    services.replay.stop();
    await services.audit.close();
    await checkpoints.stop();
    await services.connectors.close();
    await hsm?.close();
    if (opts.ownsDb !== false) await db.close();
    if (redis) await closeRedis(redis);
  };
  if (opts.oneShot) {
    app.decorate('cardline', services);
    app.addHook('onClose', close);
    return;
  }
  const mark = services.tenants.mark();
  // Secrets stored in clear by an older version are sealed now (decision 0035).
  const stored = await sealLegacySecrets(services, app.log);
  // Before the server listens, every active tenant's connector is loaded (external modules by dynamic
  // import), its options validated and an instance started. One tenant's broken connector is logged
  // with the reason and leaves that tenant degraded (503, listed by /health/ready), not the gateway down.
  const { tenants: active, invalid } = await services.tenants.listChecked({ stored, primeSince: mark });
  for (const { tenant, reason } of invalid) {
    app.log.error({ tenant, reason }, 'tenant configuration is invalid; its requests will answer 503 until it is fixed');
  }
  await services.connectors.start(active);
  app.decorate('cardline', services);
  // The delivery worker drains the outbox from now on (CARDLINE_DELIVERY_WORKER=0 leaves it to other processes).
  if (config.notify.worker) deliveries.start();
  checkpoints.start();
  app.addHook('onClose', close);
};

export default fp(servicesPlugin, { name: 'services' });

/** The HSM the configuration names, opened at boot; a PKCS#11 one that does not open fails the boot with what to fix (never its PIN). */
async function openHsm(config: Config, db: Db, masterKey: MasterKey): Promise<HsmProvider> {
  const settings = config.hsm;
  if (settings.kind === 'software') return new SoftwareHsmProvider({ db, masterKey });
  // Loaded only when asked for: the native addon is an optional dependency.
  const { Pkcs11HsmProvider } = await import('../crypto/hsm/pkcs11.js');
  try {
    return await Pkcs11HsmProvider.open(settings);
  } catch (err) {
    throw new Error(`PIN HSM: ${err instanceof HsmError ? err.message : String(err)}`);
  }
}

/** The circuit breaker of each started connector that has one, by the connector's name in the tenant's configuration. */
function breakerStates(instances: ConnectorInstances): { tenant: string; connector: string; state: 'closed' | 'half-open' | 'open' }[] {
  const out: { tenant: string; connector: string; state: 'closed' | 'half-open' | 'open' }[] = [];
  for (const { tenantId, name, connector } of instances.started()) {
    const state = connector.breakerState?.();
    if (state) out.push({ tenant: tenantId, connector: name, state });
  }
  return out;
}
