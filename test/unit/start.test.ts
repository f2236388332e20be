// A slow start is not a failed start (issue 22, decision 0101): no per-plugin timeout on either listener.
import Fastify from 'fastify';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { serverOptions } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('start-up on a loaded machine', () => {
  it("a plugin that takes a minute to start (Fastify's default limit is 10 s) does not end the start", async () => {
    vi.useFakeTimers();
    const app = Fastify(serverOptions(loadConfig({ LOG_LEVEL: 'silent' })));
    let release!: () => void;
    void app.register(async () => {
      await new Promise<void>((resolve) => (release = resolve));
    });
    const ready = app.ready().then(
      () => 'ready',
      (err: Error) => err.message,
    );
    await vi.advanceTimersByTimeAsync(60_000);
    release();
    expect(await ready).toBe('ready');
    await app.close();
  });

  it('the whole start is bounded instead: CARDLINE_START_TIMEOUT_MS, 10 minutes by default, 0 for none', () => {
    expect(loadConfig({}).startTimeoutMs).toBe(600_000);
    expect(loadConfig({ CARDLINE_START_TIMEOUT_MS: '0' }).startTimeoutMs).toBe(0);
    expect(() => loadConfig({ CARDLINE_START_TIMEOUT_MS: 'soon' })).toThrow(/CARDLINE_START_TIMEOUT_MS must be a whole number/);
  });
});
