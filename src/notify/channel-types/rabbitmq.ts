// The `rabbitmq` channel type (AMQP 0-9-1, decision 0241): persistent messages to the tenant's exchange, a routing
// key per event type, success only on a publisher confirm. The URL's credentials stay sealed; its host passes the
// address policy. One connection per broker per process, one AMQP channel per Cardline channel (so an error
// closes only its own); amqplib loads with the first publish.
import { isIP } from 'node:net';
import { Type } from '@sinclair/typebox';
import type { ChannelModel, ConfirmChannel } from 'amqplib';
import { literals } from '../../../schemas/channels.js';
import { Errors } from '../../errors.js';
import { addressRefusal, checkAddresses, checkedLookup, hostOf, isAllowListed, rangeOf, TargetRefused, type Resolver, type TargetPolicy } from '../addresses.js';
import { defineChannelType, oneLine, type AttemptResult, type ChannelSender, type DeliveryChannel, type OutgoingEvent, type StoredFields } from './type.js';

const EXCHANGE_TYPES = ['topic', 'direct', 'fanout', 'headers'] as const;
type ExchangeType = (typeof EXCHANGE_TYPES)[number];

/** What the store keeps as the channel's settings (the URL is sealed apart). */
interface Settings {
  exchange: string;
  exchangeType?: ExchangeType;
  routingKeyPrefix?: string;
}
const SETTINGS = ['exchange', 'exchangeType', 'routingKeyPrefix'] as const;

/** A connection unused this long is closed (a channel changed to another broker leaves its old one behind). */
const IDLE_MS = 5 * 60_000;
/** What the address policy's refusals name. */
const TARGETS = 'channels';

/** Checks a broker URL's form (amqps, or amqp where allowed; one vhost segment); the reason never holds credentials. */
function checkBrokerUrl(raw: string, policy: TargetPolicy): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new TargetRefused('url is not an absolute URL');
  }
  if (url.protocol !== 'amqps:' && url.protocol !== 'amqp:') throw new TargetRefused('url must be an amqps URL');
  const host = hostOf(url);
  if (!host) throw new TargetRefused('url must name a host');
  if (url.search || url.hash) throw new TargetRefused('url must hold neither a query nor a fragment');
  if (url.pathname.slice(1).includes('/')) throw new TargetRefused('url must name the virtual host as one path segment (%2F for /)');
  if (url.protocol === 'amqp:' && !isAllowListed(host, policy)) {
    const loopback = host === 'localhost' || host.endsWith('.localhost') || (isIP(host) !== 0 && rangeOf(host) === 'loopback');
    if (!policy.sandbox) throw new TargetRefused('url must be an amqps URL (only a sandbox tenant may target loopback over amqp)');
    if (!loopback) throw new TargetRefused('url must be an amqps URL (a sandbox tenant may use amqp to loopback only)');
  }
  return url;
}

/** The URL as a view shows it: without user name and password. */
function withoutCredentials(raw: string): string {
  const url = new URL(raw);
  url.username = '';
  url.password = '';
  return url.toString();
}

const routingKeyOf = (prefix: string | undefined, eventType: string): string => (prefix ? `${prefix}.${eventType}` : eventType);

/** An error's text with the URL's credentials taken out, whatever the library put in it. */
function scrub(text: string, url: string): string {
  let out = text;
  try {
    const { username, password } = new URL(url);
    for (const secret of [password, decodeURIComponent(password), username && password ? `${username}:${password}` : ''].filter((s) => s.length >= 3)) {
      out = out.replaceAll(secret, '***');
    }
  } catch {
    // Not a URL: it holds nothing to take out but itself.
  }
  return out.replaceAll(url, '<url>');
}

/** One AMQP channel in confirm mode, for one Cardline channel's exchange settings. */
interface Lane {
  ch: ConfirmChannel;
  signature: string;
  /** Why the broker closed it (a 404 for a missing exchange), for the attempts it fails. */
  error: string | null;
  closed: boolean;
}

/** One connection to one broker (URL and address policy): its lanes by Cardline channel id. */
class Broker {
  private readonly lanes = new Map<string, Promise<Lane>>();
  private readonly idle: NodeJS.Timeout;
  closed = false;
  /** Why the broker or the network closed the connection. */
  error: string | null = null;

  constructor(
    private readonly model: ChannelModel,
    gone: () => void,
  ) {
    model.on('error', (err: Error) => (this.error = oneLine(err.message)));
    model.on('close', () => {
      this.closed = true;
      clearTimeout(this.idle);
      gone();
    });
    this.idle = setTimeout(() => void this.close(), IDLE_MS).unref();
  }

  /** The lane of a Cardline channel: its own, opened again when closed or when the channel's exchange changed. */
  async lane(channelId: string, settings: Settings): Promise<Lane> {
    this.idle.refresh();
    const signature = JSON.stringify([settings.exchange, settings.exchangeType ?? null]);
    for (;;) {
      const current = this.lanes.get(channelId);
      if (!current) {
        const opening = this.open(settings, signature);
        this.lanes.set(channelId, opening);
        opening.catch(() => this.lanes.get(channelId) === opening && this.lanes.delete(channelId));
        return opening;
      }
      const lane = await current.catch(() => null);
      if (lane && !lane.closed && lane.signature === signature) return lane;
      if (this.lanes.get(channelId) === current) {
        this.lanes.delete(channelId);
        if (lane && !lane.closed) void lane.ch.close().catch(() => undefined);
      }
    }
  }

  private async open(settings: Settings, signature: string): Promise<Lane> {
    const ch = await this.model.createConfirmChannel();
    const lane: Lane = { ch, signature, error: null, closed: false };
    ch.on('error', (err: Error) => (lane.error = oneLine(err.message)));
    ch.on('close', () => (lane.closed = true));
    // Declared the way the channel says; a different existing exchange fails the attempt with the broker's 406.
    if (settings.exchangeType) await ch.assertExchange(settings.exchange, settings.exchangeType, { durable: true });
    return lane;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.idle);
    await this.model.close().catch(() => undefined);
  }
}

/** Settles with `promise`, or rejects when `signal` aborts first (the attempt's deadline, or the process stopping). */
function within<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', abort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}

export interface RabbitmqSenderOptions {
  timeoutMs: number;
  allowHosts: readonly string[];
  /** Tests resolve names their own way; the default is the system's resolver. */
  resolve?: Resolver;
}

export class RabbitmqSender implements ChannelSender {
  private readonly brokers = new Map<string, Promise<Broker>>();

  constructor(private readonly opts: RabbitmqSenderOptions) {}

  private broker(url: string, policy: TargetPolicy): Promise<Broker> {
    const key = `${policy.sandbox ? 'sandbox' : 'production'} ${url}`;
    const known = this.brokers.get(key);
    if (known) return known;
    const forget = () => this.brokers.get(key) === connecting && this.brokers.delete(key);
    const connecting: Promise<Broker> = import('amqplib').then(async (amqp) => {
      const model = await amqp.connect(url, {
        timeout: this.opts.timeoutMs,
        // Every connection resolves its host through the policy: a name re-pointed at a private address is refused.
        lookup: checkedLookup(policy, this.opts.resolve),
        clientProperties: { connection_name: 'cardline-gateway' },
      });
      return new Broker(model, forget);
    });
    connecting.catch(forget);
    this.brokers.set(key, connecting);
    return connecting;
  }

  /** One publish, recorded delivered only once the broker confirms it; a nack, a closed channel or no confirm in time fails it. */
  async send(channel: DeliveryChannel, event: OutgoingEvent, signal: AbortSignal): Promise<AttemptResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const url = channel.secret?.url ?? '';
    const settings = channel.settings as unknown as Settings;
    const deadline = AbortSignal.any([signal, AbortSignal.timeout(this.opts.timeoutMs)]);
    let stage = 'connecting';
    let lane: Lane | null = null;
    let broker: Broker | null = null;
    try {
      const policy: TargetPolicy = { sandbox: channel.sandbox, allowHosts: this.opts.allowHosts, targets: TARGETS };
      // The form again (the policy may have changed), and literal addresses here, since they bypass checkedLookup.
      const host = hostOf(checkBrokerUrl(url, policy));
      if (isIP(host)) {
        const refusal = addressRefusal(host, host, policy);
        if (refusal) throw new TargetRefused(refusal);
      }
      broker = await within(this.broker(url, policy), deadline);
      stage = 'opening a channel';
      lane = await within(broker.lane(channel.id, settings), deadline);
      stage = 'waiting for the confirm';
      const publishing = lane;
      await within(
        new Promise<void>((resolve, reject) => {
          publishing.ch.publish(
            settings.exchange,
            routingKeyOf(settings.routingKeyPrefix, event.eventType),
            Buffer.from(event.body),
            {
              persistent: true,
              contentType: 'application/json',
              messageId: event.eventId,
              type: event.eventType,
              timestamp: Math.floor(event.createdAt.getTime() / 1000),
              appId: 'cardline',
              headers: { 'cardline-tenant-id': event.tenantId, 'webhook-id': event.msgId, ...(event.traceparent ? { traceparent: event.traceparent } : {}) },
            },
            (err: unknown) => (err ? reject(err instanceof Error ? err : new Error(String(err))) : resolve()),
          );
        }),
        deadline,
      );
      return { ok: true, statusCode: null, durationMs: elapsed(), error: null, retryAfterMs: null };
    } catch (err) {
      return { ok: false, statusCode: null, durationMs: elapsed(), error: oneLine(this.describe(err, stage, lane, broker, url)), retryAfterMs: null };
    }
  }

  private describe(err: unknown, stage: string, lane: Lane | null, broker: Broker | null, url: string): string {
    const e = err as { name?: string; message?: string; code?: string };
    if (e?.name === 'TargetRefused') return `refused: ${e.message}`;
    if (e?.name === 'TimeoutError') return `rabbitmq: no answer within ${this.opts.timeoutMs} ms (${stage})`;
    // The broker's reason (a channel or connection it closed) says more than the library's "channel closed".
    const reason = lane?.error ?? broker?.error ?? (e?.code && !String(e.message).includes(e.code) ? `${e.code}: ${e.message}` : (e?.message ?? String(err)));
    return scrub(`rabbitmq: ${reason}`, url);
  }

  async close(): Promise<void> {
    const brokers = [...this.brokers.values()];
    this.brokers.clear();
    await Promise.all(brokers.map((b) => b.then((broker) => broker.close(), () => undefined)));
  }
}

const Url = Type.String({
  minLength: 8,
  maxLength: 2048,
  description: 'amqps://user:password@host[:port]/vhost (a sandbox tenant may use amqp to loopback); kept sealed, shown without its credentials',
});

export const rabbitmq = defineChannelType({
  type: 'rabbitmq',
  name: 'Rabbitmq',
  title: 'RabbitMQ',
  createDoc:
    'A rabbitmq channel needs `url` (its credentials are kept sealed and never shown) and `exchange`: each event is published there, ' +
    'persistent, with the routing key `[<routingKeyPrefix>.]<eventType>` and the event id as message id, and counts as delivered ' +
    'once the broker confirms it. With `exchangeType` the gateway declares the exchange (durable); without it, the exchange must exist.',
  fields: {
    url: Url,
    exchange: Type.String({ minLength: 1, maxLength: 255, pattern: '^[A-Za-z0-9_.:-]+$', description: 'the exchange events are published to' }),
    exchangeType: Type.Optional(literals(EXCHANGE_TYPES, 'the gateway declares the exchange (durable) with this type; without it the exchange must exist')),
    routingKeyPrefix: Type.Optional(
      Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9_-]+(\\.[A-Za-z0-9_-]+)*$', description: 'routing keys are `<prefix>.<eventType>` (the event type alone without it)' }),
    ),
  },
  patchable: ['url', 'exchange', 'exchangeType', 'routingKeyPrefix'],
  viewFields: {
    url: Type.Optional(Type.String()),
    exchange: Type.Optional(Type.String()),
    exchangeType: Type.Optional(literals(EXCHANGE_TYPES)),
    /** The routing key of an event: `[<prefix>.]<eventType>`. */
    routingKey: Type.Optional(Type.String()),
  },
  signingSecret: false,
  refusals: { create: ['CHANNEL_URL_REFUSED'], update: ['CHANNEL_URL_REFUSED'] },
  async prepare(fields, ctx, current) {
    const out: StoredFields = {};
    if (fields.url !== undefined) {
      const url = fields.url as string;
      const policy: TargetPolicy = { sandbox: ctx.sandbox, allowHosts: ctx.config.allowHosts, targets: TARGETS };
      try {
        await checkAddresses(hostOf(checkBrokerUrl(url, policy)), policy, ctx.resolve);
      } catch (err) {
        if (err instanceof TargetRefused) throw Errors.business('CHANNEL_URL_REFUSED', `The broker URL is refused: ${err.message}.`);
        throw err;
      }
      out.url = withoutCredentials(url);
      out.secret = { url };
    }
    if (SETTINGS.some((k) => fields[k] !== undefined)) {
      const settings: Record<string, unknown> = { ...current?.settings };
      for (const k of SETTINGS) if (fields[k] !== undefined) settings[k] = fields[k];
      out.settings = settings;
    }
    return out;
  },
  view: ({ url, settings }) => {
    const s = settings as unknown as Settings;
    return {
      ...(url !== null ? { url } : {}),
      exchange: s.exchange,
      ...(s.exchangeType ? { exchangeType: s.exchangeType } : {}),
      routingKey: routingKeyOf(s.routingKeyPrefix, '<eventType>'),
    };
  },
  sender: ({ config, resolve }) => new RabbitmqSender({ timeoutMs: config.webhookTimeoutMs, allowHosts: config.allowHosts, resolve }),
});
