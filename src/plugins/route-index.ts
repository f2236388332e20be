// Which methods answer a concrete path, and in which dialect: for a 405 and its Allow header, and for the
// answers given before routing (a malformed URL, an over-long path parameter). A router of its own, fed
// every route by onRoute, looked up once per method for the path.
import fp from 'fastify-plugin';
import type { FastifyPluginAsync, HTTPMethods } from 'fastify';
import FindMyWay, { type HTTPMethod } from 'find-my-way';
import type { Dialect } from '../errors.js';

/** The order an Allow header lists methods in. */
const METHOD_ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

interface PathMatch {
  /** The methods some route answers on this path, in METHOD_ORDER. */
  methods: string[];
  /** The dialect of the first of those routes. */
  dialect: Dialect;
}

class RouteIndex {
  // Fastify's router options, but parameters of any length: an over-long one still names its route.
  private readonly router = FindMyWay({ caseSensitive: true, ignoreTrailingSlash: false, ignoreDuplicateSlashes: false, maxParamLength: Number.MAX_SAFE_INTEGER });
  private readonly methods = new Set<string>();

  add(method: string, url: string, dialect: Dialect): void {
    this.router.on(method as HTTPMethod, url, () => undefined, { dialect });
    this.methods.add(method);
  }

  /** The routes that answer this path (no query string, percent-encoded as received), whatever the method. */
  match(path: string): PathMatch | null {
    const methods: string[] = [];
    let dialect: Dialect | undefined;
    const known = [...this.methods].sort((a, b) => rank(a) - rank(b));
    for (const method of known) {
      const found = this.router.find(method as HTTPMethod, path);
      if (!found) continue;
      methods.push(method);
      dialect ??= (found.store as { dialect: Dialect }).dialect;
    }
    return dialect ? { methods, dialect } : null;
  }
}

const rank = (method: string) => {
  const i = METHOD_ORDER.indexOf(method);
  return i < 0 ? METHOD_ORDER.length : i;
};

declare module 'fastify' {
  interface FastifyInstance {
    routeIndex: RouteIndex;
  }
}

const routeIndexPlugin: FastifyPluginAsync = async (app) => {
  const index = new RouteIndex();
  app.decorate('routeIndex', index);
  app.addHook('onRoute', (route) => {
    // A sandbox route is 404 to other tenants (0012): an Allow header naming it would reveal what the 404 hides.
    if (route.config?.operation?.sandbox) return;
    const methods = (Array.isArray(route.method) ? route.method : [route.method]) as HTTPMethods[];
    for (const method of methods) index.add(method, route.url, route.config?.dialect ?? 'problem');
  });
};

export default fp(routeIndexPlugin, { name: 'route-index' });
