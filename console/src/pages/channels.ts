// Channels and deliveries: a tenant's channels with their state and recent success rate; a channel's
// deliveries with every attempt, filtered by status; retry one now, replay from a time, rotate the secret
// (the new one shown once).
import { useState } from 'preact/hooks';
import { admin, messageOf } from '../api.js';
import { Badge, Field, Notice, TableRegion, View, html, useLoad, when } from '../ui.js';
import type { ChannelView, DeliveryView } from '../types.js';
import type { DeliveryPageResponse, DeliveryQuery } from '../../../sdk/src/generated/types.js';
import { TenantPicker } from './picker.js';

const RECENT = 50;

export function ChannelsPage(props: { tenantId: string | null; channelId: string | null }) {
  const { tenantId, channelId } = props;
  return html`<section aria-labelledby="channels-h">
    <h1 id="channels-h">Channels and deliveries</h1>
    <${TenantPicker} value=${tenantId} base="#/channels" />
    ${tenantId ? html`<${ChannelList} tenantId=${tenantId} selected=${channelId} />` : html`<p class="state empty">Choose a tenant to see its channels.</p>`}
    ${tenantId && channelId ? html`<${Deliveries} key=${channelId} tenantId=${tenantId} channelId=${channelId} />` : null}
  </section>`;
}

function ChannelList(props: { tenantId: string; selected: string | null }) {
  const t = props.tenantId;
  const channels = useLoad(async () => {
    const page = await admin.tenantChannel.list(t, { limit: '200' }).page();
    // Each channel's recent success rate: of its last deliveries that are settled, the share delivered.
    const rates = await Promise.all(
      page.result.map(async (c) => {
        const d = await admin.tenantChannel.deliveries(t, c.channelId, { limit: String(RECENT) }).page();
        const settled = d.result.filter((x) => x.status === 'delivered' || x.status === 'failed' || x.attemptCount > 0);
        const ok = settled.filter((x) => x.status === 'delivered').length;
        return { channel: c, settled: settled.length, ok };
      }),
    );
    return rates;
  }, [t]);
  return html`<${View} loaded=${channels} what="channels" empty=${(d: unknown[]) => d.length === 0} emptyText="This tenant has no channel; its Admin adds one with POST /v1/admin/channels.">
    ${(rows: { channel: ChannelView; settled: number; ok: number }[]) => html`<${TableRegion} label="Channels">
      <table>
        <thead><tr><th scope="col">Channel</th><th scope="col">State</th><th scope="col">Recent success</th><th scope="col">Events</th><th scope="col">Created</th></tr></thead>
        <tbody>
          ${rows.map(({ channel: c, settled, ok }) => html`<tr key=${c.channelId} class=${settled && ok < settled ? 'row-failing' : ''} aria-current=${props.selected === c.channelId ? 'true' : undefined}>
            <td><a href=${`#/channels/${encodeURIComponent(t)}/${c.channelId}`}>${c.description || c.url || c.subject || c.channelId}</a><br /><small>${c.type} · ${c.url ?? c.subject ?? ''}</small></td>
            <td>${c.enabled ? html`<${Badge} tone="good">enabled<//>` : html`<${Badge} tone="neutral">disabled${c.disabledReason ? `: ${c.disabledReason}` : ''}<//>`}</td>
            <td>${settled ? html`<${Badge} tone=${ok === settled ? 'good' : ok === 0 ? 'bad' : 'warn'}>${Math.round((ok / settled) * 100)}% of ${settled}<//>` : '—'}</td>
            <td><small>${c.eventTypes.join(', ')}</small></td>
            <td>${when(c.createdAt)}</td>
          </tr>`)}
        </tbody>
      </table>
    <//>`}
  <//>`;
}

function Deliveries(props: { tenantId: string; channelId: string }) {
  const { tenantId: t, channelId: c } = props;
  const [status, setStatus] = useState('');
  const [notice, setNotice] = useState<{ kind: 'ok' | 'error'; text: string } | null>(null);
  const [secret, setSecret] = useState<string | null>(null);
  const [from, setFrom] = useState('');
  const deliveries = useLoad(
    () => admin.tenantChannel.deliveries(t, c, { limit: '50', ...(status ? { status: status as NonNullable<DeliveryQuery['status']> } : {}) }).page(),
    [t, c, status],
  );

  const retry = async (d: DeliveryView) => {
    try {
      const res = await admin.tenantDelivery.retry(t, d.deliveryId);
      setNotice({ kind: res.result.status === 'delivered' ? 'ok' : 'error', text: `Delivery of ${d.eventType} retried: ${res.result.status}.` });
      deliveries.reload();
    } catch (err) {
      setNotice({ kind: 'error', text: messageOf(err) });
    }
  };
  const rotate = async () => {
    try {
      const res = await admin.tenantChannel.rotateSecret(t, c, {});
      setSecret(res.result.secret ?? null);
      setNotice({ kind: 'ok', text: `Secret rotated; the previous one keeps signing until ${when(res.result.previousSecretUntil)}.` });
    } catch (err) {
      setNotice({ kind: 'error', text: messageOf(err) });
    }
  };
  const replay = async (e: Event) => {
    e.preventDefault();
    const start = new Date(from);
    if (Number.isNaN(start.getTime())) {
      setNotice({ kind: 'error', text: 'Choose the time to replay from.' });
      return;
    }
    try {
      const res = await admin.tenantChannel.replay(t, c, { from: start.toISOString(), to: new Date().toISOString() });
      setNotice({ kind: 'ok', text: res.result.message });
      deliveries.reload();
    } catch (err) {
      setNotice({ kind: 'error', text: messageOf(err) });
    }
  };

  return html`<section class="panel" aria-labelledby="deliveries-h">
    <h2 id="deliveries-h">Deliveries</h2>
    <${Notice} kind=${notice?.kind ?? 'ok'} text=${notice?.text ?? null} />
    ${secret ? html`<div class="notice ok secret" role="status"><p>The new signing secret, shown this once: copy it to the receiver now.</p><code>${secret}</code> <button type="button" onClick=${() => setSecret(null)}>I have stored it</button></div>` : null}
    <div class="toolbar">
      <${Field} label="Status" id="d-status">
        <select id="d-status" value=${status} onChange=${(e: Event) => setStatus((e.target as HTMLSelectElement).value)}>
          <option value="">all</option>${['pending', 'delivering', 'delivered', 'failed'].map((s) => html`<option value=${s}>${s}</option>`)}
        </select>
      <//>
      <form class="inline" onSubmit=${replay}>
        <${Field} label="Replay events from" id="d-from"><input id="d-from" type="datetime-local" value=${from} onInput=${(e: Event) => setFrom((e.target as HTMLInputElement).value)} /><//>
        <button type="submit">Replay</button>
      </form>
      <button type="button" onClick=${rotate}>Rotate secret</button>
      <button type="button" onClick=${deliveries.reload}>Refresh</button>
    </div>
    <${View} loaded=${deliveries} what="deliveries" empty=${(p: DeliveryPageResponse) => p.result.length === 0} emptyText="No delivery on this channel yet.">
      ${(p: DeliveryPageResponse) => html`<${TableRegion} label="Deliveries">
        <table>
          <thead><tr><th scope="col">Event</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Next attempt</th><th scope="col">Action</th></tr></thead>
          <tbody>
            ${p.result.map((d) => html`<tr key=${d.deliveryId} data-status=${d.status}>
              <td>${d.eventType}<br /><small>${when(d.createdAt)}</small></td>
              <td><${Badge} tone=${d.status === 'delivered' ? 'good' : d.status === 'failed' ? 'bad' : 'warn'}>${d.status}<//></td>
              <td><ol class="attempts">${d.attempts.map((a) => html`<li>${when(a.at)}: ${a.statusCode ?? 'no answer'} in ${a.durationMs} ms${a.error ? ` (${a.error})` : ''}</li>`)}</ol></td>
              <td>${d.status === 'delivered' ? when(d.deliveredAt) : when(d.nextAttemptAt)}</td>
              <td><button type="button" onClick=${() => retry(d)} aria-label=${`Retry now: ${d.eventType}`}>Retry now</button></td>
            </tr>`)}
          </tbody>
        </table>
      <//>`}
    <//>
  </section>`;
}
