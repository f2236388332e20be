// Webhooks of a notification channel (Standard Webhooks v1, decision 0081): verify the signature of a body
// as it arrived, then read it as a typed event of record.
import { Webhook } from 'standardwebhooks';
import type { CardlineEvent } from './generated/events.js';

/** Headers as a server hands them over: a Fetch `Headers`, or Node's `IncomingHttpHeaders`. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

function headerRecord(headers: WebhookHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  const entries = typeof (headers as Headers).forEach === 'function' && headers instanceof Headers ? [...headers.entries()] : Object.entries(headers);
  for (const [k, v] of entries) {
    if (v === undefined) continue;
    out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : String(v);
  }
  return out;
}

export const webhooks = {
  /**
   * Whether `body` (the raw text or bytes, not re-serialised JSON) carries a valid signature under `secret`
   * (the channel's `whsec_…`), with a timestamp within five minutes. During a secret rotation pass either secret.
   */
  verify(body: string | Uint8Array, headers: WebhookHeaders, secret: string): boolean {
    try {
      this.parse(body, headers, secret);
      return true;
    } catch {
      return false;
    }
  },

  /** The verified body as a typed event; throws (standardwebhooks' WebhookVerificationError) when it does not verify. */
  parse(body: string | Uint8Array, headers: WebhookHeaders, secret: string): CardlineEvent {
    const text = typeof body === 'string' ? body : new TextDecoder().decode(body);
    return new Webhook(secret).verify(text, headerRecord(headers)) as CardlineEvent;
  },
};
