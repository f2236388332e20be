// The rabbitmq channel against a real RabbitMQ (RABBITMQ_URL; .ci/run sets it where one answers): the gateway
// publishes each event to the channel's exchange with a routing key per event type and the event id as message
// id, records it delivered once the broker confirms it; a missing exchange, refused credentials or a broker's nack
// is a failed attempt, retried on the schedule until fixed; a replay sends delivered events again. One connection
// per broker, reused, closed at shutdown. Each test uses exchanges and queues of its own, deleted afterwards.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import amqp, { type Channel, type ChannelModel, type ConsumeMessage } from 'amqplib';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Cardline } from '@cardline/sdk';
import { RabbitmqSender } from '../../src/notify/channel-types/rabbitmq.js';
import type { DeliveryChannel, OutgoingEvent } from '../../src/notify/channel-types/type.js';
import { loggerOptions } from '../../src/logging.js';
import { LIMIT_URL, PASSWORD, createTestApp, type TestApp } from '../helpers/app.js';
import { sleep } from '../helpers/process.js';

const RABBITMQ_URL = process.env.RABBITMQ_URL;
if (!RABBITMQ_URL) console.warn('SKIPPED the RabbitMQ tests: RABBITMQ_URL is not set');

const AsyncFunction = Object.getPrototypeOf(async () => undefined).constructor as new (...args: string[]) => (...a: unknown[]) => Promise<void>;

const run = randomBytes(4).toString('hex');
let names = 0;
/** An exchange or queue name of this run's own. */
const fresh = (what: string) => `cltest.${run}.${what}.${++names}`;

/** Polls until `check` holds; the bound only ends a broken run. */
const eventually = async <T>(what: string, read: () => Promise<T>, check: (v: T) => boolean, ms = 60_000): Promise<T> => {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (check(v)) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms (last: ${JSON.stringify(v)})`);
    await sleep(25);
  }
};

describe.runIf(RABBITMQ_URL)('rabbitmq channel (RABBITMQ_URL)', () => {
  let t: TestApp;
  let broker: ChannelModel;
  let ch: Channel;
  const logs: string[] = [];
  const exchanges: string[] = [];
  const queues: string[] = [];
  const wrongPassword = `Wr0ng-${run}-pa55`;
  const withPassword = (password: string) => {
    const url = new URL(RABBITMQ_URL!);
    url.password = password;
    return url.toString();
  };

  beforeAll(async () => {
    broker = await amqp.connect(RABBITMQ_URL!);
    ch = await broker.createChannel();
    const stream = { write: (line: string) => void logs.push(line) };
    t = await createTestApp({
      env: {
        CARDLINE_DELIVERY_WORKER: '1',
        CARDLINE_DELIVERY_POLL_MS: '20',
        // The whole schedule (27 h 35 min) in about 20 s: a fix made after the first failures lands within it.
        CARDLINE_DELIVERY_SCHEDULE_SCALE: '0.0002',
        CARDLINE_WEBHOOK_TIMEOUT_MS: '5000',
        LOG_LEVEL: 'trace',
      },
      logger: pino(loggerOptions('trace'), stream),
    });
  });
  afterEach(async () => {
    for (const q of queues.splice(0)) await ch.deleteQueue(q).catch(() => undefined);
    for (const e of exchanges.splice(0)) await ch.deleteExchange(e).catch(() => undefined);
  });
  afterAll(async () => {
    await t?.close();
    // Nothing the gateway logged holds a broker password (the broker's own, or a wrong one it was given).
    const password = new URL(RABBITMQ_URL!).password;
    for (const secret of [wrongPassword, ...(password.length >= 6 ? [password] : [])]) expect(logs.join('\n')).not.toContain(secret);
    await broker?.close();
  });

  const admin = async () => ({ 'X-TENANT-ID': 'demo', authorization: `Bearer ${await t.token('Admin')}` });
  const call = async (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown) =>
    t.inject({ method, url, headers: await admin(), ...(payload === undefined ? {} : { payload: payload as object }) });

  const channel = async (body: Record<string, unknown>) => {
    const res = await call('POST', '/v1/admin/channels', { type: 'rabbitmq', url: RABBITMQ_URL, eventTypes: ['credit-limit.upgraded'], ...body });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().result as { channelId: string; url: string; secret?: string; routingKey: string };
  };

  /** A queue bound to `exchange` (with `pattern`), and what arrives on it. */
  const consume = async (exchange: string, pattern: string, args: Record<string, unknown> = {}) => {
    const queue = fresh('q');
    queues.push(queue);
    await ch.assertQueue(queue, { durable: false, arguments: args });
    await ch.bindQueue(queue, exchange, pattern);
    const got: ConsumeMessage[] = [];
    await ch.consume(queue, (m) => m && (got.push(m), ch.ack(m)));
    return got;
  };

  let amount = 70_000;
  const upgradeLimit = async () => {
    amount += 10;
    const res = await t.inject({
      method: 'POST',
      url: LIMIT_URL,
      headers: { TENANT: 'demo', authorization: `Bearer ${await t.token('API Integration')}` },
      payload: { entityId: 'ENT-1001', amount: `${amount}.00` },
    });
    expect(res.statusCode, res.body).toBe(200);
    return `${amount}.00`;
  };

  const deliveries = async (channelId: string) => (await call('GET', `/v1/admin/channels/${channelId}/deliveries`)).json().result as {
    deliveryId: string;
    eventId: string;
    status: string;
    attemptCount: number;
    attempts: { error: string | null; statusCode: number | null }[];
  }[];

  it("the README's example: the SDK creates a channel, and a consumer gets each event with its routing key and id", async () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const block = /<!-- rabbitmq-channel:[^\n]*\n```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(block).toBeDefined();
    const exchange = fresh('readme');
    exchanges.push(exchange);
    const baseUrl = await t.app.listen({ host: '127.0.0.1', port: 0 });
    const body = block!
      .split('\n')
      .filter((l) => !l.startsWith('import '))
      .join('\n')
      .replace("'http://localhost:8080'", JSON.stringify(baseUrl))
      .replaceAll("'amqp://guest:guest@127.0.0.1:5672'", JSON.stringify(RABBITMQ_URL))
      .replaceAll("'cardline.events'", JSON.stringify(exchange));
    const printed: unknown[][] = [];
    const opened: ChannelModel[] = [];
    const consumerAmqp = { connect: async (url: string) => opened.push(await amqp.connect(url)) && opened.at(-1)! };
    try {
      await new AsyncFunction('amqp', 'Cardline', 'process', 'console', body)(consumerAmqp, Cardline, { env: { CARDLINE_DEMO_PASSWORD: PASSWORD } }, {
        log: (...v: unknown[]) => printed.push(v),
      });
      const shown = new URL(RABBITMQ_URL!);
      shown.username = '';
      shown.password = '';
      expect(printed).toEqual([[shown.toString(), '<eventType>']]);
      const newLimit = await upgradeLimit();
      await eventually('the consumer printed the event', async () => printed.length, (n) => n === 2);
      expect(printed[1]).toEqual([
        'credit-limit.upgraded',
        expect.stringMatching(/^[0-9a-f-]{36}$/),
        { type: 'credit-limit.upgraded', timestamp: expect.any(String), data: { entityId: 'ENT-1001', previousLimit: expect.any(String), newLimit } },
      ]);
    } finally {
      for (const c of (await t.app.cardline.channels.page('demo', { limit: 200, after: null })).items) {
        if (c.exchange === exchange) await t.app.cardline.channels.remove('demo', c.channelId);
      }
      for (const c of opened) await c.close().catch(() => undefined);
    }
  });

  it('delivers: a consumer bound to the exchange gets the event with its routing key and message id, once confirmed', async () => {
    const exchange = fresh('ex');
    exchanges.push(exchange);
    const created = await channel({ exchange, exchangeType: 'topic', routingKeyPrefix: 'bank.cards' });
    // The broker URL's credentials are never shown.
    expect(created).toEqual(expect.objectContaining({ type: 'rabbitmq', exchange, exchangeType: 'topic', routingKey: 'bank.cards.<eventType>' }));
    expect(created.secret).toBeUndefined();
    const shown = new URL(created.url);
    expect([shown.username, shown.password]).toEqual(['', '']);

    // The exchange is the gateway's to declare; the consumer's declaration must agree with it.
    await ch.assertExchange(exchange, 'topic', { durable: true });
    const got = await consume(exchange, 'bank.cards.credit-limit.#');
    const newLimit = await upgradeLimit();
    const [delivery] = await eventually('delivered', () => deliveries(created.channelId), (d) => d.length === 1 && d[0]!.status === 'delivered');
    await eventually('received', async () => got.length, (n) => n === 1);

    const m = got[0]!;
    expect(m.fields).toEqual(expect.objectContaining({ exchange, routingKey: 'bank.cards.credit-limit.upgraded' }));
    expect(m.properties).toEqual(
      expect.objectContaining({
        messageId: delivery!.eventId,
        type: 'credit-limit.upgraded',
        contentType: 'application/json',
        deliveryMode: 2,
        appId: 'cardline',
        headers: expect.objectContaining({ 'cardline-tenant-id': 'demo', 'webhook-id': `msg_${delivery!.eventId}` }),
      }),
    );
    expect(JSON.parse(m.content.toString())).toEqual({
      type: 'credit-limit.upgraded',
      timestamp: expect.any(String),
      data: { entityId: 'ENT-1001', previousLimit: expect.any(String), newLimit },
    });
    expect(delivery!.attempts).toEqual([expect.objectContaining({ statusCode: null, error: null })]);
  });

  it('a missing exchange fails attempts, retried on the schedule until the exchange exists', async () => {
    const exchange = fresh('ex');
    exchanges.push(exchange);
    // No exchangeType: the exchange must exist, and does not yet.
    const created = await channel({ exchange });
    await upgradeLimit();
    const failing = await eventually('a failed attempt', () => deliveries(created.channelId), (d) => (d[0]?.attempts.length ?? 0) >= 1);
    expect(failing[0]!.status).not.toBe('delivered');
    expect(failing[0]!.attempts[0]!.error).toBe(
      `rabbitmq: Channel closed by server: 404 (NOT-FOUND) with message "NOT_FOUND - no exchange '${exchange}' in vhost '${new URL(RABBITMQ_URL!).pathname.slice(1) || '/'}'"`,
    );

    // The fix: the exchange, declared with an alternate exchange that a queue was bound to beforehand, so that
    // whatever the next attempt publishes once it exists reaches the queue.
    const alternate = fresh('ae');
    exchanges.push(alternate);
    await ch.assertExchange(alternate, 'fanout', { durable: false });
    const got = await consume(alternate, '');
    await ch.assertExchange(exchange, 'direct', { durable: false, alternateExchange: alternate });
    const [done] = await eventually('delivered after the fix', () => deliveries(created.channelId), (d) => d[0]?.status === 'delivered');
    expect(done!.attemptCount).toBeGreaterThan(1);
    await eventually('received', async () => got.length, (n) => n >= 1);
    expect(got.map((m) => m.properties.messageId)).toContain(done!.eventId);
  });

  it('refused credentials fail attempts (never showing them); after a PATCH with the right URL the schedule delivers', async () => {
    const exchange = fresh('ex');
    exchanges.push(exchange);
    const created = await channel({ exchange, exchangeType: 'fanout', url: withPassword(wrongPassword) });
    const test = await call('POST', `/v1/admin/channels/${created.channelId}/test`);
    expect(test.statusCode, test.body).toBe(200);
    const failed = test.json().result;
    expect(failed).toEqual(expect.objectContaining({ eventType: 'channel.test', deliveredAt: null }));
    expect(failed.attempts[0].error).toMatch(/^rabbitmq: Handshake terminated by server: 403 \(ACCESS-REFUSED\)/);
    for (const body of [test.body, (await call('GET', `/v1/admin/channels/${created.channelId}`)).body, (await call('GET', '/v1/admin/channels')).body]) {
      expect(body).not.toContain(wrongPassword);
    }

    await ch.assertExchange(exchange, 'fanout', { durable: true });
    const got = await consume(exchange, '');
    const patched = await call('PATCH', `/v1/admin/channels/${created.channelId}`, { url: RABBITMQ_URL });
    expect(patched.statusCode, patched.body).toBe(200);
    const [done] = await eventually('delivered after the fix', () => deliveries(created.channelId), (d) => d[0]?.status === 'delivered');
    expect(done!.attemptCount).toBeGreaterThan(1);
    expect(done!.attempts.slice(0, -1).every((a) => a.error?.includes('ACCESS-REFUSED'))).toBe(true);
    expect(JSON.stringify(done)).not.toContain(wrongPassword);
    await eventually('received', async () => got.length, (n) => n === 1);
    expect(got[0]!.properties.messageId).toBe(failed.eventId);
  });

  it("a broker's nack is a failed attempt; once the broker takes the message the schedule delivers it", async () => {
    const exchange = fresh('ex');
    exchanges.push(exchange);
    const created = await channel({ exchange, exchangeType: 'topic' });
    await ch.assertExchange(exchange, 'topic', { durable: true });
    // A full queue that rejects what it cannot take: the broker nacks the publish.
    const full = fresh('full');
    queues.push(full);
    await ch.assertQueue(full, { durable: false, arguments: { 'x-max-length': 0, 'x-overflow': 'reject-publish' } });
    await ch.bindQueue(full, exchange, '#');
    const test = await call('POST', `/v1/admin/channels/${created.channelId}/test`);
    const nacked = test.json().result;
    expect(nacked).toEqual(expect.objectContaining({ eventType: 'channel.test', deliveredAt: null }));
    expect(nacked.attempts[0].error).toBe('rabbitmq: message nacked');

    const got = await consume(exchange, '#');
    await ch.deleteQueue(full);
    await eventually('delivered after the fix', () => deliveries(created.channelId), (d) => d[0]?.status === 'delivered');
    await eventually('received', async () => got.some((m) => m.properties.messageId === nacked.eventId), Boolean);
    expect(got.every((m) => m.fields.routingKey === 'channel.test')).toBe(true);
  });

  it('replay sends delivered events again, with the same message ids', async () => {
    const exchange = fresh('ex');
    exchanges.push(exchange);
    const created = await channel({ exchange, exchangeType: 'topic' });
    await ch.assertExchange(exchange, 'topic', { durable: true });
    const got = await consume(exchange, '#');
    const from = new Date().toISOString();
    await upgradeLimit();
    await upgradeLimit();
    const delivered = await eventually('delivered', () => deliveries(created.channelId), (d) => d.length === 2 && d.every((x) => x.status === 'delivered'));
    await eventually('received', async () => got.length, (n) => n === 2);

    const replayed = await call('POST', `/v1/admin/channels/${created.channelId}/replay`, { from, to: new Date(Date.now() + 1000).toISOString() });
    expect(replayed.json().result.requeued).toBe(2);
    await eventually('received again', async () => got.length, (n) => n === 4);
    const ids = delivered.map((d) => d.eventId).sort();
    expect(got.map((m) => m.properties.messageId).sort()).toEqual([...ids, ...ids].sort());
  });
});

describe.runIf(RABBITMQ_URL)('rabbitmq sender: connections (RABBITMQ_URL)', () => {
  it('one connection per broker, reused across deliveries and channels, closed with the sender', async () => {
    // The broker behind a proxy of the test's own, by a name of its own: the proxy sees each connection open and
    // close, and each new connection resolves the name once.
    const upstream = new URL(RABBITMQ_URL!);
    const open = new Set<Socket>();
    let accepted = 0;
    const proxy = createServer((client) => {
      accepted++;
      open.add(client);
      const up = connect(Number(upstream.port || 5672), upstream.hostname);
      const end = () => {
        open.delete(client);
        client.destroy();
        up.destroy();
      };
      client.pipe(up).pipe(client);
      for (const s of [client, up]) s.on('close', end).on('error', end);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const url = new URL(RABBITMQ_URL!);
    url.hostname = 'rabbit.cardline.test';
    url.port = String((proxy.address() as AddressInfo).port);
    let lookups = 0;
    const sender = new RabbitmqSender({
      timeoutMs: 5_000,
      allowHosts: ['rabbit.cardline.test'],
      resolve: async () => (lookups++, [{ address: '127.0.0.1', family: 4 }]),
    });
    const channel = (id: string): DeliveryChannel => ({
      tenantId: 'demo', id, type: 'rabbitmq', sandbox: false, url: null, settings: { exchange: 'amq.topic' }, secret: { url: url.toString() }, signingSecrets: [],
    });
    const event = (n: number): OutgoingEvent => ({
      tenantId: 'demo', eventId: `0190b3c4-5d6e-7f80-9a1b-2c3d4e5f6a${String(n).padStart(2, '0')}`, eventType: `cltest.${run}.sender`,
      msgId: 'msg_x', body: '{}', createdAt: new Date(),
    });
    const signal = new AbortController().signal;
    try {
      const results = [
        await sender.send(channel('a'), event(1), signal),
        ...(await Promise.all([sender.send(channel('a'), event(2), signal), sender.send(channel('b'), event(3), signal)])),
      ];
      expect(results.map((r) => [r.ok, r.error])).toEqual([[true, null], [true, null], [true, null]]);
      expect([accepted, lookups, open.size]).toEqual([1, 1, 1]);
      await sender.close();
      await eventually('the connection closed', async () => open.size, (n) => n === 0);
      expect(accepted).toBe(1);
    } finally {
      await sender.close();
      proxy.close();
    }
  });
});
