// The gateway's own CPU per limit upgrade without sockets (issue 28): `app.inject()`, BENCH_CONNECTIONS (32) at a
// time, in a process pinned to BENCH_SERVER_CORE (1) beside a PostgreSQL the bench starts on that core (as the
// pinned arm does), this checkout's compiled gateway and, with BENCH_BASELINE=<another checkout with its
// node_modules and dist/>, that one's: alternated in each of BENCH_ROUNDS (5) rounds of BENCH_INJECT_REQUESTS
// (1 200) requests after as many for warm-up; BENCH_INJECT_ARMS='name: VAR=value … | …' adds this tree under those variables. Prints each arm's CPU per request (the Node process's, every thread;
// PostgreSQL's backends too), medians and the median of the rounds' ratios.
//   npx tsx bench/inject.ts; BENCH_PROFILE=1: this tree's arm with --cpu-prof (bench/profiles/), =heap: its allocations.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { envArms, envInt } from './env.js';
import { backendCpu, cpuBetween } from './peer-harness.js';
import { compiledServer, seedCardline, startPostgres } from './pinned.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const ROUNDS = envInt('BENCH_ROUNDS', 5, 1, 50);
const REQUESTS = envInt('BENCH_INJECT_REQUESTS', 1200, 1, 1_000_000);
const CONCURRENCY = envInt('BENCH_CONNECTIONS', 32, 1, 1024);
const CORE = envInt('BENCH_SERVER_CORE', 1, 0, 1023);
const BASELINE = process.env.BENCH_BASELINE ? resolve(process.env.BENCH_BASELINE) : null;
/** BENCH_INJECT_ARMS='name: A=1 B=2 | …': this tree again under other variables, one arm each. */
const ARMS = envArms(process.env.BENCH_INJECT_ARMS);
/** BENCH_PROFILE=1: this tree's arm runs with --cpu-prof (bench/profiles/). */
const PROFILE = process.env.BENCH_PROFILE === '1' ? ['--cpu-prof', `--cpu-prof-dir=${join(ROOT, 'bench', 'profiles')}`] : [];
/** BENCH_PROFILE=heap: this tree's arm samples allocations (collected ones too) over each timed run (bench/profiles/). */
const HEAP = process.env.BENCH_PROFILE === 'heap' ? { BENCH_HEAP_PROFILE_DIR: join(ROOT, 'bench', 'profiles') } : {};

interface InjectArm {
  name: string;
  database: string;
  run: () => Promise<{ nodeUs: number; pgUs: number; bad: number }>;
  stop: () => Promise<void>;
  nodeUs: number[];
  pgUs: number[];
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

async function startArm(root: string, name: string, server: string, stats: pg.Client, env: Record<string, string> = {}): Promise<InjectArm> {
  const seeded = await seedCardline(root, name, server, env);
  const arm = await compiledServer(root, join(ROOT, 'bench', 'inject-arm.ts'));
  const child = spawn('taskset', ['-c', String(CORE), process.execPath, ...(root === ROOT ? PROFILE : []), arm], { cwd: root, env: root === ROOT ? { ...seeded.env, ...HEAP } : seeded.env, stdio: ['pipe', 'pipe', 'inherit'] });
  const replies: ((line: string) => void)[] = [];
  const ready = new Promise<void>((r) => replies.push(() => r()));
  createInterface({ input: child.stdout! }).on('line', (line) => replies.shift()?.(line));
  child.once('exit', (code) => {
    for (const reply of replies.splice(0)) reply(JSON.stringify({ error: `${name} exited with code ${code}` }));
  });
  await ready;
  const database = seeded.url.pathname.slice(1);
  const ask = (requests: number) =>
    new Promise<{ cpuUs: number; bad: number; error?: string }>((r) => {
      replies.push((line) => r(JSON.parse(line) as { cpuUs: number; bad: number; error?: string }));
      child.stdin!.write(`${JSON.stringify({ requests, concurrency: CONCURRENCY })}\n`);
    });
  return {
    name,
    database,
    nodeUs: [],
    pgUs: [],
    run: async () => {
      const before = await backendCpu(stats, database);
      const r = await ask(REQUESTS);
      if (r.error) throw new Error(r.error);
      const after = await backendCpu(stats, database);
      return { nodeUs: r.cpuUs / REQUESTS, pgUs: cpuBetween(before, after) / REQUESTS, bad: r.bad };
    },
    stop: async () => {
      child.stdin!.end();
      await new Promise((r) => (child.exitCode !== null ? r(null) : child.once('exit', r)));
      rmSync(seeded.dir, { recursive: true, force: true });
      await seeded.database.drop();
    },
  };
}

async function main(): Promise<number> {
  console.log(`inject bench: limit upgrades through app.inject(), ${CONCURRENCY} at a time, ${REQUESTS} per run, ${ROUNDS} rounds, core ${CORE}; load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  const postgres = await startPostgres(CORE);
  const stats = new pg.Client({ connectionString: postgres.url });
  await stats.connect();
  const arms: InjectArm[] = [];
  let bad = 0;
  try {
    arms.push(await startArm(ROOT, 'this tree', postgres.url, stats));
    if (BASELINE) arms.push(await startArm(BASELINE, `baseline ${BASELINE}`, postgres.url, stats));
    for (const [name, env] of ARMS) arms.push(await startArm(ROOT, name, postgres.url, stats, env));
    for (const arm of arms) await arm.run();
    for (let round = 0; round < ROUNDS; round++) {
      for (let k = 0; k < arms.length; k++) {
        const arm = arms[(round + k) % arms.length]!;
        const r = await arm.run();
        bad += r.bad;
        arm.nodeUs.push(r.nodeUs);
        arm.pgUs.push(r.pgUs);
        console.log(`  round ${round + 1}: ${arm.name}: Node ${r.nodeUs.toFixed(0)} + PostgreSQL ${r.pgUs.toFixed(0)} µs/req, load ${loadavg()[0]!.toFixed(1)}`);
      }
    }
    console.log(`\nmedians (µs per request; load average ${loadavg()[0]!.toFixed(1)}):`);
    for (const arm of arms) console.log(`  ${arm.name}: Node ${median(arm.nodeUs).toFixed(0)}, PostgreSQL ${median(arm.pgUs).toFixed(0)}`);
    for (const other of arms.slice(1)) {
      const ratios = arms[0]!.nodeUs.map((us, i) => us / other.nodeUs[i]!);
      console.log(`  this tree / ${other.name}, Node: ratio of the medians ${(median(arms[0]!.nodeUs) / median(other.nodeUs)).toFixed(3)}, median of the rounds' ratios ${median(ratios).toFixed(3)} (${ratios.map((x) => x.toFixed(2)).join(', ')})`);
    }
  } finally {
    for (const arm of arms) await arm.stop().catch((err: unknown) => console.error(`stopping ${arm.name}: ${(err as Error).message}`));
    await stats.end();
    await postgres.stop();
  }
  if (bad) console.error(`FAIL: ${bad} requests not answered 200`);
  return bad ? 1 : 0;
}

process.exitCode = await main();
