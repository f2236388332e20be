// `BENCH_AUTHORIZATIONS=1 npm run bench` (issue 29's first target): POST /v1/authorizations on a tenant with ten
// active rules — two velocity limits (per card over 24 h, per entity over 7 d, limits never reached) and eight
// condition rules that never decline — against limit upgrades, alternated in one run on one gateway (the
// PostgreSQL store by default: DATABASE_URL; BENCH_STORE=disk for PGlite). The authorizations go to 99 cards
// round-robin (the mock core's three and 96 issued before the first round), 0.01 EUR each, so that neither the
// credit line nor a limit declines.
//   Per run: req/s, p50/p99 (autocannon, BENCH_CONNECTIONS, default 32), CPU per request (the gateway process +
//   its PostgreSQL backends), statements sent to PostgreSQL per request, and the gateway's own share of a
//   request's latency (p50/p99): measured inside the gateway (bench/server.ts with BENCH_TIMING=1), from the HTTP
//   server's `request` event to the response's `finish`, minus the time in the core caller for that request. It
//   counts the store's round trips, the audit commit and any wait for the event loop or a pooled connection behind
//   the other 31 connections' requests; it does not count time before the server reads the request.
//   BENCH_BASELINE=DIR: a second gateway from another checkout (e.g. `git worktree add /tmp/base main`, with
//   node_modules linked), on a database of its own, alternated with this one in every round: before/after in one
//   run. Its gateway share and statements are measured when its bench/server.ts times requests (copy this one's
//   bench/server.ts there: the harness the same, the gateway's code the other checkout's).
//   That share under 32 busy connections is mostly queueing (32 ÷ throughput), so the p99 target is read from an
//   open-loop arm too: authorizations sent at a fixed rate below saturation (BENCH_OPEN_RATE req/s, default half the
//   lowest gateway's median authorization throughput), each on its own schedule whatever the others' answers, over
//   at most 32 keep-alive connections; the gateway's share is measured inside it as above (BENCH_OPEN_ROUNDS).
//   On PostgreSQL each run also prints the WAL it wrote and the segments the server had to create for it (a 16 MB
//   zero-fill every commit waits behind); before the open loop the server is given the spares it will use
//   (BENCH_WAL_WARM=0: not), as a server in steady state has them (decision 0446).
//   Each run, closed or open, also prints the gateway's GC during it (scavenges, their pause per second and the longest,
//   mark-compacts and the longest, the RSS after; from a checkout whose bench/server.ts reports them). BENCH_NODE_ARGS and
//   BENCH_BASELINE_NODE_ARGS: Node flags for this gateway and the baseline's (e.g. one checkout as both, a flag on one:
//   decision 0454).
// Prints each run, the medians per arm, and the ratio of authorizations to limit upgrades against the 0.8 target.
import { spawn, type ChildProcess } from 'node:child_process';
import { Agent, request as httpRequest } from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import { MasterKey } from '../src/crypto/master-key.js';
import { backendCpu, cpuBetween, statsClient } from './peer-harness.js';
import { temporaryDatabase } from './postgres.js';
import { compiled } from './dist.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SECONDS = Number(process.env.BENCH_SECONDS || '10');
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS || '32');
const ROUNDS = Number(process.env.BENCH_ROUNDS || '3');
const WARMUP = Number(process.env.BENCH_WARMUP_SECONDS || '3');
const STORE = process.env.BENCH_STORE || (process.env.DATABASE_URL ? 'postgres' : 'disk');
const PROFILE = process.env.BENCH_PROFILE === '1';
const DIST = process.env.BENCH_DIST === '1';
/** BENCH_AUTH_ONLY=1: the authorization arm alone (a CPU profile of its path without the limit upgrades'). */
const OPEN_ROUNDS = Number(process.env.BENCH_OPEN_ROUNDS || String(ROUNDS));
const ARMS = process.env.BENCH_AUTH_ONLY === '1' ? (['authorization'] as const) : process.env.BENCH_AUTH_ONLY === 'upgrade' ? (['upgrade'] as const) : (['upgrade', 'authorization'] as const);
/** Node flags for this checkout's gateway and the baseline's (BENCH_NODE_ARGS, BENCH_BASELINE_NODE_ARGS; space-separated). */
const nodeArgs = (label: string) => (process.env[label === 'this' ? 'BENCH_NODE_ARGS' : 'BENCH_BASELINE_NODE_ARGS'] ?? '').split(' ').filter(Boolean);
const CARDS = 99;
const APP = 'cardline_bench_authorizations';
const LIMIT_URL = '/credit-line-management/business-entity-manager/upgradeLimit';
const AUTH_URL = '/v1/authorizations';
const TARGET = 0.8;
/** BENCH_DRY=1: one request per arm; then this many, one at a time, to count statements per request. */
const DRY_REQUESTS = 200;

/** The ten active rules: two velocity limits that are never reached, eight conditions that never decline. */
export const BENCH_RULES: { name: string; kind: 'conditions' | 'velocity'; definition: object }[] = [
  { name: 'card daily spend', kind: 'velocity', definition: { velocity: { scope: 'card', window: '24h', limitAmount: '1000000.00', limitCount: 1_000_000 } } },
  { name: 'entity weekly spend', kind: 'velocity', definition: { velocity: { scope: 'entity', window: '7d', limitAmount: '10000000.00', limitCount: 1_000_000 } } },
  { name: 'no gambling', kind: 'conditions', definition: { conditions: [{ attribute: 'mcc', operation: 'is-one-of', values: ['7995', '7800', '7801', '7802'] }] } },
  { name: 'sanctioned countries', kind: 'conditions', definition: { conditions: [{ attribute: 'merchantCountry', operation: 'is-one-of', values: ['KP', 'IR', 'SY', 'CU'] }] } },
  {
    name: 'large ATM withdrawals',
    kind: 'conditions',
    definition: { conditions: [{ attribute: 'channel', operation: 'is-one-of', values: ['ATM'] }, { attribute: 'amount', operation: 'above', value: '500.00' }] },
  },
  { name: 'very large amounts', kind: 'conditions', definition: { conditions: [{ attribute: 'amount', operation: 'above', value: '20000.00' }] } },
  { name: 'euro only', kind: 'conditions', definition: { conditions: [{ attribute: 'currency', operation: 'is-not-one-of', values: ['EUR'] }] } },
  { name: 'blocked merchants', kind: 'conditions', definition: { conditions: [{ attribute: 'merchantId', operation: 'is-one-of', values: ['M-666', 'M-667', 'M-668'] }] } },
  {
    name: 'night e-commerce at crypto exchanges',
    kind: 'conditions',
    definition: { conditions: [{ attribute: 'localTime', operation: 'is-one-of', values: ['23:00-05:00'] }, { attribute: 'mcc', operation: 'is-one-of', values: ['6051'] }] },
  },
  {
    name: 'European merchants only',
    kind: 'conditions',
    definition: { conditions: [{ attribute: 'merchantCountry', operation: 'is-not-one-of', values: ['PT', 'ES', 'FR', 'DE', 'IT', 'NL', 'BE', 'IE', 'AT', 'LU'] }] },
  },
];

interface Gateway {
  label: string;
  child: ChildProcess;
  ports: { bare: number; full: number };
  database: string;
  drop: () => Promise<void>;
  token: string;
  cards: string[];
  timed: boolean;
}

interface Run {
  rps: number;
  p50: number;
  p99: number;
  cpuUs: number;
  pgCpuUs: number;
  statements: number | null;
  gatewayP50: number | null;
  gatewayP99: number | null;
  bad: number;
  load: number;
  /** The gateway's event loop busy (0-1), its audit records per batch and a batch's mean commit time (ms). */
  elu: number | null;
  perBatch: number | null;
  commitMs: number | null;
  /** WAL the server wrote during the run (bytes), and the segments it created for it (walCreated). */
  walBytes: number | null;
  walCreated: number | null;
  gc: GcFigures;
}

/** Scavenges and mark-compacts during a run: count, ms of pause per second of run, the longest (ms); the RSS after (MB). */
interface GcFigures {
  scavenges: number | null;
  scavengeMsPerS: number | null;
  scavengeMax: number | null;
  majors: number | null;
  majorMax: number | null;
  rssMb: number | null;
}
type Pauses = Record<string, { n: number; ms: number; max: number }>;
function gcFigures(before: ServerStats, after: ServerStats, seconds: number): GcFigures {
  const kind = (k: string) => (after.gc ? { n: (after.gc[k]?.n ?? 0) - (before.gc?.[k]?.n ?? 0), ms: (after.gc[k]?.ms ?? 0) - (before.gc?.[k]?.ms ?? 0), max: after.gc[k]?.max ?? 0 } : null);
  const minor = kind('1');
  const major = kind('4');
  return {
    scavenges: minor?.n ?? null,
    scavengeMsPerS: minor ? minor.ms / seconds : null,
    scavengeMax: minor?.max ?? null,
    majors: major?.n ?? null,
    majorMax: major?.max ?? null,
    rssMb: after.rss ? after.rss / 1e6 : null,
  };
}
const gcLine = (g: GcFigures) =>
  g.scavenges === null ? '' : `  GC: ${g.scavenges} scavenges (${fmt(g.scavengeMsPerS, 1)} ms/s, longest ${fmt(g.scavengeMax, 1)} ms), ${g.majors} mark-compact (longest ${fmt(g.majorMax, 1)} ms), RSS ${fmt(g.rssMb)} MB`;

const fmt = (n: number | null | undefined, digits = 0) => (n === null || n === undefined || !Number.isFinite(n) ? '—' : n.toFixed(digits));
const median = (v: number[]) => {
  const s = v.filter(Number.isFinite).sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

/** Seeds a tenant (bench/server.ts's seed phase of `dir`), adds the rules, and starts that checkout's gateway on it. */
async function startGateway(label: string, dir: string): Promise<Gateway> {
  const database = STORE === 'postgres' ? await temporaryDatabase('cardline_bench_auth') : null;
  const dataDir = STORE === 'postgres' ? null : mkdtempSync(join(tmpdir(), 'cardline-bench-auth-'));
  const tokensDir = mkdtempSync(join(tmpdir(), 'cardline-bench-tokens-'));
  const tokensFile = join(tokensDir, 'tokens.json');
  const url = database ? new URL(database.url) : null;
  url?.searchParams.set('application_name', APP);
  const env = {
    ...process.env,
    NODE_ENV: 'production',
    ...(url ? { BENCH_DATABASE_URL: url.toString() } : { BENCH_DATA_DIR: join(dataDir!, 'pglite') }),
    BENCH_TOKENS_FILE: tokensFile,
    BENCH_MASTER_KEY: MasterKey.generate(),
    BENCH_TENANTS: '1',
    BENCH_PORT_BASE: '0',
    BENCH_TIMING: '1',
  };
  const server = join(dir, 'bench', 'server.ts');
  const seeder = spawn(process.execPath, ['--import', 'tsx', server], { cwd: dir, env: { ...env, BENCH_PHASE: 'seed' }, stdio: ['ignore', 'ignore', 'inherit'] });
  if ((await new Promise<number | null>((r) => seeder.once('exit', r))) !== 0) throw new Error(`${label}: seeding failed`);
  await addRules(database?.url ?? null, join(dataDir ?? '', 'pglite'));
  // BENCH_DIST=1: served by the compiled gateway of that checkout (bench/dist.ts), as `npm start` runs it, not through tsx.
  const served = DIST ? [await compiled(dir)] : ['--import', 'tsx', server];
  const args = [...nodeArgs(label), ...(PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${join(ROOT, 'bench', 'profiles')}`] : []), ...served];
  const child = spawn(process.execPath, args, { cwd: dir, env: { ...env, BENCH_PHASE: 'serve' }, stdio: ['pipe', 'pipe', 'inherit'] });
  const ports = await new Promise<{ bare: number; full: number }>((ok, fail) => {
    child.once('exit', (code) => fail(new Error(`${label}: gateway exited with ${code}`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      try {
        const msg = JSON.parse(line) as { benchPorts?: { bare: number; full: number } };
        if (msg.benchPorts) ok(msg.benchPorts);
      } catch {
        process.stderr.write(`[${label}] ${line}\n`);
      }
    });
  });
  const { token } = (JSON.parse(readFileSync(tokensFile, 'utf8')) as { token: string }[])[0]!;
  rmSync(tokensDir, { recursive: true, force: true });
  const g: Gateway = {
    label,
    child,
    ports,
    database: url ? url.pathname.slice(1) : '',
    drop: async () => {
      await database?.drop();
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
    token,
    cards: ['CARD-3001', 'CARD-3002', 'CARD-3003'],
    // A checkout whose bench/server.ts does not time requests answers 404 here.
    timed: (await fetch(`http://127.0.0.1:${ports.bare}/__bench/timing`)).status === 200,
  };
  // 96 more cards, 32 per entity, issued through the API (the mock core keeps them in the gateway's process).
  for (let i = 0; i < CARDS - 3; i++) {
    const entity = `ENT-100${(i % 3) + 1}`;
    const r = await fetch(`http://127.0.0.1:${ports.full}/v1/entities/${entity}/cards`, { method: 'POST', headers: headers(g), body: '{}' });
    const body = (await r.json()) as { result?: { card?: { cardId: string } } };
    if (r.status !== 201 || !body.result?.card) throw new Error(`${label}: issuing a card answered ${r.status}: ${JSON.stringify(body)}`);
    g.cards.push(body.result.card.cardId);
  }
  return g;
}

/**
 * BENCH_AUTH_SHADOW=1: each velocity rule has a shadow version beside its active one (the same definition), so its
 * counters are never spent from a grant (decision 0398): every authorization counts in the store, as near a limit.
 */
const SHADOW = process.env.BENCH_AUTH_SHADOW === '1';

/** The ten rules, written as the admin API writes them (one active version each), before the gateway starts. */
async function addRules(databaseUrl: string | null, dataDir: string): Promise<void> {
  const insert = `INSERT INTO auth_rules (tenant_id, id, name, level, target_id, kind, active_version, shadow_version, latest_version) VALUES ('demo', $1::uuid, $2, 'tenant', '', $3, 1, $4::integer, coalesce($4::integer, 1))`;
  const version = `INSERT INTO auth_rule_versions (tenant_id, rule_id, version, definition, created_by) VALUES ('demo', $1::uuid, $2, $3::jsonb, 'bench')`;
  const statements = BENCH_RULES.flatMap((r) => {
    const id = crypto.randomUUID();
    const shadow = SHADOW && r.kind === 'velocity' ? 2 : null;
    const definition = JSON.stringify(r.definition);
    return [
      [insert, [id, r.name, r.kind, shadow]],
      [version, [id, 1, definition]],
      ...(shadow ? [[version, [id, shadow, definition]]] : []),
    ] as [string, unknown[]][];
  });
  if (databaseUrl) {
    const c = new pg.Client({ connectionString: databaseUrl });
    await c.connect();
    try {
      for (const [sql, params] of statements) await c.query(sql, params);
    } finally {
      await c.end();
    }
    return;
  }
  const { PGlite } = await import('@electric-sql/pglite');
  const db = await PGlite.create(dataDir);
  for (const [sql, params] of statements) await db.query(sql, params);
  await db.close();
}

const headers = (g: Gateway): Record<string, string> => ({ 'content-type': 'application/json', 'X-TENANT-ID': 'demo', authorization: `Bearer ${g.token}` });

async function load(g: Gateway, arm: 'authorization' | 'upgrade', seconds: number): Promise<autocannon.Result> {
  let i = 0;
  const base = headers(g);
  return autocannon({
    url: `http://127.0.0.1:${g.ports.full}`,
    connections: CONNECTIONS,
    duration: seconds,
    timeout: 10,
    requests: [
      {
        method: 'POST',
        path: arm === 'upgrade' ? LIMIT_URL : AUTH_URL,
        setupRequest: (req) => {
          const n = i++;
          // A request id the gateway keeps (no run of 12 digits): the gateway's share is matched by it.
          req.headers = { ...base, 'x-request-id': `bench-${n.toString(36)}` };
          req.body =
            arm === 'upgrade'
              ? JSON.stringify({ entityId: 'ENT-1001', amount: '60000.00' })
              : JSON.stringify({
                  cardId: g.cards[n % g.cards.length],
                  amount: '0.01',
                  currency: 'EUR',
                  merchant: { name: 'Bench Cafe', id: 'M-1001', mcc: '5814', country: 'PT' },
                  channel: 'POS',
                });
          return req;
        },
      },
    ],
  });
}

const authBody = (g: Gateway, n: number) =>
  JSON.stringify({ cardId: g.cards[n % g.cards.length], amount: '0.01', currency: 'EUR', merchant: { name: 'Bench Cafe', id: 'M-1001', mcc: '5814', country: 'PT' }, channel: 'POS' });

/** Open loop: authorizations sent every 1/rate s whatever the answers (at most CONNECTIONS sockets; more wait in the agent). */
async function openLoop(g: Gateway, rate: number, seconds: number): Promise<{ sent: number; p99: number; bad: number }> {
  const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const base = headers(g);
  const latencies: number[] = [];
  let bad = 0;
  let sent = 0;
  const inflight: Promise<void>[] = [];
  const one = (n: number) =>
    new Promise<void>((done) => {
      const body = authBody(g, n);
      const t0 = performance.now();
      const req = httpRequest(
        { host: '127.0.0.1', port: g.ports.full, path: AUTH_URL, method: 'POST', agent, headers: { ...base, 'x-request-id': `open-${n.toString(36)}`, 'content-length': Buffer.byteLength(body) } },
        (res) => {
          res.resume();
          res.on('end', () => {
            if (res.statusCode !== 201 && res.statusCode !== 200) bad++;
            latencies.push(performance.now() - t0);
            done();
          });
        },
      );
      req.on('error', () => {
        bad++;
        done();
      });
      req.end(body);
    });
  const start = performance.now();
  while (performance.now() - start < seconds * 1000) {
    const due = Math.floor(((performance.now() - start) / 1000) * rate);
    while (sent < due) inflight.push(one(sent++));
    await new Promise((r) => setTimeout(r, 1));
  }
  await Promise.all(inflight);
  agent.destroy();
  latencies.sort((a, b) => a - b);
  return { sent, p99: latencies[Math.min(latencies.length - 1, Math.floor(0.99 * latencies.length))] ?? NaN, bad };
}

interface ServerStats {
  cpu: NodeJS.CpuUsage;
  rss?: number;
  gc?: Pauses;
  auditRows: number;
  elu?: { idle: number; active: number };
  audit?: { batches: number; records: number; commitSeconds?: number };
}
interface Timing {
  paths: Record<string, { n: number; p50: number; p99: number; auditP99?: number; ownP99?: number }>;
  statements: number;
}
const get = async <T>(port: number, path: string): Promise<T> => (await (await fetch(`http://127.0.0.1:${port}${path}`)).json()) as T;

/** Between two reads of a gateway's stats: its event loop's utilisation, records per audit batch, a batch's mean commit. */
function batchFigures(before: ServerStats, after: ServerStats): Pick<Run, 'elu' | 'perBatch' | 'commitMs'> {
  const idle = after.elu && before.elu ? after.elu.idle - before.elu.idle : NaN;
  const active = after.elu && before.elu ? after.elu.active - before.elu.active : NaN;
  const batches = (after.audit?.batches ?? NaN) - (before.audit?.batches ?? NaN);
  const commit = (after.audit?.commitSeconds ?? NaN) - (before.audit?.commitSeconds ?? NaN);
  return {
    elu: Number.isFinite(active / (idle + active)) ? active / (idle + active) : null,
    perBatch: batches > 0 ? ((after.audit?.records ?? NaN) - (before.audit?.records ?? NaN)) / batches : null,
    commitMs: batches > 0 && Number.isFinite(commit) ? (1000 * commit) / batches : null,
  };
}

/** The server's WAL: bytes written so far, its current segment, the spare segments recycled ahead of it, checkpoints so far. */
interface Wal {
  bytes: number;
  size: number;
  segment: number;
  spares: number;
  checkpoints: number;
}

/** Null where the server does not let the bench read its WAL directory (pg_ls_waldir needs pg_monitor). */
async function walState(c: pg.Client | null): Promise<Wal | null> {
  if (!c) return null;
  try {
    const r = await c.query<{ bytes: string; size: string; spares: number; checkpoints: number }>(
      `SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint::text AS bytes, (SELECT setting FROM pg_settings WHERE name = 'wal_segment_size') AS size,
              (SELECT count(*) FROM pg_ls_waldir() w WHERE w.name ~ '^[0-9A-F]{24}$' AND w.name > pg_walfile_name(pg_current_wal_lsn()))::int AS spares,
              (SELECT checkpoints_timed + checkpoints_req FROM pg_stat_bgwriter)::int AS checkpoints`,
    );
    const row = r.rows[0]!;
    return { bytes: Number(row.bytes), size: Number(row.size), segment: Math.floor(Number(row.bytes) / Number(row.size)), spares: row.spares, checkpoints: row.checkpoints };
  } catch {
    return null;
  }
}

/**
 * Segments the server had to create during a run: those it moved past beyond the spares it had. Each is a 16 MB
 * zero-fill and flush under the WAL write lock, which every commit meanwhile waits behind (decision 0446).
 */
const walCreated = (before: Wal | null, after: Wal | null): number | null =>
  before && after && after.checkpoints === before.checkpoints ? Math.max(0, after.segment - before.segment - before.spares) : null;

/**
 * Gives the server `segments` spare WAL segments before a measure, as a server in steady state has them (recycled at
 * each checkpoint): a young one creates each on the commit path. Each switch after a record ends a segment, and the
 * checkpoint recycles the ended ones as spares. Returns how many were made.
 */
async function warmWal(c: pg.Client | null, segments: number): Promise<number> {
  const w = await walState(c);
  if (!c || !w || w.spares >= segments) return 0;
  for (let i = 0; i <= segments - w.spares; i++) await c.query(`SELECT pg_logical_emit_message(false, 'cardline-bench', ''), pg_switch_wal()`);
  await c.query('CHECKPOINT');
  return segments - w.spares;
}

async function measure(g: Gateway, arm: 'authorization' | 'upgrade', stats: pg.Client | null): Promise<Run> {
  const timingBefore = g.timed ? await get<Timing>(g.ports.bare, '/__bench/timing') : null;
  const before = await get<ServerStats>(g.ports.bare, '/__bench/stats');
  const pgBefore = stats && g.database ? await backendCpu(stats, g.database, APP) : null;
  const walBefore = await walState(stats);
  const r = await load(g, arm, SECONDS);
  const walAfter = await walState(stats);
  const pgAfter = stats && g.database ? await backendCpu(stats, g.database, APP) : null;
  const after = await get<ServerStats>(g.ports.bare, '/__bench/stats');
  const timing = g.timed ? await get<Timing>(g.ports.bare, '/__bench/timing') : null;
  // Every request of either arm writes one audit record: the count of requests the server completed.
  const requests = Math.max(1, after.auditRows - before.auditRows);
  const path = timing?.paths[arm === 'upgrade' ? LIMIT_URL : AUTH_URL];
  return {
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    cpuUs: (after.cpu.user - before.cpu.user + after.cpu.system - before.cpu.system) / requests,
    pgCpuUs: pgBefore && pgAfter ? cpuBetween(pgBefore, pgAfter) / requests : 0,
    // The stats endpoint's own count(*) and the timing read are two statements per run: negligible.
    statements: timing && timingBefore ? (timing.statements - timingBefore.statements) / requests : null,
    gatewayP50: path?.p50 ?? null,
    gatewayP99: path?.p99 ?? null,
    bad: r.non2xx + r.errors + r.timeouts,
    load: loadavg()[0]!,
    ...batchFigures(before, after),
    walBytes: walBefore && walAfter ? walAfter.bytes - walBefore.bytes : null,
    walCreated: walCreated(walBefore, walAfter),
    gc: gcFigures(before, after, SECONDS),
  };
}

async function stop(g: Gateway): Promise<void> {
  g.child.stdin?.end();
  g.child.kill('SIGTERM');
  await new Promise((r) => (g.child.exitCode !== null ? r(null) : g.child.once('exit', r)));
  await g.drop();
}

export async function benchAuthorizations(): Promise<number> {
  if (STORE === 'postgres' && !process.env.DATABASE_URL) throw new Error('BENCH_STORE=postgres needs DATABASE_URL');
  const baseline = process.env.BENCH_BASELINE;
  console.log(
    `Cardline authorizations bench: POST ${AUTH_URL} (10 active rules: 2 velocity limits, 8 conditions; ${CARDS} cards) vs POST ${LIMIT_URL}, ` +
      `${CONNECTIONS} connections, ${SECONDS} s per run, ${ROUNDS} rounds alternated, warm-up ${WARMUP} s each; store ${STORE}; mock core in process; node ${process.version}` +
      (DIST ? '; the compiled gateway (dist/)' : '; the gateway through tsx') +
      (baseline ? `; baseline gateway from ${baseline}` : ''),
  );
  const stats = STORE === 'postgres' ? await statsClient() : null;
  const gateways: Gateway[] = [];
  let bad = 0;
  try {
    gateways.push(await startGateway('this', ROOT));
    if (baseline) gateways.push(await startGateway('baseline', resolve(baseline)));
    // BENCH_DRY=1: started, seeded and each arm answered once, without load (a check of the set-up).
    if (process.env.BENCH_DRY === '1') {
      for (const g of gateways) {
        for (const [path, body] of [
          [AUTH_URL, { cardId: g.cards.at(-1), amount: '0.01', currency: 'EUR', merchant: { name: 'Bench Cafe', id: 'M-1001', mcc: '5814', country: 'PT' }, channel: 'POS' }],
          [LIMIT_URL, { entityId: 'ENT-1001', amount: '60000.00' }],
        ] as const) {
          const r = await fetch(`http://127.0.0.1:${g.ports.full}${path}`, { method: 'POST', headers: { ...headers(g), 'x-request-id': 'bench-dry' }, body: JSON.stringify(body) });
          console.log(`${g.label} ${path}: ${r.status} ${(await r.text()).slice(0, 1500)}`);
        }
        if (!g.timed) continue;
        // Statements sent to PostgreSQL per request, one request at a time (a count, not a timing: the audit
        // writer commits each record on its own here, where under load it batches them).
        for (const arm of ['upgrade', 'authorization'] as const) {
          const before = await get<Timing>(g.ports.bare, '/__bench/timing');
          for (let i = 0; i < DRY_REQUESTS; i++) {
            const body =
              arm === 'upgrade'
                ? { entityId: 'ENT-1001', amount: '60000.00' }
                : { cardId: g.cards[i % g.cards.length], amount: '0.01', currency: 'EUR', merchant: { name: 'Bench Cafe', id: 'M-1001', mcc: '5814', country: 'PT' }, channel: 'POS' };
            const r = await fetch(`http://127.0.0.1:${g.ports.full}${arm === 'upgrade' ? LIMIT_URL : AUTH_URL}`, { method: 'POST', headers: headers(g), body: JSON.stringify(body) });
            await r.arrayBuffer();
          }
          const after = await get<Timing>(g.ports.bare, '/__bench/timing');
          console.log(`${g.label} ${arm}: ${fmt((after.statements - before.statements) / DRY_REQUESTS, 2)} statements/request over ${DRY_REQUESTS} requests one at a time`);
        }
      }
      return 0;
    }
    const runs = new Map<string, Run[]>();
    const arms = gateways.flatMap((g) => ARMS.map((arm) => ({ g, arm, key: `${g.label} ${arm}` })));
    for (const { g, arm } of arms) if (WARMUP > 0) await load(g, arm, WARMUP);
    for (let round = 1; round <= ROUNDS; round++) {
      // Alternated, and in the opposite order every other round, so that neither arm always runs on a warmer machine.
      for (const { g, arm, key } of round % 2 ? arms : [...arms].reverse()) {
        const r = await measure(g, arm, stats);
        bad += r.bad;
        (runs.get(key) ?? runs.set(key, []).get(key)!).push(r);
        console.log(
          `round ${round}  ${key.padEnd(24)} ${fmt(r.rps).padStart(6)} req/s  p50 ${fmt(r.p50, 1)} ms  p99 ${fmt(r.p99, 1)} ms  CPU ${fmt(r.cpuUs)} + ${fmt(r.pgCpuUs)} (PostgreSQL) µs/req` +
            `${r.statements !== null ? `  ${fmt(r.statements, 2)} statements/req` : ''}${r.gatewayP99 !== null ? `  gateway share p50 ${fmt(r.gatewayP50, 2)} ms, p99 ${fmt(r.gatewayP99, 2)} ms` : ''}` +
            `  event loop ${fmt(r.elu === null ? null : 100 * r.elu)} %  ${fmt(r.perBatch, 1)} records/batch, ${fmt(r.commitMs, 2)} ms/commit` +
            `${r.walBytes !== null ? `  WAL ${fmt(r.walBytes / 1e6, 1)} MB, ${fmt(r.walCreated)} segment(s) created` : ''}` +
            `${gcLine(r.gc)}  load ${fmt(r.load, 1)}${r.bad ? `  ${r.bad} non-2xx/errors` : ''}`,
        );
      }
    }
    const med = (key: string, f: (r: Run) => number | null) => median((runs.get(key) ?? []).map((r) => f(r) ?? NaN));
    console.log(`\nMedians over ${ROUNDS} rounds (CPU = gateway process + its PostgreSQL backends, µs/req; load average ${fmt(median([...runs.values()].flat().map((r) => r.load)), 1)}):`);
    console.log('| arm | req/s | p50 ms | p99 ms | CPU µs/req (Node + PostgreSQL) | statements/req | gateway share p50 / p99 ms |\n|---|---|---|---|---|---|---|');
    for (const { key } of arms) {
      console.log(
        `| ${key} | ${fmt(med(key, (r) => r.rps))} | ${fmt(med(key, (r) => r.p50), 1)} | ${fmt(med(key, (r) => r.p99), 1)} | ` +
          `${fmt(med(key, (r) => r.cpuUs))} + ${fmt(med(key, (r) => r.pgCpuUs))} = ${fmt(med(key, (r) => r.cpuUs + r.pgCpuUs))} | ${fmt(med(key, (r) => r.statements), 2)} | ` +
          `${fmt(med(key, (r) => r.gatewayP50), 2)} / ${fmt(med(key, (r) => r.gatewayP99), 2)} |`,
      );
    }
    // Open loop below saturation: the same rate for every gateway, alternated.
    const openRate = Number(process.env.BENCH_OPEN_RATE) || Math.round(0.5 * Math.min(...gateways.map((g) => med(`${g.label} authorization`, (r) => r.rps))));
    const open = new Map<string, { p99: number; share: number[] }[]>();
    const openRuns = ARMS.length === 2 && Number.isFinite(openRate) ? OPEN_ROUNDS : 0;
    // The WAL the open loop will write (per authorization as the closed rounds wrote it, half again), made ready as spares.
    const perAuthorization = median([...runs].flatMap(([key, rs]) => (key.endsWith('authorization') ? rs.map((r) => (r.walBytes ?? NaN) / (r.rps * SECONDS)) : [])));
    const wal = await walState(stats);
    if (openRuns && wal && Number.isFinite(perAuthorization) && process.env.BENCH_WAL_WARM !== '0') {
      const made = await warmWal(stats, Math.ceil((1.5 * perAuthorization * openRate * SECONDS * openRuns * gateways.length) / wal.size) + 2);
      console.log(`WAL: ${fmt(perAuthorization)} bytes per authorization; ${made} spare segment(s) made for the open loop (BENCH_WAL_WARM=0: none)`);
    }
    // Unmeasured, after the checkpoint that made the spares: the first writes to each page after it log the whole page,
    // which would otherwise fall on whichever gateway runs first.
    if (openRuns && WARMUP > 0) for (const g of gateways) bad += (await openLoop(g, openRate, WARMUP)).bad;
    for (let round = 1; round <= openRuns; round++) {
      for (const g of round % 2 ? gateways : [...gateways].reverse()) {
        if (g.timed) await get<Timing>(g.ports.bare, '/__bench/timing');
        const walBefore = await walState(stats);
        const statsBefore = await get<ServerStats>(g.ports.bare, '/__bench/stats');
        const r = await openLoop(g, openRate, SECONDS);
        const gc = gcFigures(statsBefore, await get<ServerStats>(g.ports.bare, '/__bench/stats'), SECONDS);
        const walAfter = await walState(stats);
        const created = walCreated(walBefore, walAfter);
        bad += r.bad;
        const path = g.timed ? (await get<Timing>(g.ports.bare, '/__bench/timing')).paths[AUTH_URL] : undefined;
        (open.get(g.label) ?? open.set(g.label, []).get(g.label)!).push({ p99: r.p99, share: [path?.p50 ?? NaN, path?.p99 ?? NaN, path?.auditP99 ?? NaN, path?.ownP99 ?? NaN] });
        console.log(
          `open ${round}  ${g.label.padEnd(10)} ${openRate} req/s offered, ${fmt(r.sent / SECONDS)} sent  client p99 ${fmt(r.p99, 1)} ms` +
            `  gateway share p50 ${fmt(path?.p50, 2)} ms, p99 ${fmt(path?.p99, 2)} ms (p99 of its audit commit wait ${fmt(path?.auditP99, 2)} ms, of the rest ${fmt(path?.ownP99, 2)} ms)` +
            `${walBefore && walAfter ? `  WAL ${fmt((walAfter.bytes - walBefore.bytes) / 1e6, 1)} MB, ${fmt(created)} segment(s) created` : ''}${gcLine(gc)}  load ${fmt(loadavg()[0], 1)}${r.bad ? `  ${r.bad} non-2xx/errors` : ''}`,
        );
      }
    }
    console.log('\nTargets:');
    for (const g of ARMS.length === 2 ? gateways : []) {
      // The ratio of each round's authorizations to its limit upgrades, median over the rounds.
      const a = runs.get(`${g.label} authorization`)!;
      const u = runs.get(`${g.label} upgrade`)!;
      const ratio = median(a.map((r, i) => r.rps / u[i]!.rps));
      const cpu = median(a.map((r, i) => (r.cpuUs + r.pgCpuUs) / (u[i]!.cpuUs + u[i]!.pgCpuUs)));
      console.log(`  ${ratio >= TARGET ? 'met    ' : 'NOT met'}  ${g.label}: authorizations / limit upgrades throughput >= ${TARGET} (${fmt(ratio, 3)}, median of the rounds' ratios; CPU per request ${fmt(cpu, 2)} ×)`);
      if (g.timed) {
        const p99 = med(`${g.label} authorization`, (r) => r.gatewayP99);
        const openP99 = median((open.get(g.label) ?? []).map((o) => o.share[1]!));
        console.log(
          `  ${openP99 < 5 ? 'met    ' : 'NOT met'}  ${g.label}: gateway's own share of an authorization's latency < 5 ms at p99, open loop at ${openRate} req/s over up to ${CONNECTIONS} connections ` +
            `(${fmt(openP99, 2)} ms, median of ${open.get(g.label)?.length ?? 0} runs; p99 of the audit commit wait ${fmt(median((open.get(g.label) ?? []).map((o) => o.share[2]!)), 2)} ms, ` +
            `of the rest ${fmt(median((open.get(g.label) ?? []).map((o) => o.share[3]!)), 2)} ms; closed loop at ${CONNECTIONS} busy connections, queueing included: ${fmt(p99, 2)} ms)`,
        );
      }
    }
  } finally {
    for (const g of gateways) await stop(g);
    await stats?.end();
  }
  if (bad > 0) console.error(`FAIL: ${bad} non-2xx answers or errors`);
  return bad > 0 ? 1 : 0;
}
