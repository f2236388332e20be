// The channel types, in the order the documents list them: a new type is one file of this folder and one entry
// here. Everything else (schemas, the store's list of types, the console's type, the documents) derives from it.
import { nats } from './nats.js';
import { rabbitmq } from './rabbitmq.js';
import { webhook } from './webhook.js';

export const CHANNEL_TYPES = [webhook, nats, rabbitmq] as const;

export type ChannelTypeName = (typeof CHANNEL_TYPES)[number]['type'];
