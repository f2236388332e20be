// The pinned arm of `npm run bench` (issue 28, decision 0368): BENCH_PINNED=1.
// The load generator (autocannon, bench/load.ts) runs in a process of its own on one core (BENCH_LOAD_CORE, 0);
// the servers and their PostgreSQL on the other (BENCH_SERVER_CORE, 1): a PostgreSQL 15 the bench starts itself
// on a scratch data directory under that affinity (every backend it forks inherits it; pg_stat_statements
// preloaded), so that the figures are the server side's alone and no other engineer's database is touched.
// Arms, alternated round by round (the order rotates): Cardline (bench/server.ts, one tenant, PostgreSQL, every
// step on), the two peers of bench/peers/ and, with BENCH_BASELINE=<a checkout of another commit, with its
// node_modules>, that commit's Cardline as a before/after arm in the same run. Each arm: throughput, p50/p99,
// and CPU per request of its Node process (every thread, /proc) and of its PostgreSQL backends (/proc), requests
// counted by the rows each wrote; the summary gives medians and Cardline's ratios to each peer, and the
// statements each Cardline arm ran per request (pg_stat_statements), the database side's profile.
//   BENCH_SECONDS (10), BENCH_ROUNDS (5), BENCH_WARMUP_SECONDS (3), BENCH_CONNECTIONS (32), BENCH_PROFILE=1
//   (Cardline's process with --cpu-prof, profiles in bench/profiles/), BENCH_PG_BIN (/usr/lib/postgresql/15/bin),
//   BENCH_PINNED_ARMS ('name: A=1 | …': this tree's Cardline again under other variables, one arm each),
//   BENCH_DIST (1: each Cardline arm serves its checkout's compiled gateway, as `npm start` does, built first
//   if stale; 0: from source through tsx).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir, userInfo } from 'node:os';
import { createInterface, type Interface } from 'node:readline';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { freePort, pin, procStat } from './cluster-arm.js';
import { PEERS, backendCpu, cpuBetween, peerCredentials, peerStats, startPeer, type StartedPeer } from './peer-harness.js';
import { temporaryDatabase } from './postgres.js';
import { MasterKey } from '../src/crypto/master-key.js';
import { envArms, envInt } from './env.js';
import { compiled } from './dist.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

const SECONDS = envInt('BENCH_SECONDS', 10, 1, 300);
const ROUNDS = envInt('BENCH_ROUNDS', 5, 1, 30);
const WARMUP = envInt('BENCH_WARMUP_SECONDS', 3, 0, 60);
const CONNECTIONS = envInt('BENCH_CONNECTIONS', 32, 1, 1024);
const LOAD_CORE = envInt('BENCH_LOAD_CORE', 0, 0, 1023);
const SERVER_CORE = envInt('BENCH_SERVER_CORE', 1, 0, 1023);
const PROFILE = process.env.BENCH_PROFILE === '1';
const PG_BIN = process.env.BENCH_PG_BIN || '/usr/lib/postgresql/15/bin';
const BASELINE = process.env.BENCH_BASELINE ? resolve(process.env.BENCH_BASELINE) : null;
/** BENCH_PINNED_ARMS='name: A=1 B=2 | …': more Cardline arms of this tree, each with its variables. */
const ARMS = envArms(process.env.BENCH_PINNED_ARMS);
const APP = 'cardline_bench_pinned';
/** Cardline served from dist/ (the default here), as `npm start` runs it: no tsx loader, no `__name` calls. */
const DIST = process.env.BENCH_DIST !== '0';

/** The compiled bench server of the checkout at `root`: its dist/ rebuilt first when older than its sources. */
export function compiledServer(root: string, entry?: string): Promise<string> {
  execFileSync(process.execPath, [join(root, 'bin', 'build.js'), '--if-stale'], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
  return compiled(root, entry);
}

interface Run {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  /** CPU per request (µs) of the arm's Node process and of its PostgreSQL backends. */
  nodeUs: number;
  pgUs: number;
  /** Requests that reached the database (rows written) during the run. */
  requests: number;
  /** Share of the run's tokens answered from the verified-token cache (Cardline; NaN where not counted). */
  tokenHitRate: number;
  load: number;
}

interface Arm {
  name: string;
  kind: 'cardline' | 'peer';
  pid: number;
  port: number;
  /** Port of the endpoint giving the rows written so far. */
  statsPort: number;
  database: string;
  tokens: { tenant: string; token: string }[];
  /** Rows written so far, and (Cardline) the verified-token cache's hits and misses so far. */
  rows: () => Promise<{ rows: number; hits?: number; misses?: number }>;
  stop: () => Promise<void>;
  runs: Run[];
}

const fmt = (n: number | undefined, digits = 0) => (n === undefined || Number.isNaN(n) ? '—' : n.toFixed(digits));
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length === 0 ? NaN : s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

/** A PostgreSQL of the bench's own: initdb on a scratch directory, the server started under `taskset -c core`. */
export async function startPostgres(core: number): Promise<{ url: string; stop: () => Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'cardline-bench-pg-'));
  const data = join(dir, 'data');
  // PostgreSQL refuses to run as root: as root, the scratch directory is the postgres user's and it runs as them.
  const asRoot = userInfo().uid === 0;
  const run = (cmd: string, args: string[]): [string, string[]] => (asRoot ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args]);
  if (asRoot) {
    chownSync(dir, Number(execFileSync('id', ['-u', 'postgres']).toString()), Number(execFileSync('id', ['-g', 'postgres']).toString()));
    chmodSync(dir, 0o700);
  }
  const [initCmd, initArgs] = run(join(PG_BIN, 'initdb'), ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8']);
  execFileSync(initCmd, initArgs, { stdio: 'ignore' });
  const port = await freePort();
  // The machine server's durability settings (fsync, synchronous_commit on: PostgreSQL's defaults), its size.
  const [cmd, args] = run(join(PG_BIN, 'postgres'), [
    '-D', data, '-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1',
    '-c', 'shared_preload_libraries=pg_stat_statements', '-c', 'pg_stat_statements.track=all',
    '-c', 'max_connections=100', '-c', 'logging_collector=off',
  ]);
  const child = spawn('taskset', ['-c', String(core), cmd, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (log = (log + d).slice(-4000)));
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  // Ready when pg_isready says so (a client whose first connect failed can hang in end()).
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      execFileSync(join(PG_BIN, 'pg_isready'), ['-q', '-h', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' });
      break;
    } catch {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`the bench's PostgreSQL did not start\n${log}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  await c.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  await c.end();
  return {
    url,
    stop: async () => {
      // Fast shutdown of the postmaster itself (runuser need not pass a signal on), then its directory removed.
      const postmaster = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
      process.kill(postmaster, 'SIGINT');
      for (let i = 0; i < 300; i++) {
        try {
          process.kill(postmaster, 0);
        } catch {
          break;
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      await new Promise((r) => (child.exitCode !== null ? r(null) : child.once('exit', r)));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** One line of JSON from a child's stdout that has `key`; other lines go to stderr with the label. */
export function awaitLine<T>(child: ChildProcess, key: string, label: string, timeoutMs: number): Promise<T> {
  return new Promise((resolveLine, reject) => {
    const timer = setTimeout(() => reject(new Error(`${label} did not answer within ${timeoutMs / 1000} s`)), timeoutMs);
    child.once('exit', (code) => reject(new Error(`${label} exited with code ${code}`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      try {
        const msg = JSON.parse(line) as Record<string, unknown>;
        if (key in msg) {
          clearTimeout(timer);
          resolveLine(msg as T);
          return;
        }
      } catch {
        // not ours
      }
      process.stderr.write(`[${label}] ${line}\n`);
    });
  });
}

/** A database of its own on `server`, seeded by `root`'s bench/server.ts: the environment that serves it. */
export async function seedCardline(root: string, name: string, server: string, extraEnv: Record<string, string> = {}) {
  process.env.DATABASE_URL = server;
  const database = await temporaryDatabase('cardline_bench');
  const url = new URL(database.url);
  url.searchParams.set('application_name', APP);
  const dir = mkdtempSync(join(tmpdir(), 'cardline-bench-tokens-'));
  const tokensFile = join(dir, 'tokens.json');
  const env = {
    ...process.env,
    NODE_ENV: 'production',
    BENCH_DATABASE_URL: url.toString(),
    BENCH_TOKENS_FILE: tokensFile,
    BENCH_MASTER_KEY: MasterKey.generate(),
    BENCH_TENANTS: '1',
    BENCH_RATE_LIMIT: '0',
    BENCH_PORT_BASE: '0',
    ...extraEnv,
  };
  const script = join(root, 'bench', 'server.ts');
  const seeder = spawn(process.execPath, ['--import', 'tsx', script], { cwd: root, env: { ...env, BENCH_PHASE: 'seed' }, stdio: ['ignore', 'pipe', 'inherit'] });
  await awaitLine(seeder, 'seeded', `${name} seed`, 600_000);
  await new Promise((r) => (seeder.exitCode !== null ? r(null) : seeder.once('exit', r)));
  return { env, database, url, dir, tokensFile, script };
}

/** Cardline from `root` (this checkout, or BENCH_BASELINE's): seeded by one process, served by another, pinned. */
export async function startCardline(root: string, name: string, server: string, extraEnv: Record<string, string> = {}): Promise<Arm> {
  const { env, database, url, dir, tokensFile, script } = await seedCardline(root, name, server, extraEnv);
  const profile = PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${join(ROOT, 'bench', 'profiles')}`] : [];
  if (PROFILE) mkdirSync(join(ROOT, 'bench', 'profiles'), { recursive: true });
  const serve = DIST ? [await compiledServer(root)] : ['--import', 'tsx', script];
  const child = spawn('taskset', ['-c', String(SERVER_CORE), process.execPath, ...profile, ...serve], {
    cwd: root,
    env: { ...env, BENCH_PHASE: 'serve' },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const msg = await awaitLine<{ benchPorts: { bare: number; full: number } }>(child, 'benchPorts', name, 600_000);
  const tokens = JSON.parse(readFileSync(tokensFile, 'utf8')) as Arm['tokens'];
  rmSync(dir, { recursive: true, force: true });
  const statsPort = msg.benchPorts.bare;
  return {
    name,
    kind: 'cardline',
    pid: child.pid!,
    port: msg.benchPorts.full,
    statsPort,
    database: url.pathname.slice(1),
    tokens,
    rows: async () => {
      const s = (await (await fetch(`http://127.0.0.1:${statsPort}/__bench/stats`)).json()) as { auditRows: number; tokenCache?: { hits: number; misses: number } };
      return { rows: s.auditRows, hits: s.tokenCache?.hits, misses: s.tokenCache?.misses };
    },
    stop: async () => {
      child.stdin!.end();
      child.kill('SIGTERM');
      await new Promise((r) => (child.exitCode !== null ? r(null) : child.once('exit', r)));
      await database.drop();
    },
    runs: [],
  };
}

async function startPinnedPeer(peer: (typeof PEERS)[number], publicKey: string, token: string): Promise<Arm> {
  const started: StartedPeer = await startPeer(peer, publicKey, 0);
  if (!pin(started.child.pid!, SERVER_CORE)) throw new Error('taskset failed: the pinned arm needs util-linux taskset');
  return {
    name: started.name,
    kind: 'peer',
    pid: started.child.pid!,
    port: started.port,
    statsPort: started.port,
    database: started.database,
    tokens: [{ tenant: 'demo', token }],
    rows: async () => ({ rows: (await peerStats(started.port)).rows }),
    stop: async () => {
      started.child.stdin?.end();
      started.child.kill('SIGTERM');
      await new Promise((r) => (started.child.exitCode !== null ? r(null) : started.child.once('exit', r)));
      await started.drop();
    },
    runs: [],
  };
}

/** The load generator: one process pinned to the load core, answering one job at a time. */
function startLoader(): { run: (arm: Arm, seconds: number) => Promise<Omit<Run, 'nodeUs' | 'pgUs' | 'requests' | 'load'>>; stop: () => void } {
  const child = spawn('taskset', ['-c', String(LOAD_CORE), process.execPath, '--import', 'tsx', join(ROOT, 'bench', 'load.ts')], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines: Interface = createInterface({ input: child.stdout! });
  const waiting: ((line: string) => void)[] = [];
  lines.on('line', (line) => waiting.shift()?.(line));
  return {
    run: (arm, seconds) =>
      new Promise((resolveRun, reject) => {
        waiting.push((line) => {
          const r = JSON.parse(line) as Run & { error?: string };
          if (r.error) reject(new Error(`load generator: ${r.error}`));
          else resolveRun(r);
        });
        child.stdin!.write(`${JSON.stringify({ port: arm.port, seconds, connections: CONNECTIONS, tokens: arm.tokens })}\n`);
      }),
    stop: () => child.stdin!.end(),
  };
}

async function measured(arm: Arm, loader: ReturnType<typeof startLoader>, stats: pg.Client): Promise<Run> {
  const before = await arm.rows();
  const nodeBefore = procStat(arm.pid)?.cpuUs ?? NaN;
  const pgBefore = await backendCpu(stats, arm.database);
  const run = await loader.run(arm, SECONDS);
  const pgAfter = await backendCpu(stats, arm.database);
  const nodeAfter = procStat(arm.pid)?.cpuUs ?? NaN;
  const after = await arm.rows();
  const requests = Math.max(1, after.rows - before.rows);
  const hits = (after.hits ?? NaN) - (before.hits ?? NaN);
  const tokenHitRate = hits / (hits + (after.misses ?? NaN) - (before.misses ?? NaN));
  return { ...run, nodeUs: (nodeAfter - nodeBefore) / requests, pgUs: cpuBetween(pgBefore, pgAfter) / requests, requests, tokenHitRate, load: loadavg()[0]! };
}

/** The statements a database's backends ran, per request (pg_stat_statements since the last reset). */
async function statements(stats: pg.Client, database: string, requests: number): Promise<string[]> {
  const r = await stats.query<{ query: string; calls: string; total: number }>(
    `SELECT s.query, s.calls::text AS calls, s.total_exec_time AS total
       FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
      WHERE d.datname = $1 ORDER BY s.calls DESC LIMIT 12`,
    [database],
  );
  return r.rows
    .filter((s) => Number(s.calls) >= requests / 1000)
    .map((s) => `${fmt(Number(s.calls) / requests, 3).padStart(7)} /req  ${fmt((s.total * 1000) / Number(s.calls), 1).padStart(7)} µs  ${s.query.replace(/\s+/g, ' ').slice(0, 110)}`);
}

export async function benchPinned(): Promise<number> {
  const cores = availableParallelism();
  if (Math.max(LOAD_CORE, SERVER_CORE) >= cores || LOAD_CORE === SERVER_CORE) throw new Error(`BENCH_LOAD_CORE and BENCH_SERVER_CORE must be two different cores below ${cores}`);
  console.log(
    `Cardline bench, pinned arm: load generator (autocannon, its own process) on core ${LOAD_CORE}; the gateway, the peers and the bench's own PostgreSQL on core ${SERVER_CORE}. ` +
      `POST upgradeLimit, one tenant, ES256 token, Cardline from ${DIST ? 'dist/ (compiled)' : 'source (tsx)'}, ${CONNECTIONS} connections, ${SECONDS} s per run, ${ROUNDS} rounds, warm-up ${WARMUP} s; node ${process.version}; load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`,
  );
  const postgres = await startPostgres(SERVER_CORE);
  const stats = new pg.Client({ connectionString: postgres.url });
  await stats.connect();
  const arms: Arm[] = [];
  const loader = startLoader();
  let bad = 0;
  try {
    arms.push(await startCardline(ROOT, 'Cardline', postgres.url));
    if (BASELINE) arms.push(await startCardline(BASELINE, `Cardline (baseline ${BASELINE})`, postgres.url));
    for (const [name, env] of ARMS) arms.push(await startCardline(ROOT, `Cardline (${name})`, postgres.url, env));
    const credentials = await peerCredentials();
    for (const peer of PEERS) arms.push(await startPinnedPeer(peer, credentials.publicKey, credentials.token));
    for (const arm of arms) if (!pin(arm.pid, SERVER_CORE)) throw new Error(`taskset could not pin ${arm.name}`);
    if (WARMUP > 0) for (const arm of arms) await loader.run(arm, WARMUP);
    await stats.query('SELECT pg_stat_statements_reset()');
    for (let round = 0; round < ROUNDS; round++) {
      for (let k = 0; k < arms.length; k++) {
        const arm = arms[(round + k) % arms.length]!;
        const r = await measured(arm, loader, stats);
        arm.runs.push(r);
        bad += r.non2xx + r.errors;
        console.log(
          `   round ${round + 1}: ${arm.name}: ${fmt(r.rps)} req/s, p50 ${fmt(r.p50, 1)} ms, p99 ${fmt(r.p99, 1)} ms, CPU ${fmt(r.nodeUs)} (Node) + ${fmt(r.pgUs)} (PostgreSQL) µs/req, load ${fmt(r.load, 1)}` +
            `${r.non2xx + r.errors ? `, ${r.non2xx} non-2xx, ${r.errors} errors` : ''}`,
        );
      }
    }
    const med = (arm: Arm, k: keyof Run) => median(arm.runs.map((r) => r[k]));
    const cpu = (arm: Arm) => median(arm.runs.map((r) => r.nodeUs + r.pgUs));
    console.log(`\nPinned arm summary (medians over ${ROUNDS} rounds; CPU per request in µs; load average ${fmt(median(arms.flatMap((a) => a.runs.map((r) => r.load))), 1)}):`);
    const header = ['arm', 'req/s', 'p50 ms', 'p99 ms', 'Node µs', 'PG µs', 'CPU µs', 'token cache hits'];
    const rows = arms.map((a) => [a.name, fmt(med(a, 'rps')), fmt(med(a, 'p50'), 1), fmt(med(a, 'p99'), 1), fmt(med(a, 'nodeUs')), fmt(med(a, 'pgUs')), fmt(cpu(a)), fmt(med(a, 'tokenHitRate') * 100, 2) + (Number.isNaN(med(a, 'tokenHitRate')) ? '' : ' %')]);
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
    const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
    console.log(line(header));
    for (const row of rows) console.log(line(row));
    const peers = arms.filter((a) => a.kind === 'peer');
    for (const c of arms.filter((a) => a.kind === 'cardline')) {
      console.log(`\n${c.name} / each peer (ratios of the medians; lower is better for latency and CPU):`);
      for (const p of peers) {
        console.log(
          `  / ${p.name}: throughput ${fmt(med(c, 'rps') / med(p, 'rps'), 2)} ×, p50 ${fmt(med(c, 'p50') / med(p, 'p50'), 2)} ×, p99 ${fmt(med(c, 'p99') / med(p, 'p99'), 2)} ×, ` +
            `CPU per request ${fmt(cpu(c) / cpu(p), 2)} × (Node ${fmt(med(c, 'nodeUs') / med(p, 'nodeUs'), 2)} ×, PostgreSQL ${fmt(med(c, 'pgUs') / med(p, 'pgUs'), 2)} ×)`,
        );
      }
      const requests = c.runs.reduce((n, r) => n + r.requests, 0);
      console.log(`  statements per request (pg_stat_statements over the measured rounds, ${requests} requests; mean execution time):`);
      for (const s of await statements(stats, c.database, requests)) console.log(`    ${s}`);
    }
    const fastify = peers.find((p) => p.name.startsWith('Fastify'));
    const mine = arms[0]!;
    if (fastify) {
      console.log('\nTargets (issue 28):');
      const target = (ok: boolean, what: string) => console.log(`  ${ok ? 'met    ' : 'NOT met'}  ${what}`);
      const tput = med(mine, 'rps') / med(fastify, 'rps');
      const share = cpu(mine) / cpu(fastify);
      target(tput >= 1.8, `pinned: throughput >= 1.8 × the Fastify peer's (${fmt(tput, 3)})`);
      target(share <= 0.5, `pinned: CPU per request (Node + PostgreSQL backends) <= 0.5 × the Fastify peer's (${fmt(share, 3)})`);
    }
  } finally {
    loader.stop();
    for (const arm of arms) await arm.stop().catch((err: unknown) => console.error(`stopping ${arm.name}: ${(err as Error).message}`));
    await stats.end();
    await postgres.stop();
  }
  if (bad > 0) {
    console.error(`FAIL: ${bad} non-2xx responses or errors`);
    return 1;
  }
  return 0;
}
