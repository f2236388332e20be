// Test runner settings: every store starts from one migrated template (test/helpers/global-setup.ts),
// and test files run in parallel in reused worker processes.
import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    globalSetup: ['test/helpers/global-setup.ts'],
    // A worker runs file after file: loading Fastify, PGlite's WebAssembly and the gateway once per
    // worker instead of once per file halves the suite's CPU time. Test files leave no global state
    // behind (each builds its own app and store, restores the spies and timers it replaces).
    isolate: false,
    // Most files spend much of their time waiting (child processes, sockets, timers), so vitest's
    // default (one worker per core, minus one) leaves a 2-core machine half idle.
    maxWorkers: Math.max(2, availableParallelism()),
  },
});
