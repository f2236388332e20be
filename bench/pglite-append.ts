// The embedded store's cost per audit batch without HTTP (decision 0425): BENCH_BATCHES (300) batches of BENCH_BATCH (16)
// records with events, PGlite on disk on its thread; this tree and BENCH_BASELINE's checkout alternated, BENCH_ROUNDS (3).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { envInt } from './env.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const ROUNDS = envInt('BENCH_ROUNDS', 3, 1, 50);
const BATCHES = envInt('BENCH_BATCHES', 300, 1, 100_000);
const BATCH = envInt('BENCH_BATCH', 16, 1, 500);
const BASELINE = process.env.BENCH_BASELINE ? resolve(process.env.BENCH_BASELINE) : null;

interface Figures {
  msPerBatch: number;
  cpuUsPerRecord: number;
}

async function arm(root: string): Promise<Figures> {
  const { openDb } = (await import(join(root, 'src/store/db.ts'))) as typeof import('../src/store/db.js');
  const { AuditWriter } = (await import(join(root, 'src/audit/writer.ts'))) as typeof import('../src/audit/writer.js');
  const dir = mkdtempSync(join(tmpdir(), 'cardline-append-'));
  const db = await openDb({ dataDir: join(dir, 'pglite'), thread: true });
  try {
    await db.query("INSERT INTO tenants (tenant_id, name, config) VALUES ('demo', 'Demo', '{}')");
    const writer = new AuditWriter(db);
    let n = 0;
    const entry = () => {
      const requestId = `req-${++n}`;
      return {
        tenantId: 'demo', at: new Date(), actor: 'bench-user', role: 'operator', action: 'credit-line.upgrade-limit', method: 'POST',
        route: '/credit-line-management/business-entity-manager/upgradeLimit', target: { entityId: 'ENT-1001' }, outcome: 'success', status: 200,
        requestId, origin: '127.0.0.1',
        event: { type: 'credit-limit.upgraded' as const, aggregateId: 'ENT-1001', payload: { entityId: 'ENT-1001', amount: '60000.00', requestId } },
      };
    };
    const run = (batches: number) => (async () => {
      for (let b = 0; b < batches; b++) await Promise.all(Array.from({ length: BATCH }, () => writer.record(entry())));
    })();
    await run(100);
    const cpu = process.cpuUsage();
    const started = performance.now();
    await run(BATCHES);
    const ms = performance.now() - started;
    const used = process.cpuUsage(cpu);
    await writer.close();
    return { msPerBatch: ms / BATCHES, cpuUsPerRecord: (used.user + used.system) / (BATCHES * BATCH) };
  } finally {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

function child(root: string): Promise<Figures> {
  return new Promise((resolveRun, reject) => {
    const p = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'bench', 'pglite-append.ts'), root], { cwd: root, env: { ...process.env, NODE_ENV: 'production' }, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
    p.once('exit', (code) => (code === 0 ? resolveRun(JSON.parse(out.trim().split('\n').pop()!) as Figures) : reject(new Error(`arm ${root} exited with ${code}`))));
  });
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

async function main(): Promise<void> {
  const arms = [{ name: 'this tree', root: ROOT }, ...(BASELINE ? [{ name: `baseline ${BASELINE}`, root: BASELINE }] : [])];
  const results = new Map<string, Figures[]>(arms.map((a) => [a.name, []]));
  for (let round = 1; round <= ROUNDS; round++) {
    for (const a of round % 2 ? arms : [...arms].reverse()) {
      const f = await child(a.root);
      results.get(a.name)!.push(f);
      console.log(`round ${round}, ${a.name}: ${f.msPerBatch.toFixed(2)} ms/batch, CPU ${f.cpuUsPerRecord.toFixed(0)} µs/record (load ${loadavg()[0]!.toFixed(1)})`);
    }
  }
  for (const [name, fs] of results) {
    console.log(`${name}: median ${median(fs.map((f) => f.msPerBatch)).toFixed(2)} ms per batch of ${BATCH}, CPU ${median(fs.map((f) => f.cpuUsPerRecord)).toFixed(0)} µs per record`);
  }
}

if (process.argv[2]) {
  arm(process.argv[2]).then(
    (f) => console.log(JSON.stringify(f)),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
} else {
  await main();
}
