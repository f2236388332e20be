// The span path of one sampled limit upgrade, without the gateway and without the export (decision 0449): the
// server span and the steps auth, operation (the core call and a statement under it) and audit, made by
// src/telemetry/sdk.ts as the gateway makes them, 32 requests at a time; prints the CPU time per request.
// `node --import tsx bench/tracing-span-path.ts [<checkout>…]` alternates this checkout with the ones named,
// a process each, 6 rounds, and prints each one's median. The spans are ended but not exported (the batch
// processor is taken out), so that what is measured is the span objects, contexts and Cardline's wrappers.
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');
const REQUESTS = 100_000;
const ROUNDS = 6;

async function child(root: string): Promise<void> {
  const { createTracing } = (await import(`${root}/src/telemetry/sdk.ts`)) as typeof import('../src/telemetry/sdk.js');
  // The exporter is made but never sends: its endpoint is never reached with the processor taken out.
  const t = createTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' });
  (t.tracer as unknown as { _spanProcessor: { _spanProcessors: unknown[] } })._spanProcessor._spanProcessors.length = 0;
  const base = (t as { root?: typeof t.api.ROOT_CONTEXT }).root ?? t.api.ROOT_CONTEXT;
  const tick = () => Promise.resolve();
  const request = async (i: number) => {
    const server = t.serverSpan('POST /upgradeLimit', base, { links: [], startTime: performance.timeOrigin + performance.now() }, () => ({
      'http.request.method': 'POST',
      'http.route': '/upgradeLimit',
      'url.scheme': 'http',
      'cardline.tenant': 'demo',
      'cardline.operation': 'credit-limit.upgrade',
      'cardline.request_id': String(i),
    }));
    const ctx = t.api.trace.setSpan(base, server);
    await t.inSpan('auth', {}, tick, { parent: ctx });
    await t.inSpan(
      'operation',
      { 'cardline.operation': 'credit-limit.upgrade' },
      async () => {
        await tick();
        const core = () => ({ 'cardline.tenant': 'demo', 'cardline.connector': 'mock', 'cardline.core.operation': 'upgradeLimit', 'cardline.core.role': 'routed', 'cardline.core.breaker': 'closed' });
        await t.inSpan('core upgradeLimit', core, async (s) => void t.traceparentOf(s.spanContext()), { kind: t.api.SpanKind.CLIENT });
        const sql = () => ({ 'db.system.name': 'pglite', 'db.operation.name': 'SELECT', 'db.query.text': 'SELECT 1 FROM t WHERE a = $1' });
        await t.inSpan('SELECT', sql, tick, { kind: t.api.SpanKind.CLIENT, requireParent: true });
      },
      { parent: ctx },
    );
    await t.inSpan('audit', {}, async () => void t.activeSpan(), { parent: ctx });
    server.setAttribute('http.response.status_code', 200);
    server.end();
  };
  const batch = async (n: number) => {
    for (let i = 0; i < n; i += 32) await Promise.all(Array.from({ length: 32 }, (_, j) => request(i + j)));
  };
  await batch(REQUESTS / 5);
  const before = process.cpuUsage();
  await batch(REQUESTS);
  const used = process.cpuUsage(before);
  process.stdout.write(`${((used.user + used.system) / REQUESTS).toFixed(2)}\n`);
  process.exit(0);
}

function main(): void {
  const roots = [ROOT, ...process.argv.slice(2).map((r) => resolve(r))];
  const figures = new Map<string, number[]>(roots.map((r) => [r, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const root of roots) {
      const out = execFileSync(process.execPath, ['--import', 'tsx', import.meta.filename, '--child', root], { cwd: ROOT, encoding: 'utf8' });
      figures.get(root)!.push(Number(out.trim()));
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  for (const [root, xs] of figures) console.log(`${root}: median ${median(xs).toFixed(1)} µs of CPU per sampled request (rounds: ${xs.join(', ')})`);
}

if (process.argv[2] === '--child') await child(process.argv[3]!);
else main();
