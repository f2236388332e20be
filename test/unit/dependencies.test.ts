// The installed dependency tree runs on the Node version the README promises (npm ci prints no
// EBADENGINE), and the cookie override that makes it so leaves app.inject's cookies working.
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(new URL('../../package-lock.json', import.meta.url), 'utf8')) as {
  packages: Record<string, { version?: string; engines?: Record<string, string> | string[] }>;
};

describe('dependencies', () => {
  it('every locked package accepts the oldest Node the README promises (engines.node)', () => {
    const oldest = semver.minVersion(pkg.engines.node)!.version;
    expect(oldest).toBe('20.19.0');
    const refused = Object.entries(lock.packages)
      .filter(([path, p]) => path && !Array.isArray(p.engines) && p.engines?.node && !semver.satisfies(oldest, p.engines.node))
      .map(([path, p]) => `${path}@${p.version} wants node ${(p.engines as Record<string, string>).node}`);
    expect(refused).toEqual([]);
  });

  it("app.inject's cookies (light-my-request, on the cookie version pinned in package.json overrides) reach the route", async () => {
    const app = Fastify();
    app.get('/', async (request) => ({ cookie: request.headers.cookie }));
    const res = await app.inject({ method: 'GET', url: '/', cookies: { session: 'abc 1', theme: 'dark' } });
    expect(res.json()).toEqual({ cookie: 'session=abc%201; theme=dark' });
    await app.close();
  });
});
