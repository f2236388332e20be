// Benchmark targets, started by bench/run.ts in a child process on loopback, random ports:
//   bare — Fastify with one POST route that parses the same JSON body and answers the success envelope;
//   full — the Cardline app (buildApp) on the store BENCH_STORE names: 'disk' (default: PGlite in a temporary
//          data directory, as `npm run demo` runs), 'memory' (PGlite in memory: not durable), or 'postgres'
//          (DATABASE_URL, a database of its own, dropped at exit). BENCH_TENANTS tenants on the mock core, each
//          with its own user and token; BENCH_RATE_LIMIT=1 gives them rate limits (counted, never reached).
//          Every step is on: strict JSON, security headers, the request log line (to /dev/null), durable audit.
// The store is seeded, the app closed, and the gateway started again on it: that start is timed (startupMs).
// Prints one JSON line {"benchPorts":{...},...} on stdout; writes the tokens to BENCH_TOKENS_FILE; exits on
// SIGTERM/SIGINT or when stdin closes. GET /__bench/stats on the bare port reads the process's counters.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import Fastify, { type FastifyInstance } from 'fastify';
import { Algorithm, hash } from '@node-rs/argon2';
import pg from 'pg';
import { pino } from 'pino';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { MasterKey } from '../src/crypto/master-key.js';
import { loggerOptions } from '../src/logging.js';
import { createTenant } from '../src/services/onboarding.js';
import { openDb, type Db } from '../src/store/db.js';

const LIMIT_URL = '/credit-line-management/business-entity-manager/upgradeLimit';
const LOG_LEVEL = process.env.BENCH_LOG_LEVEL || 'info';
const TENANTS = Number(process.env.BENCH_TENANTS || '1');
const RATE_LIMIT = process.env.BENCH_RATE_LIMIT === '1';
/** The embedded store on its own thread, as the gateway runs it (BENCH_STORE_THREAD=0: in process). */
const THREAD = process.env.BENCH_STORE_THREAD !== '0';

/** Tenant ids: `demo` alone, or `bench-00000`… */
const tenantIds = (n: number) => (n === 1 ? ['demo'] : Array.from({ length: n }, (_, i) => `bench-${String(i).padStart(5, '0')}`));

async function openStore(): Promise<{ open: () => Promise<Db>; cleanup: () => Promise<void>; label: string; shared?: boolean }> {
  const store = process.env.BENCH_STORE || 'disk';
  if (store === 'postgres') {
    if (!process.env.DATABASE_URL) throw new Error('BENCH_STORE=postgres needs DATABASE_URL');
    const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await admin.connect();
    const name = `cardline_bench_${randomBytes(6).toString('hex')}`;
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    const url = new URL(process.env.DATABASE_URL);
    url.pathname = `/${name}`;
    return {
      label: 'postgres',
      open: () => openDb({ databaseUrl: url.toString() }),
      cleanup: async () => {
        const c = new pg.Client({ connectionString: process.env.DATABASE_URL });
        await c.connect();
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await c.end();
      },
    };
  }
  if (store === 'memory') {
    // In memory there is no restart: the seeding app leaves the store open and the timed one starts on it.
    const db = await openDb({ dataDir: 'memory://', thread: THREAD });
    return { label: 'memory', open: async () => db, cleanup: () => db.close(), shared: true };
  }
  if (store !== 'disk') throw new Error(`BENCH_STORE must be disk, memory or postgres, not '${store}'`);
  const dir = mkdtempSync(join(tmpdir(), 'cardline-bench-'));
  return { label: 'disk', open: () => openDb({ dataDir: join(dir, 'pglite'), thread: THREAD }), cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
}

async function main(): Promise<void> {
  const tokensFile = process.env.BENCH_TOKENS_FILE;
  if (!tokensFile) throw new Error('BENCH_TOKENS_FILE is not set (bench/run.ts sets it)');
  const store = await openStore();
  const masterKey = MasterKey.generate();
  const logger = pino(loggerOptions(LOG_LEVEL), pino.destination({ dest: '/dev/null', sync: false }));
  const config = loadConfig({ LOG_LEVEL, HOST: '127.0.0.1' });

  // Seeding, through the services (the same validation and sealing as the management API).
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

  // The gateway started again on the seeded store, as after a deployment: timed to ready.
  const started = performance.now();
  const db = await store.open();
  const full = await buildApp({ config, db, masterKey, logger, ownsDb: !store.shared });
  await full.listen({ host: '127.0.0.1', port: 0 });
  const startupMs = performance.now() - started;

  const bare = Fastify({ logger: false });
  bare.post(LIMIT_URL, async (request) => {
    void request.body;
    return { result: true, exception: null, pagination: null };
  });
  // Bench-only: the process's counters (both targets share it; only one is loaded at a time) and the audit.
  bare.get('/__bench/stats', async () => {
    const r = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM audit_log');
    return { elu: performance.eventLoopUtilization(), cpu: process.cpuUsage(), rss: process.memoryUsage().rss, auditRows: r.rows[0]?.n ?? 0 };
  });
  await bare.listen({ host: '127.0.0.1', port: 0 });
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
      await store.cleanup();
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
    JSON.stringify({ benchPorts: { bare: port(bare), full: port(full) }, logLevel: LOG_LEVEL, store: store.label, tenants: ids.length, startupMs, seedMs }) + '\n',
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`bench server failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
