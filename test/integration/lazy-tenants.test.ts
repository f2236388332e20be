// Many tenants in bounded memory (issue 21, decisions 0209 and 0210): a tenant's connector starts on its
// first call (readiness does not start it), and the key ring keeps the keys of at most its bound of tenants.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyRing } from '../../src/services/identity/key-ring.js';
import { MasterKey } from '../../src/crypto/master-key.js';
import { createTenant } from '../../src/services/tenancy/onboarding.js';
import { routesOf } from '../../src/services/connectors/routing.js';
import { TenantService } from '../../src/services/tenancy/tenants.js';
import { UserService } from '../../src/services/identity/users.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ env: { CARDLINE_CONNECTOR_INSTANCES_MAX: '1', CARDLINE_KEY_CACHE_MAX: '2' } });
});
afterAll(() => t?.close());

describe('connectors started on first use', () => {
  it("a tenant's connector is not started before its first call, nor by readiness, and is after", async () => {
    const connectors = t.app.cardline.connectors;
    const name = routesOf((await t.app.cardline.tenants.get('demo-b'))!.config).defaultName;
    expect(connectors.startedOf('demo-b', name)).toBeUndefined();
    const ready = await t.inject({ method: 'GET', url: '/health/ready' });
    expect(ready.statusCode, ready.body).toBe(200);
    expect(ready.json().degraded).toEqual([]);
    expect(connectors.startedOf('demo-b', name)).toBeUndefined();

    const token = await t.token('Admin', 'demo-b');
    const res = await t.inject({
      method: 'POST',
      url: '/v1/cards/CARD-3001/lock',
      headers: { authorization: `Bearer ${token}`, 'x-tenant-id': 'demo-b' },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(connectors.startedOf('demo-b', name)).toBeDefined();
    expect(connectors.size).toBeLessThanOrEqual(1);
  });
});

describe('key ring bound', () => {
  it('keeps at most its bound of keys imported; an evicted key is imported again, its set still cached', async () => {
    const masterKey = new MasterKey(MasterKey.generate());
    const ring = new KeyRing(t.db, masterKey, null, undefined, 2);
    const deps = { db: t.db, tenants: new TenantService(t.db, 0), keys: ring, users: new UserService(t.db) };
    for (const id of ['ring-a', 'ring-b', 'ring-c']) await createTenant(deps, { id });
    const a = await ring.forTenant('ring-a');
    const signing = await a.sig[0]!.privateKey();
    expect(await a.sig[0]!.privateKey()).toBe(signing);
    await (await ring.forTenant('ring-b')).sig[0]!.publicKey();
    await (await ring.forTenant('ring-c')).sig[0]!.publicKey();
    // Three sets (about 1 KB each, no native memory), two imported keys: ring-a's was the least recently used.
    expect(ring.cached()).toEqual({ sets: 3, imported: 2 });
    const imports = ring.imports;
    const again = await ring.forTenant('ring-a');
    expect(again).toBe(a);
    const reimported = await again.sig[0]!.privateKey();
    expect(reimported).not.toBe(signing);
    expect(ring.imports).toBe(imports + 1);
    expect(ring.cached()).toEqual({ sets: 3, imported: 2 });
    // The re-imported key still signs what the tenant's public key verifies.
    const { CompactSign, compactVerify } = await import('jose');
    const jws = await new CompactSign(new TextEncoder().encode('x')).setProtectedHeader({ alg: 'ES256' }).sign(reimported);
    await expect(compactVerify(jws, await again.sig[0]!.publicKey())).resolves.toBeTruthy();
  });

  it('does not keep a failed import (a wrong master key): the next use tries again', async () => {
    const ring = new KeyRing(t.db, new MasterKey(MasterKey.generate()));
    await createTenant({ db: t.db, tenants: new TenantService(t.db, 0), keys: ring, users: new UserService(t.db) }, { id: 'ring-wrong' });
    const wrong = new KeyRing(t.db, new MasterKey(MasterKey.generate()));
    const key = (await wrong.forTenant('ring-wrong')).sig[0]!;
    await expect(key.privateKey()).rejects.toThrow('Unsupported state or unable to authenticate data');
    await expect(key.privateKey()).rejects.toThrow('Unsupported state or unable to authenticate data');
    expect(wrong.imports).toBe(2);
    // The public half needs no master key: imported once, then kept.
    const pub = await key.publicKey();
    expect(await key.publicKey()).toBe(pub);
    expect(wrong.imports).toBe(3);
  });

  it('keeps the key sets of at most its bound of tenants; an evicted set is read again', async () => {
    const ring = new KeyRing(t.db, new MasterKey(MasterKey.generate()), null, undefined, 10, 2);
    const deps = { db: t.db, tenants: new TenantService(t.db, 0), keys: ring, users: new UserService(t.db) };
    for (const id of ['set-a', 'set-b', 'set-c']) await createTenant(deps, { id });
    const a = await ring.forTenant('set-a');
    await ring.forTenant('set-b');
    await ring.forTenant('set-c');
    expect(ring.cached().sets).toBe(2);
    const again = await ring.forTenant('set-a');
    expect(again).not.toBe(a);
    expect(again.sig.map((k) => k.kid)).toEqual(a.sig.map((k) => k.kid));
  });
});
