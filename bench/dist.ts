// BENCH_DIST=1 (bench/run.ts, bench/memory.ts): bench/server.ts runs on the compiled gateway in dist/, as `npm start`
// runs it, without tsx's loader and transformed sources in the process (about 35 MB of its RSS, decision 0214).
import { existsSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * bench/server.ts of the checkout at `root` (this one by default; a BENCH_BASELINE too), or `entry`, as one
 * module in its dist/bench/, whose imports of ../src, ../connectors… are then its dist/'s; its path.
 */
export async function compiled(root = ROOT, entry = join(root, 'bench', 'server.ts')): Promise<string> {
  if (!existsSync(join(root, 'dist', 'src', 'app.js'))) throw new Error(`build the gateway first (npm run build in ${root})`);
  const outfile = join(root, 'dist', 'bench', basename(entry).replace(/\.ts$/, '.js'));
  await build({
    entryPoints: [entry],
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
