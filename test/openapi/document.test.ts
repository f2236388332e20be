// The gateway's OpenAPI 3.1 document: served without a tenant, valid against the OpenAPI 3.1 schema, equal
// to the committed copy (schemas/openapi.json), and complete: every operation of the table, its roles, both
// tenant headers, bearer auth, the encrypted-body media type and its error dialect.
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPENAPI_FILE, openapiText, staleFiles, staleMessage } from '../../scripts/generate.js';
import { operations } from '../../src/operations/index.js';
import { rolesOf } from '../../src/operations/access.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
let served: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
beforeAll(async () => {
  t = await createTestApp();
  const res = await t.inject({ method: 'GET', url: '/openapi.json' });
  expect(res.statusCode).toBe(200);
  served = res.json();
});
afterAll(() => t.close());

const pathOf = (url: string) => url.replace(/:(\w+)/g, '{$1}');

describe('GET /openapi.json', () => {
  it('needs no tenant header and no token', async () => {
    const res = await t.inject({ method: 'GET', url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json().openapi).toBe('3.1.0');
  });

  it('validates against the OpenAPI 3.1 schema', async () => {
    const result = await new Validator().validate(served);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('is the committed copy (schemas/openapi.json)', () => {
    const stale = staleFiles([{ path: OPENAPI_FILE, text: openapiText(served), committed: true }]);
    expect(stale, staleMessage(stale)).toEqual([]);
  });

  it('documents every operation of the table with its roles, both tenant headers and its auth', () => {
    for (const op of operations) {
      const described = served.paths[pathOf(op.url)]?.[op.method.toLowerCase()];
      expect(described, `${op.method} ${op.url}`).toBeDefined();
      expect(described.operationId).toBe(op.id);
      expect(described['x-roles']).toEqual(rolesOf(op.access) ?? []);
      expect(described.security).toEqual(op.access === 'public' ? [] : [{ bearer: [] }]);
      const headers = described.parameters.filter((p: { in: string }) => p.in === 'header').map((p: { name: string }) => p.name);
      expect(headers).toEqual(expect.arrayContaining(['TENANT', 'X-TENANT-ID', 'X-Request-Id']));
      if (op.body) expect(Object.keys(described.requestBody.content)).toEqual(['application/json', 'application/jose']);
    }
  });

  it('documents each error dialect with its real statuses', () => {
    const limit = served.paths['/credit-line-management/business-entity-manager/upgradeLimit'].post.responses;
    // The envelope dialect: a missing tenant is 401 (spec 7.2), a refusal 400 or 404.
    expect(Object.keys(limit)).toEqual(expect.arrayContaining(['200', '202', '400', '401', '403', '404', '409', '413', '415', '422', '429', '500', '502', '503', '504']));
    expect(limit['401'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/ErrorEnvelope' });
    const upgrade = served.paths['/v1/cards/upgrade/physical'].put.responses;
    expect(upgrade['409'].content['application/problem+json'].schema).toEqual({ $ref: '#/components/schemas/Problem' });
    expect(upgrade['409'].content['application/problem+json'].examples.PPCUST_018).toEqual({ $ref: '#/components/examples/problem-PPCUST_018' });
    expect(served.components.examples['problem-PPCUST_018'].value).toEqual({
      type: 'https://www.jhipster.tech/problem/problem-with-message',
      title: 'Invalid Kit',
      status: 409,
      message: 'error.business',
      detail: 'The kit is unknown, already mapped to a card, or allocated to another entity (spec 7.3).',
      businessCode: 'PPCUST_018',
    });
    // A read through the core is never answered 413 or 415: it takes no body.
    expect(Object.keys(served.paths['/v1/cards/{cardId}'].get.responses)).not.toContain('415');
  });

  it('carries examples from the demo data', () => {
    const body = served.paths['/credit-line-management/business-entity-manager/upgradeLimit'].post.requestBody.content['application/json'];
    expect(body.example).toEqual({ entityId: 'ENT-1001', amount: '75000.00' });
  });
});

describe('GET /docs', () => {
  it('serves the browsable UI without a tenant header or a token, from its own assets only', async () => {
    const res = await t.inject({ method: 'GET', url: '/docs' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['content-security-policy']).toMatch(/(^|; )script-src 'self'(;|$)/);
    expect(res.headers['content-security-policy']).toMatch(/(^|; )connect-src 'self'(;|$)/);
    expect(res.body).toContain('swagger-initializer.js');
    const init = await t.inject({ method: 'GET', url: '/docs/static/swagger-initializer.js' });
    expect(init.statusCode).toBe(200);
    expect(init.body).toContain('/openapi.json');
  });
});
