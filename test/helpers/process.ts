// Running the real gateway process in a test: a free port, a clean environment, start, wait until ready.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

export function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.once('error', rej);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => res(port));
    });
  });
}

/**
 * The parent's environment without anything that would steer the child's store, key or ports; the
 * management listener on an ephemeral port unless the test names one.
 */
export function baseEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of Object.keys(env)) {
    if (k.startsWith('CARDLINE_') || ['DATABASE_URL', 'REDIS_URL', 'PORT', 'HOST', 'LOG_LEVEL'].includes(k)) delete env[k];
  }
  return { CARDLINE_ADMIN_PORT: '0', ...env, ...extra };
}

export interface Proc {
  child: ChildProcess;
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * The gateway as `npm start` and `npm run demo` run it: bin/gateway.js, the compiled dist/. A test file that
 * starts it calls ensureBuilt (helpers/spawn.ts) in a beforeAll first. (Through tsx, each start spent about
 * 1.4 s more CPU compiling the sources again.)
 */
export function start(args: string[], env: NodeJS.ProcessEnv): Proc {
  const child = spawn(process.execPath, ['bin/gateway.js', ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (out += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) =>
    child.once('exit', (code, signal) => res({ code, signal })),
  );
  return { child, output: () => out, exited };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<never>((_, rej) => (timer = setTimeout(() => rej(new Error(`${what}: not within ${ms} ms`)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** Waits until `base` + `path` answers 200 (the public listener's readiness by default; the management listener has /health/live). */
export async function waitReady(base: string, proc: Proc, timeoutMs = 180_000, path = '/health/ready'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exited = false;
  void proc.exited.then(() => (exited = true));
  while (Date.now() < deadline) {
    if (exited) throw new Error(`server exited during start-up:\n${proc.output()}`);
    try {
      const res = await fetch(`${base}${path}`);
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await sleep(50);
  }
  throw new Error(`server not ready within ${timeoutMs} ms:\n${proc.output()}`);
}

/** Stops a process that is still running (SIGKILL) and waits for it. */
export async function kill(proc: Proc | undefined): Promise<void> {
  if (proc && proc.child.exitCode === null && proc.child.signalCode === null) {
    proc.child.kill('SIGKILL');
    await proc.exited;
  }
}
