// The console's files (decision 0160): built by esbuild from npm packages into dist/console/ at install and
// build time (bin/build-console.js), served from memory under /console with a strict policy of their own:
// scripts, styles, images and calls only from this origin, no inline script, never in a frame. Nothing is
// fetched from anywhere else at run time.
import { existsSync } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import fp from 'fastify-plugin';
import { CardlineError } from '../errors.js';

const CONSOLE_CSP = "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; object-src 'none'";

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.map': 'application/json; charset=utf-8',
};

/** Where the built files are: dist/console of a checkout (from src/) or of the compiled tree (from dist/src/). */
function consoleDir(): string | null {
  const up = fileURLToPath(new URL('../../', import.meta.url));
  for (const dir of [join(up, 'dist', 'console'), join(up, 'console')]) if (existsSync(join(dir, 'index.html'))) return dir;
  return null;
}

const notBuilt = () =>
  new CardlineError('CL_CONSOLE_NOT_BUILT', { status: 503, detail: 'The console is not built on this gateway: run `npm run build` (or `node bin/build-console.js`) and restart it.' });

async function load(dir: string): Promise<Map<string, { type: string; body: Buffer }>> {
  const files = new Map<string, { type: string; body: Buffer }>();
  for (const name of await readdir(dir)) {
    const type = TYPES[extname(name)];
    if (type) files.set(name, { type, body: await readFile(join(dir, name)) });
  }
  return files;
}

const consoleFilesPlugin: FastifyPluginAsync = async (app) => {
  let files: Promise<Map<string, { type: string; body: Buffer }>> | null = null;
  const filesOrFail = async () => {
    const dir = consoleDir();
    if (!dir) throw notBuilt();
    return (files ??= load(dir).catch((err) => ((files = null), Promise.reject(err))));
  };
  const send = (reply: FastifyReply, file: { type: string; body: Buffer }) =>
    reply
      .header('content-security-policy', CONSOLE_CSP)
      .header('cache-control', 'no-cache')
      .type(file.type)
      .send(file.body);

  app.get('/console', { config: { operator: false } }, async (_request, reply) => reply.redirect('/console/', 302));
  app.get('/console/', { config: { operator: false } }, async (_request, reply) => {
    const index = (await filesOrFail()).get('index.html');
    if (!index) throw notBuilt();
    return send(reply, index);
  });
  app.get<{ Params: { file: string } }>('/console/assets/:file', { config: { operator: false } }, async (request, reply) => {
    const file = (await filesOrFail()).get(request.params.file);
    if (!file || request.params.file === 'index.html') throw new CardlineError('CL_NOT_FOUND', { status: 404, detail: `The console has no file '${request.params.file.slice(0, 64)}'.` });
    return send(reply, file);
  });
};

export const consoleFiles = fp(consoleFilesPlugin, { name: 'console-files' });
