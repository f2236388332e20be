// The nats channel against a real NATS JetStream server (NATS_URL; .ci/run sets it where one answers): the
// gateway creates its stream, publishes each event on `<prefix>.<tenantId>.<eventType>` with the event id as
// Nats-Msg-Id, and a consumer receives each event exactly once despite forced redeliveries (a retry, a
// replay). Each run uses a stream and subject prefix of its own, deleted afterwards.
import { randomBytes } from 'node:crypto';
import { jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMIT_URL, createTestApp, type TestApp } from '../helpers/app.js';
import { sleep } from '../helpers/process.js';

const NATS_URL = process.env.NATS_URL;
if (!NATS_URL) console.warn('SKIPPED the NATS JetStream tests: NATS_URL is not set');

describe.runIf(NATS_URL)('nats channel (NATS_URL)', () => {
  const run = randomBytes(4).toString('hex');
  const stream = `CARDLINE_TEST_${run}`;
  const prefix = `cltest${run}`;
  let t: TestApp;
  let nc: NatsConnection;
  let jsm: JetStreamManager;

  beforeAll(async () => {
    nc = await connect({ servers: NATS_URL!, timeout: 3_000 });
    jsm = await jetstreamManager(nc);
    t = await createTestApp({
      env: { NATS_URL, CARDLINE_NATS_STREAM: stream, CARDLINE_NATS_SUBJECT_PREFIX: prefix, CARDLINE_DELIVERY_WORKER: '1', CARDLINE_DELIVERY_POLL_MS: '20' },
    });
  });
  afterAll(async () => {
    await t?.close();
    await jsm?.streams.delete(stream).catch(() => undefined);
    await nc?.close();
  });

  const admin = async () => ({ 'X-TENANT-ID': 'demo', authorization: `Bearer ${await t.token('Admin')}` });

  /** Every message the stream holds, read by an ordered consumer from the start. */
  const readAll = async () => {
    const consumer = await jetstream(nc).consumers.get(stream);
    const out: { subject: string; msgId: string | undefined; body: unknown }[] = [];
    const info = await jsm.streams.info(stream);
    if (info.state.messages === 0) return out;
    const batch = await consumer.fetch({ max_messages: 1_000, expires: 1_000 });
    for await (const m of batch) {
      out.push({ subject: m.subject, msgId: m.headers?.get('Nats-Msg-Id'), body: m.json() });
      if (m.info.pending === 0) break;
    }
    return out;
  };

  it('publishes each event once per stream despite forced redelivery', async () => {
    await expect(jsm.streams.info(stream)).rejects.toThrow(/not found/i);
    const created = await t.inject({ method: 'POST', url: '/v1/admin/channels', headers: await admin(), payload: { type: 'nats', eventTypes: ['credit-limit.upgraded'] } });
    expect(created.statusCode, created.body).toBe(201);
    const channel = created.json().result;
    expect(channel).toEqual(expect.objectContaining({ type: 'nats', subject: `${prefix}.demo.<eventType>`, enabled: true }));
    expect(channel.secret).toBeUndefined();

    const from = new Date().toISOString();
    for (const amount of ['61000.00', '62000.00']) {
      const res = await t.inject({
        method: 'POST',
        url: LIMIT_URL,
        headers: { TENANT: 'demo', authorization: `Bearer ${await t.token('API Integration')}` },
        payload: { entityId: 'ENT-1003', amount },
      });
      expect(res.statusCode).toBe(200);
    }
    const list = async () => (await t.inject({ method: 'GET', url: `/v1/admin/channels/${channel.channelId}/deliveries`, headers: await admin() })).json().result;
    let deliveries = await list();
    for (let i = 0; i < 200 && !(deliveries.length === 2 && deliveries.every((d: { status: string }) => d.status === 'delivered')); i++) {
      await sleep(25);
      deliveries = await list();
    }
    expect(deliveries.map((d: { status: string }) => d.status)).toEqual(['delivered', 'delivered']);
    // The gateway created the stream.
    expect((await jsm.streams.info(stream)).config.subjects).toEqual([`${prefix}.>`]);

    // Forced redeliveries: a retry of a delivered event, and a replay of both.
    const retried = await t.inject({ method: 'POST', url: `/v1/admin/deliveries/${deliveries[0].deliveryId}/retry`, headers: await admin() });
    expect(retried.json().result).toEqual(expect.objectContaining({ status: 'delivered', attemptCount: 2 }));
    const replayed = await t.inject({
      method: 'POST',
      url: `/v1/admin/channels/${channel.channelId}/replay`,
      headers: await admin(),
      payload: { from, to: new Date(Date.now() + 1000).toISOString() },
    });
    expect(replayed.json().result.requeued).toBe(2);
    for (let i = 0; i < 200; i++) {
      const d = await list();
      if (d.every((x: { status: string; attemptCount: number }) => x.status === 'delivered' && x.attemptCount === 1)) break;
      await sleep(25);
    }

    const messages = await readAll();
    expect(messages).toHaveLength(2);
    expect(messages.map((m) => m.msgId).sort()).toEqual(deliveries.map((d: { eventId: string }) => d.eventId).sort());
    expect(messages.map((m) => m.subject)).toEqual([`${prefix}.demo.credit-limit.upgraded`, `${prefix}.demo.credit-limit.upgraded`]);
    // Channels do not promise order (docs/api.md, Webhooks): up to four deliveries of a channel are in flight at once.
    const byLimit = (b: { data: { newLimit: string } }) => b.data.newLimit;
    expect(messages.map((m) => m.body as { data: { newLimit: string } }).sort((a, b) => byLimit(a).localeCompare(byLimit(b)))).toEqual([
      { type: 'credit-limit.upgraded', timestamp: expect.any(String), data: { entityId: 'ENT-1003', previousLimit: '50000.00', newLimit: '61000.00' } },
      { type: 'credit-limit.upgraded', timestamp: expect.any(String), data: { entityId: 'ENT-1003', previousLimit: '61000.00', newLimit: '62000.00' } },
    ]);
  });

  it('POST /test publishes a channel.test event', async () => {
    const created = await t.inject({ method: 'POST', url: '/v1/admin/channels', headers: await admin(), payload: { type: 'nats', eventTypes: ['card.blocked'] } });
    const res = await t.inject({ method: 'POST', url: `/v1/admin/channels/${created.json().result.channelId}/test`, headers: await admin() });
    expect(res.json().result).toEqual(expect.objectContaining({ eventType: 'channel.test', status: 'delivered' }));
    const messages = await readAll();
    expect(messages.at(-1)).toEqual({ subject: `${prefix}.demo.channel.test`, msgId: res.json().result.eventId, body: expect.objectContaining({ type: 'channel.test' }) });
  });
});
