// The `nats` channel type: events published to NATS JetStream on the gateway's own server (NATS_URL), subject
// `<prefix>.<tenantId>.<eventType>`, the event id as Nats-Msg-Id (src/notify/nats.ts, decision 0084).
import { Type } from '@sinclair/typebox';
import { Errors } from '../../errors.js';
import { NatsPublisher, subjectOf } from '../nats.js';
import { defineChannelType, type ChannelSender } from './type.js';

/** Without NATS_URL every attempt fails (with the reason) and is retried: the operator may configure it later. */
const unconfigured: ChannelSender = {
  send: async () => ({ ok: false, statusCode: null, durationMs: 0, error: 'nats: this gateway has no NATS_URL', retryAfterMs: null }),
  close: async () => undefined,
};

export const nats = defineChannelType({
  type: 'nats',
  name: 'Nats',
  title: 'NATS JetStream',
  createDoc: "A nats channel publishes to `cardline.<tenantId>.<eventType>` on the gateway's NATS server.",
  fields: {},
  patchable: [],
  viewFields: {
    /** Where events go (`<prefix>.<tenantId>.<eventType>`). */
    subject: Type.Optional(Type.String()),
  },
  signingSecret: false,
  refusals: { create: ['NATS_NOT_CONFIGURED'], update: [] },
  async prepare(_fields, { config }) {
    if (!config.natsUrl) throw Errors.business('NATS_NOT_CONFIGURED', 'This gateway has no NATS server (NATS_URL); ask the operator to configure one.');
    return {};
  },
  view: ({ tenantId }, config) => ({ subject: subjectOf(config.natsSubjectPrefix, tenantId, '<eventType>') }),
  sender({ config }) {
    if (!config.natsUrl) return unconfigured;
    const publisher = new NatsPublisher({ servers: config.natsUrl, stream: config.natsStream, subjectPrefix: config.natsSubjectPrefix, timeoutMs: 5_000 });
    return {
      send: (_channel, event) => publisher.publish(event.tenantId, event.eventType, event.eventId, event.body, event.traceparent),
      close: () => publisher.close(),
    };
  },
});
