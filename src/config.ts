// Process configuration from the environment, validated at boot with messages that name the variable.
import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { TENANT_ID_PATTERN } from '../schemas/tenant.js';

/** Gateway keys kept imported (0209, 0214): ~7 KB of native memory each; the LRU re-imports on demand. */
export const DEFAULT_KEY_CACHE_MAX = 1_000;

/** Connector instances kept started by default (decision 0210). */
export const DEFAULT_MAX_INSTANCES = 10_000;

export type HsmSettings =
  | { kind: 'software' }
  | { kind: 'pkcs11'; library: string; tokenLabel: string; pin: string };

/** CARDLINE_HSM: `software` (default, sealed under the master key) or `pkcs11` (CARDLINE_PKCS11_* variables). */
export function hsmSettingsFromEnv(env: NodeJS.ProcessEnv): HsmSettings {
  const kind = env.CARDLINE_HSM || 'software';
  if (kind === 'software') return { kind };
  if (kind !== 'pkcs11') throw new ConfigError('CARDLINE_HSM', `must be 'software' or 'pkcs11', not '${kind}'`);
  const missing = ['CARDLINE_PKCS11_LIBRARY', 'CARDLINE_PKCS11_TOKEN_LABEL', 'CARDLINE_PKCS11_PIN'].filter((v) => !env[v]);
  if (missing.length) throw new ConfigError('CARDLINE_HSM=pkcs11', `needs ${missing.join(', ')}`);
  return { kind, library: env.CARDLINE_PKCS11_LIBRARY!, tokenLabel: env.CARDLINE_PKCS11_TOKEN_LABEL!, pin: env.CARDLINE_PKCS11_PIN! };
}

export interface Config {
  hsm: HsmSettings;
  port: number;
  host: string;
  /** The management listener (operators' API), loopback by default. */
  adminHost: string;
  adminPort: number;
  /** The operations console's idle timeout (CARDLINE_CONSOLE_IDLE_MINUTES, default 15): a session unused this long is over. */
  consoleIdleMinutes: number;
  /** The demo's operator key; without it the demo creates a random one and prints it once. */
  demoOperatorKey: string | undefined;
  /** Tenants with a metrics label of their own (CARDLINE_METRICS_TENANTS, CARDLINE_METRICS_TENANT_LABEL). */
  metricsTenants: MetricsTenants;
  /** The embedded store on a worker thread of its own, off the event loop (CARDLINE_STORE_THREAD, default on). */
  storeThread: boolean;
  /** Gateway processes on the one port (CARDLINE_WORKERS, default 1; more only on PostgreSQL, decision 0206). */
  workers: number;
  logLevel: string;
  dataDir: string;
  databaseUrl: string | undefined;
  masterKey: string | undefined;
  demo: boolean;
  demoPassword: string | undefined;
  issuer: string;
  audience: string;
  problemBaseUrl: string;
  bodyLimit: number;
  requestTimeoutMs: number;
  connectorTimeoutMs: number;
  /** Lookup cache lifetime: null (until a change is told, decision 0034), milliseconds as a safety net, 0 none. */
  tenantCacheTtlMs: number | null;
  /** How often each tenant's audit trail gets a signed checkpoint while it grows; 0: none (decision 0202). */
  auditCheckpointMs: number;
  /** How long an audit chain stays its writer's after its last append, before another may continue it (decision 0286). */
  auditChainLeaseMs: number;
  /** Gateway keys kept imported at most (CARDLINE_KEY_CACHE_MAX, decisions 0209, 0214). */
  keyCacheMax: number;
  /** Connector instances kept started at most (CARDLINE_CONNECTOR_INSTANCES_MAX, decision 0210). */
  connectorInstancesMax: number;
  shutdownGraceMs: number;
  /** How long a start may take before the process gives up, naming the step it is at; 0: no limit (decision 0101). */
  startTimeoutMs: number;
  /** How long an Idempotency-Key and its stored response are kept (hours). */
  idempotencyTtlHours: number;
  /** Shared counters (rate limits, JWE replay cache) live in Redis when set; otherwise in-process / the store. */
  redisUrl: string | undefined;
  /** Prefix of every Redis key the gateway writes, so several deployments can share one Redis. */
  redisPrefix: string;
  /** Idle keep-alive connections are closed after this; keep it above the load balancer's idle timeout. */
  keepAliveTimeoutMs: number;
  /** Proxies whose X-Forwarded-For is believed (addresses, CIDRs), or false; the client is the first untrusted hop. */
  trustProxy: string[] | false;
  /** Notification channels (decision 0080). */
  notify: NotifyConfig;
  /** Tenants' real-time decision endpoints (decision 0338). */
  decisions: DecisionsConfig;
}

export interface DecisionsConfig {
  /** Calls to one tenant's decision endpoint in flight at once per process; past it, the stand-in (CARDLINE_DECISION_CONCURRENCY). */
  concurrency: number;
  /** How long after its deadline a late answer is still awaited, to reconcile (CARDLINE_DECISION_LATE_WINDOW_MS). */
  lateWindowMs: number;
}

export interface NotifyConfig {
  /** Whether this process runs the delivery worker (CARDLINE_DELIVERY_WORKER, default on). */
  worker: boolean;
  /** How often an idle worker looks for due events and deliveries (CARDLINE_DELIVERY_POLL_MS). */
  pollMs: number;
  /** An attempt succeeds within this: a webhook on a 2xx, a RabbitMQ publish on its confirm (CARDLINE_WEBHOOK_TIMEOUT_MS, default 15 s). */
  webhookTimeoutMs: number;
  /** Multiplies the retry schedule's delays (CARDLINE_DELIVERY_SCHEDULE_SCALE, default 1; tests shrink it). */
  scheduleScale: number;
  /** Hosts a production tenant's webhooks and brokers may target although they resolve to private addresses (CARDLINE_WEBHOOK_ALLOW_HOSTS). */
  allowHosts: string[];
  /** How long the previous secret keeps signing after a rotation, unless the rotation says (CARDLINE_WEBHOOK_SECRET_OVERLAP_HOURS). */
  secretOverlapHours: number;
  /** NATS server(s) of the `nats` channel type (NATS_URL); without it such channels cannot be created. */
  natsUrl: string | undefined;
  /** The JetStream stream the gateway publishes to and creates when missing (CARDLINE_NATS_STREAM). */
  natsStream: string;
  /** First token of every subject: `<prefix>.<tenantId>.<eventType>` (CARDLINE_NATS_SUBJECT_PREFIX). */
  natsSubjectPrefix: string;
}

/** CARDLINE_DELIVERY_SCHEDULE_SCALE: a positive decimal, at most 1. */
function scale(env: NodeJS.ProcessEnv): number {
  const raw = env.CARDLINE_DELIVERY_SCHEDULE_SCALE;
  if (raw === undefined || raw === '') return 1;
  const n = Number(raw);
  if (!/^\d+(\.\d+)?(e-?\d+)?$/i.test(raw) || !(n > 0) || n > 1) {
    throw new ConfigError('CARDLINE_DELIVERY_SCHEDULE_SCALE', `must be a number above 0 and at most 1, got '${raw}'`);
  }
  return n;
}

function notifyConfig(env: NodeJS.ProcessEnv): NotifyConfig {
  const natsUrl = env.NATS_URL || undefined;
  if (natsUrl && !natsUrl.split(',').every((u) => /^(nats|tls|wss?):\/\/[^\s]+$/.test(u.trim()))) {
    throw new ConfigError('NATS_URL', 'must be one or more comma-separated nats:// (or tls://) URLs');
  }
  const natsStream = env.CARDLINE_NATS_STREAM || 'CARDLINE';
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(natsStream)) throw new ConfigError('CARDLINE_NATS_STREAM', 'must be 1 to 64 letters, digits, _ or -');
  const natsSubjectPrefix = env.CARDLINE_NATS_SUBJECT_PREFIX || 'cardline';
  if (!/^[A-Za-z0-9_-]{1,64}(\.[A-Za-z0-9_-]{1,64}){0,3}$/.test(natsSubjectPrefix)) {
    throw new ConfigError('CARDLINE_NATS_SUBJECT_PREFIX', 'must be 1 to 4 dot-separated tokens of letters, digits, _ or -');
  }
  const allowHosts = (env.CARDLINE_WEBHOOK_ALLOW_HOSTS ?? '')
    .split(',')
    .map((h) => h.trim().toLowerCase().replace(/^\[(.*)\]$/, '$1'))
    .filter(Boolean);
  return {
    worker: env.CARDLINE_DELIVERY_WORKER === undefined || env.CARDLINE_DELIVERY_WORKER === '' ? true : bool(env, 'CARDLINE_DELIVERY_WORKER'),
    pollMs: int(env, 'CARDLINE_DELIVERY_POLL_MS', 200, 5, 60_000),
    webhookTimeoutMs: int(env, 'CARDLINE_WEBHOOK_TIMEOUT_MS', 15_000, 100, 60_000),
    scheduleScale: scale(env),
    allowHosts,
    secretOverlapHours: int(env, 'CARDLINE_WEBHOOK_SECRET_OVERLAP_HOURS', 24, 0, 720),
    natsUrl,
    natsStream,
    natsSubjectPrefix,
  };
}

export class ConfigError extends Error {
  constructor(variable: string, problem: string) {
    super(`Invalid configuration: ${variable} ${problem}`);
    this.name = 'ConfigError';
  }
}

function int(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be a whole number, got '${raw}'`);
  const n = Number(raw);
  if (n < min || n > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${n}`);
  return n;
}

/** No `tenant` label; every tenant's; the first `count` tenants a process serves; the ones named. */
export type MetricsTenants = { kind: 'none' } | { kind: 'all' } | { kind: 'first'; count: number } | { kind: 'named'; ids: string[] };

/** Tenants labelled by default: enough to watch the largest banks, few enough that series stay bounded. */
export const METRICS_TENANTS_DEFAULT = 20;

function metricsTenants(env: NodeJS.ProcessEnv): MetricsTenants {
  const label = env.CARDLINE_METRICS_TENANT_LABEL;
  if (label !== undefined && label !== '' && !bool(env, 'CARDLINE_METRICS_TENANT_LABEL')) return { kind: 'none' };
  const raw = (env.CARDLINE_METRICS_TENANTS ?? '').trim();
  if (raw === '') return { kind: 'first', count: METRICS_TENANTS_DEFAULT };
  if (raw === '*') return { kind: 'all' };
  if (/^\d+$/.test(raw)) return { kind: 'first', count: int(env, 'CARDLINE_METRICS_TENANTS', METRICS_TENANTS_DEFAULT, 0, 100_000) };
  const ids = raw.split(',').map((id) => id.trim());
  const wrong = ids.find((id) => !new RegExp(TENANT_ID_PATTERN).test(id));
  if (wrong !== undefined) {
    throw new ConfigError('CARDLINE_METRICS_TENANTS', `must be a number of tenants, * for every tenant, or tenant ids separated by commas; '${wrong}' is not a tenant id`);
  }
  return { kind: 'named', ids };
}

function bool(env: NodeJS.ProcessEnv, name: string): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '' || raw === '0' || raw === 'false') return false;
  if (raw === '1' || raw === 'true') return true;
  throw new ConfigError(name, `must be 1/true or 0/false, got '${raw}'`);
}

/** CARDLINE_DEMO_OPERATOR_KEY: a key the demo's operator chooses; long enough not to be guessed. */
function demoOperatorKey(env: NodeJS.ProcessEnv): string | undefined {
  const key = env.CARDLINE_DEMO_OPERATOR_KEY || undefined;
  if (key !== undefined && (key.length < 24 || key.length > 512 || /\s/.test(key))) {
    throw new ConfigError('CARDLINE_DEMO_OPERATOR_KEY', 'must be 24 to 512 characters without spaces');
  }
  return key;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);
/** 127.0.0.0/8, ::1 and localhost: addresses only this machine can reach. */
export const isLoopback = (host: string): boolean => LOOPBACK.has(host) || (isIP(host) === 4 && host.startsWith('127.'));

/** TRUST_PROXY: a comma-separated list of IPv4/IPv6 addresses and CIDRs; unset or empty trusts no proxy. */
function trustProxy(env: NodeJS.ProcessEnv): string[] | false {
  const raw = env.TRUST_PROXY?.trim();
  if (!raw) return false;
  const entries = raw.split(',').map((e) => e.trim());
  for (const entry of entries) {
    const [address = '', prefix, ...rest] = entry.split('/');
    const family = isIP(address);
    const bits = family === 4 ? 32 : 128;
    const prefixOk = prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= bits);
    if (!family || !prefixOk || rest.length) {
      throw new ConfigError(
        'TRUST_PROXY',
        `must be a comma-separated list of proxy addresses or CIDRs (e.g. 10.0.0.0/8,192.168.1.10), got '${entry}'`,
      );
    }
  }
  return entries;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> = {}): Config {
  const logLevel = env.LOG_LEVEL || 'info';
  if (!LOG_LEVELS.includes(logLevel)) throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}`);
  const databaseUrl = env.DATABASE_URL || undefined;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL', "must be a postgres:// or postgresql:// URL");
  }
  const masterKey = env.CARDLINE_MASTER_KEY || undefined;
  if (masterKey !== undefined && !/^[A-Za-z0-9_-]{43}$/.test(masterKey)) {
    throw new ConfigError('CARDLINE_MASTER_KEY', 'must be 32 random bytes, base64url-encoded (43 characters); generate one with `npx cardline master-key`');
  }
  const redisUrl = env.REDIS_URL || undefined;
  if (redisUrl && !/^rediss?:\/\//.test(redisUrl)) throw new ConfigError('REDIS_URL', 'must be a redis:// or rediss:// URL');
  const redisPrefix = env.CARDLINE_REDIS_PREFIX ?? 'cardline:';
  if (!/^[\w:.-]{1,64}$/.test(redisPrefix)) {
    throw new ConfigError('CARDLINE_REDIS_PREFIX', 'must be 1 to 64 letters, digits or _ : . -');
  }
  const workers = int(env, 'CARDLINE_WORKERS', 1, 1, 64);
  if (workers > 1 && !databaseUrl) {
    throw new ConfigError(
      'CARDLINE_WORKERS',
      `is ${workers}, but several gateway processes need PostgreSQL (DATABASE_URL): the embedded store (PGlite) is one process's own. ` +
        'Set DATABASE_URL, or unset CARDLINE_WORKERS to run one process.',
    );
  }
  const problemBaseUrl = (env.CARDLINE_PROBLEM_BASE_URL || 'https://www.jhipster.tech/problem').replace(/\/$/, '');
  return {
    hsm: hsmSettingsFromEnv(env),
    port: int(env, 'PORT', 8080, 0, 65535),
    // Loopback by default: the demo (known password, published PIN keys) must not be reachable by accident.
    host: env.HOST || '127.0.0.1',
    adminHost: env.CARDLINE_ADMIN_HOST || '127.0.0.1',
    adminPort: int(env, 'CARDLINE_ADMIN_PORT', 8081, 0, 65535),
    consoleIdleMinutes: int(env, 'CARDLINE_CONSOLE_IDLE_MINUTES', 15, 1, 1440),
    demoOperatorKey: demoOperatorKey(env),
    storeThread: env.CARDLINE_STORE_THREAD === undefined || env.CARDLINE_STORE_THREAD === '' ? true : bool(env, 'CARDLINE_STORE_THREAD'),
    workers,
    metricsTenants: metricsTenants(env),
    logLevel,
    dataDir: resolve(env.CARDLINE_DATA_DIR || './data'),
    databaseUrl,
    masterKey,
    demo: bool(env, 'CARDLINE_DEMO'),
    demoPassword: env.CARDLINE_DEMO_PASSWORD || undefined,
    issuer: env.CARDLINE_ISSUER || 'cardline',
    audience: env.CARDLINE_AUDIENCE || 'cardline-api',
    problemBaseUrl,
    bodyLimit: int(env, 'CARDLINE_BODY_LIMIT', 64 * 1024, 1024, 10 * 1024 * 1024),
    requestTimeoutMs: int(env, 'CARDLINE_REQUEST_TIMEOUT_MS', 30_000, 100, 600_000),
    connectorTimeoutMs: int(env, 'CARDLINE_CONNECTOR_TIMEOUT_MS', 10_000, 10, 600_000),
    tenantCacheTtlMs: env.CARDLINE_TENANT_CACHE_TTL_MS === undefined || env.CARDLINE_TENANT_CACHE_TTL_MS === '' ? null : int(env, 'CARDLINE_TENANT_CACHE_TTL_MS', 0, 0, 3_600_000),
    auditCheckpointMs: int(env, 'CARDLINE_AUDIT_CHECKPOINT_MS', 5_000, 0, 3_600_000),
    auditChainLeaseMs: int(env, 'CARDLINE_AUDIT_CHAIN_LEASE_MS', 60_000, 1_000, 86_400_000),
    keyCacheMax: int(env, 'CARDLINE_KEY_CACHE_MAX', DEFAULT_KEY_CACHE_MAX, 1, 1_000_000),
    connectorInstancesMax: int(env, 'CARDLINE_CONNECTOR_INSTANCES_MAX', DEFAULT_MAX_INSTANCES, 1, 1_000_000),
    shutdownGraceMs: int(env, 'CARDLINE_SHUTDOWN_GRACE_MS', 10_000, 0, 600_000),
    startTimeoutMs: int(env, 'CARDLINE_START_TIMEOUT_MS', 600_000, 0, 3_600_000),
    idempotencyTtlHours: int(env, 'CARDLINE_IDEMPOTENCY_TTL_HOURS', 24, 1, 720),
    redisUrl,
    redisPrefix,
    keepAliveTimeoutMs: int(env, 'CARDLINE_KEEP_ALIVE_TIMEOUT_MS', 72_000, 1_000, 600_000),
    trustProxy: trustProxy(env),
    notify: notifyConfig(env),
    decisions: {
      concurrency: int(env, 'CARDLINE_DECISION_CONCURRENCY', 64, 1, 10_000),
      lateWindowMs: int(env, 'CARDLINE_DECISION_LATE_WINDOW_MS', 10_000, 0, 120_000),
    },
    ...overrides,
  };
}
