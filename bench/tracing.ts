// The tracing arm (BENCH_TRACING=1 npm run bench): three gateways on in-memory stores, started as bench/run.ts
// starts its `full` target — tracing off (no OTEL_* variable), on with every request sampled, and on at 10 %
// (parentbased_traceidratio 0.1) — both exporting to a local OTLP/HTTP receiver; loaded in turn, round after
// round, so that the machine's load falls on all three alike. Prints each arm's median throughput and its ratio
// to the off arm (targets: off within 2 % of before, on at least 0.85x). BENCH_BASELINE_ROOT, a checkout of a
// commit from before the instrumentation (installed with npm ci), adds a fourth arm: that gateway, loaded in
// the same rounds, which is what "before" means.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';
import { MasterKey } from '../src/crypto/master-key.js';
import { startOtlpReceiver } from '../test/helpers/otlp.js';

const ROOT = resolve(import.meta.dirname, '..');
const LIMIT_URL = '/credit-line-management/business-entity-manager/upgradeLimit';
const BODY = JSON.stringify({ entityId: 'ENT-1001', amount: '60000.00' });
const int = (name: string, fallback: number) => (Number.isInteger(Number(process.env[name])) && Number(process.env[name]) > 0 ? Number(process.env[name]) : fallback);
const SECONDS = int('BENCH_SECONDS', 10);
const ROUNDS = int('BENCH_ROUNDS', 3);
const CONNECTIONS = int('BENCH_CONNECTIONS', 32);

interface Arm {
  name: string;
  env: Record<string, string>;
  root?: string;
  child?: ChildProcess;
  port?: number;
  token?: string;
  rps: number[];
}

async function start(arm: Arm): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'cardline-bench-tracing-'));
  const tokensFile = join(dir, 'tokens.json');
  const root = arm.root ?? ROOT;
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'bench', 'server.ts')], {
    cwd: root,
    env: { ...process.env, ...arm.env, NODE_ENV: 'production', BENCH_TOKENS_FILE: tokensFile, BENCH_MASTER_KEY: MasterKey.generate(), BENCH_PHASE: 'all' },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  arm.child = child;
  await new Promise<void>((resolveStarted, reject) => {
    child.once('exit', (code) => reject(new Error(`${arm.name}: bench server exited with ${code}`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (!line.startsWith('{"benchPorts"')) return;
      arm.port = (JSON.parse(line) as { benchPorts: { full: number } }).benchPorts.full;
      arm.token = (JSON.parse(readFileSync(tokensFile, 'utf8')) as { token: string }[])[0]!.token;
      rmSync(dir, { recursive: true, force: true });
      resolveStarted();
    });
  });
}

async function load(arm: Arm, seconds: number): Promise<number> {
  const result = await autocannon({
    url: `http://127.0.0.1:${arm.port}`,
    connections: CONNECTIONS,
    duration: seconds,
    requests: [{ method: 'POST', path: LIMIT_URL, body: BODY, headers: { 'content-type': 'application/json', TENANT: 'demo', authorization: `Bearer ${arm.token}` } }],
  });
  if (result.non2xx || result.errors) throw new Error(`${arm.name}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  return result.requests.average;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function benchTracing(): Promise<number> {
  const otlp = await startOtlpReceiver({ keep: false });
  const exporting = { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint, OTEL_SERVICE_NAME: 'cardline-bench' };
  const arms: Arm[] = [
    { name: 'tracing off', env: {}, rps: [] },
    { name: 'tracing on, every request', env: { ...exporting, OTEL_TRACES_SAMPLER: 'always_on' }, rps: [] },
    { name: 'tracing on, 10 %', env: { ...exporting, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' }, rps: [] },
  ];
  const baseline = process.env.BENCH_BASELINE_ROOT;
  if (baseline) arms.push({ name: `before the instrumentation (${baseline})`, env: {}, root: resolve(baseline), rps: [] });
  console.log(`Cardline tracing bench: POST ${LIMIT_URL}, ${CONNECTIONS} connections, ${SECONDS} s per run, ${ROUNDS} rounds, arms alternated; in-memory store; mock connector`);
  try {
    for (const arm of arms) await start(arm);
    for (const arm of arms) await load(arm, 2);
    for (let round = 0; round < ROUNDS; round++) {
      for (const arm of arms) {
        arm.rps.push(await load(arm, SECONDS));
        console.log(`  round ${round + 1} ${arm.name}: ${Math.round(arm.rps.at(-1)!)} req/s`);
      }
    }
    const off = median(arms[0]!.rps);
    for (const arm of arms) console.log(`${arm.name}: median ${Math.round(median(arm.rps))} req/s, ${(median(arm.rps) / off).toFixed(2)}x of tracing off`);
    console.log(`spans received by the OTLP receiver: ${otlp.spans.length}`);
    return 0;
  } finally {
    for (const arm of arms) arm.child?.kill('SIGTERM');
    await otlp.close();
  }
}
