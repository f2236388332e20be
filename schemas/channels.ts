// Notification channels (spec §1: the tenant decides "which notification channels are active"): what every
// channel type shares, a channel's deliveries and each delivery's attempts. Problem dialect, Admin only.
import { Type, type Static } from '@sinclair/typebox';
import { PageLimit, cardEnvelopeOf } from './common.js';
import { EVENT_TYPES } from './events.js';

export const DELIVERY_STATUSES = ['pending', 'delivering', 'delivered', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** One of `values`: a union of string literals (the document shows `anyOf` of one-value enums). */
export const literals = <T extends readonly string[]>(values: T, description?: string) =>
  Type.Union(values.map((v) => Type.Literal(v)), description ? { description } : {});

const UUID_PATTERN = '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';
const Uuid = Type.String({ pattern: UUID_PATTERN });
/** A channel id as the store writes it (lower-case UUID). */
export const isChannelId = (value: string): boolean => new RegExp(UUID_PATTERN).test(value);

/** Event types of record, or `["*"]` for all of them. */
export const EventTypes = Type.Array(literals([...EVENT_TYPES, '*'] as const, 'an event type of record, or * for all'), {
  minItems: 1,
  maxItems: EVENT_TYPES.length,
  uniqueItems: true,
});

const Description = Type.String({ minLength: 1, maxLength: 256 });

export const ChannelIdParams = Type.Object({ channelId: Uuid }, { additionalProperties: false });
export type ChannelIdParams = Static<typeof ChannelIdParams>;
export const DeliveryIdParams = Type.Object({ deliveryId: Uuid }, { additionalProperties: false });
export type DeliveryIdParams = Static<typeof DeliveryIdParams>;

/** A channel create body's common fields; the bodies are composed from the channel type list, not imported here. */
export const CHANNEL_FIELDS = {
  eventTypes: EventTypes,
  enabled: Type.Optional(Type.Boolean({ default: true })),
  description: Type.Optional(Description),
};

/** What every channel's PATCH may change; `description: null` removes it. The type stays. */
export const CHANNEL_PATCH_FIELDS = {
  eventTypes: Type.Optional(EventTypes),
  enabled: Type.Optional(Type.Boolean()),
  description: Type.Optional(Type.Union([Description, Type.Null()])),
};

/** The view's fields around `type` and the type's own: `head` before them (`type` after `channelId`), `tail` after. */
export const CHANNEL_VIEW_FIELDS = {
  head: {
    channelId: Type.String(),
    eventTypes: Type.Array(Type.String()),
    enabled: Type.Boolean(),
    description: Type.Optional(Type.String()),
  },
  tail: {
    /** Why the gateway disabled it (a 410 from the receiver). */
    disabledReason: Type.Optional(Type.String()),
    /** Until when the previous secret still signs, during a rotation's overlap. */
    previousSecretUntil: Type.Optional(Type.String()),
    createdAt: Type.String(),
    updatedAt: Type.String(),
  },
};

/** POST /v1/admin/channels/{channelId}/rotate-secret: how long the previous secret keeps signing. */
export const RotateSecretBody = Type.Object(
  { overlapSeconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 604_800, description: 'default 86400 (CARDLINE_WEBHOOK_SECRET_OVERLAP_HOURS)' })) },
  { additionalProperties: false },
);
export type RotateSecretBody = Static<typeof RotateSecretBody>;

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
