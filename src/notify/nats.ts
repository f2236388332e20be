// The `nats` channel (decision 0084): events published to NATS JetStream on `<prefix>.<tenantId>.<eventType>`
// with the event id as Nats-Msg-Id, so that the stream drops a redelivered event within its duplicate window.
// One connection per process, opened at the first publish; the stream is created when it is missing.
// The NATS client is loaded with the first publish: a process that never publishes (the CLI) never loads it.
import type { JetStreamClient } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import type { AttemptResult } from './channel-types/type.js';

export interface NatsPublisherOptions {
  servers: string;
  stream: string;
  subjectPrefix: string;
  timeoutMs: number;
}

/** How long the stream remembers message ids to drop duplicates (the Nats-Msg-Id window): one hour. */
const DUPLICATE_WINDOW_NS = 60 * 60 * 1e9;

export const subjectOf = (prefix: string, tenantId: string, eventType: string): string => `${prefix}.${tenantId}.${eventType}`;

export class NatsPublisher {
  private ready: Promise<{ nc: NatsConnection; js: JetStreamClient }> | null = null;

  constructor(private readonly opts: NatsPublisherOptions) {}

  private open(): Promise<{ nc: NatsConnection; js: JetStreamClient }> {
    this.ready ??= (async () => {
      const [{ jetstream, jetstreamManager }, { connect }] = await Promise.all([import('@nats-io/jetstream'), import('@nats-io/transport-node')]);
      const nc = await connect({ servers: this.opts.servers.split(',').map((s) => s.trim()), timeout: this.opts.timeoutMs, name: 'cardline-gateway' });
      try {
        const jsm = await jetstreamManager(nc, { timeout: this.opts.timeoutMs });
        await jsm.streams.info(this.opts.stream).catch(async (err: unknown) => {
          if (!/not found/i.test(String((err as Error)?.message))) throw err;
          await jsm.streams.add({ name: this.opts.stream, subjects: [`${this.opts.subjectPrefix}.>`], duplicate_window: DUPLICATE_WINDOW_NS });
        });
        return { nc, js: jetstream(nc, { timeout: this.opts.timeoutMs }) };
      } catch (err) {
        await nc.close().catch(() => undefined);
        throw err;
      }
    })();
    // A failed start is tried again at the next publish.
    this.ready.catch(() => (this.ready = null));
    return this.ready;
  }

  /** Publishes one event; success is the stream's acknowledgement (a duplicate is acknowledged too). */
  async publish(tenantId: string, eventType: string, eventId: string, body: string, traceparent?: string): Promise<AttemptResult> {
    const started = performance.now();
    try {
      const { js } = await this.open();
      const options: Parameters<JetStreamClient['publish']>[2] = { msgID: eventId, timeout: this.opts.timeoutMs };
      if (traceparent) {
        // The trace context as a message header (the W3C name), as OpenTelemetry's messaging conventions carry it.
        const { headers } = await import('@nats-io/transport-node');
        const h = headers();
        h.set('traceparent', traceparent);
        options.headers = h;
      }
      await js.publish(subjectOf(this.opts.subjectPrefix, tenantId, eventType), body, options);
      return { ok: true, statusCode: null, durationMs: Math.round(performance.now() - started), error: null, retryAfterMs: null };
    } catch (err) {
      const message = (err as Error)?.message ?? String(err);
      return { ok: false, statusCode: null, durationMs: Math.round(performance.now() - started), error: `nats: ${message}`.replace(/\s+/g, ' ').slice(0, 300), retryAfterMs: null };
    }
  }

  async close(): Promise<void> {
    const ready = this.ready;
    this.ready = null;
    if (ready) await ready.then(({ nc }) => nc.drain()).catch(() => undefined);
  }
}
