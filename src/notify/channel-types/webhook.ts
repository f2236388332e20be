// The `webhook` channel type: POSTs signed per Standard Webhooks (src/notify/webhook.ts, decision 0081) to a URL
// that the address policy admits when the channel is saved and again at every connection (decision 0082).
import { Type } from '@sinclair/typebox';
import { Errors } from '../../errors.js';
import { checkTarget, TargetRefused } from '../addresses.js';
import { WebhookSender } from '../webhook.js';
import { defineChannelType, type ChannelSender, type CheckContext } from './type.js';

const Url = Type.String({ minLength: 8, maxLength: 2048, description: 'https URL (a sandbox tenant may use http to loopback)' });

/** The delivery worker's sender over a transport that sends one signed POST (tests give their own). */
export const webhookChannelSender = (transport: Pick<WebhookSender, 'send' | 'close'>): ChannelSender => ({
  send: (channel, event, signal) =>
    transport.send(
      { url: channel.url!, msgId: event.msgId, body: event.body, secrets: channel.signingSecrets, ...(event.traceparent ? { traceparent: event.traceparent } : {}) },
      channel.sandbox,
      signal,
    ),
  close: () => transport.close(),
});

/** Refuses a URL the tenant may not target (409 WEBHOOK_URL_REFUSED, with the reason). */
async function checkUrl(url: string, ctx: CheckContext): Promise<void> {
  try {
    await checkTarget(url, { sandbox: ctx.sandbox, allowHosts: ctx.config.allowHosts }, ctx.resolve);
  } catch (err) {
    if (err instanceof TargetRefused) throw Errors.business('WEBHOOK_URL_REFUSED', `The webhook URL is refused: ${err.message}.`);
    throw err;
  }
}

export const webhook = defineChannelType({
  type: 'webhook',
  name: 'Webhook',
  title: 'a webhook',
  createDoc:
    'A webhook needs `url`: https with public addresses for a production tenant (a sandbox tenant may also use http to loopback; ' +
    'the operator may allow named hosts). Its `whsec_` signing secret is in this answer only: keep it.',
  fields: { url: Url },
  patchable: ['url'],
  viewFields: { url: Type.Optional(Type.String()) },
  signingSecret: true,
  refusals: { create: ['WEBHOOK_URL_REFUSED'], update: ['WEBHOOK_URL_REFUSED'] },
  async prepare(fields, ctx) {
    if (fields.url === undefined) return {};
    await checkUrl(fields.url as string, ctx);
    return { url: fields.url as string };
  },
  view: ({ url }) => (url !== null ? { url } : {}),
  sender: ({ config, resolve }) => webhookChannelSender(new WebhookSender({ timeoutMs: config.webhookTimeoutMs, allowHosts: config.allowHosts, resolve })),
});
