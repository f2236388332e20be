// One arm of bench/inject.ts: the gateway of the checkout it was bundled into (bench/dist.ts compiled(root, this
// file): its imports of ../src are that checkout's dist/), built as bench/server.ts builds it on the database
// bench/server.ts seeded (BENCH_DATABASE_URL, BENCH_TOKENS_FILE, BENCH_MASTER_KEY), without a listener: each line
// {"requests":N,"concurrency":C} on stdin is answered, once N limit upgrades went through `app.inject()` C at a
// time, by {"cpuUs","requests","bad"} on stdout: the process's CPU (every thread) over those requests.
import { AsyncLocalStorage, createHook } from 'node:async_hooks';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { PerformanceObserver, constants as perf } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { createInterface } from 'node:readline';
import { pino } from 'pino';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { logDestination, loggerOptions } from '../src/logging.js';
import { openDb } from '../src/store/db.js';
import { startTracing } from '../src/telemetry/index.js';

const LIMIT_URL = '/credit-line-management/business-entity-manager/upgradeLimit';
const BODY = JSON.stringify({ entityId: 'ENT-1001', amount: '60000.00' });

async function main(): Promise<void> {
  const { tenant, token } = (JSON.parse(readFileSync(process.env.BENCH_TOKENS_FILE!, 'utf8')) as { tenant: string; token: string }[])[0]!;
  // An arm given OTEL_* (BENCH_INJECT_ARMS) traces, started before the logger and the store as src/server.ts does.
  await startTracing(process.env);
  // BENCH_ASYNC_LOCAL_STORAGE=1: tracing off, one AsyncLocalStorage in use (the promise hooks on), as bench/server.ts.
  if (process.env.BENCH_ASYNC_LOCAL_STORAGE === '1') new AsyncLocalStorage<number>().enterWith(1);
  const logger = pino(loggerOptions('info'), logDestination('/dev/null'));
  const config = loadConfig({ LOG_LEVEL: 'info', HOST: '127.0.0.1', CARDLINE_METRICS_TENANT_LABEL: '1' });
  const db = await openDb({ databaseUrl: process.env.BENCH_DATABASE_URL });
  const app = await buildApp({ config, db, masterKey: process.env.BENCH_MASTER_KEY!, logger, ownsDb: true });
  await app.ready();
  const headers = { 'content-type': 'application/json', tenant, authorization: `Bearer ${token}` };
  const one = async (): Promise<boolean> => (await app.inject({ method: 'POST', url: LIMIT_URL, headers, payload: BODY })).statusCode === 200;
  const lines = createInterface({ input: process.stdin });
  process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
  const heapDir = process.env.BENCH_HEAP_PROFILE_DIR;
  // Nothing inlined while sampling: each allocation is counted in the function that makes it.
  if (heapDir) setFlagsFromString('--no-turbo-inlining');
  const session = heapDir ? new Session() : null;
  session?.connect();
  // BENCH_COUNT_ASYNC=1: the async resources (promises, ticks…) made per request, by type, on stderr after each run.
  const created = new Map<string, number>();
  if (process.env.BENCH_COUNT_ASYNC === '1') createHook({ init: (_id, type) => void created.set(type, (created.get(type) ?? 0) + 1) }).enable();
  // BENCH_COUNT_GC=1: the collections' time per request, young generation (scavenges) and old (mark-compact), on stderr.
  const gc = { minor: 0, major: 0, majorCount: 0 };
  if (process.env.BENCH_COUNT_GC === '1') {
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        const kind = (e as unknown as { detail?: { kind?: number } }).detail?.kind;
        if (kind === perf.NODE_PERFORMANCE_GC_MINOR) gc.minor += e.duration;
        else if (kind === perf.NODE_PERFORMANCE_GC_MAJOR || kind === perf.NODE_PERFORMANCE_GC_INCREMENTAL) {
          gc.major += e.duration;
          gc.majorCount += 1;
        }
      }
    }).observe({ entryTypes: ['gc'] });
  }
  let run = 0;
  for await (const line of lines) {
    const { requests, concurrency } = JSON.parse(line) as { requests: number; concurrency: number };
    const sampling = session !== null && run++ > 0;
    if (sampling) await session.post('HeapProfiler.startSampling', { samplingInterval: 1024, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true } as object);
    let sent = 0;
    let bad = 0;
    const before = process.cpuUsage();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (sent < requests) {
          sent++;
          if (!(await one())) bad++;
        }
      }),
    );
    const cpu = process.cpuUsage(before);
    if (sampling) {
      const { profile } = await session.post('HeapProfiler.stopSampling');
      mkdirSync(heapDir!, { recursive: true });
      writeFileSync(join(heapDir!, `inject-${process.pid}-${run}.heapprofile`), JSON.stringify(profile));
    }
    if (created.size) process.stderr.write(`${JSON.stringify({ pid: process.pid, tracing: process.env.OTEL_TRACES_SAMPLER ?? 'off', perRequest: Object.fromEntries([...created].map(([k, n]) => [k, +(n / requests).toFixed(2)])) })}\n`);
    created.clear();
    if (process.env.BENCH_COUNT_GC === '1') process.stderr.write(`${JSON.stringify({ pid: process.pid, tracing: `${process.env.OTEL_TRACES_SAMPLER ?? 'off'} ${process.env.OTEL_TRACES_SAMPLER_ARG ?? ''} delay ${process.env.OTEL_BSP_SCHEDULE_DELAY ?? '-'}`, gcUsPerRequest: { minor: +((gc.minor * 1000) / requests).toFixed(1), major: +((gc.major * 1000) / requests).toFixed(1), majorPer1000: +((gc.majorCount * 1000) / requests).toFixed(2) } })}\n`);
    Object.assign(gc, { minor: 0, major: 0, majorCount: 0 });
    process.stdout.write(`${JSON.stringify({ cpuUs: cpu.user + cpu.system, requests, bad })}\n`);
  }
  await app.close();
}

main().catch((err: unknown) => {
  process.stderr.write(`inject arm failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
