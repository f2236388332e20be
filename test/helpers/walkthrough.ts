// What the docs' walk-through tests share: the shell block between a doc's markers, its ports swapped for the
// test's own, an `npx cardline` that is this checkout's bin/cardline.js, and mock core servers started and
// waited for (GET /health).
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './process.js';

/** The ```sh block between `<!-- marker -->` and `<!-- /marker -->` in a file of docs/. */
export function docBlock(doc: string, marker: string): string {
  const text = readFileSync(join(ROOT, 'docs', doc), 'utf8');
  const match = new RegExp(`<!-- ${marker} -->\\n\`\`\`sh\\n([\\s\\S]*?)\\n\`\`\`\\n<!-- /${marker} -->`).exec(text);
  if (!match) throw new Error(`docs/${doc} has no ${marker} block`);
  return match[1]!;
}

/** The block with each documented address replaced by the test's own (documented → actual). */
export const withAddresses = (script: string, addresses: Record<string, string>): string =>
  Object.entries(addresses).reduce((s, [documented, actual]) => s.replaceAll(documented, actual), script);

/** A shell function that runs `npx cardline …` as npx resolves it in the project: its bin/cardline.js. */
export const NPX_CARDLINE = `npx() { if [ "$1" = cardline ]; then shift; node ${JSON.stringify(join(ROOT, 'bin', 'cardline.js'))} "$@"; else command npx "$@"; fi; }`;

/** `npm run mock-core` on a port and a data directory of its own; resolves once it answers GET /health. */
export async function startMockCore(port: number, dataDir: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/mock-core/main.ts', '--port', String(port), '--data-dir', dataDir, '--log-level', 'warn'], {
    cwd: ROOT,
    stdio: 'ignore',
  });
  // A guard that only ends a broken run (a loaded machine may take a minute to start it): no duration asserted.
  for (let i = 0; i < 600 && child.exitCode === null; i++) {
    if (await fetch(`http://127.0.0.1:${port}/health`).then((r) => r.ok, () => false)) return child;
    await new Promise((r) => setTimeout(r, 200));
  }
  child.kill('SIGTERM');
  throw new Error(`the mock core on port ${port} did not answer GET /health`);
}
