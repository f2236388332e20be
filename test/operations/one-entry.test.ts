// Adding a read operation over an existing core call is one entry in the table: the registrar gives it its
// route, roles, validation, audit record and OpenAPI description, and the pipeline does the rest.
import { readFileSync } from 'node:fs';
import { Type } from '@sinclair/typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cardEnvelopeOf } from '../../schemas/common.js';
import { CardIdParams } from '../../schemas/card-lifecycle-routes.js';
import { defineOperation } from '../../src/operations/define.js';
import { operations } from '../../src/operations/index.js';
import { PROBLEM_BASE, createTestApp, type TestApp } from '../helpers/app.js';

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

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ operations: [...operations, cardState] });
});
afterAll(() => t.close());

const call = async (url: string, role: 'Read-Only' | 'Admin' = 'Read-Only', headers: Record<string, string> = { 'X-TENANT-ID': 'demo' }) =>
  t.inject({ method: 'GET', url, headers: { ...headers, authorization: `Bearer ${await t.token(role)}` } });

/** A `defineOperation({ … });` block without its comments and with its whitespace collapsed. */
const normalised = (code: string) => code.replace(/\/\/.*$/gm, '').replace(/\s+/g, ' ').trim();

describe('one entry in the operation table', () => {
  it('is the example of docs/operating.md, "Adding an operation", word for word', () => {
    const doc = readFileSync(new URL('../../docs/operating.md', import.meta.url), 'utf8');
    const example = /\n## Adding an operation\n[\s\S]*?```ts\n(defineOperation\(\{[\s\S]*?\n\}\);)\n```/.exec(doc);
    const own = /\nconst cardState = (defineOperation\(\{[\s\S]*?\n\}\);)\n/.exec(readFileSync(new URL(import.meta.url), 'utf8'));
    expect(example, 'docs/operating.md has no "Adding an operation" example').not.toBeNull();
    expect(normalised(example![1]!)).toBe(normalised(own![1]!));
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
