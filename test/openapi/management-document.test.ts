// The management listener's OpenAPI 3.1 document: served without an operator key, valid against the OpenAPI
// 3.1 schema, equal to the committed copy (schemas/management-openapi.json), complete (every entry of the
// management table with the operator-key scheme, its examples and error bodies rendered by the real renderer),
// and disjoint from the public document: neither shows a route of the other listener.
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MANAGEMENT_OPENAPI_FILE, openapiText, staleFiles, staleMessage } from '../../scripts/generate.js';
import { renderProblem, Errors } from '../../src/errors.js';
import { managementOperations, operations } from '../../src/operations/index.js';
import { PROBLEM_BASE, createTestApp, type TestApp } from '../helpers/app.js';
import { MANAGEMENT_DOCUMENT, documentChecker } from '../helpers/openapi.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
let t: TestApp;
let served: Record<string, any>;
let publicDocument: Record<string, any>;
beforeAll(async () => {
  t = await createTestApp();
  const m = await t.management();
  const res = await m.inject({ method: 'GET', url: '/openapi.json' });
  expect(res.statusCode).toBe(200);
  served = res.json();
  publicDocument = (await t.inject({ method: 'GET', url: '/openapi.json' })).json();
});
afterAll(() => t.close());

const pathOf = (url: string) => url.replace(/:(\w+)/g, '{$1}');
const routesOf = (document: Record<string, any>) =>
  Object.entries(document.paths as Record<string, Record<string, unknown>>).flatMap(([path, methods]) => Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`));

describe('GET /openapi.json on the management listener', () => {
  it('needs no operator key and is OpenAPI 3.1', async () => {
    const res = await (await t.management()).inject({ method: 'GET', url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json().openapi).toBe('3.1.0');
    expect(res.json().info.title).toBe('Cardline management');
  });

  it('validates against the OpenAPI 3.1 schema', async () => {
    const result = await new Validator().validate(served);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('is the committed copy (schemas/management-openapi.json)', () => {
    const stale = staleFiles([{ path: MANAGEMENT_OPENAPI_FILE, text: openapiText(served), committed: true }]);
    expect(stale, staleMessage(stale)).toEqual([]);
  });

  it('documents every management operation with the operator-key scheme, no tenant header and no roles', () => {
    expect(served.components.securitySchemes).toEqual({ operatorKey: expect.objectContaining({ type: 'http', scheme: 'bearer' }) });
    for (const op of managementOperations) {
      const described = served.paths[pathOf(op.url)]?.[op.method.toLowerCase()];
      expect(described, `${op.method} ${op.url}`).toBeDefined();
      expect(described.operationId).toBe(op.id);
      expect(described.security).toEqual([{ operatorKey: [] }]);
      expect(described['x-roles']).toBeUndefined();
      const headers = (described.parameters ?? []).filter((p: { in: string }) => p.in === 'header').map((p: { name: string }) => p.name);
      expect(headers).not.toContain('TENANT');
      expect(headers).toContain('X-Request-Id');
      // The 401 every operator route answers, rendered by the real renderer.
      expect(described.responses['401'].content['application/problem+json'].examples['operator-unauthorized']).toEqual({ $ref: '#/components/examples/problem-operator-unauthorized' });
    }
    expect(served.components.examples['problem-operator-unauthorized'].value).toEqual(renderProblem(Errors.operatorUnauthorized(), PROBLEM_BASE).body);
  });

  it('carries the examples and business refusals of the entries', () => {
    const create = served.paths['/v1/tenants'].post;
    expect(create.requestBody.content['application/json'].example).toMatchObject({ id: 'acme', name: 'Acme Bank' });
    expect(create.responses['409'].content['application/problem+json'].examples.TENANT_EXISTS).toEqual({ $ref: '#/components/examples/problem-TENANT_EXISTS' });
    expect(served.components.examples['problem-TENANT_EXISTS'].value).toMatchObject({ status: 409, businessCode: 'TENANT_EXISTS' });
    // A password travels as a JWE to the tenant's key: the body may be one as a whole, to the same key.
    expect(Object.keys(served.paths['/v1/tenants/{tenantId}/users'].post.requestBody.content)).toEqual(['application/json', 'application/jose']);
    // Without a tenant in the path there is no key to encrypt to: JSON only.
    expect(Object.keys(served.paths['/v1/operator-keys'].post.requestBody.content)).toEqual(['application/json']);
  });

  it('declares what the lookups answer for a customer or a card the core does not hold (409, as served)', async () => {
    const m = await t.management();
    const check = documentChecker(MANAGEMENT_DOCUMENT, { unrouted: true });
    const authorization = `Bearer ${await t.operatorKey()}`;
    const cases = [
      ['/v1/tenants/demo/customers/ENT-9999', 'Entity Not Found', 'Entity ENT-9999 does not exist.', 'ENTITY_NOT_FOUND'],
      ['/v1/tenants/demo/cards/CARD-9999', 'Card Not Found', 'Card CARD-9999 does not exist.', 'CARD_NOT_FOUND'],
    ] as const;
    for (const [url, title, detail, businessCode] of cases) {
      const res = await m.inject({ method: 'GET', url, headers: { authorization } });
      expect(res.json()).toEqual({ type: `${PROBLEM_BASE}/problem-with-message`, title, status: 409, message: 'error.business', detail, businessCode });
      expect(() => check('GET', url, res)).not.toThrow();
    }
  });

  it("x-unrouted-responses' examples are the listener's answers (405 with Allow, 404)", async () => {
    const m = await t.management();
    const unrouted = served['x-unrouted-responses'];
    const wrongMethod = await m.inject({ method: 'PUT', url: '/v1/tenants' });
    expect([wrongMethod.statusCode, wrongMethod.headers.allow]).toEqual([405, 'GET, HEAD, POST']);
    expect(wrongMethod.json()).toEqual(unrouted['405'].content['application/problem+json'].example);
    const missing = await m.inject({ method: 'GET', url: '/v1/nothing' });
    expect(missing.json()).toEqual(unrouted['404'].content['application/problem+json'].example);
  });

  it('shows only management routes, and the public document only public ones', () => {
    const management = routesOf(served);
    const publicRoutes = routesOf(publicDocument);
    for (const op of managementOperations) expect(publicRoutes).not.toContain(`${op.method} ${pathOf(op.url)}`);
    for (const op of operations) expect(management).not.toContain(`${op.method} ${pathOf(op.url)}`);
    // Besides the table: the listener's probe, its metrics and this document.
    expect(management.sort()).toEqual([...managementOperations.map((op) => `${op.method} ${pathOf(op.url)}`), 'GET /health/live', 'GET /metrics', 'GET /openapi.json'].sort());
  });
});

describe('GET /docs on the management listener', () => {
  it('serves the browsable UI without an operator key, from its own assets only', async () => {
    const m = await t.management();
    const res = await m.inject({ method: 'GET', url: '/docs' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['content-security-policy']).toMatch(/(^|; )script-src 'self'(;|$)/);
    expect(res.headers['content-security-policy']).toMatch(/(^|; )connect-src 'self'(;|$)/);
    const init = await m.inject({ method: 'GET', url: '/docs/static/swagger-initializer.js' });
    expect(init.statusCode).toBe(200);
    expect(init.body).toContain('/openapi.json');
  });
});
