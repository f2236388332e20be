// Benchmark targets, started by bench/run.ts in a child process on loopback, random ports:
//   bare — Fastify with one POST route that parses the same JSON body and answers the success envelope;
//   full — the Cardline app (buildApp) with the demo tenants seeded, on the store BENCH_STORE names:
//          'disk' (default: PGlite in a temporary data directory, as `npm run demo` runs), 'memory'
//          (PGlite in memory: not durable), or 'postgres' (DATABASE_URL, a server).
// Prints one JSON line {"benchPorts":{...}} on stdout; exits on SIGTERM/SIGINT or when stdin closes.
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import Fastify from 'fastify';
import pg from 'pg';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { MasterKey } from '../src/crypto/master-key.js';
import { seedDemo } from '../src/services/onboarding.js';
import { openDb } from '../src/store/db.js';

const LIMIT_URL = '/credit-line-management/business-entity-manager/upgradeLimit';
const LOG_LEVEL = 'warn';

async function main(): Promise<void> {
  const password = process.env.BENCH_PASSWORD;
  if (!password) throw new Error('BENCH_PASSWORD is not set (bench/run.ts sets it)');

  const store = process.env.BENCH_STORE || 'disk';
  let dataDir: string | undefined;
  let benchDb: string | undefined;
  let db;
  if (store === 'postgres') {
    if (!process.env.DATABASE_URL) throw new Error('BENCH_STORE=postgres needs DATABASE_URL');
    // A database of its own on that server, dropped at exit: the bench never touches existing data.
    const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await admin.connect();
    benchDb = `cardline_bench_${randomBytes(6).toString('hex')}`;
    await admin.query(`CREATE DATABASE ${benchDb}`);
    await admin.end();
    const url = new URL(process.env.DATABASE_URL);
    url.pathname = `/${benchDb}`;
    db = await openDb({ databaseUrl: url.toString() });
  } else if (store === 'memory') {
    db = await openDb({ dataDir: 'memory://' });
  } else if (store === 'disk') {
    dataDir = mkdtempSync(join(tmpdir(), 'cardline-bench-'));
    db = await openDb({ dataDir });
  } else {
    throw new Error(`BENCH_STORE must be disk, memory or postgres, not '${store}'`);
  }
  const config = loadConfig({ LOG_LEVEL, HOST: '127.0.0.1' });
  const full = await buildApp({ config, db, masterKey: MasterKey.generate(), ownsDb: true });
  await seedDemo(full.cardline, password);

  const bare = Fastify({ logger: false });
  bare.post(LIMIT_URL, async (request) => {
    void request.body;
    return { result: true, exception: null, pagination: null };
  });
  // Bench-only: the full app's audit row count, read from its store.
  bare.get('/__bench/audit-count', async () => {
    const r = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM audit_log');
    return { auditRows: r.rows[0]?.n ?? 0 };
  });

  await full.listen({ host: '127.0.0.1', port: 0 });
  await bare.listen({ host: '127.0.0.1', port: 0 });
  const port = (f: { server: Server }) => {
    const a = f.server.address();
    if (!a || typeof a === 'string') throw new Error('no port');
    return a.port;
  };

  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    Promise.allSettled([bare.close(), full.close()]).then(async () => {
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
      if (benchDb) {
        const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
        await admin.connect();
        await admin.query(`DROP DATABASE IF EXISTS ${benchDb} WITH (FORCE)`);
        await admin.end();
      }
      process.exit(0);
    });
    setTimeout(() => process.exit(1), 5_000).unref();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  process.stdin.on('end', stop);
  process.stdin.on('error', stop);
  process.stdin.resume();

  process.stdout.write(JSON.stringify({ benchPorts: { bare: port(bare), full: port(full) }, logLevel: LOG_LEVEL, store }) + '\n');
}

main().catch((err: unknown) => {
  process.stderr.write(`bench server failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
