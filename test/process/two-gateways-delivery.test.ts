// Two gateway processes on one PostgreSQL database share the delivery work (FOR UPDATE SKIP LOCKED): 1 000
// events of record, written through both, reach a receiver that answers 2xx each exactly once — none lost,
// none sent twice — every one verified with standardwebhooks. Skipped without PostgreSQL (DATABASE_URL).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MasterKey } from '../../src/crypto/master-key.js';
import { LIMIT_URL, createTestDb, type TestDb } from '../helpers/app.js';
import { GatewayProcess } from '../helpers/gateway.js';
import { sleep } from '../helpers/process.js';
import { startReceiver, verifyWebhook, type Receiver } from '../helpers/receiver.js';
import { BUILD_TIMEOUT_MS, ensureBuilt } from '../helpers/spawn.js';

// The gateway processes run the compiled dist/ (helpers/process.ts): built, if stale, once before them.
beforeAll(ensureBuilt, BUILD_TIMEOUT_MS);

const PG = process.env.DATABASE_URL;
const PASSWORD = 'Two-Gateways-Delivery-Passw0rd';
const EVENTS = 1_000;

describe.skipIf(!PG)('two gateway processes on PostgreSQL deliver 1 000 events', () => {
  let store: TestDb;
  let rx: Receiver;
  let a: GatewayProcess;
  let b: GatewayProcess;

  beforeAll(async () => {
    [store, rx] = await Promise.all([createTestDb(), startReceiver()]);
    const env = { DATABASE_URL: store.url!, CARDLINE_MASTER_KEY: MasterKey.generate() };
    a = new GatewayProcess(env, PASSWORD);
    await a.start();
    b = new GatewayProcess(env, PASSWORD, []);
    await b.start();
  }, 300_000);

  afterAll(async () => {
    await a?.kill();
    await b?.kill();
    await rx?.close();
    await store?.drop();
  });

  it('none lost, none sent twice, the work shared', async () => {
    const admin = await a.token('admin');
    const created = await a.call('POST', '/v1/admin/channels', admin, { type: 'webhook', url: `${rx.base}/all`, eventTypes: ['credit-limit.upgraded'] });
    expect(created.status).toBe(201);
    const { secret } = created.json.result;

    // Six writers, three on each process, one entity each (each process has a mock core of its own, and
    // limits only go up): 1 000 limit upgrades in all.
    const writers = [a, b].flatMap((gw, g) =>
      ['ENT-1001', 'ENT-1002', 'ENT-1003'].map((entityId, e) => ({ gw, entityId, count: Math.floor(EVENTS / 6) + (g * 3 + e < EVENTS % 6 ? 1 : 0) })),
    );
    expect(writers.reduce((n, w) => n + w.count, 0)).toBe(EVENTS);
    await Promise.all(
      writers.map(async ({ gw, entityId, count }) => {
        const token = await gw.token('integration');
        for (let i = 1; i <= count; i++) {
          const res = await fetch(`${gw.base}${LIMIT_URL}`, {
            method: 'POST',
            headers: { TENANT: 'demo', authorization: `Bearer ${token}`, 'content-type': 'application/json' },
            body: JSON.stringify({ entityId, amount: `${60000 + i}.00` }),
          });
          expect(res.status).toBe(200);
        }
      }),
    );

    await rx.waitFor('/all', EVENTS, 120_000);
    // Every delivery settled as delivered: none can be claimed again, and every attempt was recorded after its
    // request reached the receiver, so what the receiver holds now is all it will ever get.
    for (;;) {
      const open = await store.db.query<{ n: number }>("SELECT count(*)::int AS n FROM deliveries WHERE status <> 'delivered'");
      if (open.rows[0]!.n === 0) break;
      await sleep(50);
    }
    const hooks = rx.at('/all');
    const ids = hooks.map((h) => String(h.headers['webhook-id']));
    expect(new Set(ids).size).toBe(EVENTS);
    expect(hooks).toHaveLength(EVENTS);
    for (const h of hooks) expect(verifyWebhook(secret, h).type).toBe('credit-limit.upgraded');

    const events = await store.db.query<{ id: string }>("SELECT id FROM outbox WHERE tenant_id = 'demo' AND type = 'credit-limit.upgraded'");
    expect(new Set(ids)).toEqual(new Set(events.rows.map((r) => `msg_${r.id}`)));
    const workers = await store.db.query<{ worker: string; n: number }>('SELECT worker, count(*)::int AS n FROM delivery_attempts GROUP BY worker');
    expect(workers.rows.reduce((n, r) => n + r.n, 0)).toBe(EVENTS);
    // Both processes took part.
    expect(workers.rows).toHaveLength(2);
    const settled = await store.db.query<{ status: string; n: number }>('SELECT status, count(*)::int AS n FROM deliveries GROUP BY status');
    expect(settled.rows).toEqual([{ status: 'delivered', n: EVENTS }]);
  }, 300_000);
});
