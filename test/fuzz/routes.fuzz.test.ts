// Property-based fuzzing of every route the app registers (whatever exists when the test runs): arbitrary
// JSON, mutated valid bodies, raw text, and random TENANT / X-TENANT-ID / Authorization / Content-Type /
// Idempotency-Key headers. Whatever is sent: never a 5xx, always a well-formed body in the route's
// dialect, and no state change (core or store) on any 4xx. Fixed seed, bounded runs.
import { STATUS_CODES } from 'node:http';
import Fastify, { type RouteOptions } from 'fastify';
import fc from 'fast-check';
import type { TSchema } from '@sinclair/typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MockCore } from '../../connectors/mock/index.js';
import cardlineApp, { serverOptions } from '../../src/app.js';
import { PASSWORD, PROBLEM_BASE, createTestApp, type TestApp } from '../helpers/app.js';
import { contentTypes, headerText, jsonText, mutated, usually } from './arbitraries.js';

const SEED = 7_300_421;
const RUNS_PER_ROUTE = 20;

interface Route {
  method: string;
  url: string;
  dialect: 'envelope' | 'problem';
  body: TSchema | undefined;
}

let t: TestApp;
let routes: Route[] = [];
const tokens: string[] = [];
let password: string;

beforeAll(async () => {
  t = await createTestApp();
  // The routes as registered, with their config: a second instance on the same store, only to list them.
  const seen: RouteOptions[] = [];
  const lister = Fastify(serverOptions(t.config));
  lister.addHook('onRoute', (route) => {
    seen.push(route);
  });
  await lister.register(cardlineApp, { config: t.config, db: t.db, masterKey: t.masterKey, ownsDb: false });
  await lister.ready();
  await lister.close();
  routes = seen
    // The documentation UI (/docs) answers HTML for browsers; everything else is the JSON API.
    .filter((r) => r.method !== 'HEAD' && !r.url.startsWith('/docs'))
    .flatMap((r) => (Array.isArray(r.method) ? r.method : [r.method]).map((method) => ({ r, method: String(method) })))
    .map(({ r, method }) => ({
      method,
      url: r.url,
      dialect: r.config?.dialect ?? 'problem',
      body: (r.schema as { body?: TSchema } | undefined)?.body,
    }));
  for (const role of ['Admin', 'Operations', 'Read-Only'] as const) tokens.push(await t.token(role));
  tokens.push(await t.token('Admin', 'demo-b'));
  password = await t.encrypt(PASSWORD);
}, 120_000);
afterAll(() => t.close());

// ---------------------------------------------------------------------------------------------------
// State: both demo cores and every store table except those that record attempts by design.

/** Tables a refused request may write to by design: the audit trail (its chains, its checkpoints), login failures, JWE jtis, stored idempotent answers. */
const RECORDS_ATTEMPTS = new Set(['audit_log', 'audit_heads', 'audit_chains', 'audit_checkpoints', 'login_attempts', 'jwe_replay', 'idempotency_keys', 'cardline_migrations']);
/** Delivery bookkeeping that a background worker may change at any time. */
const VOLATILE_COLUMNS = new Set(['status', 'attempts', 'available_at', 'claimed_by', 'claimed_until', 'last_error', 'done_at']);

const serialise = (value: unknown) =>
  JSON.stringify(value, (_k, v: unknown) => {
    if (v instanceof Map) return [...v.entries()].sort(([a], [b]) => String(a).localeCompare(String(b)));
    if (typeof v === 'bigint') return `${v}n`;
    return v;
  });

/**
 * Every row of every store table but those, in one query (a query per table per request was a third of the
 * file's CPU time): each row as its JSON text, the outbox's volatile columns left out.
 */
let rowsSql: Promise<{ names: string[]; sql: string }> | undefined;
function storeRowsSql(): Promise<{ names: string[]; sql: string }> {
  rowsSql ??= t.db
    .query<{ table_name: string }>(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name",
    )
    .then(({ rows }) => {
      const names = rows.map((r) => r.table_name).filter((name) => !RECORDS_ATTEMPTS.has(name));
      const volatile = `ARRAY[${[...VOLATILE_COLUMNS].map((c) => `'${c}'`).join(', ')}]::text[]`;
      const sql = names
        .map((name) => `SELECT '${name}' AS t, (to_jsonb(x)${name === 'outbox' ? ` - ${volatile}` : ''})::text AS r FROM "${name}" x`)
        .join(' UNION ALL ');
      return { names, sql };
    });
  return rowsSql;
}

async function snapshot(): Promise<string> {
  const cores: Record<string, unknown> = {};
  for (const id of ['demo', 'demo-b']) {
    const core = (await t.app.cardline.connectors.forTenant((await t.app.cardline.tenants.get(id))!)) as unknown as MockCore;
    // The core's record of outcomes by idempotency key is bookkeeping, like idempotency_keys.
    const { idempotency: _idempotency, ...business } = core.state;
    cores[id] = business;
  }
  return serialise({ cores, tables: await storeRows() });
}

/**
 * The rows, read again only when a transaction completed since the last read: the same PostgreSQL snapshot
 * (its xmin, xmax and in-progress list) sees the same committed transactions, so the same rows.
 */
let lastRows: { xact: string; tables: Record<string, string[]> } | undefined;
async function storeRows(): Promise<Record<string, string[]>> {
  const xact = (await t.db.query<{ s: string }>('SELECT pg_current_snapshot()::text AS s')).rows[0]!.s;
  if (lastRows?.xact === xact) return lastRows.tables;
  const { names, sql } = await storeRowsSql();
  const tables: Record<string, string[]> = Object.fromEntries(names.map((name) => [name, []]));
  for (const row of (await t.db.query<{ t: string; r: string }>(sql)).rows) tables[row.t]!.push(row.r);
  for (const rows of Object.values(tables)) rows.sort();
  lastRows = { xact, tables };
  return tables;
}

// ---------------------------------------------------------------------------------------------------
// Valid bodies, from each route's body schema, with known-good values for the fields the core checks.

const KNOWN: Record<string, () => unknown> = {
  entityId: () => 'ENT-1001',
  cardId: () => 'CARD-3001',
  kitNo: () => 'KIT-2001',
  amount: () => '60000.00',
  username: () => 'admin',
  password: () => password,
};

function sample(schema: TSchema | undefined, name = ''): unknown {
  if (!schema) return undefined;
  if (KNOWN[name]) return KNOWN[name]();
  const s = schema as Record<string, unknown> & TSchema;
  if (Array.isArray(s.enum)) return s.enum[0];
  if (s.const !== undefined) return s.const;
  if (Array.isArray(s.anyOf)) return sample(s.anyOf[0] as TSchema, name);
  switch (s.type) {
    case 'object': {
      const props = (s.properties ?? {}) as Record<string, TSchema>;
      const required = new Set((s.required as string[] | undefined) ?? []);
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(props)) if (required.has(k) || KNOWN[k]) out[k] = sample(v, k);
      if (name === '' && props.communicationAddress) out.communicationAddress = { usePrimaryAddress: true };
      return out;
    }
    case 'string':
      return 'x'.repeat(Math.max(1, Number(s.minLength ?? 1)));
    case 'integer':
    case 'number':
      return Number(s.minimum ?? 1);
    case 'boolean':
      return true;
    case 'array':
      return [];
    case 'null':
      return null;
    default:
      return {};
  }
}

const PATH_VALUES: Record<string, string> = { cardId: 'CARD-3001', entityId: 'ENT-1001' };
const concrete = (url: string) => url.replace(/:(\w+)/g, (_m, p: string) => PATH_VALUES[p] ?? 'X-1');

// ---------------------------------------------------------------------------------------------------
// Generators.

function bodyArb(route: Route) {
  const valid = sample(route.body);
  return fc.oneof(
    { weight: 1, arbitrary: fc.constant(undefined) },
    { weight: 2, arbitrary: fc.constant(valid === undefined ? undefined : JSON.stringify(valid)) },
    { weight: 5, arbitrary: mutated(valid) },
    { weight: 3, arbitrary: jsonText },
    { weight: 1, arbitrary: fc.string({ maxLength: 40 }) },
  );
}

const headersArb = fc.record({
  tenant: usually(fc.constant('demo'), fc.oneof(fc.constantFrom('demo-b', 'DEMO', ' demo', 'unknown-bank', '', 'demo,demo-b'), headerText)),
  xTenant: fc.oneof(
    { weight: 6, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.constantFrom('demo', 'demo-b', '') },
    { weight: 1, arbitrary: headerText },
  ),
  authorization: usually(
    fc.nat().map((i) => `Bearer ${tokens[i % tokens.length]}`),
    fc.oneof(headerText.map((s) => `Bearer ${s}`), headerText),
  ),
  contentType: usually(
    fc.constant('application/json'),
    contentTypes,
  ),
  idempotencyKey: fc.oneof(fc.constant(undefined), fc.uuid(), headerText, fc.constant('k'.repeat(300))),
});

// ---------------------------------------------------------------------------------------------------
// The dialects, exactly.

function expectWellFormedError(route: Route, status: number, contentType: string | undefined, body: unknown) {
  if (route.dialect === 'envelope') {
    expect(contentType).toBe('application/json; charset=utf-8');
    expect(body).toEqual({
      result: null,
      exception: { errorCode: `ERR_${status}`, shortMessage: STATUS_CODES[status], detailMessage: expect.any(String) },
      pagination: null,
    });
    expect((body as { exception: { detailMessage: string } }).exception.detailMessage.length).toBeGreaterThan(0);
    return;
  }
  expect(contentType).toMatch(/^application\/problem\+json/);
  const problem = body as Record<string, unknown>;
  const base = { title: expect.any(String), status, message: expect.stringMatching(/^(error\.(validation|business|http\.\d{3})|tenant\.header\.missing)$/) };
  if ('fieldErrors' in problem) {
    expect(problem).toEqual({
      ...base,
      type: `${PROBLEM_BASE}/constraint-violation`,
      fieldErrors: expect.arrayContaining([{ field: expect.any(String), message: expect.any(String), objectName: expect.any(String) }]),
    });
    expect((problem.fieldErrors as unknown[]).length).toBeGreaterThan(0);
  } else {
    expect(problem).toEqual({
      ...base,
      type: `${PROBLEM_BASE}/problem-with-message`,
      detail: expect.any(String),
      ...('businessCode' in problem ? { businessCode: expect.any(String) } : {}),
    });
  }
}

describe('every route, fuzzed', () => {
  it('lists the routes of the app (at least the ones of the interface of record)', () => {
    const names = routes.map((r) => `${r.method} ${r.url}`);
    for (const name of [
      'POST /api/authenticate',
      'POST /credit-line-management/business-entity-manager/upgradeLimit',
      'PUT /v1/cards/upgrade/physical',
      'GET /health/live',
    ]) {
      expect(names).toContain(name);
    }
  });

  it('never a 5xx, always the route dialect, no state change on a 4xx', async () => {
    expect(routes.length).toBeGreaterThan(0);
    const statuses = new Map<number, number>();
    // The state before each request: what the previous request left (recomputed after anything but a 4xx).
    let current = await snapshot();
    // The snapshot sees the store's rows: the demo tenants and their users.
    const { tables } = JSON.parse(current) as { tables: Record<string, string[]> };
    expect([tables.tenants?.length, tables.users?.length]).toEqual([2, 8]);
    for (const [i, route] of routes.entries()) {
      await fc.assert(
        fc.asyncProperty(headersArb, bodyArb(route), async (h, payload) => {
          const headers: Record<string, string> = {};
          if (h.tenant !== undefined) headers.TENANT = h.tenant;
          if (h.xTenant !== undefined) headers['X-TENANT-ID'] = h.xTenant;
          if (h.authorization !== undefined) headers.authorization = h.authorization;
          if (h.contentType !== undefined && payload !== undefined) headers['content-type'] = h.contentType;
          if (h.idempotencyKey !== undefined) headers['idempotency-key'] = h.idempotencyKey;
          const res = await t.inject({ method: route.method as 'GET', url: concrete(route.url), headers, payload });
          statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
          expect(res.statusCode, `${route.method} ${route.url} → ${res.statusCode} ${res.body}`).toBeLessThan(500);
          expect(() => JSON.parse(res.body)).not.toThrow();
          const after = await snapshot();
          if (res.statusCode >= 400) {
            expectWellFormedError(route, res.statusCode, res.headers['content-type'] as string | undefined, res.json());
            expect(after, `${route.method} ${route.url} → ${res.statusCode} changed state`).toBe(current);
          }
          current = after;
        }),
        { seed: SEED + i, numRuns: RUNS_PER_ROUTE, endOnFailure: true },
      );
    }
    // The fuzzing reached past the gates: successes and refusals at every gate occurred.
    expect([...statuses.keys()]).toEqual(expect.arrayContaining([200, 400, 401, 403, 415]));
    // About 20 s on a quiet machine; a run beside two full suites and six builds took 120 s and was cut short.
  }, 600_000);
});
