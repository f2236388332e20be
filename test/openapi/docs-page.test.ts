// The /docs page: Swagger UI draws one section (tag) of a listener's document at a time, each section the
// document's operations of that tag with the components they use, together every operation of the document;
// its CSP admits the one style element Swagger UI writes (its logo's) by the hash of what the package ships.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { DOCS_CSP, SWAGGER_UI_LOGO_STYLE, sectionFile } from '../../src/plugins/docs.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
let m: FastifyInstance;
beforeAll(async () => {
  t = await createTestApp();
  m = await t.management();
});
afterAll(() => t.close());

const METHODS = new Set(['get', 'post', 'put', 'patch', 'delete']);
const operationIds = (doc: { paths: Record<string, Record<string, { operationId?: string }>> }) =>
  Object.values(doc.paths).flatMap((p) => Object.entries(p).filter(([k]) => METHODS.has(k)).map(([, o]) => o.operationId!));

describe('/docs', () => {
  for (const listener of ['public', 'management'] as const) {
    it(`draws the ${listener} document one section at a time; together the sections hold every operation, each $ref resolvable`, async () => {
      const app = listener === 'public' ? t.app : m;
      const whole = (await app.inject({ method: 'GET', url: '/openapi.json' })).json();
      const init = (await app.inject({ method: 'GET', url: '/docs/static/swagger-initializer.js' })).body;
      const urls = JSON.parse(/const config = (\{.*\})/.exec(init)![1]!).urls as { url: string; name: string }[];
      expect(urls.map((u) => u.name)).toEqual([...whole.tags.map((tag: { name: string }) => tag.name), 'The whole document']);
      const seen = new Set<string>();
      for (const { url, name } of urls.slice(0, -1)) {
        expect(url).toBe(`/docs/sections/${sectionFile(name)}`);
        const res = await app.inject({ method: 'GET', url });
        expect(res.statusCode).toBe(200);
        const section = res.json();
        expect(section.tags).toEqual(whole.tags.filter((tag: { name: string }) => tag.name === name));
        for (const id of operationIds(section)) seen.add(id);
        // Every $ref points at a component the section carries.
        for (const ref of JSON.stringify(section).match(/"#\/components\/[^"]+"/g) ?? []) {
          const [, , kind, key] = JSON.parse(ref).split('/');
          expect(section.components[kind]?.[key], `${name}: ${ref}`).toBeDefined();
        }
        expect(JSON.stringify(section).length).toBeLessThan(JSON.stringify(whole).length);
      }
      expect([...seen].sort()).toEqual(operationIds(whole).sort());
      expect((await app.inject({ method: 'GET', url: '/docs/sections/nothing.json' })).statusCode).toBe(404);
    });
  }

  it("admits Swagger UI's logo style by the hash of the style the installed package writes, and no other inline style", () => {
    const preset = readFileSync(createRequire(import.meta.url).resolve('@fastify/swagger-ui/static/swagger-ui-standalone-preset.js'), 'utf8');
    const styles = [...preset.matchAll(/createElement\("style",null,("(?:[^"\\]|\\.)*")\)/g)].map((m) => JSON.parse(m[1]!) as string);
    expect(styles).toHaveLength(1);
    expect(SWAGGER_UI_LOGO_STYLE).toBe(`'sha256-${createHash('sha256').update(styles[0]!).digest('base64')}'`);
    expect(DOCS_CSP).toContain(`style-src 'self' ${SWAGGER_UI_LOGO_STYLE}`);
    expect(DOCS_CSP).not.toContain('unsafe-inline');
  });
});
