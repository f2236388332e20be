// What a channel type declares (decision 0240): its own fields of the create body, of PATCH and of the view, the
// checks a channel of it must pass, whether it has a signing secret, and its sender. Delivery records, retries,
// backoff, replay and the success figures are the delivery worker's (src/notify/deliveries.ts), never a type's.
import type { TProperties } from '@sinclair/typebox';
import type { BusinessCodeId } from '../../../schemas/business-codes.js';
import type { NotifyConfig } from '../../config.js';
import type { Resolver } from '../addresses.js';

/** How one attempt went: the status (null when no answer came), the time, the error, Retry-After. */
export interface AttemptResult {
  ok: boolean;
  /** An HTTP status, for a type that has one; a 410 disables the channel. */
  statusCode: number | null;
  durationMs: number;
  /** Kept with the attempt and shown to the tenant's Admin: one line, never a secret. */
  error: string | null;
  /** How long the receiver asked to be left alone, in ms, when it said; it replaces the scheduled delay. */
  retryAfterMs: number | null;
}

/** One event of record on its way to one channel. */
export interface OutgoingEvent {
  tenantId: string;
  eventId: string;
  eventType: string;
  /** `msg_` + the event id: the same on every attempt, retry and replay. */
  msgId: string;
  /** `{"type","timestamp","data"}`, the same for every type. */
  body: string;
  createdAt: Date;
  /** The W3C trace context of the send's span, while tracing is on: a sender hands it on in its message's headers. */
  traceparent?: string | undefined;
}

/** A channel as its sender sees it: what the store keeps of its type's fields, its secrets opened. */
export interface DeliveryChannel {
  tenantId: string;
  id: string;
  type: string;
  /** The tenant is a sandbox one (the address policy lets it target loopback). */
  sandbox: boolean;
  url: string | null;
  settings: Readonly<Record<string, unknown>>;
  /** The type's secret settings, opened (null when it keeps none). */
  secret: Readonly<Record<string, string>> | null;
  /** The signing secrets: the current one first, then the previous one while its overlap lasts. */
  signingSecrets: readonly string[];
}

/** Sends events to the channels of one type; one per process, its connections reused across deliveries. */
export interface ChannelSender {
  /** One attempt; it never throws (a failure is a result). `signal` aborts it when the process stops. */
  send(channel: DeliveryChannel, event: OutgoingEvent, signal: AbortSignal): Promise<AttemptResult>;
  close(): Promise<void>;
}

/** What a sender is made with. */
export interface SenderContext {
  config: NotifyConfig;
  /** Tests resolve names their own way; the default is the system's resolver. */
  resolve?: Resolver;
}

/** What a channel's check sees besides the fields. */
export interface CheckContext {
  tenantId: string;
  sandbox: boolean;
  config: NotifyConfig;
  resolve?: Resolver;
}

/** What the store keeps: `url` in its column, `settings` as JSON, `secret` sealed (opened only to deliver). */
export interface StoredFields {
  url?: string | null;
  settings?: Record<string, unknown>;
  secret?: Record<string, string> | null;
}

/** What a type's view is made from: never the secret. */
export interface StoredChannel {
  tenantId: string;
  url: string | null;
  settings: Readonly<Record<string, unknown>>;
}

export interface ChannelTypeDeclaration<T extends string = string> {
  /** The `type` of the create body, the view and the store. */
  type: T;
  /** The create body's schema is named `<name>ChannelCreateBody` in the documents. */
  name: string;
  /** As the create operation's summary names it: "a webhook", "NATS JetStream". */
  title: string;
  /** The create operation's sentence about it. */
  createDoc: string;
  /** Its own fields of the create body (beside `type`, `eventTypes`, `enabled`, `description`); Optional ones may be left out. */
  fields: TProperties;
  /** Which of its fields a PATCH may change. */
  patchable: readonly string[];
  /** Its own fields of the view (each optional). */
  viewFields: TProperties;
  /** A `whsec_` signing secret, made by the gateway, shown once when created and at each rotation. */
  signingSecret: boolean;
  /** The business codes its checks answer, when a channel is created and when one is changed. */
  refusals: { create: readonly BusinessCodeId[]; update: readonly BusinessCodeId[] };
  /** Checks its fields of a create body or a PATCH (`current` the stored channel); a catalogue error otherwise. */
  prepare(fields: Readonly<Record<string, unknown>>, ctx: CheckContext, current?: StoredChannel): Promise<StoredFields>;
  view(channel: StoredChannel, config: NotifyConfig): Record<string, unknown>;
  /** Its sender, made once per process (nothing is loaded or opened before the first send). */
  sender(ctx: SenderContext): ChannelSender;
}

/** Keeps the literal `type` of a declaration, so that the list gives the union of type names. */
export const defineChannelType = <const T extends string>(declaration: ChannelTypeDeclaration<T>): ChannelTypeDeclaration<T> => declaration;

/** An attempt's error text: one line, at most 300 characters. */
export const oneLine = (text: string): string => text.replace(/\s+/g, ' ').slice(0, 300);
