// Issue 22 point 3 (decision 0220): a request's state is one typed context, declared in one module; the step that
// answers records the audit entry, the event and the Idempotency-Key's settlement in one statement through the
// recorder (the error path too); steps declare the errors they answer and the documents are built from them;
// the registrar computes encrypted fields; the HSM is opened with the services.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Type } from '@sinclair/typebox';
import Fastify, { type FastifyPluginAsync } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUSINESS_CODES } from '../../schemas/business-codes.js';
import { PhysicalUpgradeBody } from '../../schemas/cards.js';
import { Errors } from '../../src/errors.js';
import { defineOperation, type Operation } from '../../src/operations/define.js';
import { managementOperations, operations } from '../../src/operations/index.js';
import { encryptedFieldsOf } from '../../src/plugins/register.js';
import { DOCUMENTED_STEPS } from '../../src/openapi/document.js';
import { rateLimitErrors } from '../../src/plugins/rate-limit.js';
import { decryptErrors } from '../../src/plugins/decrypt.js';
import { idempotencyErrors } from '../../src/plugins/idempotency.js';
import { operatorAuthErrors } from '../../src/plugins/operator-auth.js';
import { scopeHash } from '../../src/services/infrastructure/idempotency.js';
import { PLATFORM_TENANT } from '../../src/services/tenancy/tenants.js';
import cardlineApp, { serverOptions } from '../../src/app.js';
import { buildManagementApp, managementPlugin } from '../../src/management/app.js';
import { audited } from '../../src/plugins/audit.js';
import { PROBLEM_BASE, createTestApp, type TestApp } from '../helpers/app.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const sources = (dir: string): string[] =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : path.endsWith('.ts') ? [path] : [];
  });
const SRC = sources(join(ROOT, 'src')).map((path) => ({ path: relative(ROOT, path), text: readFileSync(path, 'utf8') }));
const filesWith = (pattern: RegExp) => SRC.filter((f) => pattern.test(f.text)).map((f) => f.path);

describe('the structure', () => {
  it('declares pipeline state on FastifyRequest in one module, and decorates requests there only', () => {
    expect(filesWith(/interface FastifyRequest\b/)).toEqual(['src/request-context.ts']);
    expect(filesWith(/decorateRequest\(/)).toEqual(['src/request-context.ts']);
  });

  it('records through a call, not a hook: no onSend hook, and the recorder registers no hook at all', () => {
    expect(filesWith(/addHook\(\s*'onSend'/)).toEqual([]);
    expect(SRC.find((f) => f.path === 'src/plugins/audit.ts')!.text).not.toMatch(/addHook\(/);
  });

  it('leaves route config to the registrar (decrypt rewrites none) and builds the HSM with the services', () => {
    expect(SRC.find((f) => f.path === 'src/plugins/decrypt.ts')!.text).not.toMatch(/onRoute/);
    expect(filesWith(/cardline\.hsm\s*=/)).toEqual([]);
    expect(filesWith(/declare module '\.\/services\.js'/)).toEqual([]);
  });

  it('computes a route\'s encrypted fields from its operation: declared ones, then the body schema\'s sensitive fields', () => {
    const upgrade = operations.find((op) => op.body === PhysicalUpgradeBody)!;
    expect(encryptedFieldsOf(upgrade).map((f) => f.field)).toEqual(['communicationAddress.address1', 'communicationAddress.address2']);
    const login = operations.find((op) => op.id === 'authenticate')!;
    expect(encryptedFieldsOf(login).map((f) => f.field)).toEqual(['password']);
    expect(encryptedFieldsOf(login)[0]!.required).toBeTypeOf('function');
  });
});

/** The example names an operation's document lists, over every error response. */
function documentedExamples(doc: Record<string, unknown>, op: Operation): Set<string> {
  const paths = doc.paths as Record<string, Record<string, { operationId?: string; responses?: Record<string, { content?: Record<string, { examples?: Record<string, unknown> }> }> }>>;
  for (const methods of Object.values(paths)) {
    for (const operation of Object.values(methods)) {
      if (operation.operationId !== op.id) continue;
      const names = Object.values(operation.responses ?? {}).flatMap((r) => Object.values(r.content ?? {}).flatMap((m) => Object.keys(m.examples ?? {})));
      return new Set(names);
    }
  }
  throw new Error(`operation ${op.id} is not in the document`);
}

describe('the documents are built from the steps\' declarations', () => {
  const documents = [
    { name: 'public', doc: JSON.parse(readFileSync(join(ROOT, 'schemas/openapi.json'), 'utf8')), ops: operations },
    { name: 'management', doc: JSON.parse(readFileSync(join(ROOT, 'schemas/management-openapi.json'), 'utf8')), ops: managementOperations },
  ];

  it('lists every step\'s declaration (each `declareErrors` export in src/) among the documented steps', async () => {
    const declarations = SRC.flatMap((f) => [...f.text.matchAll(/export const (\w+) = declareErrors\(/g)].map((m) => ({ path: f.path, name: m[1]! })));
    // One listed entry per declaration, no more: the document is built from exactly the steps' declarations.
    expect(declarations).toHaveLength(new Set(DOCUMENTED_STEPS).size);
    for (const { path, name } of declarations) {
      const module = (await import(join(ROOT, path))) as Record<string, unknown>;
      expect(DOCUMENTED_STEPS.includes(module[name] as (typeof DOCUMENTED_STEPS)[number]), `${path}: ${name}`).toBe(true);
    }
  });

  it('documents each step\'s declared errors on exactly the operations it declares them for', () => {
    for (const { name, doc, ops } of documents) {
      for (const op of ops) {
        const shown = documentedExamples(doc, op);
        const declared = DOCUMENTED_STEPS.flatMap((step) => step.cases(op).map((c) => c.name));
        expect([...shown].sort(), `${name} ${op.id}`).toEqual([...new Set(declared)].sort());
      }
    }
  });

  it('runs each step where it declares it: rate limits and token refusals on token routes, operator keys on the management listener, keys on writes with a caller, JWEs where a tenant key opens them', () => {
    const all = [...operations, ...managementOperations];
    const on = (step: { cases: (op: Operation) => unknown[] }) => all.filter((op) => step.cases(op).length > 0).map((op) => op.id).sort();
    const tokenRoutes = all.filter((op) => op.access !== 'public' && op.access !== 'operator').map((op) => op.id).sort();
    expect(on(rateLimitErrors)).toEqual(tokenRoutes);
    expect(on(operatorAuthErrors)).toEqual(managementOperations.map((op) => op.id).sort());
    const writes = (op: Operation) => ['POST', 'PUT', 'PATCH', 'DELETE'].includes(op.method);
    expect(on(idempotencyErrors)).toEqual(all.filter((op) => writes(op) && op.access !== 'public' && op.idempotent !== false).map((op) => op.id).sort());
    // On the management listener: writes naming a tenant, and a new tenant's encrypted fields (its first Admin).
    const opensJwes = (op: Operation) => op.access !== 'operator' || op.tenantParam !== undefined || !!op.encryptedFields?.length;
    expect(on(decryptErrors)).toEqual(all.filter((op) => writes(op) && opensJwes(op)).map((op) => op.id).sort());
    // The login: no token, so neither a rate limit nor a key; its body may be a JWE.
    const login = all.find((op) => op.id === 'authenticate')!;
    expect(rateLimitErrors.cases(login)).toEqual([]);
    expect(idempotencyErrors.cases(login)).toEqual([]);
    expect(decryptErrors.cases(login).map((c) => c.name)).toEqual(['encrypted-payload']);
  });
});

// ── The recorder on the error path ────────────────────────────────────────────────────────────────────

const REFUSED = 'The test operation refuses once its security event is raised.';

/** A write that raises a security event, then fails: refused (409, final) or unavailable (503, not final). */
const failing = defineOperation({
  id: 'test.failing',
  method: 'POST',
  url: '/v1/test/failing',
  summary: 'Raises a security event, then fails',
  tag: 'Users',
  dialect: 'problem',
  access: 'admin',
  objectName: 'failingRequest',
  body: Type.Object({ username: Type.String({ minLength: 1, maxLength: 64 }), fail: Type.Union([Type.Literal('refused'), Type.Literal('unavailable')]) }, { additionalProperties: false }),
  response: Type.Object({ result: Type.Null(), pagination: Type.Null() }),
  errors: [Errors.unavailable(REFUSED)],
  execute: async ({ body, securityEvent }) => {
    securityEvent({ type: 'user.locked', payload: { username: body.username, failures: 10, lockedMinutes: 15 } });
    if (body.fail === 'refused') throw Errors.business('USER_EXISTS', REFUSED);
    throw Errors.unavailable(REFUSED);
  },
  view: () => ({ result: null, pagination: null }),
  audit: { action: 'test.failing', target: { username: 'body' } },
});

describe('a failure is recorded with its event and its key\'s settlement, by one statement', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ operations: [...operations, failing] });
  });
  afterAll(async () => {
    await t?.close();
  });

  const call = async (key: string, fail: 'refused' | 'unavailable', requestId: string) =>
    t.app.inject({
      method: 'POST',
      url: '/v1/test/failing',
      headers: { TENANT: 'demo', authorization: `Bearer ${await t.token('Admin')}`, 'idempotency-key': key, 'x-request-id': requestId },
      payload: { username: 'mallory', fail },
    });

  const readBack = async (requestId: string, key: string) => {
    const audit = await t.db.query<{ seq: string; outcome: string; status: number; action: string; target: Record<string, string> }>(
      "SELECT seq::text, outcome, status, action, target FROM audit_log WHERE tenant_id = 'demo' AND request_id = $1",
      [requestId],
    );
    const events = await t.db.query<{ audit_seq: string; type: string; aggregate_id: string }>(
      "SELECT audit_seq::text, type, aggregate_id FROM outbox WHERE tenant_id = 'demo' AND request_id = $1",
      [requestId],
    );
    const scope = scopeHash({ tenantId: 'demo', caller: 'admin', method: 'POST', route: '/v1/test/failing', params: {}, key });
    const keys = await t.db.query<{ state: string; status: number | null; body: string | null; lock_token: string | null }>(
      "SELECT state, status, body, lock_token FROM idempotency_keys WHERE tenant_id = 'demo' AND scope_hash = $1",
      [scope],
    );
    return { audit: audit.rows, events: events.rows, keys: keys.rows };
  };

  it('a refusal (final): the record, the security event (its audit seq) and the stored answer, which a retry replays', async () => {
    const res = await call('ctx-refused-1', 'refused', 'ctx-refused-req');
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({
      type: `${PROBLEM_BASE}/problem-with-message`,
      title: BUSINESS_CODES.USER_EXISTS.title,
      status: 409,
      message: 'error.business',
      detail: REFUSED,
      businessCode: 'USER_EXISTS',
    });
    const { audit, events, keys } = await readBack('ctx-refused-req', 'ctx-refused-1');
    expect(audit).toEqual([{ seq: expect.any(String), outcome: 'refused', status: 409, action: 'test.failing', target: { username: 'mallory' } }]);
    expect(events).toEqual([{ audit_seq: audit[0]!.seq, type: 'user.locked', aggregate_id: 'mallory' }]);
    expect(keys).toEqual([{ state: 'completed', status: 409, body: res.body, lock_token: null }]);

    const again = await call('ctx-refused-1', 'refused', 'ctx-refused-retry');
    expect(again.statusCode).toBe(409);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toBe(res.body);
    const replay = await readBack('ctx-refused-retry', 'ctx-refused-1');
    expect(replay.audit.map((r) => r.outcome)).toEqual(['replayed']);
    // A replay changed nothing: no second event.
    expect(replay.events).toEqual([]);
  });

  it('an unavailable answer (not final): the record, the security event, and the key released for a retry', async () => {
    const res = await call('ctx-unavailable-1', 'unavailable', 'ctx-unavailable-req');
    expect(res.statusCode).toBe(503);
    expect(res.json().detail).toBe(`${REFUSED} Quote request id ctx-unavailable-req to support.`);
    const { audit, events, keys } = await readBack('ctx-unavailable-req', 'ctx-unavailable-1');
    expect(audit).toEqual([{ seq: expect.any(String), outcome: 'failed', status: 503, action: 'test.failing', target: { username: 'mallory' } }]);
    expect(events).toEqual([{ audit_seq: audit[0]!.seq, type: 'user.locked', aggregate_id: 'mallory' }]);
    expect(keys).toEqual([{ state: 'released', status: null, body: null, lock_token: null }]);
  });
});

// ── A hand-written audited route ──────────────────────────────────────────────────────────────────────

describe('a hand-written route that declares audit', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  const Done = Type.Object({ done: Type.Boolean() }, { additionalProperties: false });
  /** POST /test/audited: a handler that answers without the recorder, or one wrapped in audited(). */
  const route = (wrapped: boolean): FastifyPluginAsync => async (app) => {
    const handler = async (request: { query: unknown }, reply: { code(n: number): unknown }) => {
      if ((request.query as { fail?: string }).fail) throw Errors.badRequest('The test route refuses.');
      reply.code(201);
      return { done: true };
    };
    app.post('/test/audited', {
      schema: { response: { 201: Done } },
      config: { auth: false, tenant: false, operator: false, idempotency: false, audit: { action: 'test.audited' } },
      handler: wrapped ? audited(handler) : handler,
    });
  };
  const publicApp = (wrapped: boolean) => {
    const app = Fastify(serverOptions(t.config));
    void app.register(cardlineApp, { config: t.config, db: t.db, masterKey: t.masterKey, ownsDb: false });
    void app.register(route(wrapped));
    return app;
  };
  const managementApp = (wrapped: boolean) => {
    const app = Fastify(serverOptions(t.config));
    void app.register(managementPlugin, { services: t.app.cardline, config: t.config });
    void app.register(route(wrapped));
    return app;
  };
  const REFUSED = /^Route POST \/test\/audited declares audit but does not answer through the recorder: wrap its handler in audited\(\) \(src\/plugins\/audit\.ts\)$/;

  it('does not start on either listener unless its handler answers through the recorder', async () => {
    for (const app of [publicApp(false), managementApp(false)]) {
      await expect(app.ready()).rejects.toThrow(REFUSED);
      await app.close();
    }
  });

  it('wrapped in audited(): its answer and its refusals are recorded before they are sent', async () => {
    const app = managementApp(true);
    try {
      await app.ready();
      const res = await app.inject({ method: 'POST', url: '/test/audited', headers: { 'x-request-id': 'audited-ok' } });
      expect(res.statusCode).toBe(201);
      expect(res.body).toBe('{"done":true}');
      const refused = await app.inject({ method: 'POST', url: '/test/audited?fail=1', headers: { 'x-request-id': 'audited-refused' } });
      expect(refused.statusCode).toBe(400);
      const rows = await t.db.query<{ request_id: string; tenant_id: string; action: string; status: number; outcome: string }>(
        "SELECT request_id, tenant_id, action, status, outcome FROM audit_log WHERE request_id IN ('audited-ok', 'audited-refused') ORDER BY request_id",
      );
      expect(rows.rows).toEqual([
        { request_id: 'audited-ok', tenant_id: PLATFORM_TENANT, action: 'test.audited', status: 201, outcome: 'succeeded' },
        { request_id: 'audited-refused', tenant_id: PLATFORM_TENANT, action: 'test.audited', status: 400, outcome: 'invalid' },
      ]);
    } finally {
      await app.close();
    }
  });
});

// ── A record whose subject cannot be read ─────────────────────────────────────────────────────────────

/** A management write naming a tenant in its body: its record joins that tenant's trail, looked up when recorded. */
const namingTenant = defineOperation({
  id: 'test.naming-tenant',
  listener: 'management',
  method: 'POST',
  url: '/v1/test/naming-tenant',
  summary: 'Names a tenant in its body',
  tag: 'Tenants',
  dialect: 'problem',
  access: 'operator',
  objectName: 'namingTenantRequest',
  body: Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false }),
  response: Type.Object({ result: Type.Null(), pagination: Type.Null() }),
  execute: async () => null,
  view: () => ({ result: null, pagination: null }),
  audit: { action: 'test.naming-tenant' },
});

describe('a record whose subject cannot be read (the store fails while the tenant is looked up)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('answers 500 and gives the Idempotency-Key back, so that a retry runs', async () => {
    const real = t.app.cardline;
    const tenants = Object.create(real.tenants, { get: { value: async () => Promise.reject(new Error('store down')) } }) as typeof real.tenants;
    const m = await buildManagementApp({ services: Object.assign(Object.create(real) as typeof real, { tenants }), config: t.config, operations: [...managementOperations, namingTenant] });
    try {
      const key = await t.operatorKey('subject-failure');
      const res = await m.inject({
        method: 'POST',
        url: '/v1/test/naming-tenant',
        headers: { authorization: `Bearer ${key}`, 'idempotency-key': 'subject-failure-1', 'x-request-id': 'subject-failure-req' },
        payload: { id: 'demo' },
      });
      expect(res.statusCode).toBe(500);
      const scope = scopeHash({ tenantId: PLATFORM_TENANT, caller: 'operator:subject-failure', method: 'POST', route: '/v1/test/naming-tenant', params: {}, key: 'subject-failure-1' });
      const keys = await t.db.query<{ state: string; lock_token: string | null }>('SELECT state, lock_token FROM idempotency_keys WHERE tenant_id = $1 AND scope_hash = $2', [
        PLATFORM_TENANT,
        scope,
      ]);
      expect(keys.rows).toEqual([{ state: 'released', lock_token: null }]);
    } finally {
      await m.close();
    }
  });
});

// ── What `execute` is given (decision 0422: built field by field, not by a spread of the input) ─────────

const contexts: Record<string, unknown>[] = [];
const echoing = defineOperation({
  id: 'test.context',
  method: 'POST',
  url: '/v1/test/context/:name',
  summary: 'Answers what its execute was given',
  tag: 'Users',
  dialect: 'problem',
  access: 'admin',
  objectName: 'contextRequest',
  params: Type.Object({ name: Type.String({ minLength: 1, maxLength: 16 }) }),
  body: Type.Object({ note: Type.String({ minLength: 1, maxLength: 16 }) }, { additionalProperties: false }),
  response: Type.Object({ result: Type.Null(), pagination: Type.Null() }),
  execute: async (ctx) => {
    contexts.push({
      keys: Object.keys(ctx).sort(),
      params: ctx.params,
      body: ctx.body,
      tenant: ctx.tenant.id,
      principal: ctx.principal?.sub,
      operator: ctx.operator,
      heldAt: ctx.heldAt,
      functions: [ctx.core, ctx.securityEvent, ctx.recordAuthorization, ctx.executeApproved].map((f) => typeof f),
      services: ctx.services !== undefined && ctx.log !== undefined,
    });
    return null;
  },
  view: () => ({ result: null, pagination: null }),
  audit: { action: 'test.context', target: { name: 'params' } },
});

describe("an operation's execute", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ operations: [...operations, echoing] });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('is given the request (params, query, body, tenant, principal, operator) and the pipeline (core, services, log, the callbacks, heldAt)', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/test/context/alpha',
      headers: { TENANT: 'demo', authorization: `Bearer ${await t.token('Admin')}` },
      payload: { note: 'hello' },
    });
    expect(res.statusCode).toBe(200);
    expect(contexts).toEqual([
      {
        keys: ['body', 'core', 'executeApproved', 'heldAt', 'log', 'operator', 'params', 'principal', 'query', 'recordAuthorization', 'securityEvent', 'services', 'tenant'],
        params: { name: 'alpha' },
        body: { note: 'hello' },
        tenant: 'demo',
        principal: 'admin',
        operator: null,
        heldAt: null,
        functions: ['function', 'function', 'function', 'function'],
        services: true,
      },
    ]);
  });
});
