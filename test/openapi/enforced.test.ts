// The OpenAPI document says what the gateway enforces, as other tools read it (issue 20): every documented
// limit is the server's (a value the document allows is never refused as invalid, one it refuses is), the
// patterns compile without the Unicode flag, shared schemas are named, every operation has an operationId,
// every tag a description, and the response headers the gateway sends are declared.
// The linters themselves (Redocly, Spectral) run in .ci/run: `npm run lint:openapi`.
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/operations/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { validationProblem } from '../helpers/problems.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
type Doc = Record<string, any>;

let t: TestApp;
let doc: Doc;
beforeAll(async () => {
  t = await createTestApp();
  doc = (await t.inject({ method: 'GET', url: '/openapi.json' })).json();
});
afterAll(() => t.close());

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
/** Every operation of the document: method, path, the operation object. */
const documented = () =>
  Object.entries(doc.paths as Record<string, Doc>).flatMap(([path, item]) =>
    METHODS.filter((m) => item[m]).map((method) => ({ method, path, operation: item[method] as Doc })),
  );
const objectNameOf = (operationId: string) => operations.find((op) => op.id === operationId)!.objectName;

/** A concrete URL for a documented path: the demo tenant's entity and card, a channel that does not exist. */
const EXAMPLE_PARAMS: Record<string, string> = {
  entityId: 'ENT-1001',
  cardId: 'CARD-3001',
  channelId: '0193a6f0-0000-7000-8000-000000000000',
  deliveryId: '0193a6f0-0000-7000-8000-000000000001',
  username: 'admin',
};
const urlOf = (path: string, query: Record<string, string>) =>
  `${path.replace(/\{(\w+)\}/g, (_m, name: string) => EXAMPLE_PARAMS[name] ?? 'x')}?${new URLSearchParams(query)}`;

async function get(url: string) {
  return t.inject({ method: 'GET', url, headers: { 'X-TENANT-ID': 'demo', authorization: `Bearer ${await t.token('Admin')}` } });
}

/** The query parameters of an operation with the schema the document gives each. */
const queryOf = (operation: Doc): { name: string; required: boolean; schema: Doc }[] =>
  ((operation.parameters ?? []) as Doc[]).filter((p) => p.in === 'query').map((p) => ({ name: p.name, required: p.required === true, schema: p.schema }));
const isDate = (schema: Doc): boolean => schema.format === 'date' || (schema.anyOf ?? []).some((s: Doc) => s.format === 'date');

describe('the document names and describes', () => {
  it('every operation has a unique operationId', () => {
    const ids = documented().map((o) => o.operation.operationId);
    expect(ids.filter((id) => typeof id !== 'string' || id === '')).toEqual([]);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('every tag an operation uses, with a description', () => {
    const described = new Map((doc.tags as { name: string; description?: string }[]).map((tag) => [tag.name, tag.description]));
    const used = new Set(documented().flatMap((o) => o.operation.tags as string[]));
    expect([...used].filter((tag) => !described.get(tag))).toEqual([]);
    expect([...described.keys()].filter((tag) => !used.has(tag))).toEqual([]);
  });

  it('every pattern compiles without the Unicode flag, and none uses \\p{…}', () => {
    const patterns = new Set<string>();
    const walk = (node: unknown, key?: string) => {
      if (key === 'pattern' && typeof node === 'string') patterns.add(node);
      else if (Array.isArray(node)) node.forEach((n) => walk(n));
      else if (node && typeof node === 'object') for (const [k, v] of Object.entries(node)) walk(v, k);
    };
    walk(doc);
    expect(patterns.size).toBeGreaterThan(10);
    for (const pattern of patterns) {
      expect(pattern, pattern).not.toMatch(/\\[pP]\{/);
      expect(() => new RegExp(pattern), pattern).not.toThrow();
    }
  });

  it('shared schemas as named components: every request and success body is a $ref or built of them', () => {
    const inline = documented().flatMap(({ method, path, operation }) => {
      const bodies = [
        operation.requestBody?.content?.['application/json']?.schema,
        ...Object.entries(operation.responses as Doc)
          .filter(([status]) => status.startsWith('2'))
          .map(([, r]) => r.content?.['application/json']?.schema),
      ].filter(Boolean) as Doc[];
      return bodies.filter((s) => !s.$ref && !(s.oneOf ?? []).every((b: Doc) => b.$ref)).map(() => `${method} ${path}`);
    });
    // The probes' small answers stay inline; everything else is named.
    expect(inline.filter((o) => !o.includes('/health/'))).toEqual([]);
    expect(Object.keys(doc.components.schemas).length).toBeGreaterThan(50);
    expect(doc.components.schemas).toHaveProperty('CardView');
    expect(doc.components.schemas).toHaveProperty('Problem');
  });
});

describe('response headers are declared', () => {
  it('X-Request-Id on every answer; Retry-After on every 429; WWW-Authenticate on the 401 of a token', () => {
    for (const { method, path, operation } of documented()) {
      for (const [status, response] of Object.entries(operation.responses as Record<string, Doc>)) {
        const where = `${method} ${path} ${status}`;
        expect(response.headers?.['X-Request-Id'], where).toEqual({ $ref: '#/components/headers/XRequestId' });
        if (status === '429') expect(response.headers['Retry-After'], where).toEqual({ $ref: '#/components/headers/RetryAfter' });
        if (status === '401' && operation.security.length) expect(response.headers['WWW-Authenticate'], where).toBeDefined();
      }
    }
    expect(doc.components.headers.RetryAfter.schema).toEqual({ type: 'integer', minimum: 1 });
  });

  it('Idempotent-Replayed on the final answers of every write that takes an Idempotency-Key', () => {
    const keyed = documented().filter((o) => (o.operation.parameters ?? []).some((p: Doc) => p.name === 'Idempotency-Key'));
    expect(keyed.length).toBeGreaterThan(20);
    for (const { method, path, operation } of keyed) {
      for (const [status, response] of Object.entries(operation.responses as Record<string, Doc>)) {
        const final = status !== '202' && Number(status) < 500;
        expect(response.headers['Idempotent-Replayed'], `${method} ${path} ${status}`).toEqual(final ? { $ref: '#/components/headers/IdempotentReplayed' } : undefined);
      }
    }
  });

  it('405 with Allow, as the gateway answers it', async () => {
    const documented405 = doc.components.responses.MethodNotAllowed;
    expect(doc['x-unrouted-responses']['405']).toEqual({ $ref: '#/components/responses/MethodNotAllowed' });
    expect(documented405.headers.Allow).toEqual({ $ref: '#/components/headers/Allow' });
    const res = await t.inject({ method: 'PUT', url: '/v1/cards/C-1/lock', headers: { 'X-TENANT-ID': 'demo' } });
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toBe('POST');
    expect(res.json()).toEqual(documented405.content['application/problem+json'].example);
  });
});

describe('the documented limits are the enforced ones', () => {
  const limited = () => documented().filter((o) => o.method === 'get' && queryOf(o.operation).some((q) => q.name === 'limit'));

  it('every page size is an integer 1..max, as the operation checks it', () => {
    expect(limited().map((o) => o.path).sort()).toEqual([
      '/v1/admin/auth-rules',
      '/v1/admin/channels',
      '/v1/admin/channels/{channelId}/deliveries',
      '/v1/admin/shadow/divergences',
      '/v1/admin/users',
      '/v1/approvals',
      '/v1/audit',
      '/v1/entities/{entityId}/transactions',
    ]);
    for (const { operation } of limited()) {
      const limit = queryOf(operation).find((q) => q.name === 'limit')!.schema;
      expect(limit).toMatchObject({ type: 'integer', minimum: 1, default: 50 });
      expect(limit.maximum).toBeGreaterThanOrEqual(200);
    }
    const transactions = queryOf(doc.paths['/v1/entities/{entityId}/transactions'].get).find((q) => q.name === 'limit')!.schema;
    expect(transactions.maximum).toBe(200);
  });

  it('limit=max is accepted, max+1 and 0 are refused with the documented 400', async () => {
    for (const { path, operation } of limited()) {
      const { maximum } = queryOf(operation).find((q) => q.name === 'limit')!.schema;
      const atMax = await get(urlOf(path, { limit: String(maximum) }));
      // Accepted: the page, or (a channel that does not exist) the 404 that only a valid request reaches.
      expect([200, 404], `${path} limit=${maximum}: ${atMax.body}`).toContain(atMax.statusCode);
      for (const [value, message] of [[maximum + 1, 'Max'], [0, 'Min']] as const) {
        const res = await get(urlOf(path, { limit: String(value) }));
        expect(res.statusCode, `${path} limit=${value}`).toBe(400);
        expect(res.json()).toEqual(validationProblem(objectNameOf(operation.operationId), ['limit', message]));
        expect(Object.keys(operation.responses)).toContain('400');
      }
    }
  });

  it('a date parameter is a real day: 2026-02-30 is refused with a field error, 2024-02-29 accepted', async () => {
    const dated = documented().filter((o) => o.method === 'get' && queryOf(o.operation).some((q) => isDate(q.schema)));
    expect(dated.length).toBeGreaterThanOrEqual(4);
    for (const { path, operation } of dated) {
      const query = queryOf(operation);
      const valid = Object.fromEntries(query.filter((q) => isDate(q.schema)).map((q) => [q.name, q.name === 'to' ? '2024-03-01' : '2024-02-29']));
      const ok = await get(urlOf(path, valid));
      expect(ok.statusCode, `${path} ${ok.body}`).toBe(200);
      for (const { name } of query.filter((q) => isDate(q.schema))) {
        const res = await get(urlOf(path, { ...valid, [name]: '2026-02-30' }));
        expect(res.statusCode, `${path} ${name}=2026-02-30`).toBe(400);
        expect(res.json()).toEqual(validationProblem(objectNameOf(operation.operationId), [name, 'Invalid']));
      }
    }
  });
});

describe('request bodies', () => {
  it('a POST whose entry reads no body, or only optional fields, declares an optional body', () => {
    const optional = documented()
      .filter((o) => o.operation.requestBody?.required === false)
      .map((o) => o.operation.operationId)
      .sort();
    expect(optional).toEqual(
      ['approvals.approve', 'approvals.cancel', 'auth-rules.promote', 'card.activate', 'card.issue', 'card.lock', 'card.unlock', 'channel.rotate-secret', 'channel.test', 'delivery.retry', 'card.fulfilment-advance', 'keys.retire', 'user.unlock'].sort(),
    );
    expect(doc.components.schemas.EmptyBody).toMatchObject({ type: 'object', maxProperties: 0 });
  });

  it('channel creation is a union discriminated by type, accepting what the gateway accepts', async () => {
    const body = doc.paths['/v1/admin/channels'].post.requestBody.content['application/json'].schema;
    expect(body.discriminator.propertyName).toBe('type');
    const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
    ajv.addSchema(doc, 'openapi');
    const valid = ajv.compile({ $ref: 'openapi#/paths/~1v1~1admin~1channels/post/requestBody/content/application~1json/schema' });
    const cases: [unknown, boolean, [string, string][]][] = [
      [{ type: 'webhook', eventTypes: ['*'], url: 'https://hooks.bank.example/x' }, true, []],
      [{ type: 'nats', eventTypes: ['card.locked'] }, true, []],
      [{ type: 'webhook', eventTypes: ['*'] }, false, [['url', 'NotNull']]],
      [{ type: 'nats', eventTypes: ['*'], url: 'https://hooks.bank.example/x' }, false, [['url', 'UnknownProperty']]],
    ];
    for (const [payload, documentedValid, fieldErrors] of cases) {
      expect(valid(payload), JSON.stringify(payload)).toBe(documentedValid);
      const res = await t.inject({
        method: 'POST',
        url: '/v1/admin/channels',
        headers: { 'X-TENANT-ID': 'demo', authorization: `Bearer ${await t.token('Admin')}` },
        payload: payload as object,
      });
      if (documentedValid) expect(res.statusCode, res.body).not.toBe(400);
      else expect(res.json()).toEqual(validationProblem('channelRequest', ...fieldErrors));
    }
  });
});
