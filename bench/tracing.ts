// The tracing arm (BENCH_TRACING=1 npm run bench): three gateways on in-memory stores, started as bench/run.ts
// starts its `full` target — tracing off (no OTEL_* variable), on with every request sampled, and on at 10 %
// (parentbased_traceidratio 0.1) — both exporting to a local OTLP/HTTP receiver in a process of its own
// (bench/otlp-sink.ts); loaded in turn, round after round, so that the machine's load falls on all three alike.
// Prints each arm's median throughput and its ratio to the off arm (targets: off within 2 % of before, on at
// least 0.85x), and the CPU time each request cost the gateway's process (all its threads), its main thread
// and the receiver: on a shared machine the CPU time per request holds where throughput does not.
// BENCH_BASELINE_ROOT, a checkout of a commit from before the instrumentation (installed with npm ci), adds an
// arm: that gateway, loaded in the same rounds, which is what "before" means.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';
import { MasterKey } from '../src/crypto/master-key.js';
import { temporaryDatabase } from './postgres.js';

const ROOT = resolve(import.meta.dirname, '..');
const LIMIT_URL = '/credit-line-management/business-entity-manager/upgradeLimit';
const BODY = JSON.stringify({ entityId: 'ENT-1001', amount: '60000.00' });
const int = (name: string, fallback: number) => (Number.isInteger(Number(process.env[name])) && Number(process.env[name]) > 0 ? Number(process.env[name]) : fallback);
const SECONDS = int('BENCH_SECONDS', 10);
const ROUNDS = int('BENCH_ROUNDS', 3);
const CONNECTIONS = int('BENCH_CONNECTIONS', 32);

// BENCH_CPU_PROF=dir: each gateway writes V8 CPU profiles of its threads in dir/<arm> when it stops (profiling
// slows the embedded store's thread much more than the main thread: a profiled run's throughput means nothing).
const CPU_PROF = process.env.BENCH_CPU_PROF ? resolve(process.env.BENCH_CPU_PROF) : undefined;

interface Arm {
  key: string;
  name: string;
  env: Record<string, string>;
  root?: string;
  child?: ChildProcess;
  port?: number;
  statsPort?: number;
  token?: string;
  rps: number[];
  /** CPU time of the gateway's process (every thread) per request, µs, one figure a round. */
  cpu: number[];
  /** The main thread's busy time (event-loop utilisation × wall time) per request, µs. */
  main: number[];
  /** The OTLP receiver's CPU time per request of this arm, µs. */
  sink: number[];
  /** BENCH_CPU_PROF: the measured loads' [start, end) on the profiles' clock (monotonic, µs) and their requests. */
  windows?: [number, number][];
  requests?: number;
  /** The audit writer's mean batch (records per group commit) in each round. */
  batch: number[];
}

interface Stats {
  elu: { idle: number; active: number; utilization: number };
  cpu: { user: number; system: number };
  audit?: { batches: number; records: number };
}

async function stats(arm: Arm): Promise<Stats> {
  if (!arm.statsPort) return { elu: { idle: 0, active: 0, utilization: 0 }, cpu: { user: 0, system: 0 } };
  const res = await fetch(`http://127.0.0.1:${arm.statsPort}/__bench/stats`);
  return (await res.json()) as Stats;
}

/** The receiver of the arms that export: a process of its own (bench/otlp-sink.ts), its CPU counted apart. */
async function startSink(): Promise<{ endpoint: string; child: ChildProcess; stats: () => Promise<{ spans: number; bytes: number; cpu: { user: number; system: number } }> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'bench', 'otlp-sink.ts')], { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] });
  const endpoint = await new Promise<string>((resolveStarted, reject) => {
    child.once('exit', (code) => reject(new Error(`OTLP sink exited with ${code}`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line.startsWith('{"otlpSink"')) resolveStarted((JSON.parse(line) as { otlpSink: string }).otlpSink);
    });
  });
  return { endpoint, child, stats: async () => (await (await fetch(`${endpoint}/stats`)).json()) as { spans: number; bytes: number; cpu: { user: number; system: number } } };
}

// BENCH_TRACING_STORE=postgres: each arm on a database of its own on DATABASE_URL's server, dropped at the end.
const ON_POSTGRES = process.env.BENCH_TRACING_STORE === 'postgres';
const drops: (() => Promise<void>)[] = [];

async function start(arm: Arm): Promise<void> {
  const store: Record<string, string> = {};
  if (ON_POSTGRES) {
    const database = await temporaryDatabase('cardline_bench_tracing');
    drops.push(database.drop);
    store.BENCH_DATABASE_URL = database.url;
  }
  const dir = mkdtempSync(join(tmpdir(), 'cardline-bench-tracing-'));
  const tokensFile = join(dir, 'tokens.json');
  const root = arm.root ?? ROOT;
  // A directory per arm; in it one profile per thread (the main thread's and the embedded store's), named by Node.
  const prof = CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${join(CPU_PROF, arm.key)}`] : [];
  const child = spawn(process.execPath, [...prof, '--import', 'tsx', join(root, 'bench', 'server.ts')], {
    cwd: root,
    env: { ...process.env, ...arm.env, ...store, NODE_ENV: 'production', BENCH_TOKENS_FILE: tokensFile, BENCH_MASTER_KEY: MasterKey.generate(), BENCH_PHASE: 'all' },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  arm.child = child;
  await new Promise<void>((resolveStarted, reject) => {
    child.once('exit', (code) => reject(new Error(`${arm.name}: bench server exited with ${code}`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (!line.startsWith('{"benchPorts"')) return;
      const ports = (JSON.parse(line) as { benchPorts: { full: number; bare: number } }).benchPorts;
      arm.port = ports.full;
      arm.statsPort = ports.bare;
      arm.token = (JSON.parse(readFileSync(tokensFile, 'utf8')) as { token: string }[])[0]!.token;
      rmSync(dir, { recursive: true, force: true });
      resolveStarted();
    });
  });
}

async function load(arm: Arm, seconds: number): Promise<{ rps: number; total: number }> {
  const result = await autocannon({
    url: `http://127.0.0.1:${arm.port}`,
    connections: CONNECTIONS,
    duration: seconds,
    requests: [{ method: 'POST', path: LIMIT_URL, body: BODY, headers: { 'content-type': 'application/json', TENANT: 'demo', authorization: `Bearer ${arm.token}` } }],
  });
  if (result.non2xx || result.errors) throw new Error(`${arm.name}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  return { rps: result.requests.average, total: result.requests.total };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
/** An arm's audit batch size, or what a gateway that reports none (an older checkout) prints instead of NaN. */
const batchOf = (n: number | undefined): string => (n === undefined || Number.isNaN(n) ? 'unknown size (not reported)' : `${n.toFixed(1)} records`);

const cpuOf = (c: { user: number; system: number }) => c.user + c.system;

export async function benchTracing(): Promise<number> {
  const sink = await startSink();
  const exporting = { OTEL_EXPORTER_OTLP_ENDPOINT: sink.endpoint, OTEL_SERVICE_NAME: 'cardline-bench' };
  let arms: Arm[] = (
    [
    { key: 'off', name: 'tracing off', env: {} },
    { key: 'on', name: 'tracing on, every request', env: { ...exporting, OTEL_TRACES_SAMPLER: 'always_on' } },
    { key: '10', name: 'tracing on, 10 %', env: { ...exporting, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' } },
    // Not run unless named: every request, exported as protobuf instead of the default JSON.
    { key: 'on-proto', name: 'tracing on, every request, http/protobuf', env: { ...exporting, OTEL_TRACES_SAMPLER: 'always_on', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' } },
    // Not run unless BENCH_TRACING_ARMS names it: tracing off with an AsyncLocalStorage enabled (what the
    // context manager alone costs every request).
    { key: 'als', name: 'tracing off, AsyncLocalStorage on', env: { BENCH_ASYNC_LOCAL_STORAGE: '1' } },
    // Not run unless named: CARDLINE_TRACING_CONTEXT=explicit (no AsyncLocalStorage, decision 0456).
    { key: 'on-explicit', name: 'tracing on, every request, explicit context', env: { ...exporting, OTEL_TRACES_SAMPLER: 'always_on', CARDLINE_TRACING_CONTEXT: 'explicit' } },
    { key: '10-explicit', name: 'tracing on, 10 %, explicit context', env: { ...exporting, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1', CARDLINE_TRACING_CONTEXT: 'explicit' } },
    ] as Pick<Arm, 'key' | 'name' | 'env'>[]
  ).map((a) => ({ ...a, rps: [], cpu: [], main: [], sink: [], batch: [] }));
  // BENCH_TRACING_BEFORE_ROOT, a checkout of an earlier commit of the tracing (node_modules linked): its two
  // tracing arms too (keys on-before, 10-before), in the same rounds, so that a change is compared A/B.
  const before = process.env.BENCH_TRACING_BEFORE_ROOT;
  if (before) {
    for (const arm of arms.filter((a) => a.key !== 'off' && !a.key.endsWith('-explicit'))) arms.push({ ...arm, key: `${arm.key}-before`, name: `${arm.name} (${before})`, root: resolve(before), rps: [], cpu: [], main: [], sink: [], batch: [] });
  }
  const baseline = process.env.BENCH_BASELINE_ROOT;
  if (baseline) arms.push({ key: 'before', name: `before the instrumentation (${baseline})`, env: {}, root: resolve(baseline), rps: [], cpu: [], main: [], sink: [], batch: [] });
  // BENCH_TRACING_ARMS=off,on (keys: off, on, 10, on-proto, als, on-explicit, 10-explicit, on-before, 10-before, before): only those arms, e.g. to profile two of them.
  const only = process.env.BENCH_TRACING_ARMS?.split(',').map((k) => k.trim());
  arms = arms.filter((a) => (only ? only.includes(a.key) : !['als', 'on-proto', 'on-proto-before', 'on-explicit', '10-explicit'].includes(a.key)));
  console.log(`Cardline tracing bench: POST ${LIMIT_URL}, ${CONNECTIONS} connections, ${SECONDS} s per run, ${ROUNDS} rounds, arms alternated; ${ON_POSTGRES ? 'PostgreSQL, a database per arm' : 'in-memory store'}; mock connector; OTLP receiver in a process of its own (bench/otlp-sink.ts)`);
  try {
    for (const arm of arms) await start(arm);
    for (const arm of arms) await load(arm, 2);
    for (let round = 0; round < ROUNDS; round++) {
      for (const arm of arms) {
        const [before, sinkBefore] = [await stats(arm), await sink.stats()];
        const startedUs = Number(process.hrtime.bigint() / 1000n);
        const { rps, total } = await load(arm, SECONDS);
        (arm.windows ??= []).push([startedUs, Number(process.hrtime.bigint() / 1000n)]);
        arm.requests = (arm.requests ?? 0) + total;
        const [after, sinkAfter] = [await stats(arm), await sink.stats()];
        arm.rps.push(rps);
        arm.cpu.push((cpuOf(after.cpu) - cpuOf(before.cpu)) / total);
        arm.main.push(((after.elu.active - before.elu.active) * 1000) / total);
        arm.sink.push((cpuOf(sinkAfter.cpu) - cpuOf(sinkBefore.cpu)) / total);
        arm.batch.push(after.audit && before.audit ? (after.audit.records - before.audit.records) / Math.max(1, after.audit.batches - before.audit.batches) : NaN);
        console.log(
          `  round ${round + 1} ${arm.name}: ${Math.round(rps)} req/s; gateway CPU ${Math.round(arm.cpu.at(-1)!)} µs/request (main thread busy ${Math.round(arm.main.at(-1)!)} µs), receiver ${Math.round(arm.sink.at(-1)!)} µs/request; audit batches of ${batchOf(arm.batch.at(-1)!)}`,
        );
      }
    }
    const off = arms.find((a) => a.key === 'off') ?? arms[0]!;
    for (const arm of arms) {
      console.log(
        `${arm.name}: median ${Math.round(median(arm.rps))} req/s, ${(median(arm.rps) / median(off.rps)).toFixed(2)}x of ${off.name}; ` +
          `gateway CPU median ${Math.round(median(arm.cpu))} µs/request (${(median(arm.cpu) / median(off.cpu)).toFixed(2)}x), main thread ${Math.round(median(arm.main))} µs/request, receiver ${Math.round(median(arm.sink))} µs/request, audit batches of ${batchOf(median(arm.batch.filter((b) => !Number.isNaN(b))))}`,
      );
    }
    const received = await sink.stats();
    console.log(`spans received by the OTLP receiver: ${received.spans} (${Math.round(received.bytes / 1e6)} MB)`);
    return 0;
  } finally {
    // Each gateway writes its profile (BENCH_CPU_PROF) as it exits: wait for that.
    await Promise.all(
      arms.map((arm) => arm.child && arm.child.exitCode === null ? new Promise((resolveExit) => { arm.child!.once('exit', resolveExit); arm.child!.kill('SIGTERM'); }) : undefined),
    );
    sink.child.kill('SIGTERM');
    // Beside each arm's profiles: the windows to count samples in and the requests they served.
    for (const arm of arms.filter((a) => CPU_PROF && a.windows)) {
      mkdirSync(join(CPU_PROF!, arm.key), { recursive: true });
      writeFileSync(join(CPU_PROF!, arm.key, 'windows.json'), JSON.stringify({ windows: arm.windows, requests: arm.requests }));
    }
    for (const drop of drops) await drop();
  }
}
