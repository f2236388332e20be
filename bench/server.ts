// Benchmark targets, started by bench/run.ts in child processes on loopback, random ports:
//   bare — Fastify with one POST route that parses the same JSON body and answers the success envelope;
//   full — the Cardline app (buildApp) on the store bench/run.ts prepared: BENCH_DATA_DIR (PGlite on disk, as
//          `npm run demo` runs it, on its own thread unless BENCH_STORE_THREAD=0), BENCH_DATABASE_URL
//          (PostgreSQL), or neither (PGlite in memory). BENCH_TENANTS tenants on the mock core, each with its
//          own user and token; BENCH_RATE_LIMIT=1 gives them rate limits (counted, never reached). Every step
//          is on: strict JSON, security headers, the request log line (to /dev/null), durable audit.
// BENCH_PHASE=seed seeds the store through the services, writes the tokens to BENCH_TOKENS_FILE and exits;
// BENCH_PHASE=serve starts the gateway on the seeded store, as after a deployment, in a fresh process (its
// start to ready is timed, and its RSS is the gateway's alone); the default does both in one process (memory).
// Serving prints one JSON line {"benchPorts":{...},...} on stdout and exits on SIGTERM/SIGINT or when stdin
// closes. GET /__bench/stats on the bare port reads the process's counters (and its audit writer's, from /metrics).
// With BENCH_TIMING=1, GET /__bench/timing on the bare port (bench/authorizations.ts) reads, then resets, what was timed since the last read:
// per request path, the gateway's own share of each answered request — from the HTTP server's `request` event to the
// response's `finish`, minus the time spent in the core caller's `invoke` for that request (matched by the request's
// X-Request-Id), with the p99 of its wait for its audit record's commit and of the rest — and the statements sent to PostgreSQL (every `pg` Client.query: BEGIN/COMMIT and the audit
// writer's batches included). BENCH_TRACE_DIR (with BENCH_TIMING): each read also writes a timeline there (audit
// batches, statements with their pool wait, connections, GC, event-loop gaps with the main thread's CPU and run-queue
// time); BENCH_AUDIT_LINGER_MS sets the audit writer's linger for the run (decision 0446). With BENCH_TIMING, /__bench/stats
// also gives the GC pauses so far by kind (the longest since the last read); BENCH_ALLOC_PROFILE=FILE writes a sampling
// heap profile of all that was allocated, collected objects too, between the first two timing reads (decision 0454).
import { AsyncLocalStorage } from 'node:async_hooks';
import { readFileSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { getHeapSpaceStatistics } from 'node:v8';
import { PerformanceObserver } from 'node:perf_hooks';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import pg from 'pg';
import { Algorithm, hash } from '@node-rs/argon2';
import { pino, type Logger } from 'pino';
import { buildApp } from '../src/app.js';
import { auditFigures } from './cluster-arm.js';
import { loadConfig, type Config } from '../src/config.js';
import { logDestination, loggerOptions } from '../src/logging.js';
import { createTenant } from '../src/services/tenancy/onboarding.js';
import { openDb, storeThreadMemory, type Db } from '../src/store/db.js';
import { startTracing } from '../src/telemetry/index.js';

const LIMIT_URL = '/credit-line-management/business-entity-manager/upgradeLimit';
const LOG_LEVEL = process.env.BENCH_LOG_LEVEL || 'info';
const TENANTS = Number(process.env.BENCH_TENANTS || '1');
const RATE_LIMIT = process.env.BENCH_RATE_LIMIT === '1';
/** The embedded store on its own thread, as the gateway runs it (BENCH_STORE_THREAD=0: in process). */
const THREAD = process.env.BENCH_STORE_THREAD !== '0';

/** Tenant ids: `demo` alone, or `bench-00000`… */
const tenantIds = (n: number) => (n === 1 ? ['demo'] : Array.from({ length: n }, (_, i) => `bench-${String(i).padStart(5, '0')}`));

/**
 * The store bench/run.ts prepared: BENCH_DATA_DIR (PGlite on disk) or BENCH_DATABASE_URL (a database of its
 * own on a PostgreSQL server); with neither, PGlite in memory, seeded and served by this one process.
 */
function storeOf(): { open: () => Promise<Db>; label: string; shared: boolean } {
  if (process.env.BENCH_DATABASE_URL) return { label: 'postgres', open: () => openDb({ databaseUrl: process.env.BENCH_DATABASE_URL }), shared: false };
  if (process.env.BENCH_DATA_DIR) return { label: 'disk', open: () => openDb({ dataDir: process.env.BENCH_DATA_DIR, thread: THREAD }), shared: false };
  let db: Promise<Db> | null = null;
  return { label: 'memory', open: () => (db ??= openDb({ dataDir: 'memory://', thread: THREAD })), shared: true };
}

/** Seeds the store through the services (the same validation and sealing as the management API). */
async function seed(store: ReturnType<typeof storeOf>, config: Config, masterKey: string, logger: Logger, tokensFile: string): Promise<number> {
  const seeding = await buildApp({ config, db: await store.open(), masterKey, logger, ownsDb: !store.shared });
  const services = seeding.cardline;
  const ids = tenantIds(TENANTS);
  const tenantConfig = {
    connector: { id: 'mock', options: { fixtures: 'demo' } },
    creditLimit: { maximum: '1000000.00', allowDecrease: false },
    ...(RATE_LIMIT ? { rateLimit: { perTenantPerMinute: 10_000_000, perUserPerMinute: 10_000_000 } } : {}),
  };
  const seedStarted = performance.now();
  for (const id of ids) await createTenant(services, { id, config: tenantConfig });
  // One user per tenant, all with one argon2 hash made once: the bench measures requests, not logins.
  await services.db.query(
    `INSERT INTO users (tenant_id, username, id, role, password_hash)
     SELECT t.tenant_id, 'integration', gen_random_uuid(), 'API Integration', $1 FROM tenants t`,
    [await hash(randomBytes(18).toString('base64url'), { algorithm: Algorithm.Argon2id })],
  );
  const tokens: { tenant: string; token: string }[] = [];
  for (const id of ids) {
    const tenant = (await services.tenants.get(id))!;
    const { token } = await services.tokens.issue(tenant, { id: 'bench', tenantId: id, username: 'integration', role: 'API Integration', generation: 0 });
    tokens.push({ tenant: id, token });
  }
  const seedMs = performance.now() - seedStarted;
  writeFileSync(tokensFile, JSON.stringify(tokens));
  await seeding.close();
  return seedMs;
}

/** Statements sent to PostgreSQL by this process (every `pg` client's query: pooled, transactions, LISTEN). */
let statements = 0;
/** Timing and statement counting only when asked (BENCH_TIMING=1): the other arms measure memory too. */
const TIMING = process.env.BENCH_TIMING === '1';
if (TIMING) {
  const clientQuery = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    statements++;
    return (clientQuery as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof pg.Client.prototype.query;
}

/** GC pauses so far with BENCH_TIMING (perf_hooks kinds: 1 scavenge, 4 mark-compact, 8 incremental marking, 16 weak callbacks): count, ms, longest. */
const gcPauses: Record<string, { n: number; ms: number; max: number }> = {};
if (TIMING) {
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const kind = String((e as unknown as { detail?: { kind?: number } }).detail?.kind ?? 0);
      const g = (gcPauses[kind] ??= { n: 0, ms: 0, max: 0 });
      g.n++;
      g.ms += e.duration;
      g.max = Math.max(g.max, e.duration);
    }
  }).observe({ entryTypes: ['gc'] });
}

/** The pauses so far; each read restarts the longest, so that a read after a run gives that run's. */
function readGc(): typeof gcPauses {
  const out = structuredClone(gcPauses);
  for (const g of Object.values(gcPauses)) g.max = 0;
  return out;
}

/** BENCH_TRACE_DIR: a timeline of audit batches, pool waits, new connections, GC and event-loop gaps, written per timing read. */
const TRACE_DIR = process.env.BENCH_TRACE_DIR;
const trace: unknown[][] = [];
const now = () => performance.timeOrigin + performance.now();
if (TIMING && TRACE_DIR) {
  const poolQuery = pg.Pool.prototype.query;
  const called = new WeakMap<object, number>();
  pg.Pool.prototype.query = function (this: pg.Pool, ...args: unknown[]) {
    const c = args[0];
    if (c && typeof c === 'object') called.set(c, now());
    return (poolQuery as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof pg.Pool.prototype.query;
  const clientQuery = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const c = args[0] as { name?: string; text?: string } | string;
    const t0 = now();
    const name = typeof c === 'object' && c ? (c.name ?? c.text?.slice(0, 40)) : String(c).slice(0, 40);
    const pid = (this as unknown as { processID: number }).processID;
    const wait = typeof c === 'object' && c && called.has(c) ? t0 - called.get(c)! : 0;
    const fin = () => trace.push(['q', t0, now() - t0, wait, pid, name]);
    const cb = args.at(-1);
    if (typeof cb === 'function') {
      args[args.length - 1] = (...r: unknown[]) => {
        fin();
        return (cb as (...x: unknown[]) => unknown)(...r);
      };
    }
    const out = (clientQuery as (...a: unknown[]) => unknown).apply(this, args);
    if (typeof cb !== 'function' && out && typeof (out as Promise<unknown>).then === 'function') (out as Promise<unknown>).then(fin, fin);
    return out;
  } as typeof pg.Client.prototype.query;
  const connect = pg.Client.prototype.connect;
  pg.Client.prototype.connect = function (this: pg.Client, ...args: unknown[]) {
    const t0 = now();
    const out = (connect as (...a: unknown[]) => unknown).apply(this, args);
    if (out && typeof (out as Promise<unknown>).then === 'function') (out as Promise<unknown>).then(() => trace.push(['connect', t0, now() - t0, (this as unknown as { processID: number }).processID]), () => undefined);
    return out;
  } as typeof pg.Client.prototype.connect;
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) trace.push(['gc', performance.timeOrigin + e.startTime, e.duration, ((e as unknown as { detail?: { kind?: number } }).detail)?.kind ?? 0]);
  }).observe({ entryTypes: ['gc'] });
  // The main thread's time on a CPU and waiting for one (ns, /proc schedstat): a gap is either work or descheduling.
  const sched = () => readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ').map(Number);
  let last = now();
  let lastSched = sched();
  setInterval(() => {
    const t = now();
    const s = sched();
    if (t - last > 4) trace.push(['gap', last, t - last, (s[0]! - lastSched[0]!) / 1e6, (s[1]! - lastSched[1]!) / 1e6]);
    last = t;
    lastSched = s;
  }, 2).unref();
}

/**
 * Times each request the bench tags with an X-Request-Id: its time in the gateway (the HTTP server's `request`
 * event to the response's `finish`) minus its time in the core caller (`services.core.invoke`, the mock core
 * in process, its deadline and breaker included). The tenant's decision endpoint is not subtracted: the bench
 * arms that read this configure none.
 */
function timeRequests(full: FastifyInstance): { read: () => { paths: Record<string, { n: number; p50: number; p99: number; coreP50: number; auditP99: number; ownP99: number }>; statements: number } } {
  // The wait for the request's audit record to commit (the store's round trip and flush, in a batch), per request.
  const audit = full.cardline.audit;
  const record = audit.record.bind(audit);
  const inAudit = new Map<string, number>();
  audit.record = (async (entry: Parameters<typeof record>[0]) => {
    const t0 = performance.now();
    try {
      return await record(entry);
    } finally {
      const d = performance.now() - t0;
      inAudit.set(entry.requestId, (inAudit.get(entry.requestId) ?? 0) + d);
      if (TRACE_DIR) trace.push(['audit', performance.timeOrigin + t0, d, entry.requestId]);
    }
  }) as typeof audit.record;
  if (TRACE_DIR) {
    const w = audit as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>;
    for (const m of ['append', 'gather']) {
      const f = w[m]!.bind(audit);
      w[m] = async (...a: unknown[]) => {
        const t0 = now();
        try {
          return await f(...a);
        } finally {
          trace.push([m, t0, now() - t0, Array.isArray(a[0]) ? a[0].length : 0]);
        }
      };
    }
  }
  const core = full.cardline.core;
  const invoke = core.invoke.bind(core);
  const inCore = new Map<string, number>();
  core.invoke = (async (...args: Parameters<typeof invoke>) => {
    const t0 = performance.now();
    try {
      return await invoke(...args);
    } finally {
      const id = args[3].requestId;
      inCore.set(id, (inCore.get(id) ?? 0) + performance.now() - t0);
    }
  }) as typeof core.invoke;
  let traced = 0;
  let samples = new Map<string, { gateway: number[]; core: number[]; audit: number[]; own: number[] }>();
  (full.server as Server).on('request', (req, res) => {
    const id = req.headers['x-request-id'];
    if (typeof id !== 'string') return;
    const t0 = performance.now();
    res.once('finish', () => {
      const total = performance.now() - t0;
      const spent = inCore.get(id) ?? 0;
      const committing = inAudit.get(id) ?? 0;
      inCore.delete(id);
      inAudit.delete(id);
      const path = (req.url ?? '').split('?')[0]!;
      let s = samples.get(path);
      if (!s) samples.set(path, (s = { gateway: [], core: [], audit: [], own: [] }));
      s.gateway.push(total - spent);
      s.core.push(spent);
      s.audit.push(committing);
      s.own.push(total - spent - committing);
    });
  });
  const pct = (v: number[], p: number) => v[Math.min(v.length - 1, Math.floor((p / 100) * v.length))] ?? NaN;
  return {
    read: () => {
      const out: Record<string, { n: number; p50: number; p99: number; coreP50: number; auditP99: number; ownP99: number }> = {};
      for (const [path, s] of samples) {
        for (const v of Object.values(s)) v.sort((a, b) => a - b);
        out[path] = { n: s.gateway.length, p50: pct(s.gateway, 50), p99: pct(s.gateway, 99), coreP50: pct(s.core, 50), auditP99: pct(s.audit, 99), ownP99: pct(s.own, 99) };
      }
      samples = new Map();
      inCore.clear();
      inAudit.clear();
      const read = { paths: out, statements };
      if (TRACE_DIR) writeFileSync(join(TRACE_DIR, `trace-${process.pid}-${traced++}.json`), JSON.stringify({ read, trace: trace.splice(0) }));
      return read;
    },
  };
}

async function main(): Promise<void> {
  const tokensFile = process.env.BENCH_TOKENS_FILE;
  const masterKey = process.env.BENCH_MASTER_KEY;
  if (!tokensFile || !masterKey) throw new Error('BENCH_TOKENS_FILE and BENCH_MASTER_KEY are not set (bench/run.ts sets them)');
  const phase = process.env.BENCH_PHASE || 'all';
  // The tracing arm (bench/tracing.ts) sets OTEL_*: before the store and the logger, as src/server.ts does.
  if (phase !== 'seed') await startTracing(process.env);
  // BENCH_ASYNC_LOCAL_STORAGE=1 (the tracing bench's `als` arm): tracing off, but an AsyncLocalStorage in use, as
  // tracing's context manager uses one; on Node 20 that turns on the promise hooks for every promise.
  if (process.env.BENCH_ASYNC_LOCAL_STORAGE === '1') new AsyncLocalStorage<number>().enterWith(1);
  const store = storeOf();
  const logger = pino(loggerOptions(LOG_LEVEL), logDestination('/dev/null'));
  // From 1 000 tenants on, the metrics drop their tenant label, as docs/operating.md (Metrics) advises for many tenants.
  const config = loadConfig({ LOG_LEVEL, HOST: '127.0.0.1', CARDLINE_METRICS_TENANT_LABEL: TENANTS >= 1_000 ? '0' : '1',
    // The memory bounds (decisions 0209, 0210), passed through when set, to measure their trade-off.
    ...Object.fromEntries(['CARDLINE_KEY_CACHE_MAX', 'CARDLINE_CONNECTOR_INSTANCES_MAX'].filter((k) => process.env[k]).map((k) => [k, process.env[k]])),
  });

  if (phase === 'seed' || phase === 'all') {
    const seedMs = await seed(store, config, masterKey, logger, tokensFile);
    if (phase === 'seed') {
      process.stdout.write(`${JSON.stringify({ seeded: true, seedMs })}\n`);
      process.exit(0);
    }
  }

  // The gateway started on the seeded store, as after a deployment (in a process of its own unless the store
  // is in memory): timed to ready.
  const started = performance.now();
  const db = await store.open();
  const full = await buildApp({ config, db, masterKey, logger, ownsDb: !store.shared });
  // BENCH_PORT_BASE (set by bench/run.ts when asked): bare on the base, full on base + 1; otherwise any free port.
  const base = Number(process.env.BENCH_PORT_BASE || 0);
  await full.listen({ host: '127.0.0.1', port: base ? base + 1 : 0 });
  const startupMs = performance.now() - started;

  const timing = TIMING ? timeRequests(full) : null;
  // BENCH_AUDIT_LINGER_MS: the audit writer's linger under load (decision 0228) set for this run, to measure it.
  if (process.env.BENCH_AUDIT_LINGER_MS) Object.assign(full.cardline.audit, { lingerMs: Number(process.env.BENCH_AUDIT_LINGER_MS) });

  const bare = Fastify({ logger: false });
  bare.post(LIMIT_URL, async (request) => {
    void request.body;
    return { result: true, exception: null, pagination: null };
  });
  // Bench-only: the process's counters (both targets share it; only one is loaded at a time) and the audit.
  // `?gc=1` (the process started with --expose-gc, as bench/memory.ts starts it): after a full collection, with
  // the V8 heap's spaces, so that what survives is told apart from garbage not yet collected.
  bare.get('/__bench/stats', async (request) => {
    const r = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM audit_log');
    const collect = (request.query as { gc?: string }).gc === '1' && typeof global.gc === 'function';
    if (collect) global.gc!();
    const m = process.memoryUsage();
    return {
      elu: performance.eventLoopUtilization(),
      cpu: process.cpuUsage(),
      rss: m.rss,
      heapUsed: m.heapUsed,
      external: m.external,
      arrayBuffers: m.arrayBuffers,
      auditRows: r.rows[0]?.n ?? 0,
      gc: readGc(),
      // The verified-token cache: requests answered from it, and signatures checked.
      tokenCache: { hits: full.cardline.tokens.cacheHits, misses: full.cardline.tokens.cacheMisses },
      audit: auditFigures(await full.cardline.metrics.text()),
      ...(collect
        ? {
            heapTotal: m.heapTotal,
            spaces: Object.fromEntries(getHeapSpaceStatistics().map((s) => [s.space_name, { used: s.space_used_size, committed: s.space_size }])),
            storeThread: await storeThreadMemory(db),
          }
        : {}),
    };
  });
  if (timing) bare.get('/__bench/timing', async () => timing.read());
  // BENCH_ALLOC_PROFILE=FILE: V8's sampling heap profile of everything allocated (collected objects too) from the
  // first timing read to the next, written to FILE: what the young generation's scavenges are paid for.
  const allocFile = process.env.BENCH_ALLOC_PROFILE;
  if (timing && allocFile) {
    const { Session } = await import('node:inspector/promises');
    const session = new Session();
    session.connect();
    await session.post('HeapProfiler.enable');
    let reads = 0;
    bare.addHook('onResponse', async (request) => {
      if (request.url !== '/__bench/timing') return;
      reads++;
      if (reads === 1) await session.post('HeapProfiler.startSampling', { samplingInterval: 16_384, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
      if (reads === 2) writeFileSync(allocFile, JSON.stringify((await session.post('HeapProfiler.stopSampling')).profile));
    });
  }
  await bare.listen({ host: '127.0.0.1', port: base });
  const port = (f: FastifyInstance) => {
    const a = (f.server as Server).address();
    if (!a || typeof a === 'string') throw new Error('no port');
    return a.port;
  };

  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    Promise.allSettled([bare.close(), full.close()]).then(async () => {
      if (store.shared) await db.close();
      process.exit(0);
    });
    setTimeout(() => process.exit(1), 10_000).unref();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  process.stdin.on('end', stop);
  process.stdin.on('error', stop);
  process.stdin.resume();

  process.stdout.write(
    JSON.stringify({ benchPorts: { bare: port(bare), full: port(full) }, logLevel: LOG_LEVEL, store: store.label, tenants: TENANTS, startupMs }) + '\n',
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`bench server failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
