// Both OpenAPI documents against the gateway: every operation of schemas/openapi.json and of
// schemas/management-openapi.json called with what its document says it takes and with what it does not
// (with and without credentials or the console's session; path parameters good, unknown, empty, over-long or
// malformed; query values of the wrong shape; bodies valid, mutated or not JSON), every path with the methods
// it does not answer, and paths no operation has. Any status, media type or body the document does not declare
// for that operation (or, for no operation, in `x-unrouted-responses`) fails. Fixed seed, bounded runs;
// routes.fuzz.test.ts checks dialects and state on the public routes.
import fc from 'fast-check';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_PARAM_LENGTH } from '../../src/errors.js';
import { PASSWORD, createTestApp, type TestApp } from '../helpers/app.js';
import { MANAGEMENT_DOCUMENT, PUBLIC_DOCUMENT, documentChecker, type Checker, type Document, type OperationObject, type Parameter } from '../helpers/openapi.js';
import { contentTypes, headerText, jsonText, mutated, usually } from './arbitraries.js';

const SEED = 4_190_227;
const RUNS_PER_OPERATION = 6;
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD'] as const;

let t: TestApp;
let management: FastifyInstance;
let operatorKey: string;
/** A console session on the management listener: its cookie counts as the key, a change needs its CSRF token. */
let session: { cookie: string; csrf: string };
let password: string;
const tokens: string[] = [];
const seen = new Map<string, Set<number>>();

beforeAll(async () => {
  t = await createTestApp();
  management = await t.management();
  operatorKey = await t.operatorKey('fuzz-operator');
  const signIn = await management.inject({ method: 'POST', url: '/console/session', payload: { key: await t.operatorKey('fuzz-console') } });
  session = { cookie: String(signIn.headers['set-cookie']).split(';')[0]!, csrf: signIn.json().result.csrfToken };
  for (const role of ['Admin', 'Operations', 'API Integration', 'Read-Only'] as const) tokens.push(await t.token(role));
  tokens.push(await t.token('Admin', 'demo-b'));
  password = await t.encrypt(PASSWORD);
}, 120_000);
afterAll(() => t.close());

// ---------------------------------------------------------------------------------------------------
// Values the document's schemas accept, with known-good ones where the core or the store checks them.

type Schema = Record<string, unknown>;

/** Identifiers the demo store and core hold (what makes a call reach past its lookups). */
const KNOWN: Record<string, () => unknown> = {
  entityId: () => 'ENT-1001',
  cardId: () => 'CARD-3001',
  kitNo: () => 'KIT-2001',
  tenantId: () => 'demo',
  username: () => 'ops',
  password: () => password,
};
const UNKNOWN_ID = '0193a6f0-0000-7000-8000-00000000f022';

function resolve(doc: Document, schema: Schema): Schema {
  const ref = schema.$ref as string | undefined;
  return ref ? resolve(doc, doc.components.schemas[ref.replace('#/components/schemas/', '')]!) : schema;
}

/** A value the schema accepts (as far as a schema can tell without the store), or a plausible one. */
function sample(doc: Document, raw: Schema, name = '', depth = 0): unknown {
  const schema = resolve(doc, raw);
  if (KNOWN[name]) return KNOWN[name]();
  if ('example' in schema) return schema.example;
  if ('default' in schema) return schema.default;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  const union = (schema.oneOf ?? schema.anyOf) as Schema[] | undefined;
  if (union) return sample(doc, union.find((s) => resolve(doc, s).type !== 'null') ?? union[0]!, name, depth);
  if (Array.isArray(schema.allOf)) return Object.assign({}, ...(schema.allOf as Schema[]).map((s) => sample(doc, s, name, depth)));
  const type = Array.isArray(schema.type) ? (schema.type as string[]).find((x) => x !== 'null') : schema.type;
  switch (type) {
    case 'object': {
      if (depth > 4) return {};
      const required = new Set((schema.required as string[] | undefined) ?? []);
      const properties = Object.entries((schema.properties ?? {}) as Record<string, Schema>).filter(([k]) => required.has(k) || KNOWN[k]);
      return Object.fromEntries(properties.map(([k, v]) => [k, sample(doc, v, k, depth + 1)]));
    }
    case 'string':
      if (schema.format === 'date') return '2026-01-15';
      if (schema.format === 'date-time') return '2026-01-15T10:00:00Z';
      if (schema.format === 'uuid') return UNKNOWN_ID;
      return 'x'.repeat(Math.max(1, Number(schema.minLength ?? 1)));
    case 'integer':
    case 'number':
      return Number(schema.minimum ?? 1);
    case 'boolean':
      return true;
    case 'array':
      return Number(schema.minItems ?? 0) > 0 ? [sample(doc, (schema.items ?? {}) as Schema, '', depth + 1)] : [];
    default:
      return null;
  }
}

// ---------------------------------------------------------------------------------------------------
// One request for an operation: its parameters, credentials, headers and body, each good or not.

interface Target {
  listener: 'public' | 'management';
  doc: Document;
  check: Checker;
  path: string;
  method: string;
  operation: OperationObject;
}

const encoded = (value: string) => encodeURIComponent(value);
const odd = fc.oneof(headerText, fc.string({ maxLength: 20 }), fc.constantFrom('-1', '0', '1e3', 'null', '[]', 'x'.repeat(300)));

function pathValueArb(name: string): fc.Arbitrary<string> {
  const known = KNOWN[name]?.();
  return fc.oneof(
    { weight: 6, arbitrary: fc.constant(typeof known === 'string' ? known : UNKNOWN_ID) },
    { weight: 2, arbitrary: headerText.map(encoded) },
    { weight: 1, arbitrary: fc.constantFrom('', 'a'.repeat(MAX_PARAM_LENGTH + 1)) },
    { weight: 1, arbitrary: fc.constantFrom('%E0%A4%A', '%ZZ', '%C0%AF') },
  );
}

function queryArb(doc: Document, parameters: Parameter[]): fc.Arbitrary<string> {
  const entries = parameters.map((p) =>
    fc
      .oneof(
        { weight: 3, arbitrary: fc.constant(undefined) },
        { weight: 3, arbitrary: fc.constant(String(sample(doc, p.schema, p.name))) },
        { weight: 1, arbitrary: odd },
      )
      .map((value) => (value === undefined ? undefined : ([p.name, value] as [string, string]))),
  );
  const unknown = fc.option(fc.tuple(fc.constantFrom('unknown', 'limit', 'cursor', 'from'), odd), { freq: 6, nil: undefined });
  return fc.tuple(fc.tuple(...entries), unknown).map(([pairs, extra]) => {
    const query = new URLSearchParams(pairs.filter((p): p is [string, string] => p !== undefined));
    if (extra) query.append(...extra);
    const text = query.toString();
    return text ? `?${text}` : '';
  });
}

function bodyArb(target: Target): fc.Arbitrary<{ payload?: string; contentType?: string }> {
  const content = target.operation.requestBody?.content;
  const json = content?.['application/json'];
  const valid = json ? (json.example ?? sample(target.doc, json.schema ?? {})) : undefined;
  const withType = (payload: fc.Arbitrary<string | undefined>) =>
    fc.tuple(payload, usually(fc.constant('application/json'), contentTypes)).map(([p, contentType]) =>
      p === undefined ? {} : { payload: p, ...(contentType === undefined ? {} : { contentType }) },
    );
  if (!content) {
    // A body where none is declared: nothing is read (GET), or it is refused as the declaration says.
    return target.method === 'GET' ? fc.constant({}) : fc.oneof({ weight: 4, arbitrary: fc.constant({}) }, { weight: 1, arbitrary: withType(jsonText) });
  }
  return withType(
    fc.oneof(
      { weight: 1, arbitrary: fc.constant(undefined) },
      { weight: 3, arbitrary: fc.constant(valid === undefined ? undefined : JSON.stringify(valid)) },
      { weight: 4, arbitrary: mutated(valid) },
      { weight: 2, arbitrary: jsonText },
      { weight: 1, arbitrary: fc.string({ maxLength: 40 }) },
    ),
  );
}

/** A client address of its own per unauthorised call: failed operator keys are throttled per address. */
let addresses = 0;
const freshAddress = () => `10.${(++addresses >> 16) & 255}.${(addresses >> 8) & 255}.${addresses & 255}`;

function requestArb(target: Target): fc.Arbitrary<InjectOptions> {
  const parameters = target.operation.parameters ?? [];
  const pathParams = parameters.filter((p) => p.in === 'path');
  const secured = (target.operation.security ?? []).length > 0;
  const goodCredential = target.listener === 'management' ? fc.constant(operatorKey) : fc.nat().map((i) => tokens[i % tokens.length]!);
  const badCredential = fc.oneof(headerText, fc.constant('clop_not-a-key'), fc.nat().map((i) => tokens[i % tokens.length]!));
  return fc
    .record({
      params: fc.tuple(...pathParams.map((p) => pathValueArb(p.name))),
      query: queryArb(
        target.doc,
        parameters.filter((p) => p.in === 'query'),
      ),
      credential: secured ? usually(goodCredential, badCredential) : fc.option(badCredential, { freq: 4, nil: undefined }),
      tenant: usually(fc.constant('demo'), fc.constantFrom('demo-b', 'unknown-bank', '', 'DEMO')),
      idempotencyKey: fc.option(fc.oneof(fc.uuid(), headerText, fc.constant('k'.repeat(300))), { freq: 3, nil: undefined }),
      // The console's way in instead of a key: its cookie, with the session's CSRF token, without, or another.
      viaSession: target.listener === 'management' ? fc.option(fc.constantFrom(session.csrf, undefined, 'not-the-token'), { freq: 5, nil: null }) : fc.constant(null),
      body: bodyArb(target),
    })
    .map(({ params, query, credential: key, tenant, idempotencyKey, viaSession, body }) => {
      const credential = viaSession === null ? key : undefined;
      let i = 0;
      const url = target.path.replace(/\{\w+\}/g, () => params[i++]!) + query;
      const headers: Record<string, string> = {};
      // A management credential that is not the operator's key comes from an address of its own.
      const good = target.listener === 'management' ? credential === operatorKey : credential !== undefined && tokens.includes(credential);
      if (credential !== undefined) headers.authorization = `Bearer ${credential}`;
      if (target.listener === 'public' && tenant !== undefined) headers.TENANT = tenant;
      if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey;
      if (body.contentType !== undefined) headers['content-type'] = body.contentType;
      if (viaSession !== null) {
        headers.cookie = session.cookie;
        if (viaSession !== undefined) headers['x-csrf-token'] = viaSession;
      }
      return {
        method: target.method as InjectOptions['method'],
        url,
        headers,
        ...(body.payload === undefined ? {} : { payload: body.payload }),
        ...(target.listener === 'management' && !good ? { remoteAddress: freshAddress() } : {}),
      };
    });
}

// ---------------------------------------------------------------------------------------------------

const LISTENERS = [
  { listener: 'public', file: PUBLIC_DOCUMENT },
  { listener: 'management', file: MANAGEMENT_DOCUMENT },
] as const;

async function call(listener: 'public' | 'management', check: Checker, options: InjectOptions) {
  const app = listener === 'public' ? t.app : management;
  const res = await app.inject(options);
  const key = `${listener} ${String(options.method)} ${check.templateOf(String(options.url).split('?')[0]!) ?? '(no operation)'}`;
  seen.set(key, (seen.get(key) ?? new Set()).add(res.statusCode));
  check(String(options.method), String(options.url), res);
  return res;
}

describe.each(LISTENERS)('the $listener document against its listener', ({ listener, file }) => {
  const check = documentChecker(file, { unrouted: true });
  const doc = check.document;
  const targets: Target[] = Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({ listener, doc, check, path, method: method.toUpperCase(), operation })),
  );

  it('every operation answers only what its document declares, whatever it is sent', async () => {
    expect(targets.length).toBeGreaterThan(30);
    for (const [i, target] of targets.entries()) {
      await fc.assert(
        fc.asyncProperty(requestArb(target), async (options) => {
          await call(listener, check, options);
        }),
        { seed: SEED + i, numRuns: RUNS_PER_OPERATION, endOnFailure: true },
      );
    }
    // The fuzzing reached past the gates: successes and refusals occurred.
    const statuses = new Set([...seen].filter(([key]) => key.startsWith(`${listener} `)).flatMap(([, s]) => [...s]));
    expect([...statuses]).toEqual(expect.arrayContaining([200, 400, 401, 403, 404, 409, 414, 415]));
  });

  it('every path answers the methods it does not describe as x-unrouted-responses declares (405 with Allow)', async () => {
    for (const [path, methods] of Object.entries(doc.paths)) {
      const url = path.replace(/\{(\w+)\}/g, (_m, name: string) => String(KNOWN[name]?.() ?? UNKNOWN_ID));
      // A sandbox path is 404 to any other method too: an Allow naming it would reveal it (decision 0012).
      const hidden = Object.values(methods).every((op) => op.tags?.includes('Sandbox'));
      for (const method of METHODS.filter((m) => !methods[m.toLowerCase()] && !(m === 'HEAD' && methods.get))) {
        const res = await call(listener, check, { method, url, headers: { TENANT: 'demo', authorization: `Bearer ${listener === 'public' ? tokens[0] : operatorKey}` } });
        expect(res.statusCode, `${method} ${url}`).toBe(hidden ? 404 : 405);
      }
    }
  });

  it('paths no operation has answer as x-unrouted-responses declares', async () => {
    const known = Object.keys(doc.paths).map((p) => p.replace(/\{(\w+)\}/g, (_m, name: string) => String(KNOWN[name]?.() ?? UNKNOWN_ID)));
    const segment = fc.oneof(fc.stringMatching(/^[a-z0-9._~-]{1,12}$/), headerText.map(encoded), fc.constantFrom('%E0%A4%A', '%ZZ', ''));
    const unknownPath = fc.oneof(
      fc.array(segment, { minLength: 1, maxLength: 4 }).map((s) => `/${s.join('/')}`),
      fc.tuple(fc.constantFrom(...known), segment).map(([p, s]) => `${p}/${s}`),
      fc.constantFrom(...known).map((p) => `${p}/`),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...METHODS), unknownPath, fc.option(jsonText, { nil: undefined }), async (method, url, payload) => {
        const withBody = payload !== undefined && method !== 'GET' && method !== 'HEAD';
        await call(listener, check, { method, url, ...(withBody ? { payload, headers: { 'content-type': 'application/json' } } : {}) });
      }),
      { seed: SEED, numRuns: 150, endOnFailure: true },
    );
  });
});
