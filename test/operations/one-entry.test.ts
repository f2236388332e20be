// Adding a read operation over an existing core call is one entry in the table: the registrar gives it its
// route, roles, validation, audit record and OpenAPI description, and the pipeline does the rest.
import { readFileSync } from 'node:fs';
import { Type } from '@sinclair/typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cardEnvelopeOf } from '../../schemas/common.js';
import { CardIdParams } from '../../schemas/card-lifecycle-routes.js';
import { TenantIdParams } from '../../schemas/management.js';
import type { FastifyInstance } from 'fastify';
import { buildManagementApp } from '../../src/management/app.js';
import { defineOperation } from '../../src/operations/define.js';
import { managementOperations, operations } from '../../src/operations/index.js';
import { PROBLEM_BASE, createTestApp, type TestApp } from '../helpers/app.js';
import { operatorUnauthorizedDetail } from '../helpers/problems.js';

/** What a newcomer writes: the example of docs/operating.md, "Adding an operation", word for word (checked below). */
const cardState = defineOperation({
  id: 'card.state',
  method: 'GET',
  url: '/v1/cards/:cardId/state',
  summary: "A card's state and form",
  tag: 'Cards',
  dialect: 'problem',
  access: 'read',
  objectName: 'cardStateRequest',
  params: CardIdParams,
  response: cardEnvelopeOf(Type.Object({ cardId: Type.String(), form: Type.String(), state: Type.String() })),
  callsCore: true,
  refusals: ['CARD_NOT_FOUND'],
  execute: ({ params, core }) => core('getCard', { cardId: params.cardId }),
  view: (card) => ({ result: { cardId: card.cardId, form: card.form, state: card.state }, pagination: null }),
  audit: { target: { cardId: 'params' } },
});

/** The management example of the same section, word for word (checked below). */
const tenantStatus = defineOperation({
  id: 'tenant.status',
  listener: 'management',
  method: 'GET',
  url: '/v1/tenants/:tenantId/status',
  summary: "A tenant's status",
  tag: 'Tenants',
  dialect: 'problem',
  access: 'operator',
  objectName: 'tenantStatusRequest',
  params: TenantIdParams,
  tenantParam: 'tenantId',
  response: cardEnvelopeOf(Type.Object({ tenantId: Type.String(), status: Type.String() })),
  execute: async ({ tenant }) => tenant,
  view: (tenant) => ({ result: { tenantId: tenant.id, status: tenant.status }, pagination: null }),
  audit: { target: { tenantId: 'params' } },
});

let t: TestApp;
let m: FastifyInstance;
beforeAll(async () => {
  t = await createTestApp({ operations: [...operations, cardState] });
  m = await buildManagementApp({ services: t.app.cardline, config: t.config, operations: [...managementOperations, tenantStatus] });
});
afterAll(async () => {
  await m.close();
  await t.close();
});

const call = async (url: string, role: 'Read-Only' | 'Admin' = 'Read-Only', headers: Record<string, string> = { 'X-TENANT-ID': 'demo' }) =>
  t.inject({ method: 'GET', url, headers: { ...headers, authorization: `Bearer ${await t.token(role)}` } });

/** A `defineOperation({ … });` block without its comments and with its whitespace collapsed. */
const normalised = (code: string) => code.replace(/\/\/.*$/gm, '').replace(/\s+/g, ' ').trim();

describe('one entry in the operation table', () => {
  it('is the example of docs/operating.md, "Adding an operation", word for word (public and management)', () => {
    const doc = readFileSync(new URL('../../docs/operating.md', import.meta.url), 'utf8');
    const section = /\n## Adding an operation\n([\s\S]*?)\n## /.exec(`${doc}\n## `)![1]!;
    const examples = [...section.matchAll(/```ts\n(defineOperation\(\{[\s\S]*?\n\}\);)\n```/g)].map((x) => x[1]!);
    const source = readFileSync(new URL(import.meta.url), 'utf8');
    const own = (name: string) => new RegExp(`\\nconst ${name} = (defineOperation\\(\\{[\\s\\S]*?\\n\\}\\);)\\n`).exec(source)![1]!;
    expect(examples, 'docs/operating.md has no "Adding an operation" examples').toHaveLength(2);
    expect(normalised(examples[0]!)).toBe(normalised(own('cardState')));
    expect(normalised(examples[1]!)).toBe(normalised(own('tenantStatus')));
  });

  it('answers through the whole pipeline: tenant, token, roles, core call, view', async () => {
    const res = await call('/v1/cards/CARD-3001/state');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ result: { cardId: 'CARD-3001', form: 'VIRTUAL', state: 'ACTIVE' }, pagination: null });
  });

  it('answers a core refusal and a bad parameter in its dialect', async () => {
    const missing = await call('/v1/cards/CARD-9999/state');
    expect(missing.statusCode).toBe(409);
    expect(missing.json()).toEqual({
      type: `${PROBLEM_BASE}/problem-with-message`,
      title: 'Card Not Found',
      status: 409,
      message: 'error.business',
      detail: 'Card CARD-9999 does not exist.',
      businessCode: 'CARD_NOT_FOUND',
    });
    const bad = await call(`/v1/cards/${'x'.repeat(65)}/state`);
    expect(bad.statusCode).toBe(400);
    expect(bad.json().fieldErrors).toEqual([{ field: 'cardId', message: 'Size', objectName: 'cardStateRequest' }]);
    const noTenant = await call('/v1/cards/CARD-3001/state', 'Read-Only', {});
    expect(noTenant.json()).toMatchObject({ status: 400, message: 'tenant.header.missing' });
  });

  it('is audited under its id, with its target', async () => {
    await call('/v1/cards/CARD-3002/state', 'Admin');
    const r = await t.db.query<{ action: string; target: Record<string, string>; outcome: string }>(
      `SELECT action, target, outcome FROM audit_log WHERE tenant_id = 'demo' AND action = 'card.state' ORDER BY seq DESC LIMIT 1`,
    );
    expect(r.rows[0]).toEqual({ action: 'card.state', target: { cardId: 'CARD-3002' }, outcome: 'succeeded' });
  });

  it('is described in the OpenAPI document with its roles and error responses', async () => {
    const doc = (await t.inject({ method: 'GET', url: '/openapi.json' })).json();
    const described = doc.paths['/v1/cards/{cardId}/state'].get;
    expect(described.operationId).toBe('card.state');
    expect(described['x-roles']).toEqual(['Admin', 'Operations', 'API Integration', 'Read-Only']);
    expect(Object.keys(described.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '409', '502', '504']));
    // Every role may read: no 403 is promised.
    expect(described.responses['403']).toBeUndefined();
  });
});

describe('one entry in the management table', () => {
  const operator = async () => ({ authorization: `Bearer ${await t.operatorKey()}` });

  it('answers an operator key through the management pipeline, for a tenant of any status', async () => {
    const res = await m.inject({ method: 'GET', url: '/v1/tenants/demo/status', headers: await operator() });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ result: { tenantId: 'demo', status: 'active' }, pagination: null });
  });

  it('refuses a tenant token (exact 401) and answers an unknown tenant with 404', async () => {
    const token = await m.inject({ method: 'GET', url: '/v1/tenants/demo/status', headers: { authorization: `Bearer ${await t.token('Admin')}` } });
    expect(token.statusCode).toBe(401);
    expect(token.json()).toEqual({
      type: `${PROBLEM_BASE}/problem-with-message`,
      title: 'Unauthorized',
      status: 401,
      message: 'error.http.401',
      detail: operatorUnauthorizedDetail(),
    });
    const unknown = await m.inject({ method: 'GET', url: '/v1/tenants/nobody/status', headers: await operator() });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ type: `${PROBLEM_BASE}/problem-with-message`, title: 'Not Found', status: 404, message: 'error.http.404', detail: "There is no tenant 'nobody'." });
  });

  it("is audited under its id in the tenant's trail, with the operator as actor", async () => {
    const key = await t.operatorKey('status-reader');
    await m.inject({ method: 'GET', url: '/v1/tenants/demo-b/status', headers: { authorization: `Bearer ${key}` } });
    const r = await t.db.query<{ actor: string; role: string; target: Record<string, string>; outcome: string }>(
      `SELECT actor, role, target, outcome FROM audit_log WHERE tenant_id = 'demo-b' AND action = 'tenant.status' ORDER BY seq DESC LIMIT 1`,
    );
    expect(r.rows[0]).toEqual({ actor: 'status-reader', role: 'Operator', target: { tenantId: 'demo-b' }, outcome: 'succeeded' });
  });

  it("is described in the management listener's document, not the public one", async () => {
    const doc = (await m.inject({ method: 'GET', url: '/openapi.json' })).json();
    const described = doc.paths['/v1/tenants/{tenantId}/status'].get;
    expect(described.operationId).toBe('tenant.status');
    expect(described.security).toEqual([{ operatorKey: [] }]);
    expect(Object.keys(described.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '500']));
    const publicDoc = (await t.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(publicDoc.paths['/v1/tenants/{tenantId}/status']).toBeUndefined();
  });
});
