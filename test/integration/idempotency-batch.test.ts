// First claims of Idempotency-Keys that arrive together are taken in one statement, each claim still getting
// its own answer: a new key is owned, a key another claim of the same batch took is in flight, a completed
// key replays.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IdempotencyStore } from '../../src/services/infrastructure/idempotency.js';
import type { Db } from '../../src/store/db.js';
import { migrate } from '../../src/store/migrate.js';
import { createTestDb, type TestDb } from '../helpers/app.js';

describe('IdempotencyStore: claims arriving together', () => {
  let testDb: TestDb;
  let db: Db;
  let store: IdempotencyStore;
  const inserts: string[] = [];

  beforeAll(async () => {
    testDb = await createTestDb();
    await migrate(testDb.db);
    // Counts the statements that take new keys.
    db = new Proxy(testDb.db, {
      get(target, prop, receiver) {
        if (prop === 'query') {
          return (sql: string, params?: unknown[]) => {
            if (/^\s*INSERT INTO idempotency_keys/.test(sql)) inserts.push(sql);
            return target.query(sql, params);
          };
        }
        return Reflect.get(target, prop, receiver) as unknown;
      },
    });
    store = new IdempotencyStore(db, { ttlHours: 24, leaseSeconds: 30, sweep: false });
  });
  afterAll(async () => {
    await testDb.drop();
  });

  it('forty new keys are taken by one statement, each claim its owner', async () => {
    inserts.length = 0;
    const claims = await Promise.all(Array.from({ length: 40 }, () => store.claim('demo', randomUUID(), 'fp')));
    expect(claims.map((c) => c.kind)).toEqual(Array(40).fill('owner'));
    expect(new Set(claims.map((c) => (c.kind === 'owner' ? c.token : ''))).size).toBe(40);
    expect(inserts).toHaveLength(1);
  });

  it('two claims of one key in one batch: one owns it, the other finds it in flight; once completed, it replays', async () => {
    const scope = randomUUID();
    const [a, b] = await Promise.all([store.claim('demo', scope, 'fp'), store.claim('demo', scope, 'fp')]);
    expect([a.kind, b.kind].sort()).toEqual(['in_flight', 'owner']);
    const owner = (a.kind === 'owner' ? a : b) as Extract<typeof a, { kind: 'owner' }>;
    expect(await store.complete('demo', scope, owner.token, { status: 200, contentType: 'application/json', body: '{"ok":true}' })).toBe(true);
    expect(await store.claim('demo', scope, 'fp')).toEqual({ kind: 'replay', response: { status: 200, contentType: 'application/json', body: '{"ok":true}', location: null } });
    expect(await store.claim('demo', scope, 'other')).toEqual({ kind: 'mismatch' });
  });
});
