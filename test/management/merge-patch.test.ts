// Configuration merge patches (RFC 7396) on the management listener's PATCH /v1/tenants/{id} and the tenant
// Admin's PATCH /v1/admin/config: a patch answered 200 is the configuration read back, key for key; a patch
// holding a `constructor`, `prototype` or `__proto__` key at any depth is a 400 naming it, with nothing changed.
import fc from 'fast-check';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROBLEM_BASE, createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
let m: FastifyInstance;
let key: string;
let admin: string;
beforeAll(async () => {
  const mock = { id: 'mock', options: { fixtures: 'demo' } };
  t = await createTestApp({ tenants: [{ id: 'patched', config: { connectors: { primary: mock, shadow: mock }, routing: { default: 'primary' } } }] });
  m = await t.management();
  key = await t.operatorKey('ops-patch');
  admin = await t.token('Admin', 'demo-b');
});
afterAll(() => t.close());

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** RFC 7396 as the RFC's own pseudo-code writes it, on own properties only. */
function mergePatch(target: Json | undefined, patch: Json): Json {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const out: Record<string, Json> = target !== null && typeof target === 'object' && !Array.isArray(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

/** Sends the patch as JSON text, so that a `__proto__` key travels as the key it is. */
const send = (app: FastifyInstance, url: string, headers: Record<string, string>, patch: Json): Promise<LightMyRequestResponse> =>
  app.inject({ method: 'PATCH', url, headers: { ...headers, 'content-type': 'application/merge-patch+json' }, payload: JSON.stringify(patch) });

const managementRead = async () => (await m.inject({ method: 'GET', url: '/v1/tenants/patched', headers: { authorization: `Bearer ${key}` } })).json().result;
const operator = () => ({ authorization: `Bearer ${key}` });
const adminHeaders = () => ({ 'X-TENANT-ID': 'demo-b', authorization: `Bearer ${admin}` });
const adminRead = async () => (await t.inject({ method: 'GET', url: '/v1/admin/config', headers: adminHeaders() })).json().result;

const problem = (detail: string) => ({ type: `${PROBLEM_BASE}/problem-with-message`, title: 'Bad Request', status: 400, message: 'error.http.400', detail });
const reservedKey = (tenant: string, pointer: string, name: string) =>
  problem(`Tenant '${tenant}' has an invalid configuration: ${pointer}: '${name}' is a reserved key (as are constructor, prototype and __proto__); no setting has that name`);
const FORBIDDEN_KEY = problem('The request body contains a forbidden key (__proto__, or constructor.prototype).');

const RESERVED = ['constructor', 'prototype', '__proto__'] as const;

/** An object holding one key whatever its name (`{ __proto__: … }` as a literal would set the prototype). */
const holding = (k: string, v: Json): Json => Object.fromEntries([[k, v]]) as Json;

/** Puts `{ [reserved]: value }` at the end of a path of objects inside a patch. */
function plant(patch: Json, path: string[], reserved: string, value: Json): Json {
  if (path.length === 0) return { ...(patch as Record<string, Json>), ...(holding(reserved, value) as Record<string, Json>) };
  const [head, ...rest] = path as [string, ...string[]];
  const inner = (patch as Record<string, Json>)[head];
  return { ...(patch as Record<string, Json>), [head]: plant(inner !== null && typeof inner === 'object' && !Array.isArray(inner) ? inner : {}, rest, reserved, value) };
}

/** Mostly valid values, now and then an invalid one. */
const mostly = <T, U>(valid: fc.Arbitrary<T>, invalid: fc.Arbitrary<U>) => fc.oneof({ arbitrary: valid, weight: 6 }, { arbitrary: invalid, weight: 1 });

/** Pieces of what an Admin may configure, valid and not (an invalid one is a 400 that changes nothing); rate limits high enough for the run itself. */
const bankPatch: fc.Arbitrary<Record<string, Json>> = fc.record(
  {
    tokenLifetimeSeconds: mostly(fc.integer({ min: 60, max: 86_400 }), fc.constant(5)),
    creditLimit: fc.record({ maximum: mostly(fc.constantFrom('5000.00', '250000.00'), fc.constant('1.5.0')), allowDecrease: fc.boolean() }, { requiredKeys: [] }),
    rateLimit: fc.oneof(
      fc.constant(null),
      fc.record({ perUserPerMinute: fc.oneof(fc.integer({ min: 1000, max: 5000 }), fc.constant(null)), perTenantPerMinute: fc.oneof(fc.integer({ min: 1000, max: 5000 }), fc.constant(null)) }, { requiredKeys: [] }),
    ),
    encryption: fc.record({ requireEncryptedBody: fc.oneof(fc.constant(null), fc.constant(['/v1/cards/*'])), allowPlaintextPassword: fc.boolean() }, { requiredKeys: [] }),
  },
  { requiredKeys: [] },
) as fc.Arbitrary<Record<string, Json>>;

/** What only an operator may configure, on top of the bank's part. */
const operatorPatch: fc.Arbitrary<Record<string, Json>> = fc
  .tuple(
    bankPatch,
    fc.record(
      {
        homeCountry: mostly(fc.constantFrom('ES', 'PT'), fc.constant('pt')),
        timeZone: mostly(fc.constantFrom('Europe/Lisbon', 'UTC'), fc.constant('Mars/Olympus')),
        sandbox: fc.boolean(),
        routing: fc.record({ operations: fc.record({ cards: fc.constantFrom('primary', 'shadow'), pin: fc.constant('primary') }, { requiredKeys: [] }) }),
      },
      { requiredKeys: [] },
    ),
  )
  .map(([a, b]) => ({ ...a, ...b }) as Record<string, Json>);

/** Every path of objects inside a patch, the patch itself included (where a reserved key can be planted). */
function objectPaths(value: Json, at: string[] = []): string[][] {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return [];
  return [at, ...Object.entries(value).flatMap(([k, v]) => objectPaths(v, [...at, k]))];
}

/** A patch, and when `reserved` is set the same patch with that key planted somewhere inside it. */
const withMaybeReserved = (base: fc.Arbitrary<Record<string, Json>>) =>
  base.chain((patch) =>
    fc.record({
      patch: fc.constant(patch as Json),
      plant: fc.oneof(
        { arbitrary: fc.constant(undefined), weight: 2 },
        { arbitrary: fc.record({ at: fc.constantFrom(...objectPaths(patch)), name: fc.constantFrom(...RESERVED), value: fc.constantFrom<Json>(1, 'primary', { x: 1 }, null) }), weight: 1 },
      ),
    }),
  );

/** The pointer of the first reserved key in a patch (own keys, in order), as the refusal names it. */
const pointerOf = (path: string[], name: string) => `/${[...path, name].join('/')}`;

describe('PATCH /v1/tenants/{id} (management)', () => {
  it('refuses the patches the outside campaign found half applied, naming the key, and changes nothing', async () => {
    const before = await managementRead();
    const routing = await send(m, '/v1/tenants/patched', operator(), { config: { routing: { operations: { cards: 'shadow', constructor: 'primary', pin: 'shadow' } } } });
    expect(routing.statusCode).toBe(400);
    expect(routing.json()).toEqual(reservedKey('patched', '/routing/operations/constructor', 'constructor'));
    const top = await send(m, '/v1/tenants/patched', operator(), { config: { constructor: 1, shadow: { connector: 'shadow', operations: ['getCreditLimit'] } } });
    expect(top.json()).toEqual(reservedKey('patched', '/constructor', 'constructor'));
    const deep = await send(m, '/v1/tenants/patched', operator(), { name: 'Patched', config: { connectors: { shadow: { options: { nested: { prototype: { x: 1 } } } } } } });
    expect(deep.json()).toEqual(reservedKey('patched', '/connectors/shadow/options/nested/prototype', 'prototype'));
    const proto = await send(m, '/v1/tenants/patched', operator(), { config: { rateLimit: holding('__proto__', { perUserPerMinute: 1 }) } });
    expect(proto.json()).toEqual(FORBIDDEN_KEY);
    expect(await managementRead()).toEqual(before);
  });

  it('answers 200 only for a patch that is then the configuration read back; a refused one changes nothing', async () => {
    const seen = new Set<string>();
    await fc.assert(
      fc.asyncProperty(withMaybeReserved(operatorPatch), fc.option(fc.constantFrom('Patched Bank', 'Another name'), { nil: undefined }), async ({ patch, plant: planted }, name) => {
        const config = planted ? plant(patch, planted.at, planted.name, planted.value) : patch;
        const body = { ...(name === undefined ? {} : { name }), config };
        const before = await managementRead();
        const res = await send(m, '/v1/tenants/patched', operator(), body);
        const after = await managementRead();
        seen.add(`${res.statusCode}${planted ? ' reserved' : ''}`);
        if (planted) {
          expect(res.json()).toEqual(planted.name === '__proto__' ? FORBIDDEN_KEY : reservedKey('patched', pointerOf(planted.at, planted.name), planted.name));
        }
        if (res.statusCode === 200) {
          expect(res.json().result).toEqual(after);
          expect(after.config).toEqual(mergePatch(before.config, config));
          expect(after.name).toBe(name ?? before.name);
          expect(after.version).toBe(before.version + 1);
        } else {
          expect(res.statusCode).toBe(400);
          expect(after).toEqual(before);
        }
      }),
      { numRuns: 30, seed: 2027 },
    );
    // The run met every kind of answer: applied patches, refused ones, and reserved keys.
    expect([...seen].sort()).toEqual(['200', '400', '400 reserved']);
  });
});

describe('PATCH /v1/admin/config (the tenant Admin)', () => {
  it('refuses a reserved key at any depth as a field error naming it, and changes nothing', async () => {
    const before = await adminRead();
    const invalid = (field: string) => ({
      type: `${PROBLEM_BASE}/constraint-violation`,
      title: 'Method argument not valid',
      status: 400,
      message: 'error.validation',
      fieldErrors: [{ field, message: 'UnknownProperty', objectName: 'configPatch' }],
    });
    expect((await send(t.app, '/v1/admin/config', adminHeaders(), { constructor: 1, tokenLifetimeSeconds: 900 })).json()).toEqual(invalid('constructor'));
    expect((await send(t.app, '/v1/admin/config', adminHeaders(), { creditLimit: { maximum: '10.00', prototype: 5 } })).json()).toEqual(invalid('creditLimit.prototype'));
    expect((await send(t.app, '/v1/admin/config', adminHeaders(), { creditLimit: holding('__proto__', { maximum: '1.00' }) })).json()).toEqual(FORBIDDEN_KEY);
    expect(await adminRead()).toEqual(before);
  });

  it('answers 200 only for a patch that is then the configuration read back; a refused one changes nothing', async () => {
    const seen = new Set<string>();
    await fc.assert(
      fc.asyncProperty(withMaybeReserved(bankPatch), async ({ patch, plant: planted }) => {
        const body = planted ? plant(patch, planted.at, planted.name, planted.value) : patch;
        const before = await adminRead();
        const res = await send(t.app, '/v1/admin/config', adminHeaders(), body);
        const after = await adminRead();
        seen.add(`${res.statusCode}${planted ? ' reserved' : ''}`);
        if (res.statusCode === 200) {
          expect(planted).toBeUndefined();
          expect(res.json().result).toEqual(after);
          expect(after).toEqual(mergePatch(before, body));
        } else {
          expect(res.statusCode).toBe(400);
          expect(after).toEqual(before);
        }
      }),
      { numRuns: 30, seed: 2027 },
    );
    // The run met every kind of answer: applied patches, refused ones, and reserved keys.
    expect([...seen].sort()).toEqual(['200', '400', '400 reserved']);
  });
});
