// `npm run bench`: the full Cardline pipeline against a bare Fastify floor, alternating rounds, loopback only,
// for each target of the performance issue, side by side in one run, and one summary table at the end.
//   Variants (default all): one tenant; 1 000 and 10 000 tenants (requests spread round-robin, a token each);
//   one tenant with an Idempotency-Key on every write and rate limits. BENCH_TENANTS=N, BENCH_IDEMPOTENCY=1
//   and BENCH_RATE_LIMIT=1 run that one variant instead; BENCH_TENANTS=1,10000 those tenant counts, in one run.
//   BENCH_STORE (disk | memory | postgres, with DATABASE_URL), BENCH_SECONDS (10) per run, BENCH_CONNECTIONS
//   (32), BENCH_ROUNDS (2), BENCH_WARMUP_SECONDS (2), BENCH_AUDIT_ROWS (1 000 000; 0 skips the audit-query
//   target), BENCH_PROFILE=1 (the child runs with --cpu-prof; profiles land in bench/profiles/), BENCH_DIST=1 (the
//   gateway served from dist/, as `npm start` runs it: bench/dist.ts).
//   Peers (issue 21): with DATABASE_URL set (and BENCH_PEERS not 0), the one-tenant variant's rounds also load the two
//   peers of bench/peers/ (Fastify + @fastify/jwt + TypeBox, Express 5 + jsonwebtoken + ajv, one `pg` INSERT a
//   request each), alternated with Cardline, and the summary gives Cardline's throughput and CPU per request (Node +
//   its PostgreSQL backends) as ratios to each. BENCH_PORT_BASE=P: bare on P, full on P+1, the peers on P+2 and P+3
//   (otherwise any free ports), so that two benches can run side by side.
//   Several processes (issue 21, decision 0217): on PostgreSQL, the one-tenant variant's rounds also load the gateway
//   started as an operator runs it with CARDLINE_WORKERS=BENCH_WORKERS (default 2; 0 or 1 skips it) on the same
//   seeded database (bench/cluster-arm.ts), alternated with the one-process arm; its CPU per request is the
//   primary's and every worker's plus their PostgreSQL backends', its chain-conflict retries are read from the
//   aggregated /metrics, and the summary gives its throughput and CPU per request as ratios to one process's.
//   BENCH_TASKSET=1 pins the one-process arm to core 0 and worker i to core i-1. Its ports: P+4 and P+5 (management).
//   BENCH_SHADOW=1 runs bench/shadow.ts instead: the primary's throughput and p99 with a hanging or failing shadow core.
//   BENCH_PINNED=1 runs bench/pinned.ts instead: Cardline and both peers with the load generator pinned to one core
//   and the servers and a PostgreSQL of the bench's own to the other, alternated, as ratios to each peer.
//   BENCH_DECISIONS=1 runs bench/decisions.ts instead: one tenant's authorizations with another's decision endpoint hanging.
//   BENCH_AUTHORIZATIONS=1 runs bench/authorizations.ts instead: authorizations with ten active rules against limit
//   upgrades, alternated on one gateway (BENCH_BASELINE=DIR adds another checkout's gateway, alternated with it).
// Fails (exit 1) when the full pipeline answers anything but 2xx or a child cannot start.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { EventLoopUtilization } from 'node:perf_hooks';
import autocannon from 'autocannon';
import type pg from 'pg';
import { compiled } from './dist.js';
import { temporaryDatabase } from './postgres.js';
import { contextSwitches, freePort, pin, startClusterArm, type AuditFigures, type ClusterArm } from './cluster-arm.js';
import { PEERS, backendCpu, cpuBetween, peerCredentials, peerStats, startPeer, statsClient, type StartedPeer } from './peer-harness.js';
import { MasterKey } from '../src/crypto/master-key.js';
import { envInt, loadFigures, type LoadFigures } from './env.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const LIMIT_URL = '/credit-line-management/business-entity-manager/upgradeLimit';
const BODY = JSON.stringify({ entityId: 'ENT-1001', amount: '60000.00' });

const SECONDS = envInt('BENCH_SECONDS', 10, 1, 300);
const CONNECTIONS = envInt('BENCH_CONNECTIONS', 32, 1, 1024);
const ROUNDS = envInt('BENCH_ROUNDS', 2, 1, 20);
const WARMUP = envInt('BENCH_WARMUP_SECONDS', 2, 0, 60);
const AUDIT_ROWS = envInt('BENCH_AUDIT_ROWS', 1_000_000, 0, 10_000_000);
const PROFILE = process.env.BENCH_PROFILE === '1';
const STORE = process.env.BENCH_STORE || 'disk';
const PORT_BASE = envInt('BENCH_PORT_BASE', 0, 0, 65_000);
const WITH_PEERS = process.env.BENCH_PEERS !== '0' && Boolean(process.env.DATABASE_URL);
/**
 * Gateway processes of the CARDLINE_WORKERS arm (PostgreSQL, one-tenant variant); 0: no such arm; 1: src/server.ts
 * as one process (no primary), to compare the gateway as operators start it with bench/server.ts's.
 */
const WORKERS = envInt('BENCH_WORKERS', 2, 0, 16);
const TASKSET = process.env.BENCH_TASKSET === '1';
/** The application_name of each Cardline arm's connections: both arms share the seeded database. */
const ONE_APP = 'cardline_bench_one';
const CLUSTER_APP = 'cardline_bench_workers';
/** A client to DATABASE_URL's server, for the PostgreSQL backends' CPU (set in main when there is a server). */
let pgStats: pg.Client | null = null;

interface Variant {
  name: string;
  tenants: number;
  idempotency: boolean;
  rateLimit: boolean;
}

function variants(): Variant[] {
  const single = process.env.BENCH_TENANTS || process.env.BENCH_IDEMPOTENCY === '1' || process.env.BENCH_RATE_LIMIT === '1';
  const list = process.env.BENCH_TENANTS?.split(',');
  if (list && list.length > 1 && !process.env.BENCH_IDEMPOTENCY && !process.env.BENCH_RATE_LIMIT) {
    return list.map((n) => {
      const tenants = Number(n);
      if (!Number.isInteger(tenants) || tenants < 1 || tenants > 100_000) throw new Error(`BENCH_TENANTS: '${n}' is not a tenant count`);
      return { name: `${tenants} tenant${tenants === 1 ? '' : 's'}`, tenants, idempotency: false, rateLimit: false };
    });
  }
  if (single) {
    const tenants = envInt('BENCH_TENANTS', 1, 1, 100_000);
    const idempotency = process.env.BENCH_IDEMPOTENCY === '1';
    const rateLimit = process.env.BENCH_RATE_LIMIT === '1';
    const extras = [idempotency ? 'Idempotency-Key' : '', rateLimit ? 'rate limits' : ''].filter(Boolean).join(' + ');
    return [{ name: `${tenants} tenant${tenants === 1 ? '' : 's'}${extras ? ` + ${extras}` : ''}`, tenants, idempotency, rateLimit }];
  }
  return [
    { name: '1 tenant', tenants: 1, idempotency: false, rateLimit: false },
    { name: '1 000 tenants', tenants: 1_000, idempotency: false, rateLimit: false },
    { name: '10 000 tenants', tenants: 10_000, idempotency: false, rateLimit: false },
    { name: '1 tenant + Idempotency-Key + rate limits', tenants: 1, idempotency: true, rateLimit: true },
  ];
}

interface Ports {
  bare: number;
  full: number;
}

interface Started {
  child: ChildProcess;
  /** Removes the variant's store (its data directory, or its database). */
  cleanup: () => Promise<void>;
  ports: Ports;
  store: string;
  /** The variant's PostgreSQL database name and URL (BENCH_STORE=postgres), for its backends' CPU and the workers' arm. */
  database?: string;
  databaseUrl?: string;
  masterKey: string;
  startupMs: number;
  seedMs: number;
  tokens: { tenant: string; token: string }[];
}

/** A store of the variant's own: a temporary data directory, or a database created on DATABASE_URL's server. */
async function prepareStore(): Promise<{ env: Record<string, string>; cleanup: () => Promise<void>; database?: string; databaseUrl?: string }> {
  if (STORE === 'memory') return { env: {}, cleanup: async () => undefined };
  if (STORE === 'postgres') {
    const database = await temporaryDatabase('cardline_bench');
    return {
      env: { BENCH_DATABASE_URL: withApplication(database.url, ONE_APP) },
      cleanup: database.drop,
      database: new URL(database.url).pathname.slice(1),
      databaseUrl: database.url,
    };
  }
  if (STORE !== 'disk') throw new Error(`BENCH_STORE must be disk, memory or postgres, not '${STORE}'`);
  const dir = mkdtempSync(join(tmpdir(), 'cardline-bench-'));
  return { env: { BENCH_DATA_DIR: join(dir, 'pglite') }, cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
}

/** The URL with its connections named (pg_stat_activity.application_name). */
function withApplication(url: string, name: string): string {
  const u = new URL(url);
  u.searchParams.set('application_name', name);
  return u.toString();
}

const profileArgs = (): string[] => {
  const dir = join(ROOT, 'bench', 'profiles');
  mkdirSync(dir, { recursive: true });
  return ['--cpu-prof', `--cpu-prof-dir=${dir}`];
};

/** BENCH_DIST=1: the serving phase runs the compiled gateway (bench/dist.ts); seeding stays on tsx. */
const DIST = process.env.BENCH_DIST === '1' && process.env.BENCH_PINNED !== '1' ? compiled() : null;

async function childArgs(phase: string): Promise<string[]> {
  const args = DIST && phase !== 'seed' ? [] : ['--import', 'tsx'];
  if (PROFILE && phase !== 'seed') args.push(...profileArgs());
  return [...args, DIST && phase !== 'seed' ? await DIST : join(ROOT, 'bench', 'server.ts')];
}

async function startChild(variant: Variant): Promise<Started> {
  const store = await prepareStore();
  const dir = mkdtempSync(join(tmpdir(), 'cardline-bench-tokens-'));
  const tokensFile = join(dir, 'tokens.json');
  const masterKey = MasterKey.generate();
  const env = {
    ...process.env,
    ...store.env,
    NODE_ENV: 'production',
    BENCH_TOKENS_FILE: tokensFile,
    BENCH_MASTER_KEY: masterKey,
    BENCH_TENANTS: String(variant.tenants),
    BENCH_RATE_LIMIT: variant.rateLimit ? '1' : '0',
    BENCH_PORT_BASE: String(PORT_BASE),
  };
  let seedMs = NaN;
  if (STORE !== 'memory') {
    // Seeded by a process of its own, so that the gateway's start and memory are measured alone.
    const seeder = spawn(process.execPath, await childArgs('seed'), { cwd: ROOT, env: { ...env, BENCH_PHASE: 'seed' }, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    seeder.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
    const code = await new Promise<number | null>((r) => seeder.once('exit', r));
    if (code !== 0) throw new Error(`bench seeding exited with ${code}`);
    seedMs = (JSON.parse(out.trim().split('\n').pop()!) as { seedMs: number }).seedMs;
  }
  const child = spawn(process.execPath, await childArgs('serve'), {
    cwd: ROOT,
    env: { ...env, BENCH_PHASE: STORE === 'memory' ? 'all' : 'serve' },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  return new Promise((resolveStarted, reject) => {
    const timer = setTimeout(() => reject(new Error('bench server did not start within 10 minutes')), 600_000);
    child.once('exit', (code) => reject(new Error(`bench server exited early with code ${code}`)));
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      try {
        const msg = JSON.parse(line) as { benchPorts?: Ports; store?: string; startupMs?: number; seedMs?: number };
        if (msg.benchPorts) {
          clearTimeout(timer);
          const tokens = JSON.parse(readFileSync(tokensFile, 'utf8')) as Started['tokens'];
          rmSync(dir, { recursive: true, force: true });
          if (TASKSET) pin(child.pid!, 0);
          resolveStarted({ child, cleanup: store.cleanup, database: store.database, databaseUrl: store.databaseUrl, masterKey, ports: msg.benchPorts, store: msg.store ?? '?', startupMs: msg.startupMs ?? NaN, seedMs: msg.seedMs ?? seedMs, tokens });
          return;
        }
      } catch {
        // not ours
      }
      process.stderr.write(`[server] ${line}\n`);
    });
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  child.stdin?.end();
  child.kill('SIGTERM');
  await new Promise<void>((r) => {
    if (child.exitCode !== null) return r();
    const t = setTimeout(() => {
      child.kill('SIGKILL');
      r();
    }, 15_000);
    child.once('exit', () => {
      clearTimeout(t);
      r();
    });
  });
}

interface Stats {
  elu: EventLoopUtilization;
  cpu: NodeJS.CpuUsage;
  rss: number;
  /** The gateway thread's V8 heap, and memory outside it (the store thread's WebAssembly heap, buffers, keys). */
  heapUsed: number;
  external: number;
  auditRows: number;
  audit: AuditFigures;
}

const stats = async (port: number): Promise<Stats> => (await (await fetch(`http://127.0.0.1:${port}/__bench/stats`)).json()) as Stats;

interface Run extends LoadFigures {
  /** Event-loop busy time and process CPU per request, in µs, and RSS in MB (full runs only). */
  eluUs?: number;
  cpuUs?: number;
  /** The arm's PostgreSQL backends' CPU per request, in µs (0 on PGlite: its CPU is the process's). */
  pgCpuUs?: number;
  rssMb?: number;
  heapMb?: number;
  externalMb?: number;
  /** Cardline's audit writers during the run: chain-conflict retries, and records per committed batch. */
  conflicts?: number;
  batchRecords?: number;
  /** Context switches of the gateway's event loop(s) per request: how often it waited or was preempted. */
  switchesPerReq?: number;
  /** The CARDLINE_WORKERS primary's share of cpuUs (it hands connections to the workers). */
  primaryCpuUs?: number;
  /** The 1-minute load average when the run ended. */
  load?: number;
}

/** Loads a target for `seconds`, or with exactly `amount` requests. */
async function load(port: number, variant: Variant, tokens: Started['tokens'], seconds: number, amount?: number): Promise<Run> {
  let i = 0;
  const result = await autocannon({
    url: `http://127.0.0.1:${port}`,
    connections: CONNECTIONS,
    ...(amount ? { amount } : { duration: seconds }),
    timeout: 10,
    requests: [
      {
        method: 'POST',
        path: LIMIT_URL,
        body: BODY,
        // Round-robin over the tenants, each with its own token; a fresh key per write when asked.
        setupRequest: (req) => {
          const t = tokens[i++ % tokens.length]!;
          req.headers = {
            'content-type': 'application/json',
            TENANT: t.tenant,
            authorization: `Bearer ${t.token}`,
            ...(variant.idempotency ? { 'idempotency-key': randomUUID() } : {}),
          };
          return req;
        },
      },
    ],
  });
  return loadFigures(result);
}

/** A full run with the server's counters read around it. */
async function measuredFull(started: Started, variant: Variant): Promise<Run> {
  const before = await stats(started.ports.bare);
  const pgBefore = pgStats && started.database ? await backendCpu(pgStats, started.database, ONE_APP) : null;
  const switchesBefore = contextSwitches(started.child.pid!);
  const run = await load(started.ports.full, variant, started.tokens, SECONDS);
  const switches = contextSwitches(started.child.pid!) - switchesBefore;
  const pgAfter = pgStats && started.database ? await backendCpu(pgStats, started.database, ONE_APP) : null;
  const after = await stats(started.ports.bare);
  const requests = Math.max(1, after.auditRows - before.auditRows);
  const busyMs = after.elu.active - before.elu.active;
  const cpuUs = after.cpu.user - before.cpu.user + (after.cpu.system - before.cpu.system);
  const pgCpuUs = pgBefore && pgAfter ? cpuBetween(pgBefore, pgAfter) / requests : 0;
  return {
    ...run,
    eluUs: (busyMs * 1000) / requests,
    cpuUs: cpuUs / requests,
    pgCpuUs,
    rssMb: after.rss / 1024 / 1024,
    heapMb: after.heapUsed / 1024 / 1024,
    externalMb: after.external / 1024 / 1024,
    ...auditBetween(before.audit, after.audit),
    switchesPerReq: switches / requests,
    load: loadavg()[0],
  };
}

const auditBetween = (before: AuditFigures, after: AuditFigures) => ({
  conflicts: after.conflictRetries - before.conflictRetries,
  batchRecords: (after.records - before.records) / Math.max(1, after.batches - before.batches),
});

/**
 * A run of the CARDLINE_WORKERS arm: CPU of its primary and workers (/proc) and of their PostgreSQL backends,
 * requests counted by the audit rows written (read through the idle one-process arm's stats endpoint: one table).
 */
async function measuredCluster(arm: ClusterArm, started: Started, variant: Variant): Promise<Run> {
  const [before, auditBefore] = [await stats(started.ports.bare), await arm.audit()];
  const cpuBefore = arm.cpu();
  const switchesBefore = arm.switches();
  const pgBefore = pgStats && started.database ? await backendCpu(pgStats, started.database, CLUSTER_APP) : null;
  const run = await load(arm.port, variant, started.tokens, SECONDS);
  const pgAfter = pgStats && started.database ? await backendCpu(pgStats, started.database, CLUSTER_APP) : null;
  const cpuAfter = arm.cpu();
  const switches = arm.switches() - switchesBefore;
  const [after, auditAfter] = [await stats(started.ports.bare), await arm.audit()];
  const requests = Math.max(1, after.auditRows - before.auditRows);
  const pgCpuUs = pgBefore && pgAfter ? cpuBetween(pgBefore, pgAfter) / requests : 0;
  const primary = arm.child.pid!;
  const primaryCpuUs = ((cpuAfter.get(primary) ?? 0) - (cpuBefore.get(primary) ?? 0)) / requests;
  return { ...run, cpuUs: cpuBetween(cpuBefore, cpuAfter) / requests, pgCpuUs, primaryCpuUs, switchesPerReq: switches / requests, rssMb: arm.rss() / 1024 / 1024, ...auditBetween(auditBefore, auditAfter), load: loadavg()[0] };
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
/** The median over the rounds of the workers' run against the one-process run of the same round (rps, or CPU with PostgreSQL's). */
const pairedRatio = (r: { full: Run[]; workers: Run[] }, k: 'rps' | 'cpu'): number => {
  const of = (x: Run) => (k === 'rps' ? x.rps : (x.cpuUs ?? NaN) + (x.pgCpuUs ?? 0));
  return median(r.workers.map((w, i) => of(w) / of(r.full[i]!)));
};
const fmt = (n: number | undefined, digits = 0) => (n === undefined || Number.isNaN(n) ? '—' : n.toFixed(digits));

/** A peer's run, its counters and its database's backends read around it. */
async function measuredPeer(peer: StartedPeer, token: string): Promise<Run> {
  const tokens = [{ tenant: 'demo', token }];
  const plain: Variant = { name: peer.name, tenants: 1, idempotency: false, rateLimit: false };
  const before = await peerStats(peer.port);
  const pgBefore = pgStats ? await backendCpu(pgStats, peer.database) : null;
  const run = await load(peer.port, plain, tokens, SECONDS);
  const pgAfter = pgStats ? await backendCpu(pgStats, peer.database) : null;
  const after = await peerStats(peer.port);
  const requests = Math.max(1, after.rows - before.rows);
  const cpuUs = after.cpu.user - before.cpu.user + (after.cpu.system - before.cpu.system);
  const pgCpuUs = pgBefore && pgAfter ? cpuBetween(pgBefore, pgAfter) / requests : 0;
  return { ...run, eluUs: ((after.elu.active - before.elu.active) * 1000) / requests, cpuUs: cpuUs / requests, pgCpuUs, rssMb: after.rss / 1024 / 1024 };
}

interface PeerArm {
  peer: StartedPeer;
  runs: Run[];
}

interface Result {
  variant: Variant;
  store: string;
  startupMs: number;
  seedMs: number;
  bare: Run[];
  full: Run[];
  /** The CARDLINE_WORKERS arm's runs (PostgreSQL, one-tenant variant), alternated with `full`. */
  workers: Run[];
}

async function measure(variant: Variant, peers: PeerArm[], peerToken: string, withWorkers: boolean): Promise<Result> {
  const started = await startChild(variant);
  let arm: ClusterArm | null = null;
  try {
    console.log(`\n== ${variant.name}: seeded in ${fmt(started.seedMs / 1000, 1)} s; the gateway started on it, in a process of its own, to ready in ${fmt(started.startupMs)} ms`);
    if (withWorkers && started.databaseUrl) {
      arm = await startClusterArm({
        databaseUrl: withApplication(started.databaseUrl, CLUSTER_APP),
        masterKey: started.masterKey,
        workers: WORKERS,
        port: PORT_BASE ? PORT_BASE + 4 : await freePort(),
        adminPort: PORT_BASE ? PORT_BASE + 5 : await freePort(),
        taskset: TASKSET,
        nodeArgs: PROFILE ? profileArgs() : [],
      });
      console.log(`   ${WORKERS} gateway processes (CARDLINE_WORKERS=${WORKERS}) on the same database: pids ${arm.pids().join(', ')} (the first the primary)${TASKSET ? '; one-process arm on core 0, worker i on core i-1' : ''}`);
    }
    if (WARMUP > 0) {
      await load(started.ports.bare, variant, started.tokens, WARMUP);
      await load(started.ports.full, variant, started.tokens, WARMUP);
      // Each of its processes as warm as the one process: as many requests each (the compiler's threads are slow
      // to finish on a busy machine, and a worker sees 1/N of the requests).
      if (arm) await load(arm.port, variant, started.tokens, WARMUP * WORKERS);
      for (const p of peers) await load(p.peer.port, variant, [{ tenant: 'demo', token: peerToken }], WARMUP);
    }
    // Every tenant once before measuring: the figures are of a gateway serving its tenants, not of each
    // tenant's first request (its keys imported, its user loaded, its token verified once).
    if (started.tokens.length > 1) await load(started.ports.full, variant, started.tokens, 0, started.tokens.length);
    const bare: Run[] = [];
    const full: Run[] = [];
    const workers: Run[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      bare.push(await load(started.ports.bare, variant, started.tokens, SECONDS));
      full.push(await measuredFull(started, variant));
      const b = bare[round]!;
      const f = full[round]!;
      console.log(
        `   round ${round + 1}: bare ${fmt(b.rps)} req/s (p99 ${fmt(b.p99, 1)} ms), full ${fmt(f.rps)} req/s (${fmt(f.rps / b.rps, 2)}), p50 ${fmt(f.p50, 1)} ms, p99 ${fmt(f.p99, 1)} ms (${fmt(f.p99 / b.p99, 1)} × bare's), ` +
          `event loop ${fmt(f.eluUs)} µs/req, CPU ${fmt(f.cpuUs)}${f.pgCpuUs ? ` + ${fmt(f.pgCpuUs)} (PostgreSQL)` : ''} µs/req, RSS ${fmt(f.rssMb)} MB (V8 heap ${fmt(f.heapMb)}, external ${fmt(f.externalMb)}), ` +
          `${fmt(f.batchRecords, 1)} records/batch, ${fmt(f.switchesPerReq, 2)} context switches/req, ${f.conflicts} conflict retries, load ${fmt(f.load, 1)}${f.non2xx + f.errors ? `, ${f.non2xx} non-2xx, ${f.errors} errors` : ''}`,
      );
      if (arm) {
        const w = await measuredCluster(arm, started, variant);
        workers.push(w);
        console.log(
          `   round ${round + 1}: ${WORKERS} processes ${fmt(w.rps)} req/s (${fmt(w.rps / f.rps, 2)} × one), p50 ${fmt(w.p50, 1)} ms, p99 ${fmt(w.p99, 1)} ms, ` +
            `CPU ${fmt(w.cpuUs)} (primary ${fmt(w.primaryCpuUs)}) + ${fmt(w.pgCpuUs)} (PostgreSQL) µs/req (${fmt((w.cpuUs! + w.pgCpuUs!) / (f.cpuUs! + f.pgCpuUs!), 2)} × one), RSS ${fmt(w.rssMb)} MB (all), ` +
            `${fmt(w.batchRecords, 1)} records/batch, ${fmt(w.switchesPerReq, 2)} context switches/req, ${w.conflicts} conflict retries, load ${fmt(w.load, 1)}${w.non2xx + w.errors ? `, ${w.non2xx} non-2xx, ${w.errors} errors` : ''}`,
        );
      }
      for (const p of peers) {
        const r = await measuredPeer(p.peer, peerToken);
        p.runs.push(r);
        console.log(`   round ${round + 1}: peer ${p.peer.name} ${fmt(r.rps)} req/s, CPU ${fmt(r.cpuUs)} + ${fmt(r.pgCpuUs)} (PostgreSQL) µs/req, load ${fmt(loadavg()[0], 1)}${r.non2xx + r.errors ? `, ${r.non2xx} non-2xx, ${r.errors} errors` : ''}`);
      }
    }
    return { variant, store: started.store, startupMs: started.startupMs, seedMs: started.seedMs, bare, full, workers };
  } finally {
    if (arm) {
      const code = await arm.stop();
      if (code !== 0) console.error(`the ${WORKERS} gateway processes exited with code ${code} on SIGTERM`);
    }
    await stopChild(started.child);
    // Awaited here: the run exits right after the last variant, and a dropped-too-late database would stay.
    await started.cleanup();
  }
}

/** The audit query target: a filter by action or outcome over a tenant's 1 000 000 records. */
async function auditQuery(): Promise<{ rows: number; actionMs: number; outcomeMs: number } | null> {
  if (AUDIT_ROWS === 0) return null;
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'bench', 'audit-query.ts')], {
    cwd: ROOT,
    env: { ...process.env, BENCH_AUDIT_ROWS: String(AUDIT_ROWS) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  const code = await new Promise<number | null>((r) => child.once('exit', r));
  if (code !== 0) throw new Error(`audit query bench exited with ${code}`);
  return JSON.parse(out.trim().split('\n').pop()!) as { rows: number; actionMs: number; outcomeMs: number };
}

async function main(): Promise<number> {
  // A separate question with its own setup (bench/shadow.ts): does a hanging or failing shadow core slow the primary?
  if (process.env.BENCH_SHADOW === '1') return (await import('./shadow.js')).benchShadow();
  if (process.env.BENCH_DECISIONS === '1') return (await import('./decisions.js')).benchDecisions();
  if (process.env.BENCH_AUTHORIZATIONS === '1') return (await import('./authorizations.js')).benchAuthorizations();
  // The server side alone (issue 28): the load generator on one core, the gateways and their PostgreSQL on the other.
  if (process.env.BENCH_PINNED === '1') return (await import('./pinned.js')).benchPinned();
  // Tracing off, on (every request sampled) and at 10 %, alternated (bench/tracing.ts).
  if (process.env.BENCH_TRACING === '1') return (await import('./tracing.js')).benchTracing();
  console.log(
    `Cardline bench: POST ${LIMIT_URL}, ${CONNECTIONS} connections, ${SECONDS} s per run, ${ROUNDS} rounds (bare, full alternating), ` +
      `warm-up ${WARMUP} s each; store ${STORE}; mock connector; every step on (log line at info to /dev/null; metrics with a tenant label below 1 000 tenants, without from 1 000); node ${process.version}`,
  );
  pgStats = await statsClient();
  const peerArms: PeerArm[] = [];
  let peerToken = '';
  if (WITH_PEERS) {
    const credentials = await peerCredentials();
    peerToken = credentials.token;
    for (const [i, peer] of PEERS.entries()) peerArms.push({ peer: await startPeer(peer, credentials.publicKey, PORT_BASE ? PORT_BASE + 2 + i : 0), runs: [] });
  } else {
    console.log('(peers skipped: they need DATABASE_URL, and BENCH_PEERS not 0)');
  }
  const results: Result[] = [];
  try {
    // The peers are measured in the one-tenant variant's rounds only: the same route and data as theirs.
    // So is the CARDLINE_WORKERS arm (PostgreSQL only: the embedded store is one process's own).
    for (const v of variants()) {
      const plain = v.tenants === 1 && !v.idempotency && !v.rateLimit;
      results.push(await measure(v, plain ? peerArms : [], peerToken, plain && STORE === 'postgres' && WORKERS >= 1));
    }
  } finally {
    for (const arm of peerArms) {
      arm.peer.child.stdin?.end();
      arm.peer.child.kill('SIGTERM');
      await new Promise((r) => (arm.peer.child.exitCode !== null ? r(null) : arm.peer.child.once('exit', r)));
      await arm.peer.drop();
    }
    await pgStats?.end();
  }
  const audit = await auditQuery();

  const med = (runs: Run[], k: keyof Run) => median(runs.map((r) => r[k] ?? NaN));
  const one = results.find((r) => r.variant.tenants === 1 && !r.variant.idempotency && !r.variant.rateLimit);
  const ratioOf = (r: Result) => med(r.full, 'rps') / med(r.bare, 'rps');
  const header = ['variant', 'bare req/s', 'full req/s', 'full/bare', 'vs 1 tenant', 'loop µs/req', 'CPU µs/req', 'RSS MB', 'p50 ms', 'p99 ms', 'ready ms'];
  const rows = results.map((r) => [
    r.variant.name,
    fmt(med(r.bare, 'rps')),
    fmt(med(r.full, 'rps')),
    fmt(ratioOf(r), 2),
    one ? fmt(ratioOf(r) / ratioOf(one), 2) : '—',
    fmt(med(r.full, 'eluUs')),
    fmt(med(r.full, 'cpuUs')),
    fmt(Math.max(...r.full.map((f) => f.rssMb ?? 0))),
    fmt(med(r.full, 'p50'), 1),
    fmt(med(r.full, 'p99'), 1),
    fmt(r.startupMs),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  console.log(`\nSummary (store ${results[0]?.store ?? STORE}; medians over ${ROUNDS} rounds; RSS the highest seen):`);
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const row of rows) console.log(line(row));
  const cpuOf = (runs: Run[]) => median(runs.map((r) => (r.cpuUs ?? NaN) + (r.pgCpuUs ?? 0)));
  const measuredPeers = peerArms.filter((a) => a.runs.length > 0);
  if (one && measuredPeers.length > 0) {
    console.log(`\nPeers (same run, alternated with Cardline's one-tenant rounds; CPU = Node + PostgreSQL backends, µs/req):`);
    console.log(`  Cardline (${one.store}): ${fmt(med(one.full, 'rps'))} req/s, CPU ${fmt(med(one.full, 'cpuUs'))} + ${fmt(med(one.full, 'pgCpuUs'))} = ${fmt(cpuOf(one.full))}`);
    for (const arm of measuredPeers) {
      console.log(
        `  ${arm.peer.name}: ${fmt(med(arm.runs, 'rps'))} req/s, CPU ${fmt(med(arm.runs, 'cpuUs'))} + ${fmt(med(arm.runs, 'pgCpuUs'))} = ${fmt(cpuOf(arm.runs))}; ` +
          `Cardline/peer: throughput ${fmt(med(one.full, 'rps') / med(arm.runs, 'rps'), 2)} ×, CPU per request ${fmt(cpuOf(one.full) / cpuOf(arm.runs), 2)} ×`,
      );
    }
  }
  const scaled = one && one.workers.length > 0 ? one : undefined;
  if (scaled) {
    const conflicts = (runs: Run[]) => runs.reduce((n, r) => n + (r.conflicts ?? 0), 0);
    console.log(
      `\n${WORKERS} processes (CARDLINE_WORKERS=${WORKERS}, the same database, alternated with the one-process rounds${TASKSET ? ', pinned with taskset' : ''}; ` +
        `CPU = every gateway process (the primary too) + its PostgreSQL backends, µs/req; load average ${fmt(median([...scaled.full, ...scaled.workers].map((r) => r.load ?? NaN)), 1)}):`,
    );
    for (const [label, runs] of [['one process', scaled.full], [`${WORKERS} processes`, scaled.workers]] as const) {
      console.log(
        `  ${label}: ${fmt(med(runs, 'rps'))} req/s, p99 ${fmt(med(runs, 'p99'), 1)} ms, CPU ${fmt(med(runs, 'cpuUs'))} + ${fmt(med(runs, 'pgCpuUs'))} = ${fmt(cpuOf(runs))}, ` +
          `${fmt(med(runs, 'batchRecords'), 1)} records/batch, ${fmt(med(runs, 'switchesPerReq'), 2)} context switches/req, ${conflicts(runs)} chain-conflict retries`,
      );
    }
    console.log(
      `  ${WORKERS} processes / one: throughput ${fmt(med(scaled.workers, 'rps') / med(scaled.full, 'rps'), 2)} ×, CPU per request ${fmt(cpuOf(scaled.workers) / cpuOf(scaled.full), 2)} × (ratio of the medians); ` +
        `the rounds' own ratios (each against the one-process run just before it), median: ${fmt(pairedRatio(scaled, 'rps'), 2)} ×, ${fmt(pairedRatio(scaled, 'cpu'), 2)} ×`,
    );
  }
  if (audit) console.log(`audit query over ${audit.rows} records of one tenant: by action ${fmt(audit.actionMs, 1)} ms, by outcome ${fmt(audit.outcomeMs, 1)} ms (median of 5)`);

  // Ratios to three places in the targets, so that a 0.998 is not printed as a "NOT met" 1.00.
  console.log('\nTargets:');
  const target = (ok: boolean, what: string) => console.log(`  ${ok ? 'met    ' : 'NOT met'}  ${what}`);
  if (one) {
    target(ratioOf(one) >= 0.3, `one tenant: full/bare >= 0.30 (${fmt(ratioOf(one), 2)}); the long-term aim is 0.50`);
    target(med(one.full, 'eluUs') <= 110, `one tenant: event-loop busy <= 110 µs/req (${fmt(med(one.full, 'eluUs'))})`);
  }
  for (const r of results.filter((x) => x !== one)) {
    const vs = one ? ratioOf(r) / ratioOf(one) : NaN;
    // At 10 000 tenants: 0.9 of one tenant's throughput (issue 21), RSS at most 400 MB (issue 28); 0.8 for the others.
    const many = r.variant.tenants >= 10_000;
    const share = many ? 0.9 : 0.8;
    target(vs >= share, `${r.variant.name}: >= ${share} of the one-tenant figure (${fmt(vs, 2)})`);
    if (many) {
      const rss = Math.max(...r.full.map((f) => f.rssMb ?? 0));
      target(r.startupMs <= 3000, `${r.variant.name}: started to ready <= 3 s (${fmt(r.startupMs)} ms)`);
      target(rss <= 400, `${r.variant.name}: RSS <= 400 MB (${fmt(rss)} MB)`);
    }
  }
  const fastifyPeer = measuredPeers.find((a) => a.peer.name.startsWith('Fastify'));
  if (one && fastifyPeer) {
    const tput = med(one.full, 'rps') / med(fastifyPeer.runs, 'rps');
    const minimum = one.store === 'postgres' ? 1.5 : 1.2;
    target(tput >= minimum, `one tenant: throughput >= ${minimum} × the Fastify peer's (${fmt(tput, 3)})`);
    if (one.store === 'postgres') {
      const cpu = cpuOf(one.full) / cpuOf(fastifyPeer.runs);
      target(cpu <= 0.67, `one tenant: CPU per request <= 0.67 × the Fastify peer's (${fmt(cpu, 3)})`);
    }
  }
  if (scaled) {
    // Paired by round: the machine's load drifts between rounds more than between two neighbouring runs.
    const tput = pairedRatio(scaled, 'rps');
    const cpu = pairedRatio(scaled, 'cpu');
    const conflicts = [...scaled.full, ...scaled.workers].reduce((n, r) => n + (r.conflicts ?? 0), 0);
    target(tput >= 1.0, `${WORKERS} processes: throughput >= 1.0 × one process's (${fmt(tput, 3)}, median of the rounds' ratios)`);
    target(cpu <= 1.15, `${WORKERS} processes: CPU per request within 15 % of one process's (${fmt(cpu, 3)} ×, median of the rounds' ratios)`);
    target(conflicts === 0, `${WORKERS} processes: zero chain-conflict retries (${conflicts}, from cardline_audit_conflict_retries_total)`);
  }
  if (audit) target(Math.max(audit.actionMs, audit.outcomeMs) <= 50, `audit query by action or outcome at ${audit.rows} records <= 50 ms`);

  const bad =
    results.reduce((s, r) => s + [...r.full, ...r.workers].reduce((t, f) => t + f.non2xx + f.errors, 0), 0) +
    peerArms.reduce((s, a) => s + a.runs.reduce((t, f) => t + f.non2xx + f.errors, 0), 0);
  if (bad > 0) {
    console.error(`FAIL: the full pipeline answered ${bad} non-2xx responses or errors`);
    return 1;
  }
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(`bench failed: ${(err as Error).message}`);
    process.exit(1);
  },
);
