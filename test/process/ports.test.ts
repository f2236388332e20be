// A port in use (issue 20, point 9): the process exits 1 with one line naming the listener and the variable that
// sets its port, no stack trace; the mock core's port is set by MOCK_CORE_PORT as well as --port.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MasterKey } from '../../src/crypto/master-key.js';
import { createTestDataDir } from '../helpers/app.js';
import { ROOT, baseEnv, freePort, kill, start, waitReady, within, type Proc } from '../helpers/process.js';
import { BUILD_TIMEOUT_MS, ensureBuilt } from '../helpers/spawn.js';

// The gateway processes run the compiled dist/ (helpers/process.ts): built, if stale, once before them.
beforeAll(ensureBuilt, BUILD_TIMEOUT_MS);

const STACK_FRAME = /\n\s+at .+[:(]/;

/** A port held by another process's listener (here a bare TCP server of the test's own). */
async function holdPort(): Promise<{ port: number; server: Server }> {
  const server = createServer();
  await new Promise<void>((res, rej) => {
    server.once('error', rej);
    server.listen(0, '127.0.0.1', () => res());
  });
  const address = server.address();
  return { port: typeof address === 'object' && address ? address.port : 0, server };
}

const closeServer = (server: Server) => new Promise<void>((res) => server.close(() => res()));

describe('the gateway with a port in use', () => {
  let dataDir: string;
  let held: { port: number; server: Server };
  const masterKey = MasterKey.generate();
  beforeAll(async () => {
    dataDir = await createTestDataDir('cardline-ports-');
    held = await holdPort();
  });
  afterAll(async () => {
    if (held) await closeServer(held.server);
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  /** Starts the (production) gateway on its store with `ports` and waits for it to exit. */
  async function exitOf(ports: Record<string, string>): Promise<{ code: number | null; output: string }> {
    const p = start([], baseEnv({ CARDLINE_DATA_DIR: dataDir, CARDLINE_MASTER_KEY: masterKey, LOG_LEVEL: 'warn', ...ports }));
    try {
      const exit = await within(p.exited, 150_000, 'exit');
      return { code: exit.code, output: p.output() };
    } finally {
      await kill(p);
    }
  }

  it('the public API\'s port: names the public API and PORT, exit 1, no stack trace', async () => {
    const { code, output } = await exitOf({ PORT: String(held.port), CARDLINE_ADMIN_PORT: String(await freePort()) });
    expect(code).toBe(1);
    expect(output).toContain(
      `Cannot start the public API on 127.0.0.1:${held.port}: the port is in use by another process. Set PORT to a free port.\n`,
    );
    expect(output).not.toMatch(STACK_FRAME);
    expect(output).not.toContain('EADDRINUSE');
  }, 180_000);

  it('the management listener\'s port: names it and CARDLINE_ADMIN_PORT, exit 1, no stack trace', async () => {
    const { code, output } = await exitOf({ PORT: String(await freePort()), CARDLINE_ADMIN_PORT: String(held.port) });
    expect(code).toBe(1);
    expect(output).toContain(
      `Cannot start the management listener on 127.0.0.1:${held.port}: the port is in use by another process. ` +
        'Set CARDLINE_ADMIN_PORT to a free port.\n',
    );
    expect(output).not.toMatch(STACK_FRAME);
  }, 180_000);

  it('the demo on a port in use: says so before it seeds anything or prints a password or key shown only once', async () => {
    const fresh = await createTestDataDir('cardline-ports-demo-');
    try {
      for (const ports of [{ PORT: String(held.port), CARDLINE_ADMIN_PORT: String(await freePort()) }, { PORT: String(await freePort()), CARDLINE_ADMIN_PORT: String(held.port) }]) {
        const p = start(['--demo'], baseEnv({ CARDLINE_DATA_DIR: fresh, LOG_LEVEL: 'warn', ...ports }));
        try {
          const exit = await within(p.exited, 150_000, 'exit');
          expect(exit.code).toBe(1);
          expect(p.output()).toContain(`on 127.0.0.1:${held.port}: the port is in use by another process.`);
          expect(p.output()).not.toContain('shown only now');
          expect(p.output()).not.toContain('Demo tenants');
        } finally {
          await kill(p);
        }
      }
    } finally {
      rmSync(fresh, { recursive: true, force: true });
    }
  }, 360_000);

  it('PORT set to the management listener\'s port (the README\'s old advice, PORT=8081): says which listener holds it', async () => {
    const port = String(await freePort());
    const { code, output } = await exitOf({ PORT: port, CARDLINE_ADMIN_PORT: port });
    expect(code).toBe(1);
    expect(output).toContain(
      `Cannot start the management listener on 127.0.0.1:${port}: the port is in use: this process's public API holds it (PORT=${port}). ` +
        'Set CARDLINE_ADMIN_PORT to a free port.\n',
    );
    expect(output).not.toMatch(STACK_FRAME);
  }, 180_000);
});

describe('the mock core', () => {
  let dataDir: string;
  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'cardline-mock-core-port-'));
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  function mockCore(env: Record<string, string>): Proc {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/mock-core/main.ts', '--data-dir', dataDir, '--log-level', 'warn'], {
      cwd: ROOT,
      env: { ...baseEnv({}), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) => child.once('exit', (code, signal) => res({ code, signal })));
    return { child, output: () => out, exited };
  }

  it('listens on MOCK_CORE_PORT', async () => {
    const port = await freePort();
    const p = mockCore({ MOCK_CORE_PORT: String(port) });
    try {
      await waitReady(`http://127.0.0.1:${port}`, p, 180_000, '/openapi.json');
    } finally {
      await kill(p);
    }
  }, 200_000);

  it('MOCK_CORE_PORT in use: names the mock core, --port and MOCK_CORE_PORT, exit 1, no stack trace', async () => {
    const held = await holdPort();
    try {
      const p = mockCore({ MOCK_CORE_PORT: String(held.port) });
      const exit = await within(p.exited, 150_000, 'exit');
      expect(exit.code).toBe(1);
      expect(p.output()).toBe(
        `Cannot start the mock core on 127.0.0.1:${held.port}: the port is in use by another process. Set --port or MOCK_CORE_PORT to a free port.\n`,
      );
    } finally {
      await closeServer(held.server);
    }
  }, 180_000);
});
