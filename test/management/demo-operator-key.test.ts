// The demo's operator key across restarts (issue 20, point 4): a revoked demo key stays revoked, and the
// demo starts all the same (it used to stop on SQLSTATE 23505 and restart in a loop).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_OPERATOR, seedDemoOperatorKey } from '../../src/services/tenancy/onboarding.js';
import type { OperatorKeys } from '../../src/services/identity/operator-keys.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

const CHOSEN = 'clop_demo-restart-operator-key-0001';

describe('the demo operator key at a restart', () => {
  let t: TestApp;
  let keys: OperatorKeys;
  beforeAll(async () => {
    t = await createTestApp();
    keys = t.app.cardline.operatorKeys;
  });
  afterAll(() => t?.close());

  it('a chosen key, revoked, stays revoked at the next start, which goes on', async () => {
    expect(await seedDemoOperatorKey(keys, CHOSEN)).toEqual({ outcome: 'created', key: null });
    expect(await seedDemoOperatorKey(keys, CHOSEN)).toEqual({ outcome: 'kept', key: null });
    expect(await keys.revoke(DEMO_OPERATOR)).toBe(true);

    expect(await seedDemoOperatorKey(keys, CHOSEN)).toEqual({ outcome: 'revoked', key: null });
    expect(await keys.verify(CHOSEN)).toBeNull();
    expect(await keys.get(DEMO_OPERATOR)).toBeNull();
    // And again: a second restart is no different.
    expect(await seedDemoOperatorKey(keys, CHOSEN)).toEqual({ outcome: 'revoked', key: null });
  });

  it('a random key, revoked, is not replaced by a new one at the next start', async () => {
    const fresh = await seedDemoOperatorKey(keys, 'clop_demo-restart-operator-key-0002');
    expect(fresh).toEqual({ outcome: 'created', key: null });
    expect(await keys.revoke(DEMO_OPERATOR)).toBe(true);
    expect(await seedDemoOperatorKey(keys, undefined)).toEqual({ outcome: 'revoked', key: null });
    expect(await keys.get(DEMO_OPERATOR)).toBeNull();
  });

  it('a new chosen key, never revoked, becomes the demo key after a revocation', async () => {
    const next = 'clop_demo-restart-operator-key-0003';
    expect(await seedDemoOperatorKey(keys, next)).toEqual({ outcome: 'created', key: null });
    expect(await keys.verify(next)).toEqual({ name: DEMO_OPERATOR });
    expect(await keys.verify(CHOSEN)).toBeNull();
  });

  it('one name revoked twice within a second: both revocations are kept (their rows no longer collide)', async () => {
    for (let i = 0; i < 2; i++) {
      await keys.create('twice');
      expect(await keys.revoke('twice')).toBe(true);
    }
    expect(await keys.get('twice')).toBeNull();
    expect(await keys.wasRevoked('twice')).toBe(true);
    expect(await keys.wasRevoked('never')).toBe(false);
  });

  it('a chosen key that is another operator\'s key is not taken over', async () => {
    const other = 'clop_someone-elses-operator-key-0004';
    await keys.create('alice-ops', other);
    expect(await seedDemoOperatorKey(keys, other)).toEqual({ outcome: 'taken', key: null });
    expect(await keys.verify(other)).toEqual({ name: 'alice-ops' });
  });
});

describe('the demo operator key on a fresh store', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t?.close());

  it('without a chosen key: a random one, shown once; kept at the next start', async () => {
    const keys = t.app.cardline.operatorKeys;
    const first = await seedDemoOperatorKey(keys, undefined);
    expect(first.outcome).toBe('created');
    expect(first.key).toMatch(/^clop_[\w-]{43}$/);
    expect(await keys.verify(first.key!)).toEqual({ name: DEMO_OPERATOR });
    expect(await seedDemoOperatorKey(keys, undefined)).toEqual({ outcome: 'kept', key: null });
  });
});
