// The bench's arm "Cardline, N processes" (issue 21, decision 0217): the gateway started as an operator starts
// it with CARDLINE_WORKERS=N (src/server.ts: a node:cluster primary and N gateway processes on one port), on the
// database bench/run.ts seeded for its one-process arm, loaded alternately with it. Its figures come from
// outside, since a request may land on any worker: CPU from /proc/<pid>/stat of the primary and each of its
// workers (every thread), RSS likewise, and the audit writer's chain-conflict retries from the one /metrics
// scrape that aggregates every worker (the management listener). BENCH_TASKSET=1 pins worker i to core i-1.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** /proc/<pid>/stat counts CPU in clock ticks (100 a second on Linux) and RSS in pages. */
const TICK_US = 10_000;
const PAGE_BYTES = 4096;
const SERVER = join(ROOT, 'src', 'server.ts');

/** What the whole gateway's /metrics says of its audit writers (every worker's, summed by the primary). */
export interface AuditFigures {
  /** Batches computed again because a chain head moved under its writer (0 by design: chains per writer). */
  conflictRetries: number;
  /** Batches committed, and the records they held. */
  batches: number;
  records: number;
  /** Seconds the batches took to commit, summed (the store's statement and its flush). */
  commitSeconds: number;
}

/** The audit figures from a Prometheus text exposition (Cardline's metric names). */
export function auditFigures(text: string): AuditFigures {
  const value = (name: string): number => {
    const line = text.split('\n').find((l) => l.startsWith(`${name} `));
    return line ? Number(line.slice(name.length + 1)) : 0;
  };
  return {
    conflictRetries: value('cardline_audit_conflict_retries_total'),
    batches: value('cardline_audit_batch_records_count'),
    records: value('cardline_audit_batch_records_sum'),
    commitSeconds: value('cardline_audit_commit_seconds_sum'),
  };
}

/** A process's CPU (µs, user + system, every thread) and RSS (bytes) from /proc, or null once it has ended. */
export function procStat(pid: number): { cpuUs: number; rss: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // After "pid (comm) ": utime, stime (fields 14, 15 of proc(5)) at index 11, 12; rss (field 24) at 21.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { cpuUs: (Number(fields[11]) + Number(fields[12])) * TICK_US, rss: Number(fields[21]) * PAGE_BYTES };
  } catch {
    return null;
  }
}

/**
 * How often a process's main thread (its event loop) gave up the CPU so far: voluntary (it waited: for a
 * socket, PostgreSQL) plus involuntary (preempted) context switches, from /proc; 0 once it has ended.
 */
export function contextSwitches(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
    return field('voluntary_ctxt_switches') + field('nonvoluntary_ctxt_switches');
  } catch {
    return 0;
  }
}

/**
 * The children of `pid` whose command line includes `command` (a primary's workers, not tsx's esbuild service,
 * which the one-process arm's figures leave out too), from each process's parent in /proc.
 */
export function childrenOf(pid: number, command: string): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid && readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(command)) out.push(Number(entry));
    } catch {
      // ended meanwhile
    }
  }
  return out.sort((a, b) => a - b);
}

/** Pins a process (every thread) to one core; false when taskset is not there or refuses. */
export function pin(pid: number, core: number): boolean {
  try {
    execFileSync('taskset', ['-a', '-cp', String(core), String(pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export interface ClusterArmOptions {
  /** The seeded database (bench/run.ts's), with `?application_name=…` to tell its backends apart. */
  databaseUrl: string;
  masterKey: string;
  workers: number;
  /** The public port, and the management listener's (for /metrics): named, since a cluster's port 0 is not told back. */
  port: number;
  adminPort: number;
  /** Pins worker i to core (i - 1) mod cores once all are ready. */
  taskset?: boolean;
  /** Extra arguments for node (e.g. --cpu-prof), passed on to the workers by node:cluster. */
  nodeArgs?: string[];
}

export interface ClusterArm {
  child: ChildProcess;
  port: number;
  adminPort: number;
  /** The primary and its workers now. */
  pids: () => number[];
  /** CPU used so far by pid (primary and workers); compare two readings with cpuBetween. */
  cpu: () => Map<number, number>;
  /** Context switches of the workers' main threads so far, together. */
  switches: () => number;
  /** RSS of the primary and its workers together. */
  rss: () => number;
  audit: () => Promise<AuditFigures>;
  stop: () => Promise<number | null>;
}

/** An environment with nothing of the caller's that would steer the gateway (store, Redis, NATS, ports, keys). */
function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (k.startsWith('CARDLINE_') || k.startsWith('BENCH_') || ['DATABASE_URL', 'REDIS_URL', 'NATS_URL', 'PORT', 'HOST', 'LOG_LEVEL'].includes(k)) continue;
    env[k] = v;
  }
  return { ...env, ...extra };
}

/**
 * Starts `node src/server.ts` (through tsx, as the one-process arm runs bench/server.ts) with CARDLINE_WORKERS,
 * its log at info to /dev/null as the one-process arm's; resolves once every worker is ready.
 */
export async function startClusterArm(opts: ClusterArmOptions): Promise<ClusterArm> {
  const env = cleanEnv({
    NODE_ENV: 'production',
    DATABASE_URL: opts.databaseUrl,
    CARDLINE_MASTER_KEY: opts.masterKey,
    CARDLINE_WORKERS: String(opts.workers),
    HOST: '127.0.0.1',
    PORT: String(opts.port),
    CARDLINE_ADMIN_HOST: '127.0.0.1',
    CARDLINE_ADMIN_PORT: String(opts.adminPort),
    LOG_LEVEL: 'info',
    CARDLINE_METRICS_TENANT_LABEL: '1',
  });
  // stdout (the log lines) to /dev/null; stderr carries the primary's lines (ready, a worker's exit) and errors.
  const child = spawn(process.execPath, [...(opts.nodeArgs ?? []), '--import', 'tsx', SERVER], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let said = '';
  await new Promise<void>((resolveReady, reject) => {
    const timer = setTimeout(() => reject(new Error(`the ${opts.workers} gateway processes were not ready within 10 minutes:\n${said}`)), 600_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the gateway (CARDLINE_WORKERS=${opts.workers}) exited during start-up with code ${code}:\n${said}`));
    });
    // CARDLINE_WORKERS=1 is one process without a primary (nothing said when ready): its readiness probe, then.
    if (opts.workers === 1) {
      const poll = async (): Promise<void> => {
        try {
          if ((await fetch(`http://127.0.0.1:${opts.port}/health/ready`)).status === 200) {
            clearTimeout(timer);
            return resolveReady();
          }
        } catch {
          // not listening yet
        }
        if (child.exitCode === null) setTimeout(() => void poll(), 200);
      };
      void poll();
    }
    createInterface({ input: child.stderr! }).on('line', (line) => {
      if (said.length < 20_000) said += `${line}\n`;
      if (line.includes(`${opts.workers} gateway processes ready`)) {
        clearTimeout(timer);
        resolveReady();
      } else if (!line.startsWith('Cardline: ')) {
        process.stderr.write(`[${opts.workers} processes] ${line}\n`);
      }
    });
  });
  child.removeAllListeners('exit');
  const primary = child.pid!;
  const workers = () => childrenOf(primary, SERVER);
  const pids = () => [primary, ...workers()];
  if (opts.taskset) {
    const cores = availableParallelism();
    workers().forEach((pid, i) => pin(pid, i % cores));
  }
  return {
    child,
    port: opts.port,
    adminPort: opts.adminPort,
    pids,
    cpu: () => {
      const out = new Map<number, number>();
      for (const pid of pids()) {
        const s = procStat(pid);
        if (s) out.set(pid, s.cpuUs);
      }
      return out;
    },
    switches: () => workers().reduce((sum, pid) => sum + contextSwitches(pid), 0),
    rss: () => pids().reduce((sum, pid) => sum + (procStat(pid)?.rss ?? 0), 0),
    audit: async () => auditFigures(await (await fetch(`http://127.0.0.1:${opts.adminPort}/metrics`)).text()),
    stop: () =>
      new Promise<number | null>((resolveStopped) => {
        if (child.exitCode !== null) return resolveStopped(child.exitCode);
        const t = setTimeout(() => child.kill('SIGKILL'), 30_000);
        child.once('exit', (code) => {
          clearTimeout(t);
          resolveStopped(code);
        });
        child.kill('SIGTERM');
      }),
  };
}

/** A free TCP port on loopback (for a listener that must be named before it starts). */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const a = srv.address();
      srv.close(() => resolvePort(typeof a === 'object' && a ? a.port : 0));
    });
  });
}
