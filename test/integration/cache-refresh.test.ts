// Caches that refresh on change (decision 0071): with the production default (no expiry), a tenant's
// configuration and keys stay cached however long, a change told through the change feed is seen at once,
// and a reload re-imports only the keys it has not imported before.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createTenant } from '../../src/services/tenancy/tenant-admin.js';
import { TenantService } from '../../src/services/tenancy/tenants.js';
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
    const signing = await first.sig[0]!.privateKey();
    const before = keys.imports;
    // A change for the tenant evicts its keys: the reload finds the same kids and reuses their objects.
    t.app.cardline.changes.told({ kind: 'keys', tenantId: 'demo-b' });
    const again = await keys.forTenant('demo-b');
    expect(again).not.toBe(first);
    expect(await again.sig[0]!.privateKey()).toBe(signing);
    expect(keys.imports).toBe(before);
    // A rotation adds one signing key: nothing is imported before it is used, then that one alone.
    await keys.rotate('demo-b', 'sig', 3600);
    const rotated = await keys.forTenant('demo-b');
    expect(rotated.sig).toHaveLength(first.sig.length + 1);
    expect(keys.imports).toBe(before);
    await rotated.sig[0]!.privateKey();
    expect(await rotated.sig[1]!.privateKey()).toBe(signing);
    expect(keys.imports).toBe(before + 1);
  });
});

describe('cache bounds and changes told during a read', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { CARDLINE_TENANT_CACHE_TTL_MS: '' } });
  });
  afterAll(() => t?.close());
  afterEach(() => vi.restoreAllMocks());

  it('unknown tenant ids are remembered within their own bound and never push a tenant out', async () => {
    const tenants = new TenantService(t.db, null, undefined, 20);
    expect((await tenants.get('demo'))?.id).toBe('demo');
    for (let i = 0; i < 200; i++) expect(await tenants.get(`nobody-${i}`)).toBeNull();
    expect(tenants.cached()).toEqual({ tenants: 1, unknown: 20 });
    const query = vi.spyOn(t.db, 'query');
    // The tenant and the latest misses answer from the cache; an older miss was let go and is read again.
    expect((await tenants.get('demo'))?.id).toBe('demo');
    expect(await tenants.get('nobody-199')).toBeNull();
    expect(query).not.toHaveBeenCalled();
    expect(await tenants.get('nobody-0')).toBeNull();
    expect(query).toHaveBeenCalledTimes(1);
    expect(tenants.cached()).toEqual({ tenants: 1, unknown: 20 });
  });

  it('a tenant created after its id was a miss is found once the change is told', async () => {
    const tenants = t.app.cardline.tenants;
    expect(await tenants.get('late-bank')).toBeNull();
    await createTenant(t.app.cardline, { id: 'late-bank' });
    expect((await tenants.get('late-bank'))?.id).toBe('late-bank');
  });

  it('readiness lists tenants from the cache: only ids and versions are read, and in full only what changed', async () => {
    // A cache of its own: the gateway's cache hears of other tests' changes (on PostgreSQL through NOTIFY, which
    // may arrive at any moment) and would read those tenants again in the middle of the count.
    const tenants = new TenantService(t.db, null);
    const first = await tenants.listCurrent();
    expect(first.tenants.map((x) => x.id)).toEqual(expect.arrayContaining(['demo', 'demo-b']));
    const query = vi.spyOn(t.db, 'query');
    // Only the reads of the tenants table count: the gateway's background workers (deliveries, sweeps) share the store.
    const tenantReads = () => query.mock.calls.filter(([sql]) => /\bFROM tenants\b/.test(String(sql))).length;
    const again = await tenants.listCurrent();
    expect(tenantReads()).toBe(1);
    expect(again.tenants.find((x) => x.id === 'demo-b')).toBe(first.tenants.find((x) => x.id === 'demo-b'));
    // A change the cache was not told of still shows: its version moved.
    await t.db.query(`UPDATE tenants SET config = jsonb_set(config, '{creditLimit,maximum}', '"654.00"'), version = version + 1 WHERE tenant_id = 'demo-b'`);
    query.mockClear();
    const changed = await tenants.listCurrent();
    expect(tenantReads()).toBe(2);
    expect(changed.tenants.find((x) => x.id === 'demo-b')!.config.creditLimit.maximum).toBe('654.00');
    expect(changed.tenants.map((x) => x.id)).toEqual(again.tenants.map((x) => x.id));
    const ready = await t.inject({ method: 'GET', url: '/health/ready' });
    expect(ready.statusCode, ready.body).toBe(200);
  });

  /** Runs `during` once, after the next query of the store has read and before its caller sees the rows. */
  function onNextRead(during: () => void): void {
    const query = t.db.query.bind(t.db);
    let done = false;
    vi.spyOn(t.db, 'query').mockImplementation((async (...args: Parameters<typeof t.db.query>) => {
      const result = await query(...args);
      if (!done) {
        done = true;
        during();
      }
      return result;
    }) as typeof t.db.query);
  }

  it('a tenant read while a change to it is told is not cached: the next lookup reads the change', async () => {
    const tenants = t.app.cardline.tenants;
    tenants.invalidate('demo-b');
    onNextRead(() => {
      // The change commits and is told after the read saw the old row.
      tenants.invalidate('demo-b');
    });
    const read = await tenants.get('demo-b');
    vi.restoreAllMocks();
    await t.db.query(`UPDATE tenants SET config = jsonb_set(config, '{creditLimit,maximum}', '"321.00"') WHERE tenant_id = 'demo-b'`);
    expect(read!.config.creditLimit.maximum).not.toBe('321.00');
    expect((await tenants.get('demo-b'))!.config.creditLimit.maximum).toBe('321.00');
  });

  it('a user state read while a change to the user is told is not cached', async () => {
    const users = t.app.cardline.users;
    users.forget('demo', 'integration');
    onNextRead(() => users.forget('demo', 'integration'));
    const read = await users.state('demo', 'integration');
    vi.restoreAllMocks();
    expect(read?.disabled).toBe(false);
    await t.db.query(`UPDATE users SET disabled = true WHERE tenant_id = 'demo' AND username = 'integration'`);
    expect((await users.state('demo', 'integration'))?.disabled).toBe(true);
    await t.db.query(`UPDATE users SET disabled = false WHERE tenant_id = 'demo' AND username = 'integration'`);
    users.forget('demo', 'integration');
  });

  it('keys read while a rotation is told are not cached: the next lookup reads them again', async () => {
    const keys = t.app.cardline.keys;
    keys.invalidate('demo-b');
    onNextRead(() => keys.invalidate('demo-b'));
    await keys.forTenant('demo-b');
    vi.restoreAllMocks();
    const query = vi.spyOn(t.db, 'query');
    await keys.forTenant('demo-b');
    expect(query).toHaveBeenCalledTimes(1);
    // Read without a change meanwhile: cached.
    await keys.forTenant('demo-b');
    expect(query).toHaveBeenCalledTimes(1);
  });

  it('a client key read while a change is told is not cached', async () => {
    const clientKeys = t.app.cardline.clientKeys;
    clientKeys.invalidate('demo-b');
    onNextRead(() => clientKeys.invalidate('demo-b'));
    await clientKeys.get('demo-b');
    vi.restoreAllMocks();
    const query = vi.spyOn(t.db, 'query');
    await clientKeys.get('demo-b');
    await clientKeys.get('demo-b');
    expect(query).toHaveBeenCalledTimes(1);
  });
});
