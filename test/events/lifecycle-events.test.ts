// Every successful lifecycle write produces its event of record in the outbox; refusals produce none.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { UPGRADE_URL, createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
let auth: { authorization: string; TENANT: string };
beforeAll(async () => {
  t = await createTestApp();
  auth = { authorization: `Bearer ${await t.token('Admin')}`, TENANT: 'demo' };
});
afterAll(() => t.close());

const events = async () =>
  (
    await t.db.query<{ type: string; aggregate_id: string; payload: Record<string, unknown> }>(
      "SELECT type, aggregate_id, payload FROM outbox WHERE tenant_id = 'demo' ORDER BY audit_seq",
    )
  ).rows;

it('records one event per successful write, in order, with ids and states only', async () => {
  const call = async (method: 'POST' | 'PUT', url: string, payload?: Record<string, unknown>) => {
    const res = await t.inject({ method, url, headers: auth, ...(payload === undefined ? {} : { payload }) });
    expect(res.statusCode, `${method} ${url}: ${res.body}`).toBe(200);
  };
  await call('POST', '/v1/cards/CARD-3002/lock');
  await call('POST', '/v1/cards/CARD-3002/unlock');
  await call('PUT', UPGRADE_URL, { kitNo: 'KIT-2002', entityId: 'ENT-1001', lockOnUpgrade: true });
  await call('POST', '/card/activate', { cardId: 'CARD-3001' });
  await call('POST', '/v1/sandbox/cards/CARD-3001/fulfilment/advance');
  await call('PUT', '/v1/cards/CARD-3001/preferences', { international: { enabled: false } });
  await call('POST', '/v1/cards/CARD-3003/block', { reasonCode: 'LOST' });

  expect(await events()).toEqual([
    { type: 'card.locked', aggregate_id: 'CARD-3002', payload: { cardId: 'CARD-3002', entityId: 'ENT-1002', state: 'LOCKED' } },
    { type: 'card.unlocked', aggregate_id: 'CARD-3002', payload: { cardId: 'CARD-3002', entityId: 'ENT-1002', state: 'ACTIVE' } },
    {
      type: 'card.upgraded-to-physical',
      aggregate_id: 'CARD-3001',
      payload: { cardId: 'CARD-3001', entityId: 'ENT-1001', kitNo: 'KIT-2002', state: 'PENDING_ACTIVATION' },
    },
    { type: 'card.activated', aggregate_id: 'CARD-3001', payload: { cardId: 'CARD-3001', entityId: 'ENT-1001', state: 'ACTIVE' } },
    { type: 'card.fulfilment-advanced', aggregate_id: 'CARD-3001', payload: { cardId: 'CARD-3001', entityId: 'ENT-1001', fulfilment: 'EMBOSSED' } },
    { type: 'card.preferences-updated', aggregate_id: 'CARD-3001', payload: { cardId: 'CARD-3001', preferences: { international: { enabled: false } } } },
    { type: 'card.blocked', aggregate_id: 'CARD-3003', payload: { cardId: 'CARD-3003', entityId: 'ENT-1003', state: 'BLOCKED', reason: 'LOST' } },
  ]);
});

it('records no event for a refused transition', async () => {
  const before = (await events()).length;
  const res = await t.inject({ method: 'POST', url: '/v1/cards/CARD-3003/unlock', headers: auth });
  expect(res.statusCode).toBe(409);
  expect((await events()).length).toBe(before);
});
