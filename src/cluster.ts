// CARDLINE_WORKERS=N (decision 0206): N gateway processes on one port. The primary forks the first worker alone
// (migrations and seeding once), then the others; it replaces dead workers, drains on SIGTERM/SIGINT and
// aggregates every worker's /metrics. Each worker is a whole gateway; deliveries are shared by SKIP LOCKED claims.
import cluster, { type Worker } from 'node:cluster';
import client from 'prom-client';
import { METRICS_REQUEST, METRICS_RESPONSE, WORKER_INDEX_VARIABLE, isClusterWorker, type Message } from './services/infrastructure/cluster-metrics.js';

const READY = 'cardline:worker-ready';

/** This worker's index (1 for the first), or 0 outside a cluster. */
export const workerIndex = (): number => (isClusterWorker() ? Number(process.env[WORKER_INDEX_VARIABLE]) : 0);

/** Tells the primary that this worker listens and is ready (the primary forks the rest after the first's). */
export function reportReady(): void {
  if (isClusterWorker()) process.send?.({ type: READY });
}

/** How many start-up failures in a row make a crash loop, after which the primary gives up. */
export const CRASH_LOOP_FAILURES = 5;
const FIRST_BACKOFF_MS = 1_000;
const MAX_BACKOFF_MS = 30_000;

/**
 * When a worker that was starting dies: fork it again after a back-off that doubles with each failure in a
 * row, or give up. The primary gives up on the very first start (nothing ever started: the configuration or
 * the store is wrong, a second try fails alike) and on a crash loop; a worker that gets ready ends the run.
 */
export class StartFailures {
  private inARow = 0;
  private everReady = false;

  ready(): void {
    this.everReady = true;
    this.inARow = 0;
  }

  /** The back-off before the next fork, or 'give up'. */
  failed(): number | 'give up' {
    this.inARow++;
    if (!this.everReady || this.inARow >= CRASH_LOOP_FAILURES) return 'give up';
    return Math.min(FIRST_BACKOFF_MS * 2 ** (this.inARow - 1), MAX_BACKOFF_MS);
  }

  get failuresInARow(): number {
    return this.inARow;
  }
}

interface PrimaryOptions {
  workers: number;
  /** How long the workers get to drain on SIGTERM before they are killed (their own grace, plus a margin). */
  shutdownGraceMs: number;
  /** Where the primary's few lines go (stderr). */
  say?: (line: string) => void;
}

/** The primary: forks, keeps and drains the workers; resolves with the exit code (also on a crash loop). */
export function runPrimary(opts: PrimaryOptions): Promise<number> {
  const say = opts.say ?? ((line: string) => process.stderr.write(`${line}\n`));
  const aggregator = new client.AggregatorRegistry();
  const indexOf = new Map<Worker, number>();
  const readyWorkers = new Set<Worker>();
  const startFailures = new StartFailures();
  /** Forks waiting out their back-off, by worker index. */
  const pendingForks = new Map<number, NodeJS.Timeout>();
  let stopping = false;
  let restForked = false;
  let failedCode = 0;

  return new Promise<number>((resolveExit) => {
    const fork = (index: number): Worker => {
      const worker = cluster.fork({ [WORKER_INDEX_VARIABLE]: String(index) });
      indexOf.set(worker, index);
      return worker;
    };

    cluster.on('message', (worker: Worker, m: Message) => {
      if (m?.type === READY) {
        readyWorkers.add(worker);
        startFailures.ready();
        const index = indexOf.get(worker)!;
        if (index === 1 && !restForked) {
          restForked = true;
          for (let i = 2; i <= opts.workers; i++) fork(i);
        }
        if (readyWorkers.size === opts.workers) say(`Cardline: ${opts.workers} gateway processes ready (CARDLINE_WORKERS), primary pid ${process.pid}`);
      } else if (m?.type === METRICS_REQUEST && m.id !== undefined) {
        aggregator.clusterMetrics().then(
          (text) => worker.isConnected() && worker.send({ type: METRICS_RESPONSE, id: m.id, text }),
          (err: unknown) => worker.isConnected() && worker.send({ type: METRICS_RESPONSE, id: m.id, error: (err as Error).message }),
        );
      }
    });

    cluster.on('exit', (worker, code, signal) => {
      const index = indexOf.get(worker)!;
      const wasReady = readyWorkers.delete(worker);
      indexOf.delete(worker);
      if (!stopping) {
        if (!wasReady) {
          // A worker that could not start said why on stderr. The others keep answering while it is forked again.
          const next = startFailures.failed();
          if (next === 'give up') {
            const why = startFailures.failuresInARow > 1 ? `; ${startFailures.failuresInARow} start-up failures in a row` : '';
            say(`Cardline: gateway process ${index} exited during start-up (${signal ?? `code ${code}`})${why}; stopping the others`);
            failedCode = 1;
            stopAll('start-up failure');
            return;
          }
          say(`Cardline: gateway process ${index} exited during start-up (${signal ?? `code ${code}`}); starting another in ${next / 1000} s`);
          pendingForks.set(
            index,
            setTimeout(() => {
              pendingForks.delete(index);
              fork(index);
            }, next),
          );
          return;
        }
        say(`Cardline: gateway process ${index} (pid ${worker.process.pid}) exited (${signal ?? `code ${code}`}); starting another`);
        fork(index);
        return;
      }
      // A worker still starting when the signal came ends by it, before it has anything to drain: not a failure.
      const stoppedWhileStarting = !wasReady && signal === 'SIGTERM';
      if (code !== 0 && !stoppedWhileStarting) failedCode = 1;
      if (indexOf.size === 0) resolveExit(failedCode);
    });

    const stopAll = (why: string) => {
      if (stopping) return;
      stopping = true;
      for (const timer of pendingForks.values()) clearTimeout(timer);
      pendingForks.clear();
      if (why !== 'start-up failure') say(`Cardline: ${why}: draining ${indexOf.size} gateway processes`);
      for (const worker of indexOf.keys()) if (!worker.isDead()) worker.process.kill('SIGTERM');
      if (indexOf.size === 0) resolveExit(failedCode);
      // A worker stuck past its own grace period is killed: the primary always ends.
      setTimeout(() => {
        for (const worker of indexOf.keys()) if (!worker.isDead()) worker.process.kill('SIGKILL');
      }, opts.shutdownGraceMs + 5_000).unref();
    };
    process.on('SIGTERM', () => stopAll('SIGTERM'));
    process.on('SIGINT', () => stopAll('SIGINT'));

    fork(1);
  });
}
