// The delivery worker on a store of its own, with a sender the test controls (an attempt ends when the test
// says): fairness across tenants and channels (a hanging receiver holds back nothing but its channel, which
// has at most CHANNEL_IN_FLIGHT attempts under way), claims that two workers never share, a lease another
// worker takes over, a channel removed while its attempt is under way, and an event no channel subscribes to
// written once. Every wait is for the state that proves the point, never for time. PGlite, or PostgreSQL
// when DATABASE_URL is set.
import type { FastifyBaseLogger } from 'fastify';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AuditWriter } from '../../src/audit/writer.js';
import type { NotifyConfig } from '../../src/config.js';
import { MasterKey } from '../../src/crypto/master-key.js';
import { domainEvent } from '../../src/events/outbox.js';
import { ChannelService } from '../../src/notify/channels.js';
import { CHANNEL_IN_FLIGHT, DeliveryService } from '../../src/notify/deliveries.js';
import { webhookChannelSender } from '../../src/notify/channel-types/webhook.js';
import type { AttemptResult, WebhookMessage, WebhookSender } from '../../src/notify/webhook.js';
import { createTestDb, type TestDb } from '../helpers/app.js';

const CONFIG: NotifyConfig = {
  worker: true,
  pollMs: 20,
  webhookTimeoutMs: 60_000,
  scheduleScale: 1,
  allowHosts: [],
  secretOverlapHours: 24,
  natsUrl: undefined,
  natsStream: 'CARDLINE',
  natsSubjectPrefix: 'cardline',
};

/** A sender whose attempts to a URL ending in /hang last until release() (unless told not to hang); every other attempt answers 200. */
class ScriptedSender {
  constructor(private readonly hangs = true) {}

  readonly sent: { url: string; msgId: string }[] = [];
  private readonly held: (() => void)[] = [];
  private readonly underWay = new Map<string, number>();
  /** The most attempts seen under way at once, per URL. */
  readonly peak = new Map<string, number>();
  private readonly watchers = new Set<() => void>();

  async send(message: WebhookMessage): Promise<AttemptResult> {
    this.sent.push({ url: message.url, msgId: message.msgId });
    const now = (this.underWay.get(message.url) ?? 0) + 1;
    this.underWay.set(message.url, now);
    this.peak.set(message.url, Math.max(now, this.peak.get(message.url) ?? 0));
    for (const w of this.watchers) w();
    try {
      if (this.hangs && message.url.endsWith('/hang')) await new Promise<void>((resolve) => this.held.push(resolve));
      return { ok: true, statusCode: 200, durationMs: 1, error: null, retryAfterMs: null };
    } finally {
      this.underWay.set(message.url, this.underWay.get(message.url)! - 1);
    }
  }

  /** Ends every attempt held so far. */
  release(): void {
    for (const r of this.held.splice(0)) r();
  }

  to(url: string): number {
    return this.sent.filter((s) => s.url === url).length;
  }

  /** Resolves once `check` holds (checked as each attempt starts). */
  until(check: () => boolean): Promise<void> {
    return new Promise((resolve) => {
      const watch = () => {
        if (!check()) return;
        this.watchers.delete(watch);
        resolve();
      };
      this.watchers.add(watch);
      watch();
    });
  }
}

/** A logger that keeps what the worker reports as an error. */
const recordingLog = () => {
  const errors: unknown[] = [];
  const log = { error: (...args: unknown[]) => errors.push(args), warn: () => undefined, info: () => undefined, debug: () => undefined } as unknown as FastifyBaseLogger;
  return { log, errors };
};

let store: TestDb;
let channels: ChannelService;
let writer: AuditWriter;
const services: DeliveryService[] = [];

beforeAll(async () => {
  store = await createTestDb();
  const masterKey = new MasterKey(MasterKey.generate());
  channels = new ChannelService(store.db, masterKey, CONFIG);
  writer = new AuditWriter(store.db);
  await store.db.query(
    `INSERT INTO tenants (tenant_id, name, config) SELECT t, t, '{"sandbox": true}'::jsonb FROM unnest($1::text[]) AS t ON CONFLICT DO NOTHING`,
    [['bank-a', 'bank-b', 'bank-c']],
  );
});
afterEach(async () => {
  await Promise.all(services.splice(0).map((s) => s.stop()));
  await store.db.query('DELETE FROM channels');
  await store.db.query('DELETE FROM outbox');
});
afterAll(async () => {
  await writer.close();
  await store.drop();
});

let sender: ScriptedSender;
let log: ReturnType<typeof recordingLog>;
beforeEach(() => {
  sender = new ScriptedSender();
  log = recordingLog();
});

const service = (s: ScriptedSender = sender) => {
  const d = new DeliveryService(store.db, {
    config: CONFIG,
    channels,
    tenants: { get: async () => ({ config: { sandbox: true } }) as never },
    senders: { of: (type) => (type === 'webhook' ? webhookChannelSender(s as unknown as WebhookSender) : undefined) },
    log: log.log,
  });
  services.push(d);
  return d;
};

const channel = async (tenant: string, path: string) =>
  (await channels.create(tenant, true, { type: 'webhook', url: `http://127.0.0.1:9${path}`, eventTypes: ['*'] })).channelId;

/** `count` deliveries due now for a channel, oldest first. */
const backlog = (tenant: string, channelId: string, count: number) =>
  store.db.query(
    `INSERT INTO deliveries (tenant_id, id, channel_id, event_id, event_type, payload, event_created_at, next_attempt_at)
     SELECT $1, gen_random_uuid(), $2, gen_random_uuid(), 'card.locked', '{}'::jsonb, now(), now() - interval '1 minute' + g * interval '1 millisecond'
       FROM generate_series(1, $3) AS g`,
    [tenant, channelId, count],
  );

const statuses = async (channelId: string) =>
  Object.fromEntries(
    (await store.db.query<{ status: string; n: number }>('SELECT status, count(*)::int AS n FROM deliveries WHERE channel_id = $1 GROUP BY status', [channelId])).rows.map(
      (r) => [r.status, r.n],
    ),
  );

/** Polls the store until `check` holds: waits for the state that proves the point (the bound only ends a broken run). */
async function eventually<T>(read: () => Promise<T>, check: (v: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const v = await read();
    if (check(v)) return v;
    if (Date.now() > deadline) throw new Error(`${what}: never held (last: ${JSON.stringify(v)})`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('fairness', () => {
  it("a hanging receiver with 200 due deliveries holds back neither another tenant's new events nor its own tenant's other channel", async () => {
    const hung = await channel('bank-a', '/hang');
    const sibling = await channel('bank-a', '/sibling');
    const other = await channel('bank-b', '/other');
    await backlog('bank-a', hung, 200);
    const worker = service();
    worker.start();
    // The hung channel gets its cap of attempts, and no more.
    await sender.until(() => sender.to('http://127.0.0.1:9/hang') >= CHANNEL_IN_FLIGHT);

    // New deliveries of another tenant, and of the hung channel's own tenant, arrive behind the backlog.
    await backlog('bank-b', other, 5);
    await backlog('bank-a', sibling, 3);
    worker.wake();
    await eventually(() => statuses(other), (s) => s.delivered === 5, 'the other tenant delivered');
    await eventually(() => statuses(sibling), (s) => s.delivered === 3, 'the sibling channel delivered');

    // All the while the hung channel had exactly its cap under way, the rest of its backlog waiting.
    expect(sender.to('http://127.0.0.1:9/hang')).toBe(CHANNEL_IN_FLIGHT);
    expect(sender.peak.get('http://127.0.0.1:9/hang')).toBe(CHANNEL_IN_FLIGHT);
    expect(await statuses(hung)).toEqual({ delivering: CHANNEL_IN_FLIGHT, pending: 200 - CHANNEL_IN_FLIGHT });

    // Released, the backlog drains in order, never more than the cap under way.
    const drain = setInterval(() => sender.release(), 5);
    try {
      await eventually(() => statuses(hung), (s) => s.delivered === 200, 'the backlog drained');
    } finally {
      clearInterval(drain);
    }
    expect(sender.peak.get('http://127.0.0.1:9/hang')).toBe(CHANNEL_IN_FLIGHT);
    expect(sender.to('http://127.0.0.1:9/hang')).toBe(200);
    expect(log.errors).toEqual([]);
  });

  it("a claim takes every channel's oldest due delivery before any channel's second", async () => {
    const a = await channel('bank-a', '/a');
    const b = await channel('bank-b', '/b');
    const c = await channel('bank-c', '/c');
    await backlog('bank-a', a, 50);
    await backlog('bank-b', b, 50);
    await backlog('bank-c', c, 1);
    // Three slots: one per channel, whatever the backlogs (oldest-first would have given all three to one).
    expect(await service().deliverDue(3)).toBe(3);
    expect(sender.sent.map((s) => s.url).sort()).toEqual(['http://127.0.0.1:9/a', 'http://127.0.0.1:9/b', 'http://127.0.0.1:9/c']);
  });
});

describe('claims', () => {
  it('two workers claiming at once never take the same delivery, and together deliver each once', async () => {
    const ids = await Promise.all(['/w1', '/w2', '/w3', '/w4', '/w5'].map((p, i) => channel(['bank-a', 'bank-b', 'bank-c'][i % 3]!, p)));
    for (const [i, id] of ids.entries()) await backlog(['bank-a', 'bank-b', 'bank-c'][i % 3]!, id, 12);
    const [one, two] = [service(), service()];
    const drain = async (w: DeliveryService) => {
      let n = 0;
      for (let got = await w.deliverDue(7); got > 0; got = await w.deliverDue(7)) n += got;
      return n;
    };
    const [n1, n2] = await Promise.all([drain(one), drain(two)]);
    expect(n1 + n2).toBe(60);
    expect(new Set(sender.sent.map((s) => s.msgId)).size).toBe(60);
    const attempts = await store.db.query<{ worker: string; n: number }>('SELECT worker, count(*)::int AS n FROM delivery_attempts GROUP BY worker ORDER BY worker');
    expect(attempts.rows.reduce((n, r) => n + r.n, 0)).toBe(60);
  });

  it('a delivery whose lease ran out is taken by another worker; the first cannot settle it afterwards', async () => {
    const ch = await channel('bank-a', '/hang');
    await backlog('bank-a', ch, 1);
    const slow = service();
    const attempt = slow.deliverDue(1);
    await sender.until(() => sender.sent.length === 1);
    // The lease runs out (set in the store rather than waited for).
    await store.db.query("UPDATE deliveries SET claimed_until = now() - interval '1 second' WHERE channel_id = $1", [ch]);
    const other = service(new ScriptedSender(false));
    expect(await other.deliverDue(1)).toBe(1);
    expect(await statuses(ch)).toEqual({ delivered: 1 });
    // The first attempt ends late: its settlement finds the delivery no longer its own and changes nothing.
    sender.release();
    await attempt;
    const row = await store.db.query<{ status: string; attempts: number }>('SELECT status, attempts FROM deliveries WHERE channel_id = $1', [ch]);
    expect(row.rows).toEqual([{ status: 'delivered', attempts: 2 }]);
    const kept = await store.db.query<{ worker: string }>('SELECT worker FROM delivery_attempts da JOIN deliveries d ON d.tenant_id = da.tenant_id AND d.id = da.delivery_id WHERE d.channel_id = $1', [ch]);
    expect(kept.rows).toEqual([{ worker: other.worker }]);
  });
});

describe('a test delivery', () => {
  it("is its own attempt's from the start: a worker's round between its insert and its attempt does not take it", async () => {
    const other = service();
    // The store of the service under test runs another worker's round right after the test delivery is written.
    const db = Object.create(store.db) as typeof store.db;
    db.query = (async (sql: string, params?: unknown[], opts?: unknown) => {
      const r = await store.db.query(sql, params as never, opts as never);
      if (/^\s*INSERT INTO deliveries/.test(sql)) await other.deliverDue();
      return r;
    }) as typeof store.db.query;
    const d = new DeliveryService(db, { config: CONFIG, channels, tenants: { get: async () => ({ config: { sandbox: true } }) as never }, senders: { of: () => webhookChannelSender(sender as unknown as WebhookSender) }, log: log.log });
    services.push(d);
    const channelId = await channel('bank-a', '/test');
    const delivered = await d.test('bank-a', channelId);
    expect(delivered).toEqual(expect.objectContaining({ eventType: 'channel.test', status: 'delivered', attemptCount: 1 }));
    expect(sender.to('http://127.0.0.1:9/test')).toBe(1);
  });
});

describe('a channel removed while its attempt is under way', () => {
  it('the attempt ends quietly, and the worker goes on delivering (issue 20: 23503 failed the round)', async () => {
    const doomed = await channel('bank-a', '/hang');
    const kept = await channel('bank-b', '/kept');
    await backlog('bank-a', doomed, 1);
    const worker = service();
    worker.start();
    await sender.until(() => sender.to('http://127.0.0.1:9/hang') === 1);
    await channels.remove('bank-a', doomed);
    sender.release();
    await backlog('bank-b', kept, 2);
    worker.wake();
    await eventually(() => statuses(kept), (s) => s.delivered === 2, 'the other channel delivered');
    await worker.stop();
    expect(log.errors).toEqual([]);
    expect((await store.db.query('SELECT 1 FROM deliveries WHERE channel_id = $1', [doomed])).rows).toEqual([]);
  });
});

describe('events no channel subscribes to', () => {
  const lock = (tenantId: string, n: number) =>
    writer.record({
      tenantId, at: new Date(), actor: 'ops', role: 'Operations', action: 'card.lock', method: 'POST', route: '/v1/cards/:cardId/lock',
      target: { cardId: `CARD-${n}` }, outcome: 'succeeded', status: 200, requestId: `unsubscribed-${tenantId}-${n}`, origin: null,
      event: domainEvent('card.locked', { cardId: `CARD-${n}`, entityId: 'ENT-1', state: 'LOCKED' }),
    });
  const outbox = async (tenantId: string) =>
    (await store.db.query<{ status: string; attempts: number; done: boolean }>('SELECT status, attempts, done_at IS NOT NULL AS done FROM outbox WHERE tenant_id = $1 ORDER BY audit_seq', [tenantId])).rows;

  it('are written done with their audit record, and the fan-out never writes them again (issue 21)', async () => {
    await lock('bank-a', 1);
    await channels.create('bank-b', true, { type: 'webhook', url: 'http://127.0.0.1:9/b', eventTypes: ['card.blocked'] });
    await lock('bank-b', 2); // a channel, but not of this event type
    expect(await outbox('bank-a')).toEqual([{ status: 'done', attempts: 0, done: true }]);
    expect(await outbox('bank-b')).toEqual([{ status: 'done', attempts: 0, done: true }]);
    expect(await service().fanOut()).toBe(0);

    // A subscribed channel: the event waits for the fan-out, which fans it out once.
    await channels.create('bank-c', true, { type: 'webhook', url: 'http://127.0.0.1:9/c', eventTypes: ['card.locked'] });
    await lock('bank-c', 3);
    expect(await outbox('bank-c')).toEqual([{ status: 'pending', attempts: 0, done: false }]);
    expect(await services[0]!.fanOut()).toBe(1);
    expect(await outbox('bank-c')).toEqual([{ status: 'done', attempts: 1, done: true }]);
  });
});
