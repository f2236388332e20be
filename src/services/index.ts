// The composition root: every service of the gateway built in order, bottom up, each from those built before
// it, and closed in the reverse order. Framework-free: the Fastify plugin (src/plugins/services.ts) decorates
// the app with what this builds, and the CLI calls it directly.
import type { FastifyBaseLogger } from 'fastify';
import type { ConnectorDefinition } from '../../connectors/contract.js';
import { builtInConnectors } from '../../connectors/index.js';
import { AuditLog } from '../audit/log.js';
import { AuditWriter } from '../audit/writer.js';
import { CheckpointPublisher } from '../audit/checkpoint.js';
import type { Config } from '../config.js';
import { ClientKeyStore } from './identity/client-keys.js';
import { connectorSecrets } from '../crypto/connector-secrets.js';
import { KeyRing, checkMasterKey } from './identity/key-ring.js';
import { MasterKey } from '../crypto/master-key.js';
import { onboardingKey } from '../crypto/onboarding-key.js';
import type { TenantKey } from '../crypto/keys.js';
import { HsmError, type HsmProvider } from '../crypto/hsm/index.js';
import { SoftwareHsmProvider } from '../crypto/hsm/software.js';
import { ConnectorInstances, ConnectorRegistry, CoreCaller } from './connectors/index.js';
import type { Redis } from 'ioredis';
import { closeRedis, openRedis } from './infrastructure/redis.js';
import { createReplayCache, type ReplayCache } from './infrastructure/replay.js';
import { IdempotencyStore } from './infrastructure/idempotency.js';
import { PinService } from './identity/pins.js';
import { TenantService } from './tenancy/tenants.js';
import { ApprovalService } from './tenancy/approvals.js';
import { TokenService } from './identity/tokens.js';
import { UserService, type PasswordHashing } from './identity/users.js';
import { Reports } from '../reports/reports.js';
import { storeThreadMemory, type Db } from '../store/db.js';
import { ChangeFeed } from './infrastructure/changes.js';
import { ConfigSecrets } from '../crypto/config-secrets.js';
import { OperatorKeys } from './identity/operator-keys.js';
import { OperatorKeyThrottle } from './identity/operator-key-throttle.js';
import { Metrics } from './infrastructure/metrics.js';
import { sealLegacySecrets } from './tenancy/tenant-admin.js';
import { migrate } from '../store/migrate.js';
import { ChannelService } from '../notify/channels.js';
import { DeliveryService } from '../notify/deliveries.js';
import { ShadowService } from './connectors/shadow.js';
import { ChannelSenders } from '../notify/channel-types/registry.js';
import { AuthorizationStore } from './transactions/authorizations.js';
import { DecisionService } from './transactions/decisions.js';
import { AuthRuleStore } from './transactions/auth-rules.js';
import { SpendControls } from './transactions/spend-controls.js';
import { AuthorizationLedger } from './transactions/ledger.js';
import { tracing } from '../telemetry/index.js';

export interface Services {
  config: Config;
  db: Db;
  keys: KeyRing;
  /** What a new tenant's first Admin password is encrypted to before the tenant has keys of its own. */
  onboardingKey: TenantKey;
  /** Tenants' registered client keys, for encrypted response fields. */
  clientKeys: ClientKeyStore;
  tenants: TenantService;
  users: UserService;
  tokens: TokenService;
  audit: AuditWriter;
  /** Signed checkpoints of the tenants' trails, published as they grow (decision 0202). */
  checkpoints: CheckpointPublisher;
  auditLog: AuditLog;
  reports: Reports;
  /** The tenants' HSM (software or PKCS#11), one `Hsm` per tenant; null in a process that sets no PIN. */
  hsm: HsmProvider | null;
  pins: PinService;
  connectorRegistry: ConnectorRegistry;
  connectors: ConnectorInstances;
  core: CoreCaller;
  replay: ReplayCache;
  /** The shared-counter connection when REDIS_URL is set (rate limits, replay cache), else null. */
  redis: Redis | null;
  /** Configuration changes told to every process; caches refresh on them (decision 0034). */
  changes: ChangeFeed;
  /** Seals and opens the secrets of tenants' connector options (decision 0035). */
  secrets: ConfigSecrets;
  operatorKeys: OperatorKeys;
  /** Failed operator-key attempts per address and overall: past the limits, 429 (console sign-in and API). */
  operatorKeyThrottle: OperatorKeyThrottle;
  metrics: Metrics;
  channels: ChannelService;
  /** Card authorizations as the pipeline decided them, and the amounts that followed. */
  authorizations: AuthorizationStore;
  /** Tenants' real-time decision endpoints: signed calls, deadlines, stand-ins, late answers (decision 0338). */
  decisions: DecisionService;
  /** Spend-control rules and their versions (decision 0332). */
  authRules: AuthRuleStore;
  /** The spend-control step: the rules evaluated, velocity counters kept. */
  spendControls: SpendControls;
  /** What follows an authorization: reservations of its amounts while the core changes them, and its disputes. */
  ledger: AuthorizationLedger;
  deliveries: DeliveryService;
  /** Shadow cores: comparisons, divergences and their summary (decision 0112). */
  shadow: ShadowService;
  /** Idempotency-Key state, for the writes of both listeners (decisions 0016, 0175). */
  idempotency: IdempotencyStore;
  /** Four eyes: the requests tenants' policies hold until a second person approves them (decision 0320). */
  approvals: ApprovalService;
}

/** An in-flight claim older than this is taken over; never shorter than twice a connector call's deadline. */
const MIN_LEASE_SECONDS = 60;

export interface ServicesOptions {
  config: Config;
  db: Db;
  masterKey: string;
  log: FastifyBaseLogger;
  /** The connector definitions; the built-in ones by default. */
  connectors?: ConnectorDefinition[];
  /** Close the store with the services (false when the caller owns it). */
  ownsDb?: boolean;
  /** The PIN HSM: by default the configured one, opened here; null where no PIN is set (the CLI, 0198). */
  hsm?: HsmProvider | null;
  /** The argon2id cost of new password hashes: the library's defaults unless the test suite asks for less (decision 0378). */
  passwordHashing?: PasswordHashing;
}

/** What createServices built, and its lifecycle. */
export interface CreatedServices {
  services: Services;
  /** Start the gateway's background work (sealing clear secrets, connectors, deliveries, checkpoints); not the CLI's. */
  start(): Promise<void>;
  /** Stops what start() started, then closes every service in the reverse order of its construction. */
  close(): Promise<void>;
}

export async function createServices(opts: ServicesOptions): Promise<CreatedServices> {
  const { config, db, log } = opts;
  // Each resource's close, pushed as it is opened: close() runs them last first.
  const closers: (() => unknown)[] = [];
  const close = async (): Promise<void> => {
    for (let closer = closers.pop(); closer; closer = closers.pop()) await closer();
  };
  try {
    await migrate(db);
    const masterKey = new MasterKey(opts.masterKey);
    // Before anything is served or sealed: a wrong master key fails the boot with a message, not 500s later.
    await checkMasterKey(db, masterKey);
    const redis = config.redisUrl ? await openRedis(config, log) : null;
    if (redis) closers.push(() => closeRedis(redis));
    const changes = new ChangeFeed(db, log);
    closers.push(() => changes.close());
    // The gauges read services built below when Prometheus scrapes, never before this function returns.
    const metrics: Metrics = new Metrics(
      { tenants: config.metricsTenants, exemplars: tracing() !== null },
      {
        outboxDepth: async () => (await db.query<{ n: number }>("SELECT count(*)::int AS n FROM outbox WHERE status = 'pending'")).rows[0]?.n ?? 0,
        deliveryDepth: () => deliveries.depth(),
        breakers: () => breakerStates(connectors),
        storeMemory: async () => (await storeThreadMemory(db)) ?? null,
      },
    );

    // Identity and tenancy: keys, secrets, users, tenants and their caches.
    const keys = new KeyRing(db, masterKey, config.tenantCacheTtlMs, changes, config.keyCacheMax);
    const clientKeys = new ClientKeyStore(db, config.tenantCacheTtlMs, changes);
    const onboarding = onboardingKey(masterKey);
    const secrets = new ConfigSecrets(masterKey);
    const users = new UserService(db, changes, metrics, opts.passwordHashing);
    const tenants = new TenantService(db, config.tenantCacheTtlMs, secrets);
    const tokens = new TokenService(keys, config.issuer, config.audience, users);
    const operatorKeys = new OperatorKeys(db, changes);
    const replay = createReplayCache(db, redis, config.redisPrefix);
    closers.push(() => replay.stop());
    const hsm = opts.hsm !== undefined ? opts.hsm : await openHsm(config, db, masterKey);
    if (opts.hsm === undefined) {
      closers.push(() => hsm?.close());
      log.info({ hsm: hsm!.kind }, 'PIN HSM ready');
    }
    const pins = new PinService(hsm);

    // Cores: the registry, each tenant's instances, the shadow comparisons and the caller that feeds them.
    const connectorRegistry = new ConnectorRegistry(opts.connectors ?? builtInConnectors, log);
    const connectors = new ConnectorInstances(connectorRegistry, log, {
      startTimeoutMs: config.connectorTimeoutMs,
      secretsFor: (tenantId) => connectorSecrets(masterKey, tenantId),
      maxInstances: config.connectorInstancesMax,
    });
    closers.push(() => connectors.close());
    const shadow = new ShadowService(db, connectors, log, metrics);
    closers.push(() => shadow.close());
    const core = new CoreCaller(connectors, { timeoutMs: config.connectorTimeoutMs, observer: metrics, shadow });

    // Notifications: the channels (their types recorded in the store) and the senders the delivery worker uses.
    const channels = new ChannelService(db, masterKey, config.notify);
    await channels.registerTypes();
    const senders = new ChannelSenders({ config: config.notify });
    closers.push(() => senders.close());
    const deliveries: DeliveryService = new DeliveryService(db, { config: config.notify, channels, tenants, senders, observer: metrics, log });

    // The trail: checkpoints signed as it grows, the writer (which wakes the delivery worker), its readers.
    const checkpoints = new CheckpointPublisher(
      db,
      keys,
      config.auditCheckpointMs,
      (tenant, err) => log.warn({ tenant, reason: err instanceof Error ? err.message : String(err) }, 'audit checkpoint not published'),
      metrics,
    );
    const audit = new AuditWriter(db, metrics, () => deliveries.wake(), (written) => checkpoints.wrote(written), undefined, config.auditChainLeaseMs);
    closers.push(() => audit.close());
    const operatorKeyThrottle = new OperatorKeyThrottle(audit, log, undefined, redis ? { client: redis, prefix: config.redisPrefix } : null);
    // Answers holding a secret are sealed, and bodies holding one fingerprinted, under a key of their own.
    const idempotency = new IdempotencyStore(db, {
      ttlHours: config.idempotencyTtlHours,
      leaseSeconds: Math.max(MIN_LEASE_SECONDS, Math.ceil((2 * config.connectorTimeoutMs) / 1000)),
      key: masterKey.derive('idempotency:v1'),
    });
    closers.push(() => idempotency.stop());
    const approvals = new ApprovalService(db, masterKey.derive('approvals:v1'), audit);
    closers.push(() => approvals.stop());
    const decisions = new DecisionService({ config: config.decisions, allowHosts: config.notify.allowHosts, audit, log, observer: metrics });
    closers.push(() => decisions.close());

    const authRules = new AuthRuleStore(db, changes, config.tenantCacheTtlMs);
    const spendControls = new SpendControls(db, authRules);
    closers.push(() => spendControls.close());
    const services: Services = {
      config,
      db,
      keys,
      onboardingKey: onboarding,
      clientKeys,
      tenants,
      users,
      tokens,
      audit,
      checkpoints,
      auditLog: new AuditLog(db),
      reports: new Reports(db),
      authorizations: new AuthorizationStore(db),
      decisions,
      authRules,
      spendControls,
      ledger: new AuthorizationLedger(db),
      hsm,
      pins,
      connectorRegistry,
      connectors,
      core,
      replay,
      redis,
      changes,
      secrets,
      operatorKeys,
      operatorKeyThrottle,
      metrics,
      channels,
      deliveries,
      shadow,
      idempotency,
      approvals,
    };
    // Caches refresh on change, whichever process made it.
    changes.subscribe((change) => {
      switch (change.kind) {
        case 'tenant':
          // A tenant created elsewhere may have been looked up here before it existed: nothing of it is kept.
          tenants.invalidate(change.tenantId);
          keys.invalidate(change.tenantId);
          return clientKeys.invalidate(change.tenantId);
        case 'keys':
          return keys.invalidate(change.tenantId);
        case 'client-key':
          return clientKeys.invalidate(change.tenantId);
        case 'user':
          return users.forget(change.tenantId, change.username);
        case 'operator-keys':
          return operatorKeys.clear();
        case 'all':
          tenants.clear();
          keys.clear();
          clientKeys.clear();
          users.clear();
          operatorKeys.clear();
      }
    });
    await changes.start();
    // The store is handed over once the services are built (a failed build leaves it to the caller), and closes last.
    if (opts.ownsDb !== false) closers.unshift(() => db.close());

    const start = async (): Promise<void> => {
      const mark = tenants.mark();
      // Secrets stored in clear by an older version are sealed now (decision 0035).
      const stored = await sealLegacySecrets(services, log);
      // Every active tenant's connector starts before listening; a broken one leaves only its tenant at 503.
      const { tenants: active, invalid } = await tenants.listChecked({ stored, primeSince: mark });
      for (const { tenant, reason } of invalid) {
        log.error({ tenant, reason }, 'tenant configuration is invalid; its requests will answer 503 until it is fixed');
      }
      await connectors.start(active);
      // The delivery worker drains the outbox from now on (CARDLINE_DELIVERY_WORKER=0 leaves it to other processes).
      if (config.notify.worker) {
        deliveries.start();
        closers.push(() => deliveries.stop());
      }
      checkpoints.start();
      closers.push(() => checkpoints.stop());
      // Expired approvals are marked (and approval.expired sent) by whichever process sweeps first.
      approvals.start();
    };
    return { services, start, close };
  } catch (err) {
    // What was opened before the failure is closed: a boot that fails leaves nothing running.
    await close();
    throw err;
  }
}

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
