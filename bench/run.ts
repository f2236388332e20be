// `npm run bench`: the full Cardline pipeline against a bare Fastify floor, alternating rounds, loopback only.
//   BENCH_SECONDS (10) per run, BENCH_CONNECTIONS (32), BENCH_ROUNDS (2), BENCH_WARMUP_SECONDS (2),
//   BENCH_STORE (disk | memory | postgres, with DATABASE_URL) the full app's store,
//   BENCH_PROFILE=1 starts the child with --cpu-prof (profiles land in bench/profiles/).
// Fails (exit 1) when the full pipeline answers anything but 2xx or the child cannot start.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { encryptCompact } from '../src/crypto/jwe.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const LIMIT_URL = '/credit-line-management/business-entity-manager/upgradeLimit';
const BODY = JSON.stringify({ entityId: 'ENT-1001', amount: '60000.00' });

function envInt(name: string, fallback: number, min: number, max: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${name} must be a whole number between ${min} and ${max}`);
  return n;
}

const SECONDS = envInt('BENCH_SECONDS', 10, 1, 300);
const CONNECTIONS = envInt('BENCH_CONNECTIONS', 32, 1, 1024);
const ROUNDS = envInt('BENCH_ROUNDS', 2, 1, 20);
const WARMUP = envInt('BENCH_WARMUP_SECONDS', 2, 0, 60);
const PROFILE = process.env.BENCH_PROFILE === '1';

interface Ports {
  bare: number;
  full: number;
}

interface Run {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  total: number;
}

function startChild(password: string): Promise<{ child: ChildProcess; ports: Ports; logLevel: string; store: string }> {
  const args = ['--import', 'tsx'];
  if (PROFILE) {
    const dir = join(ROOT, 'bench', 'profiles');
    mkdirSync(dir, { recursive: true });
    args.push('--cpu-prof', `--cpu-prof-dir=${dir}`);
  }
  args.push(join(ROOT, 'bench', 'server.ts'));
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, BENCH_PASSWORD: password, NODE_ENV: 'production' },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  return new Promise((resolvePorts, reject) => {
    const timer = setTimeout(() => reject(new Error('bench server did not start within 60 s')), 60_000);
    child.once('exit', (code) => reject(new Error(`bench server exited early with code ${code}`)));
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      try {
        const msg = JSON.parse(line) as { benchPorts?: Ports; logLevel?: string; store?: string };
        if (msg.benchPorts) {
          clearTimeout(timer);
          resolvePorts({ child, ports: msg.benchPorts, logLevel: msg.logLevel ?? '?', store: msg.store ?? '?' });
          return;
        }
      } catch {
        // not ours: a log line
      }
      process.stderr.write(`[server] ${line}\n`);
    });
  });
}

async function login(port: number, password: string): Promise<string> {
  const base = `http://127.0.0.1:${port}`;
  const keys = (await (await fetch(`${base}/api/keys`, { headers: { TENANT: 'demo' } })).json()) as { keys: Parameters<typeof encryptCompact>[1][] };
  const res = await fetch(`${base}/api/authenticate`, {
    method: 'POST',
    headers: { TENANT: 'demo', 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'integration', password: await encryptCompact(password, keys.keys[0]!) }),
  });
  if (res.status !== 200) throw new Error(`authentication failed: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { id_token: string }).id_token;
}

async function auditRows(port: number): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${port}/__bench/audit-count`);
  return ((await res.json()) as { auditRows: number }).auditRows;
}

async function load(port: number, token: string, seconds: number): Promise<Run> {
  const result = await autocannon({
    url: `http://127.0.0.1:${port}${LIMIT_URL}`,
    method: 'POST',
    connections: CONNECTIONS,
    duration: seconds,
    timeout: 10,
    headers: { TENANT: 'demo', authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: BODY,
  });
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    total: result['2xx'] + result.non2xx,
  };
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

const fmt = (n: number, digits = 0) => n.toFixed(digits);

async function main(): Promise<number> {
  const password = randomBytes(18).toString('base64url');
  const { child, ports, logLevel, store } = await startChild(password);
  const killTimer = setTimeout(() => child.kill('SIGKILL'), (ROUNDS * 2 * (SECONDS + 5) + WARMUP * 2 + 120) * 1000);
  killTimer.unref();
  try {
    const token = await login(ports.full, password);
    console.log(
      `Cardline bench: POST ${LIMIT_URL}, ${CONNECTIONS} connections, ${SECONDS} s per run, ${ROUNDS} rounds (bare, full alternating), ` +
        `warm-up ${WARMUP} s each; full app LOG_LEVEL=${logLevel}, store ${store === 'disk' ? 'PGlite on disk' : store === 'memory' ? 'PGlite in memory' : 'PostgreSQL'}, mock connector; node ${process.version}`,
    );
    if (WARMUP > 0) {
      await load(ports.bare, token, WARMUP);
      await load(ports.full, token, WARMUP);
    }
    const before = await auditRows(ports.bare);
    const bare: Run[] = [];
    const full: Run[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      bare.push(await load(ports.bare, token, SECONDS));
      full.push(await load(ports.full, token, SECONDS));
    }
    const after = await auditRows(ports.bare);

    const header = ['round', 'target', 'req/s', 'p50 ms', 'p99 ms', 'non-2xx', 'errors', 'requests', 'full/bare'];
    const rows: string[][] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const b = bare[i]!;
      const f = full[i]!;
      rows.push([String(i + 1), 'bare', fmt(b.rps), fmt(b.p50, 1), fmt(b.p99, 1), String(b.non2xx), String(b.errors), String(b.total), '']);
      rows.push([String(i + 1), 'full', fmt(f.rps), fmt(f.p50, 1), fmt(f.p99, 1), String(f.non2xx), String(f.errors), String(f.total), fmt(f.rps / b.rps, 2)]);
    }
    const med = (runs: Run[], k: keyof Run) => median(runs.map((r) => r[k]));
    const ratio = med(full, 'rps') / med(bare, 'rps');
    for (const [name, runs] of [['bare', bare], ['full', full]] as const) {
      rows.push([
        'median',
        name,
        fmt(med(runs, 'rps')),
        fmt(med(runs, 'p50'), 1),
        fmt(med(runs, 'p99'), 1),
        String(runs.reduce((s, r) => s + r.non2xx, 0)),
        String(runs.reduce((s, r) => s + r.errors, 0)),
        String(runs.reduce((s, r) => s + r.total, 0)),
        name === 'full' ? fmt(ratio, 2) : '',
      ]);
    }
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
    const line = (cells: string[]) => cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
    console.log('');
    console.log(line(header));
    console.log(widths.map((w) => '-'.repeat(w)).join('  '));
    for (const r of rows) console.log(line(r));
    console.log('');
    const fullRequests = full.reduce((s, r) => s + r.total, 0);
    console.log('(median rows: req/s and latencies are medians over rounds; non-2xx, errors and requests are totals)');
    console.log(
      `audit rows written during measured runs: ${after - before} (full-pipeline responses counted by the client: ${fullRequests}; ` +
        `requests still in flight when a run stops are answered and audited, not counted); total audit rows: ${after}`,
    );
    console.log(`full/bare (median req/s): ${fmt(ratio, 2)} — target >= 0.50: ${ratio >= 0.5 ? 'met' : 'NOT met'}`);

    const badFull = full.reduce((s, r) => s + r.non2xx + r.errors, 0);
    if (badFull > 0) {
      console.error(`FAIL: the full pipeline answered ${badFull} non-2xx responses or errors`);
      return 1;
    }
    return 0;
  } finally {
    child.stdin?.end();
    child.kill('SIGTERM');
    await new Promise<void>((r) => {
      if (child.exitCode !== null) return r();
      const t = setTimeout(() => {
        child.kill('SIGKILL');
        r();
      }, 10_000);
      child.once('exit', () => {
        clearTimeout(t);
        r();
      });
    });
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(`bench failed: ${(err as Error).message}`);
    process.exit(1);
  },
);
