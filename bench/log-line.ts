// The request log line's cost (issue 21 point 5): µs per `request completed` line, written by pino to a sink
// that discards it, with Cardline's logger options (secrets masked by key and by shape), without any, and with
// the redaction by path they held before decision 0207. `npx tsx bench/log-line.ts` (LOG_BENCH_LINES, default 100 000 a run; 7 rounds, the arms
// alternated; the median of each arm's CPU time per line, process.cpuUsage(): steadier than the wall clock
// on a machine shared with other work, which this one is).
import { Writable } from 'node:stream';
import { randomUUID } from 'node:crypto';
import { pino, type LoggerOptions } from 'pino';
import { loggerOptions } from '../src/logging.js';

const LINES = Number(process.env.LOG_BENCH_LINES || 100_000);
const ROUNDS = 7;
const sink = new Writable({ write: (_chunk, _enc, done) => done() });

/** A writer of `request completed` lines; returns the CPU µs per line of one run. */
function arm(options: LoggerOptions): () => number {
  const log = pino(options, sink);
  const requestId = randomUUID();
  const run = (n: number) => {
    for (let i = 0; i < n; i++) {
      // What src/app.ts's onResponse hook writes for every request.
      log.info({ requestId, method: 'POST', route: '/credit-line-management/business-entity-manager/upgradeLimit', status: 200, ms: 3, tenant: 'demo' }, 'request completed');
    }
  };
  run(20_000);
  return () => {
    const before = process.cpuUsage();
    run(LINES);
    const used = process.cpuUsage(before);
    return (used.user + used.system) / LINES;
  };
}

const full = loggerOptions('info');
const FORMER_REDACT_PATHS = ['req.headers.authorization', 'req.headers.cookie', 'headers.authorization', '*.password', '*.id_token', '*.token', '*.pan', '*.cvv', '*.pinBlock', '*.email', '*.mobile', '*.privateKey', '*.masterKey'];
const arms: [string, LoggerOptions][] = [
  ['pino, no options', { level: 'info' }],
  // Before decision 0207 the options also redacted by path: measured here for comparison.
  ['+ the former redaction by path', { ...full, redact: { paths: FORMER_REDACT_PATHS, censor: '[REDACTED]' } }],
  ["Cardline's logger options", full],
];
const runners = arms.map(([, options]) => arm(options));
const samples: number[][] = arms.map(() => []);
for (let r = 0; r < ROUNDS; r++) runners.forEach((run, i) => samples[i]!.push(run()));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const base = median(samples[0]!);
for (const [i, [name]] of arms.entries()) {
  const m = median(samples[i]!);
  console.log(`${name.padEnd(28)} ${m.toFixed(2)} µs/line (CPU)${i > 0 ? `, ${(m - base).toFixed(2)} µs over pino's own` : ''}`);
}

