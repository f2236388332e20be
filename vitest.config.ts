// Test runner settings: every store starts from one migrated template (test/helpers/global-setup.ts),
// and test files run in parallel in reused worker processes, the slowest first.
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { defineConfig } from 'vitest/config';

/**
 * Files that spend most of their time in child processes (the CLI, the server, examples): about a minute
 * each on 2 cores. Vitest orders files by their last duration, but a fresh `npm ci` has no record of it
 * (it lives in node_modules/.vite) and falls back to file size, which started these last and left one
 * worker finishing them alone. They go first; the rest keep vitest's order.
 */
const SLOW_FIRST = ['test/process/docs-in-order.test.ts', 'test/cli/cli.test.ts', 'test/process/server.test.ts', 'test/process/bench-workers.test.ts', 'test/audit/verify.test.ts', 'test/crypto/key-rotation.test.ts', 'test/process/webhook-crash.test.ts', 'test/notify/webhooks.test.ts'];

class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (f: TestSpecification) => {
      const i = SLOW_FIRST.findIndex((path) => f.moduleId.endsWith(path));
      return i < 0 ? SLOW_FIRST.length : i;
    };
    return sorted.map((f, i) => ({ f, i })).sort((a, b) => rank(a.f) - rank(b.f) || a.i - b.i).map(({ f }) => f);
  }
}

export default defineConfig({
  // The SDK as its users import it, from its source (its package exports the build, sdk/dist).
  resolve: { alias: { '@cardline/sdk': fileURLToPath(new URL('./sdk/src/index.ts', import.meta.url)) } },
  test: {
    include: ['test/**/*.test.ts'],
    // Bounds that only end a broken run: on a machine at load averages of 12-43 (issue 20) a test app took
    // over a minute to start. No test asserts a duration against them.
    testTimeout: 120_000,
    hookTimeout: 180_000,
    pool: 'forks',
    globalSetup: ['test/helpers/global-setup.ts'],
    // The processes a test starts compile WebAssembly with the baseline compiler only (decision 0385).
    setupFiles: ['test/helpers/child-processes.ts'],
    // A worker runs file after file: loading Fastify, PGlite's WebAssembly and the gateway once per
    // worker instead of once per file halves the suite's CPU time. Test files leave no global state
    // behind (each builds its own app and store, restores the spies and timers it replaces).
    isolate: false,
    // Most files spend much of their time waiting (child processes, sockets, timers), so vitest's
    // default (one worker per core, minus one) leaves a 2-core machine half idle.
    maxWorkers: Math.max(2, availableParallelism()),
    sequence: { sequencer: SlowFirstSequencer },
  },
});
