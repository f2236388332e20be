// The API's own description: @fastify/swagger collects every route (it must be registered before them),
// then GET /openapi.json serves the OpenAPI 3.1 document and GET /docs a browsable UI. No tenant, no token.
import { createRequire } from 'node:module';
import fp from 'fastify-plugin';
import type { FastifyPluginAsync } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { swaggerOptions } from '../openapi/document.js';
import type { Listener, Operation } from '../operations/define.js';

const DOCS_PREFIX = '/docs';
/** The documents need no tenant, no token and no operator key, on either listener. */
const PUBLIC_ROUTE = { auth: false, tenant: false, operator: false } as const;

/** The hashes of the UI's inline scripts and styles, as the package publishes them (none today). */
const UI_HASHES = createRequire(import.meta.url)('@fastify/swagger-ui/static/csp.json') as { script: string[]; style: string[] };

/**
 * The page's policy: its scripts, styles, fonts and images from its own origin only; "try it out" may call
 * that origin ('self': the host and port the page was opened at, as the document's server URL '/' is) and
 * nothing else. Unlike the UI's default policy it does not upgrade requests to https (which broke every
 * call of a page served over http at any address but localhost), loads no validator badge from
 * validator.swagger.io, takes no style or font from any https origin, and cannot be framed or post a form.
 */
export const DOCS_CSP = [
  "default-src 'none'",
  "base-uri 'none'",
  "connect-src 'self'",
  "font-src 'self' data:",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "img-src 'self' data:",
  "manifest-src 'self'",
  "object-src 'none'",
  ["script-src 'self'", ...UI_HASHES.script].join(' '),
  "script-src-attr 'none'",
  ["style-src 'self'", ...UI_HASHES.style].join(' '),
].join('; ');

/** Registered before any route: collects routes for the listener's document and marks the UI's routes public. */
export const openapiCollector = fp<{ operations: readonly Operation[]; listener?: Listener }>(
  async (app, opts) => {
    // The UI plugin registers routes without a config of ours; they need neither tenant nor token, and the
    // auth step refuses any route that does not say so. This runs before that check.
    app.addHook('onRoute', (route) => {
      if (route.url === DOCS_PREFIX || route.url.startsWith(`${DOCS_PREFIX}/`)) route.config = { ...route.config, ...PUBLIC_ROUTE };
    });
    await app.register(swagger, swaggerOptions(opts.operations, opts.listener ?? 'public'));
  },
  { name: 'openapi' },
);

/** GET /openapi.json and the UI at /docs. */
export const docsRoutes: FastifyPluginAsync = async (app) => {
  app.get('/openapi.json', { config: PUBLIC_ROUTE }, async () => app.swagger());
  await app.register(swaggerUi, {
    routePrefix: DOCS_PREFIX,
    // The UI's own assets, served from the package (nothing from a CDN), under a CSP that admits only them
    // and the page's calls to its own origin, whatever host and port it is served at (decision 0197).
    staticCSP: DOCS_CSP,
    uiConfig: { url: '/openapi.json', docExpansion: 'list', deepLinking: true },
  });
};
