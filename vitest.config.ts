// Test runner settings: every store starts from one migrated template (test/helpers/global-setup.ts),
// and test files run in parallel in reused worker processes, the longest first (test/file-times.json).
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { defineConfig } from 'vitest/config';

/**
 * Each file's time in a whole run (test/file-times.json, seconds): the longest start first, so that the two
 * workers end together rather than one finishing a long file alone (decision 0399). Vitest's own record of the
 * last durations lives in node_modules/.vite, absent from a clean clone (which then ordered by file size) and
 * shared by every checkout that links one node_modules: the committed one orders every run the same way.
 * Files it does not list (new ones, and those none of whose tests ran where it was made: `node bin/file-times.js
 * <report>` leaves them out; an older record's 0) go first, in vitest's order.
 */
const TIMES = JSON.parse(readFileSync(new URL('./test/file-times.json', import.meta.url), 'utf8')) as Record<string, number>;

class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const root = fileURLToPath(new URL('.', import.meta.url));
    const time = (f: TestSpecification) => TIMES[relative(root, f.moduleId).split(sep).join('/')] || Number.MAX_VALUE;
    return sorted.map((f, i) => ({ f, i, t: time(f) })).sort((a, b) => b.t - a.t || a.i - b.i).map(({ f }) => f);
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
    // Most files spend much of their time waiting (child processes, sockets, timers): one worker more than
    // the cores keeps them busy while a worker waits (decision 0411; vitest's default leaves one idle).
    maxWorkers: availableParallelism() + 1,
    sequence: { sequencer: LongestFirstSequencer },
  },
});
