// The SDK's timeouts (issue 27, point 3): against a loopback server that accepts every connection and never
// answers (or answers the headers and never the body), each attempt ends at `attemptTimeoutMs`, and retries stop
// at the call's `deadlineMs`, with a typed CardlineTimeoutError; the defaults hold without any option.
import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Cardline, CardlineAdmin, CardlineConnectionError, CardlineTimeoutError } from '../../sdk/src/index.js';

/** Requests the silent server received (a request's first bytes), and the sockets it holds open. */
let requests = 0;
const sockets = new Set<Socket>();
let mode: 'silent' | 'headers-only' = 'silent';

function listen(): Promise<{ server: Server; baseUrl: string }> {
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    socket.once('data', () => {
      requests++;
      if (mode === 'headers-only') socket.write('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"res');
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      resolve({ server, baseUrl: `http://127.0.0.1:${port}` });
    }),
  );
}

const failureOf = (promise: Promise<unknown>) => promise.then(() => new Error('answered'), (err: unknown) => err);

describe('SDK timeouts against a server that never answers', () => {
  let server: Server;
  let baseUrl: string;
  // A server (an origin) per test: a connection the client opened for an attempt it had already given up on
  // is pooled, and must not be handed to the next test's first request once the server has closed it.
  beforeEach(async () => ({ server, baseUrl } = await listen()));
  afterEach(async () => {
    requests = 0;
    mode = 'silent';
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('ends each attempt at attemptTimeoutMs and retries a read as the retry policy allows', async () => {
    const cl = new Cardline({ baseUrl, tenant: 'demo', attemptTimeoutMs: 1_000, retry: { attempts: 3, baseDelayMs: 1 } });
    const err = await failureOf(cl.keys.public());
    expect(err).toBeInstanceOf(CardlineTimeoutError);
    expect(err).toBeInstanceOf(CardlineConnectionError);
    expect(err).toMatchObject({ name: 'CardlineTimeoutError', code: 'ATTEMPT_TIMEOUT', status: 0, attempts: 3, timeoutMs: 1_000, idempotencyKey: undefined });
    expect((err as Error).message).toBe('GET /api/keys: no answer within 1000 ms, 3 attempts');
    await vi.waitFor(() => expect(requests).toBe(3), { timeout: 30_000 });
  });

  it('an answer whose body never ends is no answer either', async () => {
    mode = 'headers-only';
    const cl = new Cardline({ baseUrl, tenant: 'demo', attemptTimeoutMs: 1_000, retry: { attempts: 2, baseDelayMs: 1 } });
    const err = await failureOf(cl.keys.public());
    expect(err).toMatchObject({ name: 'CardlineTimeoutError', code: 'ATTEMPT_TIMEOUT', attempts: 2 });
    await vi.waitFor(() => expect(requests).toBe(2), { timeout: 30_000 });
  });

  it('stops retrying at the deadline: the attempts the server saw are those the error counts', async () => {
    const deadlineMs = 3_000;
    const admin = new CardlineAdmin({ baseUrl, operatorKey: 'clop_never-checked', attemptTimeoutMs: 400, deadlineMs, retry: { attempts: 1_000, baseDelayMs: 1, maxDelayMs: 5 } });
    const started = performance.now();
    const err = await failureOf(admin.operatorKey.create({ name: 'never-answered' }, { idempotencyKey: 'timeout-write-1' }));
    const elapsed = performance.now() - started;
    expect(err).toBeInstanceOf(CardlineTimeoutError);
    const timeout = err as CardlineTimeoutError;
    expect(timeout).toMatchObject({ code: 'DEADLINE_EXCEEDED', timeoutMs: deadlineMs, idempotencyKey: 'timeout-write-1' });
    expect(timeout.message).toMatch(/^POST \/v1\/operator-keys: no answer within the call's deadline of 3000 ms \(\d+ attempts\)$/);
    // Retried (a write keeps its key), far fewer times than allowed: the deadline, not the count, ended it.
    expect(timeout.attempts).toBeGreaterThanOrEqual(2);
    expect(timeout.attempts).toBeLessThan(1_000);
    expect(elapsed).toBeGreaterThanOrEqual(deadlineMs - 5);
    // The call has returned, so no attempt follows; the last one may have been cut by the deadline on its way.
    await vi.waitFor(() => expect(requests).toBeGreaterThanOrEqual(timeout.attempts - 1), { timeout: 30_000 });
    expect(requests).toBeLessThanOrEqual(timeout.attempts);
  });

  it('the deadline aborts an attempt still in flight', async () => {
    const cl = new Cardline({ baseUrl, tenant: 'demo', attemptTimeoutMs: Infinity, deadlineMs: 400 });
    const err = await failureOf(cl.keys.public());
    expect(err).toMatchObject({ name: 'CardlineTimeoutError', code: 'DEADLINE_EXCEEDED', attempts: 1, timeoutMs: 400 });
  });

  it('a call option overrides the client: per attempt and per call', async () => {
    const cl = new Cardline({ baseUrl, tenant: 'demo', retry: { attempts: 1 } });
    expect(await failureOf(cl.keys.public({ attemptTimeoutMs: 250 }))).toMatchObject({ code: 'ATTEMPT_TIMEOUT', timeoutMs: 250 });
    expect(await failureOf(cl.keys.public({ deadlineMs: 250 }))).toMatchObject({ code: 'DEADLINE_EXCEEDED', timeoutMs: 250 });
  });

  it("the caller's own abort is not a timeout, and is not retried", async () => {
    const cl = new Cardline({ baseUrl, tenant: 'demo', retry: { attempts: 4, baseDelayMs: 1 } });
    const controller = new AbortController();
    const call = failureOf(cl.keys.public({ signal: controller.signal }));
    await vi.waitFor(() => expect(requests).toBe(1), { timeout: 30_000 });
    controller.abort();
    const err = await call;
    expect(err).toBeInstanceOf(CardlineConnectionError);
    expect(err).not.toBeInstanceOf(CardlineTimeoutError);
    expect(requests).toBe(1);
  });

  it('refuses a timeout that is not a positive number of milliseconds', () => {
    expect(() => new Cardline({ baseUrl, tenant: 'demo', attemptTimeoutMs: 0 })).toThrow(/attemptTimeoutMs must be a number of milliseconds from 1 to 2147483647, or Infinity: got 0/);
    expect(() => new CardlineAdmin({ baseUrl, operatorKey: 'clop_x', deadlineMs: Number.NaN })).toThrow(TypeError);
  });
});

describe('SDK timeout defaults', () => {
  afterEach(() => vi.useRealTimers());

  it('without options: 40 s per attempt, 120 s per call', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const sent: number[] = [];
    // A fetch that never answers and honours its signal, as the global fetch does.
    const silent: typeof fetch = (_url, init) =>
      new Promise((_resolve, reject) => {
        sent.push(performance.now());
        init?.signal?.addEventListener('abort', () => reject(init.signal!.reason as Error), { once: true });
      });
    const cl = new Cardline({ baseUrl: 'http://gateway.invalid', tenant: 'demo', fetch: silent, random: () => 0 });
    const call = failureOf(cl.keys.public());
    await vi.advanceTimersByTimeAsync(120_000);
    const err = await call;
    expect(err).toMatchObject({ name: 'CardlineTimeoutError', code: 'DEADLINE_EXCEEDED', timeoutMs: 120_000, attempts: 3 });
    const t0 = sent[0]!;
    // Each attempt ended at 40 s, then the backoff (200 ms doubling, jitter at its least: half).
    expect(sent.map((t) => t - t0)).toEqual([0, 40_100, 80_300]);
  });
});
