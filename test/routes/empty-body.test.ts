// Every write that declares no body (both listeners, enumerated from the operation tables) refuses a body with
// a field, as the card routes always did: `{"x":1}` is a 400 naming `x`, never a 200 that ignored it (user.unlock,
// channel.test, delivery.retry, tenant.disable and the others answered 200). No body, or `{}`, stays accepted.
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Operation } from '../../src/operations/define.js';
import { managementOperations, operations } from '../../src/operations/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { validationProblem } from '../helpers/problems.js';

let t: TestApp;
let m: FastifyInstance;
let operator: string;
beforeAll(async () => {
  t = await createTestApp({ env: { CARDLINE_SANDBOX: '1' } });
  m = await t.management();
  operator = await t.operatorKey('empty-body');
});
afterAll(() => t?.close());

/** Path parameters that pass their schemas (what they name need not exist: the body is checked first). */
const PARAMS: Record<string, string> = {
  cardId: 'CARD-3001',
  entityId: 'ENT-1001',
  kid: 'no-such-key',
  username: 'nobody-here',
  channelId: '00000000-0000-4000-8000-000000000000',
  deliveryId: '00000000-0000-4000-8000-000000000001',
  approvalId: '00000000-0000-4000-8000-000000000002',
  ruleId: '00000000-0000-4000-8000-000000000003',
  tenantId: 'demo',
  name: 'nobody-here',
};
const urlOf = (op: Operation) => op.url.replace(/:(\w+)/g, (_m, p: string) => encodeURIComponent(PARAMS[p] ?? `missing-${p}`));

const bodiless = (ops: readonly Operation[]) => ops.filter((op) => op.method !== 'GET' && !op.body);
const PUBLIC = bodiless(operations);
const MANAGEMENT = bodiless(managementOperations);

async function send(op: Operation, payload: unknown): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> =
    op.listener === 'management' ? { authorization: `Bearer ${operator}` } : { 'x-tenant-id': 'demo', authorization: `Bearer ${await t.token('Admin')}` };
  const app = op.listener === 'management' ? m : t.app;
  return app.inject({ method: op.method, url: urlOf(op), headers, ...(payload === undefined ? {} : { payload: payload as object }) });
}

describe('a write declared without a body', () => {
  it('the tables hold the seven the campaign found, and the card routes', () => {
    const ids = [...PUBLIC, ...MANAGEMENT].map((op) => op.id);
    for (const id of ['user.unlock', 'channel.test', 'delivery.retry', 'tenant.disable', 'tenant.enable', 'tenant-user.unlock', 'tenant-delivery.retry', 'card.lock', 'card.unlock']) {
      expect(ids).toContain(id);
    }
  });

  it.each([...PUBLIC, ...MANAGEMENT].map((op) => [op.id, op] as const))('%s refuses {"x":1} naming x, and a body that is no object', async (_id, op) => {
    const res = await send(op, { x: 1 });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toEqual(validationProblem(op.objectName, ['x', 'UnknownProperty']));
    const list = await send(op, [1]);
    expect(list.json()).toEqual(validationProblem(op.objectName, ['body', 'TypeMismatch']));
  });

  it('no body, or {}, is still no body', async () => {
    const unlock = PUBLIC.find((op) => op.id === 'user.unlock')!;
    await t.app.cardline.users.add('demo', 'nobody-here', 'Read-Only', 'a-long-password-1');
    for (const payload of [undefined, {}]) {
      const res = await send(unlock, payload);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().result).toMatchObject({ username: 'nobody-here', locked: false });
    }
  });
});
