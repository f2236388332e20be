// Delivery from the outbox, at least once (decisions 0080, 0081, 0130): events fan out to `deliveries` rows
// in the statement that marks them done; due deliveries are claimed with FOR UPDATE SKIP LOCKED and a lease,
// so any number of processes share the work. Each channel is capped at CHANNEL_IN_FLIGHT attempts and a claim
// takes every channel's oldest first, so one hanging receiver holds back only its own channel.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { FastifyBaseLogger } from 'fastify';
import { uuidv7 } from 'uuidv7';
import { decodeSeqCursor, encodeSeqCursor } from '../paging/seq-cursor.js';
import { subscribesSql } from '../events/subscription.js';
import {
  DELIVERY_PAGE_DEFAULT,
  type DeliveryQuery,
  type DeliveryStatus,
  type DeliveryView,
} from '../../schemas/channels.js';
import { CHANNEL_TEST_EVENT } from '../../schemas/events.js';
import type { NotifyConfig } from '../config.js';
import { Errors } from '../errors.js';
import type { DeliveryObserver } from '../services/infrastructure/metrics.js';
import type { TenantService } from '../services/tenancy/tenants.js';
import type { Queryable } from '../store/db.js';
import { tracing, type Tracing } from '../telemetry/index.js';
import type { ChannelSenders } from './channel-types/registry.js';
import type { AttemptResult } from './channel-types/type.js';
import type { Channel, ChannelService } from './channels.js';

/** Svix's schedule: at once, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h; after the eighth, `failed`. */
export const RETRY_SCHEDULE_MS = [0, 5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000] as const;
export const MAX_ATTEMPTS = RETRY_SCHEDULE_MS.length;
/** Each delay is spread by up to ±20 %, so that a receiver that was down is not hit by every retry at once. */
const JITTER = 0.2;
/** The longest Retry-After honoured: the schedule's longest step. */
const MAX_RETRY_AFTER_MS = 36_000_000;

/** The delay after `attempts` failures (a receiver's Retry-After replaces it, up to the longest step), or null. */
export function nextDelayMs(attempts: number, scale: number, retryAfterMs: number | null, random = Math.random): number | null {
  if (attempts >= MAX_ATTEMPTS) return null;
  if (retryAfterMs !== null) return Math.min(retryAfterMs, MAX_RETRY_AFTER_MS);
  const base = RETRY_SCHEDULE_MS[attempts]! * scale;
  return Math.round(base * (1 - JITTER + 2 * JITTER * random()));
}

/** The webhook body: the event's type, when it happened, and its payload (ids, states, amounts only). */
export const webhookBody = (type: string, createdAt: Date, payload: unknown): string =>
  JSON.stringify({ type, timestamp: createdAt.toISOString(), data: payload });

/** `webhook-id`: the event's id, the same on every attempt, retry and replay of it. */
const webhookIdOf = (eventId: string): string => `msg_${eventId}`;

interface DeliveryRow {
  tenant_id: string;
  id: string;
  seq: string | number;
  channel_id: string;
  event_id: string;
  event_type: string;
  payload: Record<string, unknown>;
  event_created_at: Date;
  status: DeliveryStatus;
  /** The trace context of the request that caused the event (null when it was not traced). */
  traceparent: string | null;
  attempts: number;
  next_attempt_at: Date;
  created_at: Date;
  delivered_at: Date | null;
}

interface AttemptRow {
  delivery_id: string;
  n: number;
  at: Date;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
}

const DELIVERY_COLUMNS = `tenant_id, id, seq, channel_id, event_id, event_type, payload, event_created_at, status, attempts,
                          next_attempt_at, created_at, delivered_at, traceparent`;
const D_COLUMNS = DELIVERY_COLUMNS.split(',').map((c) => `d.${c.trim()}`).join(', ');

export interface DeliveryServiceOptions {
  config: NotifyConfig;
  channels: ChannelService;
  tenants: Pick<TenantService, 'get'>;
  /** Each channel type's sender: every attempt goes through its type's; records, retries and replay are this worker's. */
  senders: Pick<ChannelSenders, 'of'>;
  observer?: DeliveryObserver;
  log: FastifyBaseLogger;
}

/** Events fanned out per statement at most: a full one goes again at once. */
const FAN_OUT_LIMIT = 200;
/** Attempts under way in one process at once, across every channel (sockets and memory are bounded). */
const MAX_IN_FLIGHT = 64;
/** Attempts under way per channel, counted in the store so it holds across processes (give or take a race). */
export const CHANNEL_IN_FLIGHT = 4;
/** How long a woken worker gathers further commits before it fans out (well within the first-event target of 2 s). */
const COALESCE_MS = 25;

/**
 * Claims due deliveries fairly: channels with unsettled deliveries found by a loose index scan, each offering
 * its oldest up to its free places, taken by rank (every channel's first before any channel's second).
 */
const CLAIM = `
  WITH RECURSIVE chans AS (
         (SELECT tenant_id, channel_id FROM deliveries WHERE status IN ('pending', 'delivering') ORDER BY tenant_id, channel_id LIMIT 1)
         UNION ALL
         SELECT n.tenant_id, n.channel_id FROM chans c CROSS JOIN LATERAL (
           SELECT d.tenant_id, d.channel_id FROM deliveries d
            WHERE d.status IN ('pending', 'delivering') AND (d.tenant_id, d.channel_id) > (c.tenant_id, c.channel_id)
            ORDER BY d.tenant_id, d.channel_id LIMIT 1
         ) n
       ),
       offers AS (
         SELECT x.tenant_id, x.id, x.next_attempt_at, x.seq, x.rank
           FROM chans c
           JOIN channels ch ON ch.tenant_id = c.tenant_id AND ch.id = c.channel_id AND ch.enabled
           CROSS JOIN LATERAL (
             SELECT count(*)::int AS n FROM deliveries b
              WHERE b.tenant_id = c.tenant_id AND b.channel_id = c.channel_id AND b.claimed_by IS NOT NULL AND b.claimed_until > now()
           ) busy
           CROSS JOIN LATERAL (
             SELECT d.tenant_id, d.id, d.next_attempt_at, d.seq, row_number() OVER (ORDER BY d.next_attempt_at, d.seq) AS rank
               FROM deliveries d
              WHERE d.tenant_id = c.tenant_id AND d.channel_id = c.channel_id AND d.status IN ('pending', 'delivering')
                AND d.next_attempt_at <= now() AND (d.claimed_until IS NULL OR d.claimed_until <= now())
              ORDER BY d.next_attempt_at, d.seq
              LIMIT $4
           ) x
          WHERE x.rank <= $4 - busy.n
       ),
       picked AS (
         SELECT d.tenant_id, d.id FROM deliveries d
          WHERE (d.tenant_id, d.id) IN (SELECT tenant_id, id FROM offers ORDER BY rank, next_attempt_at, seq LIMIT $1)
            AND d.status IN ('pending', 'delivering') AND (d.claimed_until IS NULL OR d.claimed_until <= now())
          FOR UPDATE SKIP LOCKED
       )
  UPDATE deliveries d SET status = 'delivering', claimed_by = $2,
         claimed_until = now() + $3::integer * interval '1 millisecond', attempts = d.attempts + 1
    FROM picked WHERE d.tenant_id = picked.tenant_id AND d.id = picked.id
  RETURNING ${D_COLUMNS}`;

export class DeliveryService {
  readonly worker = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  private readonly leaseMs: number;
  private running: Promise<void> | null = null;
  private stopped = false;
  /** Set while the loop waits: committed events end the wait (after COALESCE_MS). */
  private wakeUp: (() => void) | null = null;
  /** Set while the loop waits: an attempt that ended ends the wait when due deliveries may be waiting. */
  private attemptEnded: (() => void) | null = null;
  /** Events were committed since the last fan-out (or the poll came): fan out before claiming. */
  private fanOutDue = true;
  /** The last claim may have left due deliveries behind (every free slot taken, or a channel at its cap). */
  private moreDue = false;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly abort = new AbortController();

  constructor(
    private readonly db: Queryable,
    private readonly opts: DeliveryServiceOptions,
  ) {
    // Longer than an attempt may take, so that a live worker never loses a delivery it is still sending.
    this.leaseMs = Math.max(1_000, opts.config.webhookTimeoutMs * 2);
  }

  // ---- the worker loop -------------------------------------------------------------------------------

  /** Starts draining the outbox and delivering, until stop(). */
  start(): void {
    if (this.running) return;
    this.running = this.loop();
  }

  /** Events were committed: look now instead of at the next poll. */
  wake(): void {
    this.fanOutDue = true;
    this.wakeUp?.();
  }

  /** Stops the loop; attempts under way are abandoned and their deliveries released to be sent again. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.abort.abort();
    this.wakeUp?.();
    await this.running;
    await Promise.all(this.inFlight);
    this.running = null;
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      let again = false;
      try {
        if (this.fanOutDue) {
          this.fanOutDue = false;
          if ((await this.fanOut(FAN_OUT_LIMIT)) >= FAN_OUT_LIMIT) this.fanOutDue = again = true;
        }
        if (await this.claimAndStart()) again = true;
      } catch (err) {
        if (this.stopped) break;
        this.opts.log.error({ err }, 'delivery worker: a round failed; trying again at the next poll');
      }
      if (again || this.stopped) continue;
      await this.idle();
    }
  }

  /**
   * Waits for work: an attempt ending (its slot takes the next due one), committed events (gathered for
   * COALESCE_MS so many batches fan out at once), or the poll for retries that came due.
   */
  private idle(): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakeUp = null;
        this.attemptEnded = null;
        resolve();
      };
      let timer = setTimeout(() => {
        this.fanOutDue = true;
        done();
      }, this.opts.config.pollMs);
      this.wakeUp = () => {
        this.wakeUp = null;
        clearTimeout(timer);
        timer = setTimeout(done, this.stopped ? 0 : COALESCE_MS);
      };
      this.attemptEnded = () => {
        if (this.moreDue) done();
      };
    });
  }

  /** Claims as many due deliveries as there are free slots and starts each; true when more may be due now. */
  private async claimAndStart(): Promise<boolean> {
    const free = MAX_IN_FLIGHT - this.inFlight.size;
    if (free <= 0) {
      this.moreDue = true;
      return false;
    }
    const claimed = await this.claim(free);
    // A claim that found any may have left some behind (a channel at its cap): an attempt that ends looks again.
    this.moreDue = claimed.length > 0;
    if (!claimed.length) return false;
    const channels = await this.opts.channels.forDelivery(claimed.map((d) => ({ tenantId: d.tenant_id, channelId: d.channel_id })));
    for (const d of claimed) {
      const run: Promise<void> = this.attempt(d, channels.get(`${d.tenant_id}/${d.channel_id}`))
        .catch((err: unknown) => {
          if (!this.stopped) {
            this.opts.log.error({ err, tenant: d.tenant_id, delivery: d.id }, 'delivery worker: an attempt could not be settled; it goes again after its lease');
          }
        })
        .finally(() => {
          this.inFlight.delete(run);
          this.attemptEnded?.();
        });
      this.inFlight.add(run);
    }
    return claimed.length >= free;
  }

  /** Claims up to `limit` due deliveries fairly (see CLAIM). */
  private async claim(limit: number): Promise<DeliveryRow[]> {
    // Both polls run every few hundred milliseconds whatever the load: prepared once per connection (decision 0228).
    return (await this.db.query<DeliveryRow>(CLAIM, [limit, this.worker, this.leaseMs, CHANNEL_IN_FLIGHT], { name: 'cardline_deliveries_claim' })).rows;
  }

  /**
   * Fans due events out to their channels and marks them done in one statement (a second fan-out adds nothing);
   * returns how many it took. Events no channel heard were written done already, so they cost nothing here.
   */
  async fanOut(limit = FAN_OUT_LIMIT): Promise<number> {
    const r = await this.db.query<{ events: number }>(
      `WITH due AS (
         SELECT tenant_id, id, type, payload, created_at, traceparent FROM outbox
          WHERE status = 'pending' AND available_at <= now() AND (claimed_until IS NULL OR claimed_until <= now())
          ORDER BY available_at, id
          LIMIT $1
          FOR UPDATE SKIP LOCKED
       ),
       fanned AS (
         INSERT INTO deliveries (tenant_id, id, channel_id, event_id, event_type, payload, event_created_at, traceparent)
         SELECT e.tenant_id, gen_random_uuid(), c.id, e.id, e.type, e.payload, e.created_at, e.traceparent
           FROM due e JOIN channels c ON c.tenant_id = e.tenant_id AND c.enabled
            AND ${subscribesSql('c', 'e.type')}
          ORDER BY e.created_at, e.id
         ON CONFLICT (tenant_id, channel_id, event_id) DO NOTHING
         RETURNING 1
       ),
       done AS (
         UPDATE outbox o SET status = 'done', done_at = now(), attempts = o.attempts + 1, claimed_by = NULL, claimed_until = NULL
           FROM due WHERE o.tenant_id = due.tenant_id AND o.id = due.id
         RETURNING 1
       )
       SELECT (SELECT count(*) FROM done)::int AS events, (SELECT count(*) FROM fanned)::int AS deliveries`,
      [limit],
      { name: 'cardline_outbox_fan_out' },
    );
    return r.rows[0]?.events ?? 0;
  }

  /** One step of the worker by hand (tests): claims, attempts and waits for every attempt; returns how many. */
  async deliverDue(limit = MAX_IN_FLIGHT): Promise<number> {
    const claimed = await this.claim(limit);
    if (!claimed.length) return 0;
    const channels = await this.opts.channels.forDelivery(claimed.map((d) => ({ tenantId: d.tenant_id, channelId: d.channel_id })));
    await Promise.all(claimed.map((d) => this.attempt(d, channels.get(`${d.tenant_id}/${d.channel_id}`))));
    return claimed.length;
  }

  /** One attempt of a claimed delivery, then its settlement (delivered, due again, or failed). */
  private async attempt(d: DeliveryRow, channel: Channel | undefined): Promise<void> {
    if (!channel) return; // removed meanwhile: its deliveries went with it
    const sender = this.opts.senders.of(channel.type);
    const tenant = await this.opts.tenants.get(d.tenant_id);
    const t = tracing();
    const result: AttemptResult = sender
      ? await this.sendTraced(t, d, channel.type, (traceparent) => sender.send(
          { tenantId: channel.tenantId, id: channel.id, type: channel.type, sandbox: tenant?.config.sandbox === true, url: channel.url,
            settings: channel.settings, secret: channel.secret, signingSecrets: channel.secrets },
          { tenantId: d.tenant_id, eventId: d.event_id, eventType: d.event_type, msgId: webhookIdOf(d.event_id),
            body: webhookBody(d.event_type, new Date(d.event_created_at), d.payload), createdAt: new Date(d.event_created_at), traceparent },
          this.abort.signal,
        ))
      : // A store shared with a newer version may hold a type this one does not know: the attempt fails and is retried.
        { ok: false, statusCode: null, durationMs: 0, error: `this gateway process does not know the channel type '${channel.type}'`, retryAfterMs: null };
    if (this.abort.signal.aborted && !result.ok) {
      // Shutting down: the attempt is not the receiver's failure; the delivery is released for the next process.
      await this.db.query(
        `UPDATE deliveries SET status = 'pending', claimed_by = NULL, claimed_until = NULL, attempts = greatest(attempts - 1, 0), next_attempt_at = now()
          WHERE tenant_id = $1 AND id = $2 AND claimed_by = $3`,
        [d.tenant_id, d.id, this.worker],
      );
      return;
    }
    await this.settle(d, channel.type, result);
  }

  /**
   * One send, while tracing is on, as a producer span continuing the trace of the request that caused the event
   * (a new trace when that request was not traced); the receiver gets the span's context.
   */
  private sendTraced(t: Tracing | null, d: DeliveryRow, type: string, send: (traceparent: string | undefined) => Promise<AttemptResult>): Promise<AttemptResult> {
    if (!t) return send(undefined);
    const parent = t.extract(d.traceparent ?? undefined) ?? t.root;
    const attributes = {
      'messaging.system': type === 'nats' ? 'nats' : type === 'rabbitmq' ? 'rabbitmq' : 'webhook',
      'messaging.operation.type': 'send',
      'messaging.message.id': d.event_id,
      'cardline.tenant': d.tenant_id,
      'cardline.channel': d.channel_id,
      'cardline.event_type': d.event_type,
      'cardline.delivery.attempt': d.attempts,
    };
    return t.inSpan(
      `send ${d.event_type}`,
      attributes,
      async (span) => {
        const result = await send(t.traceparentOf(span.spanContext()));
        if (result.statusCode !== null) span.setAttribute('http.response.status_code', result.statusCode);
        if (!result.ok) {
          span.setAttribute('error.type', result.statusCode !== null ? String(result.statusCode) : 'send_failed');
          span.setStatus({ code: t.api.SpanStatusCode.ERROR });
        }
        return result;
      },
      { kind: t.api.SpanKind.PRODUCER, parent },
    );
  }

  private async settle(d: DeliveryRow, type: string, result: AttemptResult): Promise<void> {
    let status: DeliveryStatus;
    let delayMs = 0;
    let outcome: 'delivered' | 'retrying' | 'failed' | 'gone';
    if (result.ok) {
      status = 'delivered';
      outcome = 'delivered';
    } else if (result.statusCode === 410) {
      status = 'failed';
      outcome = 'gone';
    } else {
      const delay = nextDelayMs(d.attempts, this.opts.config.scheduleScale, result.retryAfterMs);
      status = delay === null ? 'failed' : 'pending';
      delayMs = delay ?? 0;
      outcome = delay === null ? 'failed' : 'retrying';
    }
    try {
      // The attempt is kept only with its delivery: a channel removed while the attempt was under way took
      // its deliveries with it, and the insert would fail on the foreign key.
      await this.db.query(
        `WITH attempt AS (
           INSERT INTO delivery_attempts (tenant_id, delivery_id, n, status_code, duration_ms, error, worker)
           SELECT $1, $2, $3, $4, $5, $6, $7
            WHERE EXISTS (SELECT 1 FROM deliveries WHERE tenant_id = $1 AND id = $2 AND claimed_by = $7)
         )
         UPDATE deliveries SET status = $8::text,
                next_attempt_at = CASE WHEN $8::text = 'pending' THEN now() + $9::integer * interval '1 millisecond' ELSE next_attempt_at END,
                delivered_at = CASE WHEN $8::text = 'delivered' THEN now() ELSE delivered_at END,
                last_status = $4, last_error = $6, claimed_by = NULL, claimed_until = NULL
          WHERE tenant_id = $1 AND id = $2 AND claimed_by = $7`,
        [d.tenant_id, d.id, d.attempts, result.statusCode, result.durationMs, result.error, this.worker, status, delayMs],
      );
    } catch (err) {
      // The removal committed between this statement's snapshot and its insert: the same case, a moment later.
      if ((err as { code?: string }).code !== '23503') throw err;
      return;
    }
    if (outcome === 'gone') {
      await this.opts.channels.disable(d.tenant_id, d.channel_id, `The receiver answered 410 Gone at ${new Date().toISOString()}; the gateway disabled the channel.`);
      this.opts.log.warn({ tenant: d.tenant_id, channel: d.channel_id }, 'webhook receiver answered 410 Gone: channel disabled');
    }
    this.opts.observer?.delivery(type, outcome, result.ok ? (Date.now() - new Date(d.event_created_at).getTime()) / 1000 : null);
  }

  // ---- what the Admin routes do ----------------------------------------------------------------------

  /** Claims one delivery for an attempt now: 404 unknown, 409 when its channel is disabled or it is held. */
  private async claimOne(tenantId: string, deliveryId: string): Promise<DeliveryRow> {
    const r = await this.db.query<DeliveryRow>(
      `UPDATE deliveries d SET status = 'delivering', claimed_by = $3, claimed_until = now() + $4::integer * interval '1 millisecond',
              attempts = d.attempts + 1
        WHERE d.tenant_id = $1 AND d.id = $2 AND (d.claimed_until IS NULL OR d.claimed_until <= now())
          AND EXISTS (SELECT 1 FROM channels c WHERE c.tenant_id = d.tenant_id AND c.id = d.channel_id AND c.enabled)
       RETURNING ${D_COLUMNS}`,
      [tenantId, deliveryId, this.worker, this.leaseMs],
    );
    if (r.rows[0]) return r.rows[0];
    const why = await this.db.query<{ enabled: boolean }>(
      'SELECT c.enabled FROM deliveries d JOIN channels c ON c.tenant_id = d.tenant_id AND c.id = d.channel_id WHERE d.tenant_id = $1 AND d.id = $2',
      [tenantId, deliveryId],
    );
    if (!why.rows[0]) throw Errors.deliveryNotFound(deliveryId);
    if (!why.rows[0].enabled) throw Errors.business('CHANNEL_DISABLED', 'The channel is disabled; enable it (PATCH {"enabled": true}) first.');
    throw Errors.business('DELIVERY_IN_PROGRESS', 'An attempt of this delivery is under way; look again in a few seconds.');
  }

  /** Delivers one delivery again now (whatever its status) and answers how it went. */
  async retryNow(tenantId: string, deliveryId: string): Promise<DeliveryView> {
    const d = await this.claimOne(tenantId, deliveryId);
    const channels = await this.opts.channels.forDelivery([{ tenantId, channelId: d.channel_id }]);
    await this.attempt(d, channels.get(`${tenantId}/${d.channel_id}`));
    return this.get(tenantId, deliveryId);
  }

  /** Sends a `channel.test` event to one channel at once; its delivery is listed and retried like any other. */
  async test(tenantId: string, channelId: string): Promise<DeliveryView> {
    const channel = await this.opts.channels.get(tenantId, channelId); // 404 for an unknown channel
    // Refused before anything is written: a disabled channel gets no test delivery.
    if (!channel.enabled) throw Errors.business('CHANNEL_DISABLED', 'The channel is disabled; enable it (PATCH {"enabled": true}) first.');
    const id = uuidv7();
    // Written already claimed by this attempt: a worker's round in between would otherwise send it too, or hold it.
    const r = await this.db.query<DeliveryRow>(
      `INSERT INTO deliveries (tenant_id, id, channel_id, event_id, event_type, payload, event_created_at, status, attempts, claimed_by, claimed_until)
       VALUES ($1, $2, $3, $4, $5, $6::jsonb, now(), 'delivering', 1, $7, now() + $8::integer * interval '1 millisecond')
       RETURNING ${DELIVERY_COLUMNS}`,
      [tenantId, id, channelId, uuidv7(), CHANNEL_TEST_EVENT, JSON.stringify({ channelId, message: 'A test event from Cardline' }), this.worker, this.leaseMs],
    );
    const channels = await this.opts.channels.forDelivery([{ tenantId, channelId }]);
    await this.attempt(r.rows[0]!, channels.get(`${tenantId}/${channelId}`));
    return this.get(tenantId, id);
  }

  /** Queues again every event of [from, to) the channel hears, same `webhook-id`; attempts under way are left. */
  async replay(tenantId: string, channelId: string, from: Date, to: Date): Promise<number> {
    await this.opts.channels.get(tenantId, channelId);
    const r = await this.db.query(
      `INSERT INTO deliveries (tenant_id, id, channel_id, event_id, event_type, payload, event_created_at)
       SELECT o.tenant_id, gen_random_uuid(), c.id, o.id, o.type, o.payload, o.created_at
         FROM outbox o JOIN channels c ON c.tenant_id = o.tenant_id AND c.id = $2
          AND ${subscribesSql('c', 'o.type')}
        WHERE o.tenant_id = $1 AND o.created_at >= $3 AND o.created_at < $4
        ORDER BY o.created_at, o.id
       ON CONFLICT (tenant_id, channel_id, event_id) DO UPDATE
          SET status = 'pending', attempts = 0, next_attempt_at = now(), claimed_by = NULL, claimed_until = NULL
        WHERE deliveries.claimed_until IS NULL OR deliveries.claimed_until <= now()`,
      [tenantId, channelId, from.toISOString(), to.toISOString()],
    );
    this.wake();
    return r.rowCount;
  }

  /** A channel's deliveries, newest first, with their attempts. */
  async list(tenantId: string, channelId: string, q: DeliveryQuery): Promise<{ deliveries: DeliveryView[]; nextCursor: string | null }> {
    await this.opts.channels.get(tenantId, channelId);
    const limit = q.limit === undefined ? DELIVERY_PAGE_DEFAULT : Number(q.limit);
    const params: unknown[] = [tenantId, channelId, limit + 1];
    let filter = '';
    if (q.status) filter += ` AND status = $${params.push(q.status)}`;
    if (q.cursor) filter += ` AND seq < $${params.push(decodeSeqCursor(q.cursor))}::bigint`;
    const r = await this.db.query<DeliveryRow>(
      `SELECT ${DELIVERY_COLUMNS} FROM deliveries WHERE tenant_id = $1 AND channel_id = $2 ${filter} ORDER BY seq DESC LIMIT $3`,
      params,
    );
    const rows = r.rows.slice(0, limit);
    const deliveries = await this.views(tenantId, rows);
    const last = rows[rows.length - 1];
    return { deliveries, nextCursor: r.rows.length > limit && last ? encodeSeqCursor(String(last.seq)) : null };
  }

  async get(tenantId: string, deliveryId: string): Promise<DeliveryView> {
    const r = await this.db.query<DeliveryRow>(`SELECT ${DELIVERY_COLUMNS} FROM deliveries WHERE tenant_id = $1 AND id = $2`, [tenantId, deliveryId]);
    if (!r.rows[0]) throw Errors.deliveryNotFound(deliveryId);
    return (await this.views(tenantId, r.rows))[0]!;
  }

  private async views(tenantId: string, rows: DeliveryRow[]): Promise<DeliveryView[]> {
    if (!rows.length) return [];
    const a = await this.db.query<AttemptRow>(
      `SELECT delivery_id, n, at, status_code, duration_ms, error FROM delivery_attempts
        WHERE tenant_id = $1 AND delivery_id = ANY($2::uuid[]) ORDER BY at, n`,
      [tenantId, rows.map((d) => d.id)],
    );
    const byDelivery = new Map<string, AttemptRow[]>();
    for (const row of a.rows) {
      const list = byDelivery.get(row.delivery_id) ?? [];
      list.push(row);
      byDelivery.set(row.delivery_id, list);
    }
    return rows.map((d) => ({
      deliveryId: d.id,
      channelId: d.channel_id,
      eventId: d.event_id,
      eventType: d.event_type,
      webhookId: webhookIdOf(d.event_id),
      status: d.status,
      attemptCount: Number(d.attempts),
      nextAttemptAt: d.status === 'pending' || d.status === 'delivering' ? new Date(d.next_attempt_at).toISOString() : null,
      createdAt: new Date(d.created_at).toISOString(),
      deliveredAt: d.delivered_at ? new Date(d.delivered_at).toISOString() : null,
      attempts: (byDelivery.get(d.id) ?? []).map((t) => ({
        n: Number(t.n),
        at: new Date(t.at).toISOString(),
        statusCode: t.status_code === null ? null : Number(t.status_code),
        durationMs: Number(t.duration_ms),
        error: t.error,
      })),
    }));
  }

  /** Deliveries not yet settled (the metrics' gauge). */
  async depth(): Promise<number> {
    const r = await this.db.query<{ n: number }>("SELECT count(*)::int AS n FROM deliveries WHERE status IN ('pending', 'delivering')");
    return r.rows[0]?.n ?? 0;
  }
}
