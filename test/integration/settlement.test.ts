// An Idempotency-Key is settled by the statement that commits the write's audit record and event: when that
// settlement cannot commit, the write is not acknowledged, and every acknowledged write's retry replays.
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scopeHash } from '../../src/services/infrastructure/idempotency.js';
import { LIMIT_URL, createTestApp, type TestApp } from '../helpers/app.js';

interface Write {
  key: string;
  method: 'POST' | 'PUT';
  url: string;
  /** The route pattern, for the key's scope. */
  route: string;
  params: Record<string, string>;
  payload: unknown;
}

/** Every other write's settlement is refused by the store (as if the statement died there). */
const doomed = (i: number) => i % 2 === 0;

const PREFERENCES = { domestic: { enabled: true, pos: { enabled: true, dailyLimit: '2000.00', dailyCount: 20 } } };

/** Limit changes (envelope) and card changes (problem), each with a key of its own. */
const WRITES: Write[] = [
  ...Array.from({ length: 6 }, (_, i): Write => ({
    key: `settle-limit-${i}`,
    method: 'POST',
    url: LIMIT_URL,
    route: LIMIT_URL,
    params: {},
    // Writes i and i + 3 share an entity, one doomed and one not: the healthy one always raises the limit.
    payload: { entityId: `ENT-100${1 + (i % 3)}`, amount: `${(doomed(i) ? 60000 : 80000) + i * 1000}.00` },
  })),
  ...['CARD-3001', 'CARD-3002'].map((cardId): Write => ({
    key: `settle-prefs-${cardId}`,
    method: 'PUT',
    url: `/v1/cards/${cardId}/preferences`,
    route: '/v1/cards/:cardId/preferences',
    params: { cardId },
    payload: PREFERENCES,
  })),
  { key: 'settle-lock', method: 'POST', url: '/v1/cards/CARD-3003/lock', route: '/v1/cards/:cardId/lock', params: { cardId: 'CARD-3003' }, payload: {} },
];


describe('a settlement that cannot commit', () => {
  let t: TestApp;
  let bearer: string;

  beforeAll(async () => {
    t = await createTestApp();
    bearer = `Bearer ${await t.token('Admin')}`;
    await t.db.exec(`
      CREATE TABLE test_doomed (scope_hash text PRIMARY KEY);
      CREATE FUNCTION test_refuse_settlement() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.state = 'completed' AND EXISTS (SELECT 1 FROM test_doomed WHERE scope_hash = NEW.scope_hash) THEN
          RAISE EXCEPTION 'settlement refused by the test';
        END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER test_refuse_settlement BEFORE UPDATE ON idempotency_keys FOR EACH ROW EXECUTE FUNCTION test_refuse_settlement();`);
    for (const [i, w] of WRITES.entries()) {
      if (!doomed(i)) continue;
      const scope = scopeHash({ tenantId: 'demo', caller: 'admin', method: w.method, route: w.route, params: w.params, key: w.key });
      await t.db.query('INSERT INTO test_doomed (scope_hash) VALUES ($1)', [scope]);
    }
  });
  afterAll(() => t?.close());

  const send = (w: Write, requestId: string) =>
    t.inject({
      method: w.method,
      url: w.url,
      headers: { TENANT: 'demo', authorization: bearer, 'idempotency-key': w.key, 'x-request-id': requestId },
      payload: w.payload as object,
    });

  it('acknowledges no write whose key did not settle: every 2xx replays on retry, and each key has at most one success and one event', async () => {
    // All at once, so that doomed and healthy writes share audit batches.
    const first = await Promise.all(WRITES.map((w, i) => send(w, `settle-${i}-first`)));
    // A write whose settlement failed is not acknowledged; the healthy ones went through (the test is not vacuous).
    expect(first.filter((_, i) => doomed(i)).map((r) => r.statusCode)).toEqual(WRITES.filter((_, i) => doomed(i)).map(() => 500));
    expect(first.filter((r, i) => !doomed(i)).map((r) => r.statusCode)).toEqual(WRITES.filter((_, i) => !doomed(i)).map(() => 200));

    await t.db.exec('DROP TRIGGER test_refuse_settlement ON idempotency_keys');
    const retries: LightMyRequestResponse[] = [];
    for (const [i, w] of WRITES.entries()) {
      let retry = await send(w, `settle-${i}-retry`);
      if (retry.statusCode === 409 && retry.headers['retry-after']) {
        // A key left in flight: after its lease, a retry takes it over (what a client that waits would see).
        await t.db.query(`UPDATE idempotency_keys SET locked_at = now() - interval '1 day' WHERE tenant_id = 'demo' AND state = 'in_flight'`);
        retry = await send(w, `settle-${i}-after-lease`);
      }
      retries.push(retry);
    }

    for (const [i, res] of first.entries()) {
      if (res.statusCode < 200 || res.statusCode >= 300) continue;
      expect({ write: WRITES[i]!.key, status: retries[i]!.statusCode, replayed: retries[i]!.headers['idempotent-replayed'], body: retries[i]!.body }).toEqual({
        write: WRITES[i]!.key,
        status: res.statusCode,
        replayed: 'true',
        body: res.body,
      });
    }

    const succeeded = await t.db.query<{ request_id: string }>(
      "SELECT request_id FROM audit_log WHERE tenant_id = 'demo' AND outcome = 'succeeded' AND request_id LIKE 'settle-%'",
    );
    const events = await t.db.query<{ request_id: string }>("SELECT request_id FROM outbox WHERE tenant_id = 'demo' AND request_id LIKE 'settle-%'");
    for (const [i, w] of WRITES.entries()) {
      const mine = (rows: { request_id: string }[]) => rows.filter((r) => r.request_id.startsWith(`settle-${i}-`)).length;
      expect({ write: w.key, succeeded: mine(succeeded.rows) <= 1, events: mine(events.rows) <= 1 }).toEqual({ write: w.key, succeeded: true, events: true });
    }
  });
});
