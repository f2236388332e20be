// A tenant's notification channels (spec §1: the tenant decides "which notification channels are active"),
// their deliveries and attempts, of the types src/notify/channel-types lists (webhooks signed per Standard
// Webhooks, NATS JetStream, RabbitMQ). Admin only, problem dialect, every call audited (decision 0080).
import {
  ChannelIdParams,
  DELIVERY_PAGE_MAX,
  DeliveryIdParams,
  DeliveryPageResponse,
  DeliveryQuery,
  DeliveryResponse,
  ReplayBody,
  ReplayResponse,
  RotateSecretBody,
  isChannelId,
} from '../../schemas/channels.js';
import { PAGE_MAX, PageQuery } from '../../schemas/page.js';
import type { FieldError } from '../../schemas/common.js';
import { Errors } from '../errors.js';
import { MessageResponse } from '../../schemas/management.js';
import { decodeSeqCursor } from '../store/seq-cursor.js';
import { keyCursorOf, pageBounds, pageQueryErrors } from '../store/key-cursor.js';
import { CHANNEL_TYPES } from '../notify/channel-types/index.js';
import { CHANNEL_REFUSALS, typeFieldErrors } from '../notify/channel-types/registry.js';
import { ChannelCreateBody, ChannelPageResponse, ChannelPatchBody, ChannelResponse, ChannelSecretResponse } from '../notify/channel-types/schemas.js';
import { defineOperation } from './define.js';

const TAG = 'Notification channels';
const fieldError = (field: string, message: string, objectName: string): FieldError => ({ field, message, objectName });
/** The longest range a replay may cover. */
const MAX_REPLAY_DAYS = 31;

const notFound = Errors.channelNotFound('0190b3c4-5d6e-7f80-9a1b-2c3d4e5f6a7b');

/** The `*` wildcard stands alone; a create body holds its type's fields (a PATCH's are checked against the stored type). */
function channelChecks(body: { type?: string; eventTypes?: string[] } & Record<string, unknown>, objectName: string, creating: boolean): FieldError[] {
  const errors: FieldError[] = [];
  if (body.eventTypes && body.eventTypes.includes('*') && body.eventTypes.length > 1) errors.push(fieldError('eventTypes', 'Invalid', objectName));
  if (creating && body.type !== undefined) errors.push(...typeFieldErrors(body, body.type, objectName, 'create'));
  return errors;
}

/** "a webhook, NATS JetStream or RabbitMQ". */
const typeTitles = CHANNEL_TYPES.map((d) => d.title).reduce((out, title, i, all) => (i === 0 ? title : `${out}${i === all.length - 1 ? ' or ' : ', '}${title}`), '');
const [firstType, ...otherTypes] = CHANNEL_TYPES;

export const channelOperations = [
  defineOperation({
    id: 'channel.list',
    method: 'GET',
    url: '/v1/admin/channels',
    summary: "The tenant's notification channels (never a secret)",
    description: `Oldest first. Pages: \`limit\` (1..${PAGE_MAX}, default 50) and \`cursor\` (\`pagination.nextCursor\` of the previous page).`,
    tag: TAG,
    dialect: 'problem',
    access: 'admin',
    objectName: 'channelListRequest',
    query: PageQuery,
    response: ChannelPageResponse,
    check: ({ query }) => pageQueryErrors(query, 'channelListRequest', keyCursorOf(isChannelId)),
    execute: ({ tenant, query, services }) => services.channels.page(tenant.id, pageBounds(query)),
    view: ({ items, nextCursor }) => ({ result: items, pagination: { nextCursor } }),
    audit: {},
  }),

  defineOperation({
    id: 'channel.create',
    method: 'POST',
    url: '/v1/admin/channels',
    status: 201,
    summary: `Add a notification channel: ${typeTitles}`,
    // The first type's sentence leads (the example is one), then what every channel has, then the other types'.
    description: [firstType.createDoc, '`eventTypes` lists event types of record, or `["*"]` for all.', ...otherTypes.map((d) => d.createDoc)].join(' '),
    tag: TAG,
    dialect: 'problem',
    access: 'admin',
    objectName: 'channelRequest',
    body: ChannelCreateBody,
    response: ChannelSecretResponse,
    // The answer holds the secret, shown once: a retry with the key gets it again, stored sealed (decision 0175).
    idempotent: 'sealed',
    refusals: CHANNEL_REFUSALS.create,
    check: ({ body }) => channelChecks(body, 'channelRequest', true),
    execute: ({ tenant, body, services }) => services.channels.create(tenant.id, tenant.config.sandbox === true, body),
    view: (channel) => ({ result: channel, pagination: null }),
    audit: { target: { type: 'body' } },
    examples: { body: { type: 'webhook', url: 'https://hooks.bank.example/cardline', eventTypes: ['credit-limit.upgraded', 'card.blocked'], description: 'Risk desk' } },
  }),

  defineOperation({
    id: 'channel.read',
    method: 'GET',
    url: '/v1/admin/channels/:channelId',
    summary: 'One notification channel (never its secret)',
    tag: TAG,
    dialect: 'problem',
    access: 'admin',
    objectName: 'channelRequest',
    params: ChannelIdParams,
    response: ChannelResponse,
    errors: [notFound],
    execute: ({ tenant, params, services }) => services.channels.get(tenant.id, params.channelId),
    view: (channel) => ({ result: channel, pagination: null }),
    audit: { target: { channelId: 'params' } },
  }),

  defineOperation({
    id: 'channel.update',
    method: 'PATCH',
    url: '/v1/admin/channels/:channelId',
    summary: "Change a channel's event types, URL, description, or enable or disable it",
    description: 'Enabling a channel the gateway disabled (a 410 from its receiver) clears the reason; its pending deliveries go out again.',
    tag: TAG,
    dialect: 'problem',
    access: 'admin',
    objectName: 'channelPatch',
    params: ChannelIdParams,
    body: ChannelPatchBody,
    response: ChannelResponse,
    refusals: CHANNEL_REFUSALS.update,
    errors: [notFound],
    // The body may hold a broker URL with its credentials: fingerprinted under the gateway's key (decision 0175).
    idempotent: 'sealed',
    check: ({ body }) => channelChecks(body, 'channelPatch', false),
    execute: ({ tenant, params, body, services }) => services.channels.update(tenant.id, tenant.config.sandbox === true, params.channelId, body),
    view: (channel) => ({ result: channel, pagination: null }),
    audit: { target: { channelId: 'params' } },
    examples: { body: { enabled: false } },
  }),

  defineOperation({
    id: 'channel.remove',
    method: 'DELETE',
    url: '/v1/admin/channels/:channelId',
    summary: 'Remove a channel, with its deliveries',
    tag: TAG,
    dialect: 'problem',
    access: 'admin',
    objectName: 'channelRemoveRequest',
    params: ChannelIdParams,
    response: MessageResponse,
    errors: [notFound],
    execute: ({ tenant, params, services }) => services.channels.remove(tenant.id, params.channelId),
    view: (_done, { params }) => ({ result: { message: `Channel ${params.channelId} removed` }, pagination: null }),
    audit: { target: { channelId: 'params' } },
  }),

  defineOperation({
    id: 'channel.rotate-secret',
    method: 'POST',
    url: '/v1/admin/channels/:channelId/rotate-secret',
    summary: "A new signing secret for a webhook; the previous one keeps signing during the overlap",
    description:
      'The new `whsec_` secret is in this answer only. Until `previousSecretUntil` (24 h by default, or `overlapSeconds`) every ' +
      'webhook carries two signatures, one per secret, so the receiver can switch at its own pace.',
    tag: TAG,
    dialect: 'problem',
    access: 'admin',
    objectName: 'rotateSecretRequest',
    params: ChannelIdParams,
    body: RotateSecretBody,
    response: ChannelSecretResponse,
    // The new secret, shown once: a retry with the key gets it again, stored sealed (decision 0175).
    idempotent: 'sealed',
    refusals: ['CHANNEL_NOT_WEBHOOK'],
    errors: [notFound],
    execute: ({ tenant, params, body, services }) => services.channels.rotateSecret(tenant.id, params.channelId, body?.overlapSeconds),
    view: (channel) => ({ result: channel, pagination: null }),
    audit: { target: { channelId: 'params' } },
    examples: { body: { overlapSeconds: 3600 } },
  }),

  defineOperation({
    id: 'channel.test',
    method: 'POST',
    url: '/v1/admin/channels/:channelId/test',
    summary: 'Send a channel.test event to the channel now',
    description: 'Answers the delivery with its first attempt. A failed test delivery is retried on the schedule like any other.',
    tag: TAG,
    dialect: 'problem',
    access: 'admin',
    objectName: 'channelTestRequest',
    params: ChannelIdParams,
    response: DeliveryResponse,
    refusals: ['CHANNEL_DISABLED'],
    errors: [notFound],
    execute: ({ tenant, params, services }) => services.deliveries.test(tenant.id, params.channelId),
    view: (delivery) => ({ result: delivery, pagination: null }),
    audit: { target: { channelId: 'params' } },
  }),

  defineOperation({
    id: 'channel.deliveries',
    method: 'GET',
    url: '/v1/admin/channels/:channelId/deliveries',
    summary: "A channel's deliveries, newest first, with their attempts",
    description: `Filter by \`status\` (pending, delivering, delivered, failed); pages: \`limit\` (1..${DELIVERY_PAGE_MAX}, default 50) and \`cursor\`.`,
    tag: TAG,
    dialect: 'problem',
    access: 'admin',
    objectName: 'deliveryListRequest',
    params: ChannelIdParams,
    query: DeliveryQuery,
    response: DeliveryPageResponse,
    errors: [notFound],
    check: ({ query }) => pageQueryErrors(query, 'deliveryListRequest', (cursor) => decodeSeqCursor(cursor) !== null, DELIVERY_PAGE_MAX),
    execute: ({ tenant, params, query, services }) => services.deliveries.list(tenant.id, params.channelId, query),
    view: ({ deliveries, nextCursor }) => ({ result: deliveries, pagination: { nextCursor } }),
    audit: { target: { channelId: 'params' } },
  }),

  defineOperation({
    id: 'delivery.retry',
    method: 'POST',
    url: '/v1/admin/deliveries/:deliveryId/retry',
    summary: 'Deliver one delivery again now, whatever its status',
    description: 'Same `webhook-id`, a fresh timestamp and signature. Answers the delivery with this attempt.',
    tag: TAG,
    dialect: 'problem',
    access: 'admin',
    objectName: 'deliveryRetryRequest',
    params: DeliveryIdParams,
    response: DeliveryResponse,
    refusals: ['CHANNEL_DISABLED', 'DELIVERY_IN_PROGRESS'],
    errors: [Errors.deliveryNotFound('0190b3c4-5d6e-7f80-9a1b-2c3d4e5f6a7b')],
    execute: ({ tenant, params, services }) => services.deliveries.retryNow(tenant.id, params.deliveryId),
    view: (delivery) => ({ result: delivery, pagination: null }),
    audit: { target: { deliveryId: 'params' } },
  }),

  defineOperation({
    id: 'channel.replay',
    method: 'POST',
    url: '/v1/admin/channels/:channelId/replay',
    summary: 'Queue again the events of record of a time range for one channel',
    description:
      `Events created in [from, to) that the channel subscribes to go out again, with the same \`webhook-id\`s (at most ${MAX_REPLAY_DAYS} days).`,
    tag: TAG,
    dialect: 'problem',
    access: 'admin',
    objectName: 'replayRequest',
    params: ChannelIdParams,
    body: ReplayBody,
    response: ReplayResponse,
    errors: [notFound],
    check: ({ body }) => {
      const from = Date.parse(body.from);
      const to = Date.parse(body.to);
      if (!(from < to)) return [fieldError('to', 'Invalid', 'replayRequest')];
      if (to - from > MAX_REPLAY_DAYS * 86_400_000) return [fieldError('to', `Size: at most ${MAX_REPLAY_DAYS} days`, 'replayRequest')];
      return [];
    },
    execute: ({ tenant, params, body, services }) => services.deliveries.replay(tenant.id, params.channelId, new Date(body.from), new Date(body.to)),
    view: (requeued) => ({ result: { message: `${requeued} event(s) queued again`, requeued }, pagination: null }),
    audit: { target: { channelId: 'params' } },
    examples: { body: { from: '2026-01-01T00:00:00Z', to: '2026-01-02T00:00:00Z' } },
  }),
];
