// Saved checkpoints as `cardline audit verify --checkpoint` opens them (decision 0202): the forms a file may
// hold, and each reason one is refused, above all that nothing else the tenant's key signs (its tokens) passes
// for a checkpoint. And the publisher: the platform's trail left out, a tenant that fails reported, a bounded
// number of tenants per round.
import { CompactSign, compactVerify, decodeProtectedHeader, importJWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { trailRoot } from '../../src/audit/chain.js';
import { CHECKPOINT_TYP, CheckpointPublisher, latestCheckpoint, MAX_PER_ROUND, openCheckpoint, publishCheckpoint, type CheckpointPayload } from '../../src/audit/checkpoint.js';
import { SIG_ALG } from '../../src/crypto/keys.js';
import type { KeyRing } from '../../src/services/identity/key-ring.js';
import type { Db } from '../../src/store/db.js';
import { createTenant } from '../../src/services/tenancy/tenant-admin.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

describe('audit checkpoints', () => {
  let t: TestApp;
  let db: Db;
  let keys: KeyRing;

  beforeAll(async () => {
    t = await createTestApp();
    db = t.db;
    keys = t.app.cardline.keys;
    // A record or two in the trail (an audited call).
    await t.inject({ method: 'POST', url: '/api/authenticate', headers: { TENANT: 'demo' }, payload: { username: 'nobody', password: 'x' } });
  }, 180_000);
  afterAll(() => t.close());

  /** Signs a payload with demo's active key, as a checkpoint (or with another `typ`). */
  async function sign(payload: unknown, typ = CHECKPOINT_TYP): Promise<string> {
    const key = (await keys.forTenant('demo')).sig.find((k) => k.status === 'active')!;
    return new CompactSign(new TextEncoder().encode(JSON.stringify(payload)))
      .setProtectedHeader({ alg: SIG_ALG, kid: key.kid, typ })
      .sign(await key.privateKey());
  }

  it('opens the API answer, the checkpoint object or the bare JWS, and returns what was signed', async () => {
    const checkpoint = await publishCheckpoint(db, keys, 'demo');
    const { kid: _kid, jws, ...signed } = checkpoint;
    for (const text of [JSON.stringify({ result: checkpoint, pagination: null }), JSON.stringify(checkpoint), `${jws}\n`]) {
      expect(await openCheckpoint(db, 'demo', text)).toEqual(signed);
    }
  });

  it('a checkpoint signed with a key retired since still opens: the key proves what it signed', async () => {
    const checkpoint = await publishCheckpoint(db, keys, 'demo');
    const { kid, jws, ...signed } = checkpoint;
    await db.query("UPDATE keys SET status = 'retired' WHERE tenant_id = 'demo' AND kid = $1", [kid]);
    try {
      expect(await openCheckpoint(db, 'demo', jws)).toEqual(signed);
    } finally {
      await db.query("UPDATE keys SET status = 'active' WHERE tenant_id = 'demo' AND kid = $1", [kid]);
    }
  });

  it('refuses each kind of file that is not a checkpoint of this tenant, with its reason', async () => {
    const { jws, kid } = await publishCheckpoint(db, keys, 'demo');
    const refusal = (tenant: string, text: string) => openCheckpoint(db, tenant, text).then(() => 'opened', (err: Error) => `${err.name}: ${err.message}`);
    const token = await t.token('Admin');
    const chains = [{ chain: 'c1', size: 2, head: 'a'.repeat(64) }];
    const wrongRoot: CheckpointPayload = { tenantId: 'demo', at: new Date().toISOString(), size: 2, root: 'b'.repeat(64), chains };
    const otherTenant: CheckpointPayload = { tenantId: 'demo-b', at: new Date().toISOString(), size: 2, root: trailRoot('demo-b', chains), chains };
    expect({
      notJson: await refusal('demo', '{"result": '),
      noJws: await refusal('demo', '{"result":{"size":3}}'),
      notCompact: await refusal('demo', 'eyJhbGciOiJFUzI1NiJ9.e30'),
      // A token of the tenant, signed with the very key: its `typ` is not a checkpoint's.
      token: await refusal('demo', token),
      otherTenantsKey: await refusal('demo-b', jws),
      wrongRoot: await refusal('demo', await sign(wrongRoot)),
      otherTenant: await refusal('demo', await sign(otherTenant)),
    }).toEqual({
      notJson: 'CheckpointError: the file is neither JSON nor a compact JWS',
      noJws: 'CheckpointError: the file holds no `jws` field',
      notCompact: 'CheckpointError: the checkpoint is not a compact JWS',
      token: 'CheckpointError: the JWS is not a Cardline audit checkpoint (typ JWT, alg ES256)',
      otherTenantsKey: `CheckpointError: tenant 'demo-b' has no signing key '${kid}'`,
      wrongRoot: "CheckpointError: the checkpoint's chains do not make its root",
      otherTenant: "CheckpointError: the checkpoint is of tenant 'demo-b', not 'demo'",
    });
  });

  it('the publisher signs for the tenants written to, leaves the platform out, reports a failure, and bounds a round', async () => {
    await db.query('DELETE FROM audit_checkpoints');
    const failed: string[] = [];
    const publisher = new CheckpointPublisher(db, keys, 0, (tenant) => void failed.push(tenant));
    const ghosts = Array.from({ length: MAX_PER_ROUND }, (_, i) => `ghost-${i}`);
    publisher.wrote(['_platform', 'demo', ...ghosts]);
    await publisher.publishDirty();
    // MAX_PER_ROUND tenants taken: the platform (skipped, not a failure), demo, and all ghosts but the last.
    const stored = async () => (await db.query<{ tenant_id: string }>('SELECT tenant_id FROM audit_checkpoints ORDER BY 1')).rows.map((r) => r.tenant_id);
    expect({ stored: await stored(), failed: failed.length }).toEqual({ stored: ['demo'], failed: MAX_PER_ROUND - 2 });
    await publisher.publishDirty();
    expect({ stored: await stored(), failed: failed.length, last: failed.at(-1) }).toEqual({ stored: ['demo'], failed: MAX_PER_ROUND, last: ghosts.at(-1) });
    await publisher.publishDirty();
    expect(failed.length).toBe(MAX_PER_ROUND);
    await publisher.stop();
  });

  it('a round signs each tenant with its own key: every checkpoint verifies with the key the JWKS publishes, leaving imported keys alone', async () => {
    const many = Array.from({ length: 12 }, (_, i) => `many-${i}`);
    for (const id of many) await createTenant(t.app.cardline, { id, config: { connector: { id: 'mock', options: { fixtures: 'demo' } } } });
    const imported = keys.cached().imported;
    const failed: string[] = [];
    const publisher = new CheckpointPublisher(db, keys, 0, (tenant) => void failed.push(tenant));
    publisher.wrote(many);
    await publisher.publishDirty();
    await publisher.stop();
    // Signing goes through no imported key object (decision 0435): the tokens' keys are not evicted for it.
    expect({ failed, imported: keys.cached().imported }).toEqual({ failed: [], imported });
    for (const id of many) {
      const checkpoint = (await latestCheckpoint(db, id))!;
      const jwks = (await t.inject({ method: 'GET', url: '/.well-known/jwks.json', headers: { TENANT: id } })).json<{ keys: { kid: string }[] }>();
      const published = jwks.keys.find((k) => k.kid === checkpoint.kid)!;
      const { payload, protectedHeader } = await compactVerify(checkpoint.jws, await importJWK(published, SIG_ALG), { algorithms: [SIG_ALG] });
      const { kid: _kid, jws: _jws, ...signed } = checkpoint;
      expect({ header: protectedHeader, payload: JSON.parse(new TextDecoder().decode(payload)) }).toEqual({
        header: { alg: SIG_ALG, kid: checkpoint.kid, typ: CHECKPOINT_TYP },
        payload: { ...signed, tenantId: id },
      });
      expect(decodeProtectedHeader(checkpoint.jws).kid).toBe(checkpoint.kid);
      expect(await openCheckpoint(db, id, checkpoint.jws)).toEqual(signed);
    }
  });
});
