// `BENCH_DEMO=1 npx tsx bench/memory.ts`: the embedded demo's memory under load (issue 28, decision 0373). Starts
// `npm run demo` as a user does (`node bin/gateway.js --demo`: the compiled gateway, PGlite on disk in a
// temporary directory, the store on its own thread, the demo tenants), logs the `integration` user in through
// the public API (a JWE of the password, as the README's walk-through), loads a limit upgrade with autocannon for
// BENCH_DEMO_SECONDS (default 60) at BENCH_CONNECTIONS (default 32), and prints the process's RSS at the end of
// the load (and its peak), against the 250 MB target, with what holds it: the gateway thread's V8 heap,
// external memory and array buffers, the store thread's V8 heap and PostgreSQL's WebAssembly memory (from
// /metrics), and the process's mappings by kind (/proc/PID/smaps: the WebAssembly memory's reservation, code,
// the rest). BENCH_DEMO_BASELINE=DIR: also the demo of another checkout (its dist built, e.g. a worktree of
// main), alternated with this one's (baseline, this, baseline, this…) for BENCH_ROUNDS rounds (default 1), the
// same load in one run. BENCH_DEMO_ENV='A=1 B=2': variables given to this checkout's demo only (a setting tried
// against its default).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { CompactEncrypt, importJWK, type JWK } from 'jose';
import { envArms, envOf } from './env.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const LIMIT_URL = '/credit-line-management/business-entity-manager/upgradeLimit';
const BODY = JSON.stringify({ entityId: 'ENT-1001', amount: '60000.00' });
const SECONDS = Number(process.env.BENCH_DEMO_SECONDS || '60');
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS || '32');
const ROUNDS = Number(process.env.BENCH_ROUNDS || '1');
const BASELINE = process.env.BENCH_DEMO_BASELINE ? resolve(process.env.BENCH_DEMO_BASELINE) : undefined;
const EXTRA_ENV = envOf(process.env.BENCH_DEMO_ENV ?? '');
/** BENCH_DEMO_ARMS='name: A=1 B=2 | other: C=3': arms of this tree, each with its variables, alternated in each round. */
const ARMS = envArms(process.env.BENCH_DEMO_ARMS);
const PASSWORD = 'bench-demo-password-1';
/** Issue 28's target: the demo's RSS after a minute of load. */
const TARGET_MB = 250;
const MB = (n: number) => Math.round(n / 1024 / 1024);

const freePort = () =>
  new Promise<number>((ok, fail) => {
    const s = createServer();
    s.once('error', fail);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => (a && typeof a === 'object' ? ok(a.port) : fail(new Error('no port'))));
    });
  });

/** The kB fields of /proc/PID/status this reads (VmRSS: resident now, VmHWM: its peak, and RSS by kind). */
function status(pid: number): Record<'VmRSS' | 'VmHWM' | 'RssAnon' | 'RssFile' | 'RssShmem', number> {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0) * 1024;
  return { VmRSS: kb('VmRSS'), VmHWM: kb('VmHWM'), RssAnon: kb('RssAnon'), RssFile: kb('RssFile'), RssShmem: kb('RssShmem') };
}

/** The process's CPU time so far (every thread), in µs, from /proc/PID/stat (clock ticks of 10 ms). */
function cpuMicros(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

/**
 * Resident memory by kind of mapping (/proc/PID/smaps): the WebAssembly memory (V8 reserves gigabytes of guard
 * pages after it: the readable mapping right before an inaccessible one of 4 GB or more), malloc's heaps (glibc's
 * [heap] and its per-thread arenas, mapped at 64 MB boundaries: buffers, V8's compiler zones, OpenSSL), files
 * (the node binary, shared libraries), and other anonymous memory (both threads' V8 heaps, compiled code).
 */
function mappings(pid: number): { wasmMemory: number; malloc: number; files: number; otherAnon: number } {
  const maps: { start: bigint; size: bigint; perms: string; file: boolean; name: string; rss: number }[] = [];
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) (\S{4}) \S+ \S+ (\d+)\s*(.*)$/.exec(line);
    if (head) {
      const start = BigInt(`0x${head[1]}`);
      maps.push({ start, size: BigInt(`0x${head[2]}`) - start, perms: head[3]!, file: head[4] !== '0', name: head[5]!, rss: 0 });
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss && maps.length) maps[maps.length - 1]!.rss = Number(rss[1]) * 1024;
  }
  const out = { wasmMemory: 0, malloc: 0, files: 0, otherAnon: 0 };
  const ARENA = 64n * 1024n * 1024n;
  maps.forEach((m, i) => {
    const next = maps[i + 1];
    if (m.file) out.files += m.rss;
    else if (m.name === '[heap]' || (m.start % ARENA === 0n && m.size <= ARENA && m.perms.startsWith('rw'))) out.malloc += m.rss;
    else if (next && next.perms === '---p' && next.size >= 4n * 1024n ** 3n && next.start === m.start + m.size && m.perms.startsWith('rw')) out.wasmMemory += m.rss;
    else out.otherAnon += m.rss;
  });
  return out;
}

/** The gauges of GET /metrics this reads, summed over their series. */
async function gauges(adminPort: number): Promise<Record<string, number>> {
  const text = await (await fetch(`http://127.0.0.1:${adminPort}/metrics`)).text();
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const m = /^(cardline_(?:nodejs_heap_size_(?:used|total)_bytes|nodejs_external_memory_bytes)) (\S+)/.exec(line);
    if (m) out[m[1]!] = Number(m[2]);
    const store = /^cardline_store_thread_memory_bytes\{area="(\w+)"\} (\S+)/.exec(line);
    if (store) out[`store_${store[1]}`] = Number(store[2]);
  }
  const spaces = /^cardline_nodejs_heap_space_size_used_bytes\{space="(\w+)"\} (\S+)/gm;
  for (const m of text.matchAll(spaces)) out[`space_${m[1]}`] = Number(m[2]);
  return out;
}

/** The tree's `npm run demo`: `[NAME=value …] node [flags…] bin/gateway.js --demo`, its paths made absolute. */
function demoCommand(tree: string): { env: Record<string, string>; args: string[] } {
  const script = (JSON.parse(readFileSync(join(tree, 'package.json'), 'utf8')) as { scripts: { demo: string } }).scripts.demo;
  const words = script.trim().split(/\s+/);
  const env: Record<string, string> = {};
  while (/^[A-Z_][A-Z0-9_]*=/.test(words[0] ?? '')) {
    const w = words.shift()!;
    env[w.slice(0, w.indexOf('='))] = w.slice(w.indexOf('=') + 1);
  }
  if (words.shift() !== 'node') throw new Error(`${tree}: the demo script is not \`node …\`: ${script}`);
  return { env, args: words.map((w) => (w.startsWith('-') ? w : resolve(tree, w))) };
}

async function waitReady(port: number, child: ChildProcess): Promise<void> {
  for (let i = 0; i < 1200; i++) {
    if (child.exitCode !== null) throw new Error(`the demo exited with ${child.exitCode}`);
    try {
      if ((await fetch(`http://127.0.0.1:${port}/health/ready`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the demo was not ready within 120 s');
}

/** The README's login: the password encrypted to the tenant's key (a fresh jti), then POST /api/authenticate. */
async function login(port: number, user: string): Promise<string> {
  const keys = (await (await fetch(`http://127.0.0.1:${port}/api/keys`, { headers: { TENANT: 'demo' } })).json()) as { keys: JWK[] };
  const key = keys.keys[0]!;
  const jwe = await new CompactEncrypt(new TextEncoder().encode(PASSWORD))
    .setProtectedHeader({ alg: 'ECDH-ES+A256KW', enc: 'A256GCM', kid: key.kid!, iat: Math.floor(Date.now() / 1000), jti: crypto.randomUUID() })
    .encrypt(await importJWK(key, 'ECDH-ES+A256KW'));
  const r = await fetch(`http://127.0.0.1:${port}/api/authenticate`, {
    method: 'POST',
    headers: { TENANT: 'demo', 'content-type': 'application/json' },
    body: JSON.stringify({ username: user, password: jwe }),
  });
  const body = (await r.json()) as { id_token?: string };
  if (!body.id_token) throw new Error(`login failed: ${r.status} ${JSON.stringify(body)}`);
  return body.id_token;
}

interface Measured {
  arm: string;
  rps: number;
  /** The demo process's CPU time (both threads) per request answered 2xx, in µs. */
  cpuUs: number;
  non2xx: number;
  startedMb: number;
  rssMb: number;
  peakMb: number;
  load: number;
  detail: string;
}

async function runDemo(arm: string, tree: string, env: Record<string, string>): Promise<Measured> {
  const dir = mkdtempSync(join(tmpdir(), 'cardline-demo-memory-'));
  const [port, adminPort] = [await freePort(), await freePort()];
  const log = openSync('/dev/null', 'w');
  const demo = demoCommand(tree);
  // As `npm run demo` runs it (the tree's package.json script, its node flags), without npm's process in between.
  const child = spawn(process.execPath, demo.args, {
    cwd: dir,
    env: {
      ...process.env,
      ...demo.env,
      ...env,
      PORT: String(port),
      CARDLINE_ADMIN_PORT: String(adminPort),
      CARDLINE_DATA_DIR: join(dir, 'data'),
      CARDLINE_DEMO_PASSWORD: PASSWORD,
      NODE_ENV: '',
    },
    stdio: ['ignore', log, 'inherit'],
  });
  try {
    await waitReady(port, child);
    const pid = child.pid!;
    const startedMb = MB(status(pid).VmRSS);
    const token = await login(port, 'integration');
    const cpuBefore = cpuMicros(pid);
    const result = await autocannon({
      url: `http://127.0.0.1:${port}`,
      connections: CONNECTIONS,
      duration: SECONDS,
      timeout: 10,
      requests: [{ method: 'POST', path: LIMIT_URL, body: BODY, headers: { 'content-type': 'application/json', TENANT: 'demo', authorization: `Bearer ${token}` } }],
    });
    // Right at the end of the minute, before anything settles: what a user's `ps` shows after the load.
    const s = status(pid);
    const cpuUs = (cpuMicros(pid) - cpuBefore) / Math.max(1, result['2xx']);
    const maps = mappings(pid);
    const g = await gauges(adminPort);
    const load = loadavg()[0]!;
    const detail =
      `RSS ${MB(s.VmRSS)} MB (anonymous ${MB(s.RssAnon)}, files ${MB(s.RssFile)}, shared ${MB(s.RssShmem)}); by mapping: WebAssembly memory ${MB(maps.wasmMemory)}, ` +
      `malloc ${MB(maps.malloc)}, files ${MB(maps.files)}, other anonymous ${MB(maps.otherAnon)} MB (V8 heaps, code); ` +
      `gateway thread: V8 heap ${MB(g.cardline_nodejs_heap_size_used_bytes ?? 0)} used of ${MB(g.cardline_nodejs_heap_size_total_bytes ?? 0)} MB ` +
      `(new ${MB(g.space_new ?? 0)}, old ${MB(g.space_old ?? 0)}, code ${MB(g.space_code ?? 0)}), external ${MB(g.cardline_nodejs_external_memory_bytes ?? 0)} MB` +
      (g.store_heap_used !== undefined
        ? `; store thread: V8 heap ${MB(g.store_heap_used)} used of ${MB(g.store_heap_committed ?? 0)} MB, external ${MB(g.store_external ?? 0)} MB ` +
          `(array buffers ${MB(g.store_array_buffers ?? 0)}), WebAssembly memory ${MB(g.store_wasm_memory ?? 0)} MB declared`
        : '');
    return { arm, rps: result.requests.average, cpuUs, non2xx: result.non2xx + result.errors, startedMb, rssMb: MB(s.VmRSS), peakMb: MB(s.VmHWM), load, detail };
  } finally {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

export async function demoMemory(): Promise<boolean> {
  if (!existsSync(join(ROOT, 'dist', 'src', 'server.js'))) throw new Error('build the gateway first (npm run build)');
  if (BASELINE && !existsSync(join(BASELINE, 'dist', 'src', 'server.js'))) throw new Error(`${BASELINE} has no dist/: build it first`);
  console.log(`the demo under load: POST ${LIMIT_URL}, ${CONNECTIONS} connections, ${SECONDS} s per run, ${ROUNDS} round(s)`);
  const results: Measured[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    const arms: [string, string, Record<string, string>][] = [
      ...(BASELINE ? [['baseline', BASELINE, {}] as [string, string, Record<string, string>]] : []),
      ...ARMS.map(([name, env]) => [name, ROOT, env] as [string, string, Record<string, string>]),
      ['this tree', ROOT, EXTRA_ENV],
    ];
    for (const [arm, tree, env] of arms) {
      const m = await runDemo(arm, tree, env);
      results.push(m);
      console.log(
        `round ${round}, ${arm}: ${Math.round(m.rps)} req/s, CPU ${Math.round(m.cpuUs)} µs/req${m.non2xx ? ` (${m.non2xx} not 2xx)` : ''}, RSS at start ${m.startedMb} MB, ` +
          `after ${SECONDS} s of load ${m.rssMb} MB (peak ${m.peakMb}), load average ${m.load.toFixed(1)}\n  ${m.detail}`,
      );
    }
  }
  let ok = true;
  for (const arm of [...(BASELINE ? ['baseline'] : []), ...ARMS.map(([name]) => name), 'this tree']) {
    const mine = results.filter((r) => r.arm === arm);
    const rss = median(mine.map((r) => r.rssMb));
    const failed = mine.some((r) => r.non2xx > 0);
    console.log(
      `${arm}: median RSS after ${SECONDS} s of load ${rss} MB (peak ${median(mine.map((r) => r.peakMb))}), ${Math.round(median(mine.map((r) => r.rps)))} req/s, ` +
        `CPU ${Math.round(median(mine.map((r) => r.cpuUs)))} µs/req` +
        (arm === 'this tree' ? ` — target RSS <= ${TARGET_MB} MB: ${rss <= TARGET_MB ? 'met' : 'NOT met'}` : ''),
    );
    if (failed) console.log(`${arm}: some requests were not answered 2xx`);
    if (arm === 'this tree') ok = !failed;
  }
  return ok;
}
