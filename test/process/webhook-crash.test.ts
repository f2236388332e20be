// At least once across a crash: the gateway is SIGKILLed while a webhook attempt is under way (claimed, sent,
// not yet acknowledged: the receiver holds the request), restarted on the same store, and the event is
// delivered again after the claim's lease, with the same webhook-id and a signature standardwebhooks accepts.
// On the embedded store, or on PostgreSQL when DATABASE_URL is set.
import { rmSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MasterKey } from '../../src/crypto/master-key.js';
import { LIMIT_URL, createTestDataDir, createTestDb, type TestDb } from '../helpers/app.js';
import { GatewayProcess } from '../helpers/gateway.js';
import { sleep, within } from '../helpers/process.js';
import { startReceiver, verifyWebhook, type Receiver } from '../helpers/receiver.js';
import { BUILD_TIMEOUT_MS, ensureBuilt } from '../helpers/spawn.js';

// The gateway processes run the compiled dist/ (helpers/process.ts): built, if stale, once before them.
beforeAll(ensureBuilt, BUILD_TIMEOUT_MS);

const PASSWORD = 'Webhook-Crash-Passw0rd-41';

describe('a gateway killed between claim and acknowledgement', () => {
  let rx: Receiver;
  let store: TestDb | undefined;
  let dataDir: string;
  let gw: GatewayProcess;

  beforeAll(async () => {
    rx = await startReceiver();
    // A store already migrated (the run's template): the first start is another test's subject.
    dataDir = await createTestDataDir('cardline-webhook-crash-');
    const env: Record<string, string> = {
      CARDLINE_DATA_DIR: dataDir,
      CARDLINE_MASTER_KEY: MasterKey.generate(),
      // An attempt may take 5 s, so a claim holds 10 s: the restarted gateway takes the delivery over then. (With
      // 1.5 s, an attempt the loaded machine stretched to 3.2 s outlived its 3 s claim and was claimed again.)
      CARDLINE_WEBHOOK_TIMEOUT_MS: '5000',
      CARDLINE_DELIVERY_POLL_MS: '50',
    };
    if (process.env.DATABASE_URL) {
      store = await createTestDb();
      env.DATABASE_URL = store.url!;
    }
    gw = new GatewayProcess(env, PASSWORD);
    await gw.start();
  }, 300_000);

  afterAll(async () => {
    await gw?.kill();
    await rx?.close();
    await store?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('redelivers after restart with the same webhook-id', async () => {
    const admin = await gw.token('admin');
    const created = await gw.call('POST', '/v1/admin/channels', admin, { type: 'webhook', url: `${rx.base}/crash`, eventTypes: ['credit-limit.upgraded'] });
    expect(created.status).toBe(201);
    const { channelId, secret } = created.json.result;
    rx.answer('/crash', 'hang');

    const integration = await gw.token('integration');
    const write = await fetch(`${gw.base}${LIMIT_URL}`, {
      method: 'POST',
      headers: { TENANT: 'demo', authorization: `Bearer ${integration}`, 'content-type': 'application/json' },
      body: JSON.stringify({ entityId: 'ENT-1001', amount: '70000.00' }),
    });
    expect(write.status).toBe(200);
    // The attempt is under way: claimed, sent, and held by the receiver.
    const [first] = await rx.waitFor('/crash', 1, 120_000);
    gw.proc!.child.kill('SIGKILL');
    await within(gw.proc!.exited, 150_000, 'exit after SIGKILL');
    rx.answer('/crash', { status: 200 });
    // A killed gateway's lock on the embedded store goes stale after 30 s (src/store/db.ts): aged here.
    if (!store) {
      const past = new Date(Date.now() - 60_000);
      utimesSync(join(dataDir, 'pglite', 'cardline.lock'), past, past);
    }

    await gw.start();
    const [, second] = await rx.waitFor('/crash', 2, 120_000);
    expect(second!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
    expect(verifyWebhook(secret, second!)).toEqual({
      type: 'credit-limit.upgraded',
      timestamp: expect.any(String),
      data: { entityId: 'ENT-1001', previousLimit: '50000.00', newLimit: '70000.00' },
    });

    const admin2 = await gw.token('admin');
    let page: { result: { status: string; attemptCount: number; webhookId: string; attempts: unknown[] }[] } | undefined;
    for (let i = 0; i < 600; i++) {
      page = (await gw.call('GET', `/v1/admin/channels/${channelId}/deliveries`, admin2)).json;
      if (page!.result[0]?.status === 'delivered') break;
      await sleep(100);
    }
    // Two attempts were made; the one the crash interrupted left no record of how it ended.
    expect(page!.result).toEqual([
      expect.objectContaining({ status: 'delivered', attemptCount: 2, webhookId: first!.headers['webhook-id'], attempts: [expect.objectContaining({ n: 2, statusCode: 200 })] }),
    ]);
    // Delivered is final, and the second request arrived before it settled: nothing more can come.
    expect(rx.at('/crash')).toHaveLength(2);
  }, 300_000);
});
