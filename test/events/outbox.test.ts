// The transactional outbox: a successful write adds exactly one event, committed with its audit record
// or not at all; refusals, validation failures, pending outcomes and replays add none. (How the delivery
// worker claims and delivers them: test/notify/deliveries.test.ts.) Runs on PGlite, and on PostgreSQL when
// DATABASE_URL is set.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { pending } from '../../connectors/contract.js';
import { verifyChain } from '../../src/audit/verify.js';
import { EventPayloadError, domainEvent } from '../../src/events/outbox.js';
import type { Db } from '../../src/store/db.js';
import { LIMIT_URL, UPGRADE_URL, createTestApp, supportDetail, type TestApp } from '../helpers/app.js';

interface OutboxRow {
  tenant_id: string;
  audit_seq: string | number;
  type: string;
  aggregate_id: string;
  payload: Record<string, unknown>;
  request_id: string;
  status: string;
  attempts: number;
}

const outboxRows = async (db: Db, requestId?: string) =>
  (
    await db.query<OutboxRow>(
      `SELECT tenant_id, audit_seq, type, aggregate_id, payload, request_id, status, attempts FROM outbox
        ${requestId ? 'WHERE request_id = $1' : ''} ORDER BY tenant_id, id`,
      requestId ? [requestId] : [],
    )
  ).rows.map((r) => ({ ...r, audit_seq: Number(r.audit_seq) }));

const auditSeqs = async (db: Db, requestId: string) =>
  (await db.query<{ seq: string | number; outcome: string }>('SELECT seq, outcome FROM audit_log WHERE request_id = $1', [requestId])).rows.map(
    (r) => ({ seq: Number(r.seq), outcome: r.outcome }),
  );

describe('events of record from the routes', () => {
  let t: TestApp;
  let n = 0;
  const restores: (() => void)[] = [];
  const rid = (name: string) => `outbox-${name}-${++n}`;
  const auth = async (role: Parameters<TestApp['token']>[0] = 'Admin') => ({ authorization: `Bearer ${await t.token(role)}` });

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());
  afterEach(async () => {
    for (const restore of restores.splice(0)) restore();
    await t.db.exec('DROP TRIGGER IF EXISTS fail_outbox ON outbox; DROP TRIGGER IF EXISTS fail_audit ON audit_log; DROP FUNCTION IF EXISTS cardline_test_fail()');
  });

  const upgradeLimit = async (requestId: string, amount: string, extra: Record<string, string> = {}) =>
    t.inject({
      method: 'POST',
      url: LIMIT_URL,
      headers: { TENANT: 'demo', 'x-request-id': requestId, ...(await auth()), ...extra },
      payload: { entityId: 'ENT-1002', amount },
    });

  it('a limit upgrade adds one credit-limit.upgraded event, tied to its audit record', async () => {
    const requestId = rid('limit');
    const res = await upgradeLimit(requestId, '65000.00');
    expect(res.statusCode).toBe(200);
    const [record] = await auditSeqs(t.db, requestId);
    expect(await outboxRows(t.db, requestId)).toEqual([
      {
        tenant_id: 'demo',
        audit_seq: record!.seq,
        type: 'credit-limit.upgraded',
        aggregate_id: 'ENT-1002',
        payload: { entityId: 'ENT-1002', previousLimit: '50000.00', newLimit: '65000.00' },
        request_id: requestId,
        // No channel of this tenant subscribes: written done, never written again (issue 21).
        status: 'done',
        attempts: 0,
      },
    ]);
  });

  it('a physical upgrade adds one card.upgraded-to-physical event, without the address', async () => {
    const requestId = rid('upgrade');
    const res = await t.inject({
      method: 'PUT',
      url: UPGRADE_URL,
      headers: { 'X-TENANT-ID': 'demo', 'x-request-id': requestId, ...(await auth('Operations')) },
      payload: {
        kitNo: 'KIT-2001',
        entityId: 'ENT-1001',
        lockOnUpgrade: true,
        communicationAddress: { address1: '12 Hidden Lane', city: 'Pune', state: 'MH', country: 'IN', pin: '411001' },
      },
    });
    expect(res.statusCode, res.body).toBe(200);
    const rows = await outboxRows(t.db, requestId);
    expect(rows).toEqual([
      expect.objectContaining({
        type: 'card.upgraded-to-physical',
        aggregate_id: 'CARD-3001',
        payload: { cardId: 'CARD-3001', entityId: 'ENT-1001', kitNo: 'KIT-2001', state: 'PENDING_ACTIVATION' },
      }),
    ]);
    expect(JSON.stringify(rows)).not.toMatch(/Hidden Lane|411001/);
  });

  it('refused, invalid, forbidden and unauthenticated writes add no event', async () => {
    const before = (await outboxRows(t.db)).length;
    const calls = [
      { name: 'kit', method: 'PUT' as const, url: UPGRADE_URL, payload: { kitNo: 'KIT-9999', entityId: 'ENT-1002' }, role: 'Admin' as const, status: 409 },
      { name: 'maximum', method: 'POST' as const, url: LIMIT_URL, payload: { entityId: 'ENT-1002', amount: '2000000.00' }, role: 'Admin' as const, status: 400 },
      { name: 'decrease', method: 'POST' as const, url: LIMIT_URL, payload: { entityId: 'ENT-1002', amount: '100.00' }, role: 'Admin' as const, status: 400 },
      { name: 'invalid', method: 'POST' as const, url: LIMIT_URL, payload: { entityId: 'ENT-1002', amount: 5 }, role: 'Admin' as const, status: 400 },
      { name: 'forbidden', method: 'POST' as const, url: LIMIT_URL, payload: { entityId: 'ENT-1002', amount: '99000.00' }, role: 'Operations' as const, status: 403 },
    ];
    for (const c of calls) {
      const requestId = rid(c.name);
      const res = await t.inject({ method: c.method, url: c.url, headers: { TENANT: 'demo', 'x-request-id': requestId, ...(await auth(c.role)) }, payload: c.payload });
      expect(res.statusCode, c.name).toBe(c.status);
      expect(await auditSeqs(t.db, requestId), c.name).toHaveLength(1);
    }
    const noToken = await t.inject({ method: 'POST', url: LIMIT_URL, headers: { TENANT: 'demo' }, payload: { entityId: 'ENT-1002', amount: '99000.00' } });
    expect(noToken.statusCode).toBe(401);
    expect(await outboxRows(t.db)).toHaveLength(before);
  });

  it('a pending outcome (202) adds no event: the write is not done yet', async () => {
    const core = await t.app.cardline.connectors.forTenant((await t.app.cardline.tenants.get('demo'))!);
    const original = core.upgradeLimit;
    core.upgradeLimit = async () => pending('REF-77');
    restores.push(() => (core.upgradeLimit = original));
    const requestId = rid('pending');
    const res = await upgradeLimit(requestId, '66000.00');
    expect(res.statusCode).toBe(202);
    expect(await auditSeqs(t.db, requestId)).toEqual([{ seq: expect.any(Number), outcome: 'pending' }]);
    expect(await outboxRows(t.db, requestId)).toEqual([]);
  });

  it('an idempotent replay answers again, is recorded as replayed, and adds no second event', async () => {
    const key = { 'idempotency-key': `outbox-replay-${n}` };
    const first = rid('replay');
    const second = rid('replay');
    expect((await upgradeLimit(first, '67000.00', key)).statusCode).toBe(200);
    const again = await upgradeLimit(second, '67000.00', key);
    expect(again.statusCode).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(await outboxRows(t.db, first)).toHaveLength(1);
    expect(await outboxRows(t.db, second)).toEqual([]);
    expect(await auditSeqs(t.db, second)).toEqual([{ seq: expect.any(Number), outcome: 'replayed' }]);
  });

  it.each([
    ['the outbox insert', 'fail_outbox', 'outbox'],
    ['the audit insert', 'fail_audit', 'audit_log'],
  ])('when %s fails, neither the audit record nor the event is committed, and the write answers 500', async (_what, trigger, table) => {
    await t.db.exec(`
      CREATE OR REPLACE FUNCTION cardline_test_fail() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'simulated commit failure'; END $$;
      CREATE TRIGGER ${trigger} BEFORE INSERT ON ${table} FOR EACH ROW EXECUTE FUNCTION cardline_test_fail();`);
    // The writer's chain (decision 0200) does not move: its size and head stay where they were.
    const chainOf = () => t.db.query<{ size: string | number; head: string }>("SELECT size, head FROM audit_chains WHERE tenant_id = 'demo' AND chain = $1", [t.app.cardline.audit.chainOf('demo')]);
    const head = await chainOf();
    const requestId = rid('fail');
    const res = await upgradeLimit(requestId, '68000.00');
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({
      result: null,
      exception: { errorCode: 'ERR_500', shortMessage: 'Internal Server Error', detailMessage: supportDetail('An unexpected error occurred.', res) },
      pagination: null,
    });
    expect(await auditSeqs(t.db, requestId)).toEqual([]);
    expect(await outboxRows(t.db, requestId)).toEqual([]);
    const after = await chainOf();
    expect(after.rows).toEqual(head.rows);

    // Once the store works again, so does the chain.
    await t.db.exec(`DROP TRIGGER ${trigger} ON ${table}`);
    const next = rid('recovered');
    expect((await upgradeLimit(next, '69000.00')).statusCode).toBe(200);
    expect(await outboxRows(t.db, next)).toHaveLength(1);
    expect(await verifyChain(t.db, 'demo')).toMatchObject({ ok: true });
  });
});

describe('event payloads', () => {
  it('accepts exactly the declared fields of a type', () => {
    expect(domainEvent('card.locked', { cardId: 'CARD-1', entityId: 'ENT-1', state: 'LOCKED' })).toEqual({
      type: 'card.locked',
      aggregateId: 'CARD-1',
      payload: { cardId: 'CARD-1', entityId: 'ENT-1', state: 'LOCKED' },
    });
  });

  it.each([
    ['a PAN', 'card.pin-set', { cardId: 'CARD-1', pan: '4111111111111111' }],
    ['a PIN block', 'card.pin-set', { cardId: 'CARD-1', pinBlock: '041234FFFFFFFFFF' }],
    ['an address', 'card.upgraded-to-physical', { cardId: 'C', entityId: 'E', kitNo: 'K', state: 'ACTIVE', address1: '1 Main St' }],
    ['a float amount', 'credit-limit.upgraded', { entityId: 'E', newLimit: 1000 }],
    ['a missing id', 'card.activated', { entityId: 'E', state: 'ACTIVE' }],
  ])('refuses a payload with %s', (_what, type, payload) => {
    expect(() => domainEvent(type as 'card.pin-set', payload)).toThrow(EventPayloadError);
  });
});
