// BENCH_DIST=1 (bench/run.ts, bench/memory.ts): bench/server.ts runs on the compiled gateway in dist/, as `npm start`
// runs it, without tsx's loader and transformed sources in the process (about 35 MB of its RSS, decision 0214).
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** bench/server.ts as one module in dist/bench/, whose imports of ../src, ../connectors… are then dist/'s; its path. */
export async function compiled(): Promise<string> {
  if (!existsSync(join(ROOT, 'dist', 'src', 'app.js'))) throw new Error('build the gateway first (npm run build)');
  const outfile = join(ROOT, 'dist', 'bench', 'server.js');
  await build({
    entryPoints: [join(ROOT, 'bench', 'server.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    logLevel: 'error',
    plugins: [{ name: 'dist', setup: (b) => b.onResolve({ filter: /^\.\.\/(src|connectors|schemas)\// }, (args) => ({ path: args.path, external: true })) }],
  });
  return outfile;
}
