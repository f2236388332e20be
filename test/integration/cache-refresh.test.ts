// Caches that refresh on change (decision 0071): with the production default (no expiry), a tenant's
// configuration and keys stay cached however long, a change told through the change feed is seen at once,
// and a reload re-imports only the keys it has not imported before.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

describe('tenant and key caches without expiry', () => {
  let t: TestApp;
  let operator: string;
  beforeAll(async () => {
    // '' is the production default: cached until a change is told.
    t = await createTestApp({ env: { CARDLINE_TENANT_CACHE_TTL_MS: '' } });
    operator = await t.operatorKey('cache-operator');
  });
  afterAll(() => t?.close());

  it('the default keeps entries until a change; a number adds an expiry; 0 caches nothing', () => {
    expect(loadConfig({}).tenantCacheTtlMs).toBeNull();
    expect(loadConfig({ CARDLINE_TENANT_CACHE_TTL_MS: '60000' }).tenantCacheTtlMs).toBe(60_000);
    expect(loadConfig({ CARDLINE_TENANT_CACHE_TTL_MS: '0' }).tenantCacheTtlMs).toBe(0);
  });

  it('a change made behind the gateway\'s back is not seen; a change told through the feed is, at once', async () => {
    const tenants = t.app.cardline.tenants;
    expect((await tenants.get('demo'))!.config.creditLimit.maximum).toBe('1000000.00');
    // Behind its back (no change told): the cached configuration stays, past the old 5 s expiry too.
    await t.db.query(`UPDATE tenants SET config = jsonb_set(config, '{creditLimit,maximum}', '"123.00"') WHERE tenant_id = 'demo'`);
    // The clock the cache reads moved 6 s on: an expiring cache (the old 5 s default) would reload here.
    const realNow = performance.now.bind(performance);
    performance.now = () => realNow() + 6_000;
    try {
      expect((await tenants.get('demo'))!.config.creditLimit.maximum).toBe('1000000.00');
    } finally {
      performance.now = realNow;
    }
    // Through the management API: told, and seen by the next request.
    const m = await t.management();
    const patched = await m.inject({
      method: 'PATCH',
      url: '/v1/tenants/demo',
      headers: { authorization: `Bearer ${operator}` },
      payload: { config: { creditLimit: { maximum: '2000000.00' } } },
    });
    expect(patched.statusCode, patched.body).toBe(200);
    expect((await tenants.get('demo'))!.config.creditLimit.maximum).toBe('2000000.00');
  });

  it('a reload of a tenant\'s keys imports only keys it has not imported before', async () => {
    const keys = t.app.cardline.keys;
    const first = await keys.forTenant('demo-b');
    const loaded = first.enc.length + first.sig.length;
    expect(loaded).toBeGreaterThan(0);
    const before = keys.imports;
    // A change for the tenant evicts its keys: the reload finds the same kids and reuses their objects.
    t.app.cardline.changes.told({ kind: 'keys', tenantId: 'demo-b' });
    const again = await keys.forTenant('demo-b');
    expect(again).not.toBe(first);
    expect(again.sig[0]!.privateKey).toBe(first.sig[0]!.privateKey);
    expect(keys.imports).toBe(before);
    // A rotation adds one signing key: the reload imports that one alone.
    await keys.rotate('demo-b', 'sig', 3600);
    const rotated = await keys.forTenant('demo-b');
    expect(rotated.sig).toHaveLength(first.sig.length + 1);
    expect(keys.imports).toBe(before + 1);
  });
});
