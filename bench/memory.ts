// `npx tsx bench/memory.ts`: where the gateway's memory goes once every tenant was served (issue 21). Seeds a
// store with BENCH_TENANTS tenants (bench/server.ts's seed phase; BENCH_STORE disk or postgres, as `npm run bench`),
// starts the gateway on it in a process of its own with --expose-gc, sends every tenant BENCH_PASSES requests
// (round-robin, 32 at a time), then prints its memory after a full collection: RSS, the V8 heap by space,
// external and array buffers. BENCH_HEAP_SNAPSHOT=1 also writes a heap snapshot of the gateway's thread into
// bench/profiles/ (SIGUSR2), for Chrome DevTools' Memory tab. BENCH_SEED_DIR=DIR: the seeded store is kept
// (PGlite: in DIR; PostgreSQL: a database named in DIR/database) and copied for each later run with the same DIR,
// instead of seeding again (minutes at 10 000). BENCH_DIST=1: the gateway runs from dist/ (`npm run build`
// first), as `npm start` runs it, not from source through tsx.
// BENCH_DEMO=1: instead, the embedded demo's RSS after a minute of load against issue 28's 250 MB (bench/demo-memory.ts).
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { demoMemory } from './demo-memory.js';
import { compiled } from './dist.js';
import { temporaryDatabase } from './postgres.js';
import { MasterKey } from '../src/crypto/master-key.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const LIMIT_URL = '/credit-line-management/business-entity-manager/upgradeLimit';
const BODY = JSON.stringify({ entityId: 'ENT-1001', amount: '60000.00' });
const TENANTS = Number(process.env.BENCH_TENANTS || '10000');
const PASSES = Number(process.env.BENCH_PASSES || '2');
const STORE = process.env.BENCH_STORE || 'disk';
const SNAPSHOT = process.env.BENCH_HEAP_SNAPSHOT === '1';
const SEED_DIR = process.env.BENCH_SEED_DIR;
const DIST = process.env.BENCH_DIST === '1';
const seededDatabase = SEED_DIR && STORE === 'postgres' && existsSync(join(SEED_DIR, 'database')) ? readFileSync(join(SEED_DIR, 'database'), 'utf8').trim() : undefined;
const MB = (n: number) => Math.round(n / 1024 / 1024);

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'cardline-memory-'));
  const database = STORE === 'postgres' ? await temporaryDatabase('cardline_memory', seededDatabase) : null;
  try {
    const dataDir = join(dir, 'pglite');
    const env: NodeJS.ProcessEnv & { BENCH_TOKENS_FILE: string; BENCH_MASTER_KEY: string } = {
      ...process.env,
      NODE_ENV: 'production',
      BENCH_TENANTS: String(TENANTS),
      BENCH_TOKENS_FILE: join(dir, 'tokens.json'),
      BENCH_MASTER_KEY: SEED_DIR && existsSync(join(SEED_DIR, 'master-key')) ? readFileSync(join(SEED_DIR, 'master-key'), 'utf8') : MasterKey.generate(),
      ...(database ? { BENCH_DATABASE_URL: database.url } : { BENCH_DATA_DIR: dataDir }),
    };
    const server = join(ROOT, 'bench', 'server.ts');
    if (SEED_DIR && existsSync(join(SEED_DIR, 'tokens.json')) && (STORE !== 'postgres' || seededDatabase)) {
      if (!database) cpSync(join(SEED_DIR, 'pglite'), dataDir, { recursive: true });
      cpSync(join(SEED_DIR, 'tokens.json'), env.BENCH_TOKENS_FILE);
    } else {
      const seeder = spawn(process.execPath, ['--import', 'tsx', server], { cwd: ROOT, env: { ...env, BENCH_PHASE: 'seed' }, stdio: ['ignore', 'ignore', 'inherit'] });
      if ((await new Promise((r) => seeder.once('exit', r))) !== 0) throw new Error('seeding failed');
      if (SEED_DIR) {
        mkdirSync(SEED_DIR, { recursive: true });
        if (database) writeFileSync(join(SEED_DIR, 'database'), (await temporaryDatabase('cardline_memory_seed', database.name)).name);
        else cpSync(dataDir, join(SEED_DIR, 'pglite'), { recursive: true });
        writeFileSync(join(SEED_DIR, 'master-key'), env.BENCH_MASTER_KEY);
        cpSync(env.BENCH_TOKENS_FILE, join(SEED_DIR, 'tokens.json'));
      }
    }
    const profiles = join(ROOT, 'bench', 'profiles');
    mkdirSync(profiles, { recursive: true });
    const child = spawn(process.execPath, ['--expose-gc', '--heapsnapshot-signal=SIGUSR2', ...(DIST ? [await compiled()] : ['--import', 'tsx', server])], {
      cwd: profiles,
      env: { ...env, BENCH_PHASE: 'serve' },
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const ports = await new Promise<{ bare: number; full: number }>((ok, fail) => {
      child.once('exit', (code) => fail(new Error(`the gateway exited with ${code}`)));
      createInterface({ input: child.stdout! }).on('line', (line) => {
        if (line.startsWith('{"benchPorts"')) ok((JSON.parse(line) as { benchPorts: { bare: number; full: number } }).benchPorts);
      });
    });
    const tokens = JSON.parse(readFileSync(env.BENCH_TOKENS_FILE, 'utf8')) as { tenant: string; token: string }[];
    const memory = async (label: string) => {
      const s = (await (await fetch(`http://127.0.0.1:${ports.bare}/__bench/stats?gc=1`)).json()) as {
        rss: number;
        heapUsed: number;
        heapTotal: number;
        external: number;
        arrayBuffers: number;
        spaces: Record<string, { used: number; committed: number }>;
        storeThread: { heapUsed: number; heapTotal: number; external: number; arrayBuffers: number; wasm: number } | null;
      };
      const spaces = Object.entries(s.spaces)
        .filter(([, v]) => v.committed > 1024 * 1024)
        .map(([k, v]) => `${k.replace('_space', '')} ${MB(v.used)}/${MB(v.committed)}`);
      const store = s.storeThread;
      console.log(
        `${label}: RSS ${MB(s.rss)} MB; V8 heap ${MB(s.heapUsed)} MB used of ${MB(s.heapTotal)} committed (${spaces.join(', ')}); ` +
          `external ${MB(s.external)} MB, of which array buffers ${MB(s.arrayBuffers)} MB` +
          (store
            ? `; store thread: V8 heap ${MB(store.heapUsed)} of ${MB(store.heapTotal)} MB, external ${MB(store.external)} MB (array buffers ${MB(store.arrayBuffers)}), ` +
              `WebAssembly memory ${MB(store.wasm)} MB`
            : ''),
      );
    };
    await memory('started');
    for (let pass = 0; pass < PASSES; pass++) {
      let next = 0;
      let failed = 0;
      const worker = async () => {
        while (next < tokens.length) {
          const t = tokens[next++]!;
          const r = await fetch(`http://127.0.0.1:${ports.full}${LIMIT_URL}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', TENANT: t.tenant, authorization: `Bearer ${t.token}` },
            body: BODY,
          });
          await r.arrayBuffer();
          if (r.status >= 300) failed++;
        }
      };
      await Promise.all(Array.from({ length: 32 }, worker));
      await memory(`after pass ${pass + 1} over ${tokens.length} tenants${failed ? ` (${failed} not 2xx)` : ''}`);
    }
    if (SNAPSHOT) {
      const before = new Set(readdirSync(profiles));
      child.kill('SIGUSR2');
      for (let i = 0; i < 600; i++) {
        const made = readdirSync(profiles).filter((f) => f.endsWith('.heapsnapshot') && !before.has(f));
        if (made.length) {
          // Written synchronously by the process, which answers again once it is done.
          await fetch(`http://127.0.0.1:${ports.bare}/__bench/stats`);
          console.log(`heap snapshot: bench/profiles/${made[0]}`);
          break;
        }
        await new Promise((r) => setTimeout(r, 500));
      }
    }
    child.stdin!.end();
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await database?.drop();
  }
}

(process.env.BENCH_DEMO === '1' ? demoMemory() : main().then(() => true)).then(
  (ok) => process.exit(ok ? 0 : 1),
  (err: unknown) => {
    console.error(`bench memory failed: ${(err as Error).message}`);
    process.exit(1);
  },
);
