// The API's own description: @fastify/swagger collects every route (it must be registered before them),
// then GET /openapi.json serves the OpenAPI 3.1 document and GET /docs a browsable UI, one section (tag) of the
// document at a time (GET /docs/sections/<n>.json, decision 0293). No tenant, no token.
import { createRequire } from 'node:module';
import fp from 'fastify-plugin';
import type { FastifyPluginAsync } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { MANAGEMENT_TAGS, TAGS, swaggerOptions } from '../openapi/document.js';
import type { Listener, Operation } from '../operations/define.js';

const DOCS_PREFIX = '/docs';
/** The documents need no tenant, no token and no operator key, on either listener. */
const PUBLIC_ROUTE = { auth: false, tenant: false, operator: false } as const;

/** The hashes of the UI's inline scripts and styles, as the package publishes them (none today). */
const UI_HASHES = createRequire(import.meta.url)('@fastify/swagger-ui/static/csp.json') as { script: string[]; style: string[] };

/** Swagger UI's logo style, admitted by hash rather than 'unsafe-inline' (a test recomputes it from the package). */
export const SWAGGER_UI_LOGO_STYLE = "'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w='";

/**
 * The page's policy: everything from its own origin only, "try it out" to that origin, no https upgrade
 * (it broke pages served over http), no outside validator, fonts or styles, no framing, no forms.
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
  ["style-src 'self'", SWAGGER_UI_LOGO_STYLE, ...UI_HASHES.style].join(' '),
].join('; ');

/** Swagger UI at 390 px: hide the empty Links column and wrap long values. */
const NARROW_CSS = `@media (max-width: 600px) {
  .swagger-ui .responses-table .response-col_links { display: none; }
  .swagger-ui .opblock-body pre, .swagger-ui .microlight, .swagger-ui .markdown code { white-space: pre-wrap; word-break: break-word; }
  .swagger-ui .parameters-col_description input, .swagger-ui .parameters-col_description select, .swagger-ui textarea { max-width: 100%; min-width: 0; }
  .swagger-ui .wrapper { padding: 0 10px; }
  .swagger-ui .scheme-container .schemes, .swagger-ui .schemes-server-container { flex-wrap: wrap; min-width: 0; }
  .swagger-ui .servers > label { display: block; margin: 0; }
  .swagger-ui .servers select { min-width: 0; max-width: 100%; }
}
`;

/** Registered before any route: collects routes for the listener's document and marks the UI's routes public. */
export const openapiCollector = fp<{ operations: readonly Operation[]; listener?: Listener }>(
  async (app, opts) => {
    // The UI's routes need neither tenant nor token; this runs before the auth step's check that they say so.
    app.addHook('onRoute', (route) => {
      if (route.url === DOCS_PREFIX || route.url.startsWith(`${DOCS_PREFIX}/`)) route.config = { ...route.config, ...PUBLIC_ROUTE };
    });
    await app.register(swagger, swaggerOptions(opts.operations, opts.listener ?? 'public'));
  },
  { name: 'openapi' },
);

interface Document {
  tags?: { name: string }[];
  paths?: Record<string, Record<string, { tags?: string[] }>>;
  components?: Record<string, Record<string, unknown>>;
  [key: string]: unknown;
}

/** The components a part of the document refers to, directly or through other components. */
function referenced(doc: Document, part: unknown): Record<string, Record<string, unknown>> {
  const found = new Set<string>();
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(walk);
    else if (node !== null && typeof node === 'object') {
      for (const [k, v] of Object.entries(node as Record<string, unknown>)) {
        if (k === '$ref' && typeof v === 'string' && v.startsWith('#/components/') && !found.has(v)) {
          found.add(v);
          const [, , kind, name] = v.split('/');
          walk(doc.components?.[kind!]?.[name!]);
        } else walk(v);
      }
    }
  };
  walk(part);
  const out: Record<string, Record<string, unknown>> = {};
  // Security schemes are named by operations, not referred to.
  if (doc.components?.securitySchemes) out.securitySchemes = doc.components.securitySchemes;
  for (const ref of [...found].sort()) {
    const [, , kind, name] = ref.split('/') as [string, string, string, string];
    (out[kind] ??= {})[name] = doc.components?.[kind]?.[name];
  }
  return out;
}

/** The document cut into sections, one per tag with the components it uses: Swagger UI resolves all before drawing. */
export function documentSection(doc: Document, tag: string): Document {
  const paths: NonNullable<Document['paths']> = {};
  for (const [path, methods] of Object.entries(doc.paths ?? {})) {
    const kept = Object.fromEntries(Object.entries(methods).filter(([, op]) => op?.tags?.includes(tag)));
    if (Object.keys(kept).length) paths[path] = kept;
  }
  const { paths: _all, components: _components, ...rest } = doc;
  const head = { ...rest, tags: doc.tags?.filter((t) => t.name === tag), paths };
  return { ...head, components: referenced(doc, head) };
}

/** A section's file name: its tag in lower case, words joined by dashes (`notification-channels.json`). */
export const sectionFile = (tag: string): string => `${tag.toLowerCase().replace(/[^a-z0-9]+/g, '-')}.json`;

/** GET /openapi.json, its sections (one per tag of the listener's document), and the UI at /docs. */
export const docsRoutes: FastifyPluginAsync<{ listener?: Listener }> = async (app, opts) => {
  app.get('/openapi.json', { config: PUBLIC_ROUTE }, async () => app.swagger());
  const tags = Object.keys(opts.listener === 'management' ? MANAGEMENT_TAGS : TAGS);
  const byFile = new Map(tags.map((tag) => [sectionFile(tag), tag]));
  // Cut once, on first ask: every route is registered by then.
  const cut = new Map<string, Document>();
  app.get<{ Params: { file: string } }>(`${DOCS_PREFIX}/sections/:file`, { config: PUBLIC_ROUTE }, async (request, reply) => {
    const tag = byFile.get(request.params.file);
    if (tag === undefined) return reply.code(404).type('application/problem+json').send({ title: 'Not Found', status: 404, detail: 'The document has no such section.' });
    let section = cut.get(tag);
    if (!section) cut.set(tag, (section = documentSection(app.swagger() as unknown as Document, tag)));
    return section;
  });
  await app.register(swaggerUi, {
    routePrefix: DOCS_PREFIX,
    // The UI's assets from the package, under a CSP admitting only them and calls to its own origin (0197).
    staticCSP: DOCS_CSP,
    // Same origin as the rest, so the policy admits it: the page fits a phone's width.
    theme: { title: 'Cardline API reference', css: [{ filename: 'narrow.css', content: NARROW_CSS }] },
    uiConfig: {
      url: '/openapi.json',
      // One section at a time, chosen in the top bar; the whole document last (slower to draw).
      urls: [
        ...tags.map((tag) => ({ url: `${DOCS_PREFIX}/sections/${sectionFile(tag)}`, name: tag })),
        { url: '/openapi.json', name: 'The whole document' },
      ],
      docExpansion: 'list',
      deepLinking: true,
    },
  });
};
