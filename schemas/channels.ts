// Notification channels (spec §1: the tenant decides "which notification channels are active"): a tenant's
// webhooks and NATS subjects, their deliveries and each delivery's attempts. Problem dialect, Admin only.
import { Type, type Static } from '@sinclair/typebox';
import { PageLimit, cardEnvelopeOf, documentedAs } from './common.js';
import { EVENT_TYPES } from './events.js';

export const CHANNEL_TYPES = ['webhook', 'nats'] as const;
export type ChannelType = (typeof CHANNEL_TYPES)[number];
export const DELIVERY_STATUSES = ['pending', 'delivering', 'delivered', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

const literals = <T extends readonly string[]>(values: T, description?: string) =>
  Type.Union(values.map((v) => Type.Literal(v)), description ? { description } : {});

const Uuid = Type.String({ pattern: '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' });

/** Event types of record, or `["*"]` for all of them. */
export const EventTypes = Type.Array(literals([...EVENT_TYPES, '*'] as const, 'an event type of record, or * for all'), {
  minItems: 1,
  maxItems: EVENT_TYPES.length,
  uniqueItems: true,
});

const Description = Type.String({ minLength: 1, maxLength: 256 });
const Url = Type.String({ minLength: 8, maxLength: 2048, description: 'https URL (a sandbox tenant may use http to loopback)' });

export const ChannelIdParams = Type.Object({ channelId: Uuid }, { additionalProperties: false });
export type ChannelIdParams = Static<typeof ChannelIdParams>;
export const DeliveryIdParams = Type.Object({ deliveryId: Uuid }, { additionalProperties: false });
export type DeliveryIdParams = Static<typeof DeliveryIdParams>;

const channelFields = {
  eventTypes: EventTypes,
  enabled: Type.Optional(Type.Boolean({ default: true })),
  description: Type.Optional(Description),
};
/** A webhook channel: its `url` is required. */
export const WebhookChannelCreateBody = Type.Object({ type: Type.Literal('webhook'), ...channelFields, url: Url }, { additionalProperties: false });
/** A NATS JetStream channel: no `url` (the gateway's NATS_URL). */
export const NatsChannelCreateBody = Type.Object({ type: Type.Literal('nats'), ...channelFields }, { additionalProperties: false });

/**
 * POST /v1/admin/channels. `url` for a webhook; nothing more for nats (the gateway's NATS_URL). At run time
 * one object whose `check` asks `url` of a webhook (`NotNull`) and refuses it for nats (`UnknownProperty`), so
 * that a mistake answers one field error; the document shows the same inputs as a union discriminated by `type`.
 */
export const ChannelCreateBody = documentedAs(
  Type.Object(
    {
      type: literals(CHANNEL_TYPES),
      ...channelFields,
      url: Type.Optional(Url),
    },
    { additionalProperties: false },
  ),
  {
    oneOf: [WebhookChannelCreateBody, NatsChannelCreateBody],
    discriminator: {
      propertyName: 'type',
      mapping: { webhook: '#/components/schemas/WebhookChannelCreateBody', nats: '#/components/schemas/NatsChannelCreateBody' },
    },
  },
);
export type ChannelCreateBody = Static<typeof ChannelCreateBody>;

/** PATCH /v1/admin/channels/{channelId}: what changes; `description: null` removes it. The type stays. */
export const ChannelPatchBody = Type.Object(
  {
    eventTypes: Type.Optional(EventTypes),
    enabled: Type.Optional(Type.Boolean()),
    description: Type.Optional(Type.Union([Description, Type.Null()])),
    url: Type.Optional(Url),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type ChannelPatchBody = Static<typeof ChannelPatchBody>;

/** POST /v1/admin/channels/{channelId}/rotate-secret: how long the previous secret keeps signing. */
export const RotateSecretBody = Type.Object(
  { overlapSeconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 604_800, description: 'default 86400 (CARDLINE_WEBHOOK_SECRET_OVERLAP_HOURS)' })) },
  { additionalProperties: false },
);
export type RotateSecretBody = Static<typeof RotateSecretBody>;

export const ChannelView = Type.Object({
  channelId: Type.String(),
  type: literals(CHANNEL_TYPES),
  eventTypes: Type.Array(Type.String()),
  enabled: Type.Boolean(),
  description: Type.Optional(Type.String()),
  url: Type.Optional(Type.String()),
  /** nats: where events go (`<prefix>.<tenantId>.<eventType>`). */
  subject: Type.Optional(Type.String()),
  /** Why the gateway disabled it (a 410 from the receiver). */
  disabledReason: Type.Optional(Type.String()),
  /** Until when the previous secret still signs, during a rotation's overlap. */
  previousSecretUntil: Type.Optional(Type.String()),
  createdAt: Type.String(),
  updatedAt: Type.String(),
});
export type ChannelView = Static<typeof ChannelView>;

/** A created channel or a rotated secret: the `whsec_` secret, shown this once. */
export const ChannelWithSecret = Type.Intersect([ChannelView, Type.Object({ secret: Type.Optional(Type.String({ description: 'shown once: keep it' })) })]);

export const ChannelResponse = cardEnvelopeOf(ChannelView);
export const ChannelSecretResponse = cardEnvelopeOf(ChannelWithSecret);
export const ChannelListResponse = cardEnvelopeOf(Type.Array(ChannelView));

export const AttemptView = Type.Object({
  n: Type.Integer(),
  at: Type.String(),
  statusCode: Type.Union([Type.Integer(), Type.Null()]),
  durationMs: Type.Integer(),
  error: Type.Union([Type.String(), Type.Null()]),
});

export const DeliveryView = Type.Object({
  deliveryId: Type.String(),
  channelId: Type.String(),
  eventId: Type.String(),
  eventType: Type.String(),
  /** The `webhook-id` every attempt of this event sends (the same on retry and replay). */
  webhookId: Type.String(),
  status: literals(DELIVERY_STATUSES),
  attemptCount: Type.Integer(),
  nextAttemptAt: Type.Union([Type.String(), Type.Null()]),
  createdAt: Type.String(),
  deliveredAt: Type.Union([Type.String(), Type.Null()]),
  attempts: Type.Array(AttemptView),
});
export type DeliveryView = Static<typeof DeliveryView>;

export const DELIVERY_PAGE_MAX = 200;
export const DELIVERY_PAGE_DEFAULT = 50;

export const DeliveryQuery = Type.Object(
  {
    status: Type.Optional(literals(DELIVERY_STATUSES)),
    limit: Type.Optional(PageLimit(DELIVERY_PAGE_MAX, DELIVERY_PAGE_DEFAULT)),
    cursor: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$', description: '`pagination.nextCursor` of the previous page' })),
  },
  { additionalProperties: false },
);
export type DeliveryQuery = Static<typeof DeliveryQuery>;

/** Newest first; `nextCursor` names the next (older) page, null on the last. */
export const DeliveryPageResponse = Type.Object({
  result: Type.Array(DeliveryView),
  pagination: Type.Object({ nextCursor: Type.Union([Type.String(), Type.Null()]) }),
});
export const DeliveryResponse = cardEnvelopeOf(DeliveryView);

/** POST /v1/admin/channels/{channelId}/replay: events of record created in [from, to). */
export const ReplayBody = Type.Object(
  {
    from: Type.String({ format: 'date-time', description: 'inclusive, a date-time with an offset' }),
    to: Type.String({ format: 'date-time', description: 'exclusive, a date-time with an offset' }),
  },
  { additionalProperties: false },
);
export type ReplayBody = Static<typeof ReplayBody>;
export const ReplayResponse = cardEnvelopeOf(Type.Object({ message: Type.String(), requeued: Type.Integer() }));
