// Webhooks per Standard Webhooks v1 (decision 0081): `webhook-id` (stable across retries), `webhook-timestamp`
// (this attempt's, in seconds) and `webhook-signature`, `v1,` + base64 HMAC-SHA256 of `id.timestamp.body` under
// the channel's `whsec_` secret; during a rotation's overlap both secrets sign and both signatures are sent.
import { createHmac, randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import type { Agent } from 'undici';
import type { AttemptResult } from './channel-types/type.js';
import { addressRefusal, checkUrlForm, checkedLookup, hostOf, TargetRefused, type Resolver, type TargetPolicy } from './addresses.js';

export type { AttemptResult };

const SECRET_PREFIX = 'whsec_';

/** A new signing secret: `whsec_` and 32 random bytes in base64. */
export const newSecret = (): string => SECRET_PREFIX + randomBytes(32).toString('base64');

/** The signature of one message under one secret: `v1,<base64>`. */
export function sign(secret: string, msgId: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
  return `v1,${createHmac('sha256', key).update(`${msgId}.${timestampSeconds}.${body}`).digest('base64')}`;
}

/** What one attempt sends. */
export interface WebhookMessage {
  url: string;
  msgId: string;
  body: string;
  /** The current secret first, then the previous one while its overlap lasts. */
  secrets: readonly string[];
  /** Sent as the `traceparent` header (not signed: it describes the delivery, not the event). */
  traceparent?: string;
}

/** Retry-After as seconds or an HTTP date, in ms from now; null when absent or unreadable. */
export function retryAfterMs(value: string | string[] | undefined, now = Date.now()): number | null {
  const raw = Array.isArray(value) ? value[0] : value;
  if (!raw) return null;
  if (/^\d{1,9}$/.test(raw.trim())) return Number(raw.trim()) * 1000;
  const at = Date.parse(raw);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/** Error text kept with an attempt: short, one line, never a secret (none is in scope here). */
const describe = (err: unknown): string => {
  const e = err as { name?: string; code?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e?.name === 'TargetRefused') return `refused: ${e.message}`;
  if (e?.cause && (e.cause as { name?: string }).name === 'TargetRefused') return `refused: ${e.cause.message}`;
  const code = e?.cause?.code ?? e?.code;
  const message = e?.cause?.message ?? e?.message ?? String(err);
  return (code ? `${code}: ${message}` : message).replace(/\s+/g, ' ').slice(0, 300);
};

export interface WebhookSenderOptions {
  timeoutMs: number;
  allowHosts: readonly string[];
  /** Tests resolve names their own way; the default is the system's resolver. */
  resolve?: Resolver;
}

/** Sends webhook attempts through two connection pools: one for production tenants, one for sandbox tenants. */
export class WebhookSender {
  /** The two pools, made with the first attempt: undici is loaded only by a process that sends (not the CLI). */
  private agents: Promise<{ agents: Record<'production' | 'sandbox', Agent>; request: typeof import('undici').request }> | null = null;
  private readonly policies: Record<'production' | 'sandbox', TargetPolicy>;

  constructor(private readonly opts: WebhookSenderOptions) {
    this.policies = {
      production: { sandbox: false, allowHosts: opts.allowHosts },
      sandbox: { sandbox: true, allowHosts: opts.allowHosts },
    };
  }

  private pools(): Promise<{ agents: Record<'production' | 'sandbox', Agent>; request: typeof import('undici').request }> {
    this.agents ??= import('undici').then(({ Agent, request }) => {
      const agent = (policy: TargetPolicy) =>
        new Agent({
          connect: { lookup: checkedLookup(policy, this.opts.resolve) as never, timeout: this.opts.timeoutMs },
          headersTimeout: this.opts.timeoutMs,
          bodyTimeout: this.opts.timeoutMs,
          keepAliveTimeout: 4_000,
        });
      return { agents: { production: agent(this.policies.production), sandbox: agent(this.policies.sandbox) }, request };
    });
    return this.agents;
  }

  policy(sandbox: boolean): TargetPolicy {
    return this.policies[sandbox ? 'sandbox' : 'production'];
  }

  /** One attempt: 2xx within the timeout is success; anything else (or no answer) is a failure to retry. */
  async send(message: WebhookMessage, sandbox: boolean, signal?: AbortSignal): Promise<AttemptResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const timestamp = Math.floor(Date.now() / 1000);
    const policy = this.policy(sandbox);
    try {
      // The form again (the policy may have changed), and literal addresses here, since they bypass checkedLookup.
      const url = checkUrlForm(message.url, policy);
      const host = hostOf(url);
      if (isIP(host)) {
        const refusal = addressRefusal(host, host, policy);
        if (refusal) throw new TargetRefused(refusal);
      }
      // The pools first: loading undici at the first attempt is not the receiver's time.
      const { agents, request } = await this.pools();
      const timeout = AbortSignal.timeout(this.opts.timeoutMs);
      const res = await request(url, {
        method: 'POST',
        dispatcher: agents[sandbox ? 'sandbox' : 'production'],
        headers: {
          'content-type': 'application/json',
          'user-agent': 'Cardline-Webhooks/1',
          'webhook-id': message.msgId,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': message.secrets.map((s) => sign(s, message.msgId, timestamp, message.body)).join(' '),
          ...(message.traceparent ? { traceparent: message.traceparent } : {}),
        },
        body: message.body,
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
      // The body is read (bounded by the timeout) and dropped: a receiver's answer is not kept.
      await res.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
      const ok = res.statusCode >= 200 && res.statusCode < 300;
      return {
        ok,
        statusCode: res.statusCode,
        durationMs: elapsed(),
        error: ok ? null : `HTTP ${res.statusCode}`,
        retryAfterMs: ok ? null : retryAfterMs(res.headers['retry-after']),
      };
    } catch (err) {
      const timedOut = (err as { name?: string }).name === 'TimeoutError' || (err as { code?: string }).code === 'UND_ERR_HEADERS_TIMEOUT';
      return {
        ok: false,
        statusCode: null,
        durationMs: elapsed(),
        error: timedOut ? `no answer within ${this.opts.timeoutMs} ms` : describe(err),
        retryAfterMs: null,
      };
    }
  }

  async close(): Promise<void> {
    if (!this.agents) return;
    const { agents } = await this.agents;
    await Promise.all([agents.production.close(), agents.sandbox.close()]);
  }
}
