// Issue 20: one tenant's hanging receiver delayed every tenant's webhooks (0.1 s to 19.4 s). Here tenant
// `demo` has a receiver that never answers and 200 events waiting for it (written first, then queued at once
// by a replay, so that the clock of the hanging attempts starts after the slow part); tenant `demo-b` then
// writes 10 events. Asserted by count and order, not by the clock: every `demo-b` event arrives while `demo`'s first
// attempts still hang (they end only after the 60 s timeout), and `demo`'s receiver never sees more than the
// per-channel cap. The lag of each `demo-b` event (its event time to its arrival) is printed; it is bounded
// only well below the timeout that the old worker made it wait for, so that a loaded CI cannot fail it.
// On the embedded store, or on PostgreSQL when DATABASE_URL is set.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MasterKey } from '../../src/crypto/master-key.js';
import { CHANNEL_IN_FLIGHT } from '../../src/notify/deliveries.js';
import { LIMIT_URL, createTestDataDir, createTestDb, type TestDb } from '../helpers/app.js';
import { GatewayProcess } from '../helpers/gateway.js';
import { startReceiver, verifyWebhook, type Receiver } from '../helpers/receiver.js';
import { BUILD_TIMEOUT_MS, ensureBuilt } from '../helpers/spawn.js';

// The gateway processes run the compiled dist/ (helpers/process.ts): built, if stale, once before them.
beforeAll(ensureBuilt, BUILD_TIMEOUT_MS);

const PASSWORD = 'Webhook-Fairness-Passw0rd-20';
const TIMEOUT_MS = 60_000;
const BACKLOG = 200;
const OTHER = 10;

describe('one tenant hanging with 200 events waiting', () => {
  let rx: Receiver;
  let store: TestDb | undefined;
  let dataDir: string;
  let gw: GatewayProcess;

  beforeAll(async () => {
    rx = await startReceiver();
    // A store already migrated (the run's template): the first start is another test's subject.
    dataDir = await createTestDataDir('cardline-webhook-fairness-');
    const env: Record<string, string> = {
      CARDLINE_DATA_DIR: dataDir,
      CARDLINE_MASTER_KEY: MasterKey.generate(),
      CARDLINE_WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
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

  const channel = async (tenant: string, path: string) => {
    const res = await fetch(`${gw.base}/v1/admin/channels`, {
      method: 'POST',
      headers: { 'X-TENANT-ID': tenant, authorization: `Bearer ${await gw.token('admin', tenant)}`, 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'webhook', url: `${rx.base}${path}`, eventTypes: ['credit-limit.upgraded'] }),
    });
    expect(res.status).toBe(201);
    return ((await res.json()) as { result: { channelId: string; secret: string } }).result;
  };

  const upgrades = async (tenant: string, count: number, writers: number) => {
    const token = await gw.token('integration', tenant);
    let next = 0;
    await Promise.all(
      Array.from({ length: writers }, async (_, w) => {
        for (let i = next++; i < count; i = next++) {
          const res = await fetch(`${gw.base}${LIMIT_URL}`, {
            method: 'POST',
            headers: { TENANT: tenant, authorization: `Bearer ${token}`, 'content-type': 'application/json' },
            body: JSON.stringify({ entityId: ['ENT-1001', 'ENT-1002', 'ENT-1003'][w % 3], amount: `${60000 + i}.00` }),
          });
          expect(res.status).toBe(200);
        }
      }),
    );
  };

  it("another tenant's events are delivered at once; the hanging channel holds its cap of attempts, no more", async () => {
    const from = new Date(Date.now() - 1_000).toISOString();
    await upgrades('demo', BACKLOG, 3);
    const hung = await channel('demo', '/hang');
    rx.answer('/hang', 'hang');
    const replay = await fetch(`${gw.base}/v1/admin/channels/${hung.channelId}/replay`, {
      method: 'POST',
      headers: { 'X-TENANT-ID': 'demo', authorization: `Bearer ${await gw.token('admin')}`, 'content-type': 'application/json' },
      body: JSON.stringify({ from, to: new Date(Date.now() + 1_000).toISOString() }),
    });
    expect(await replay.json()).toEqual({ result: { message: `${BACKLOG} event(s) queued again`, requeued: BACKLOG }, pagination: null });
    const hanging = await rx.waitFor('/hang', CHANNEL_IN_FLIGHT, 60_000);
    const firstHangEnds = Math.min(...hanging.map((h) => h.at)) + TIMEOUT_MS;

    const other = await channel('demo-b', '/other');
    await upgrades('demo-b', OTHER, 2);
    const arrived = await rx.waitFor('/other', OTHER, 60_000);
    const lags = arrived.map((h) => h.at - Date.parse(verifyWebhook(other.secret, h).timestamp)).sort((a, b) => a - b);
    console.log(
      `webhook fairness: ${OTHER} events of demo-b with demo's receiver hanging and ${BACKLOG} of its events waiting: ` +
        `lag p50 ${lags[Math.floor(lags.length / 2)]} ms, max ${lags[lags.length - 1]} ms (event time to arrival)`,
    );

    // Every one arrived before any of the hanging attempts ended: nothing waited for them.
    expect(arrived).toHaveLength(OTHER);
    expect(Math.max(...arrived.map((h) => h.at))).toBeLessThan(firstHangEnds);
    // The hanging channel never had more than its cap under way, and its backlog still waits.
    expect(rx.at('/hang')).toHaveLength(CHANNEL_IN_FLIGHT);
    // Far below the timeout the old worker made every tenant wait for (a bound a loaded machine meets).
    expect(lags[lags.length - 1]).toBeLessThan(TIMEOUT_MS / 4);
  }, 300_000);
});
