// Channels and deliveries: a tenant's channels with their state and recent success rate; a channel's
// deliveries with every attempt, filtered by status; retry one now (a delivered one only after asking), replay
// from a time, rotate the secret after a confirmation (the new one shown once). A change on the deliveries
// reloads the channels' success rates.
import { useCallback, useState } from 'preact/hooks';
import { admin, messageOf } from '../api.js';
import { Badge, ConfirmButton, Field, Notice, TableRegion, View, html, localZone, useLoad, when } from '../ui.js';
import type { ChannelView, DeliveryView } from '../types.js';
import type { DeliveryPageResponse, DeliveryQuery } from '../../../sdk/src/generated/types.js';
import { TenantPicker } from './picker.js';

const RECENT = 50;

export function ChannelsPage(props: { tenantId: string | null; channelId: string | null }) {
  const { tenantId, channelId } = props;
  // Bumped when a delivery changes (a retry, a replay): the list's success rates are read again.
  const [changes, setChanges] = useState(0);
  const changed = useCallback(() => setChanges((n) => n + 1), []);
  return html`<section aria-labelledby="channels-h">
    <h1 id="channels-h">Channels and deliveries</h1>
    <${TenantPicker} value=${tenantId} base="#/channels" />
    ${tenantId ? html`<${ChannelList} tenantId=${tenantId} selected=${channelId} changes=${changes} />` : html`<p class="state empty">Choose a tenant to see its channels.</p>`}
    ${tenantId && channelId ? html`<${Deliveries} key=${channelId} tenantId=${tenantId} channelId=${channelId} onChanged=${changed} />` : null}
  </section>`;
}

function ChannelList(props: { tenantId: string; selected: string | null; changes: number }) {
  const t = props.tenantId;
  const channels = useLoad(async () => {
    const page = await admin.tenantChannel.list(t, { limit: 200 }).page();
    // Each channel's recent success rate: of its last deliveries that are settled, the share delivered.
    const rates = await Promise.all(
      page.result.map(async (c) => {
        const d = await admin.tenantChannel.deliveries(t, c.channelId, { limit: RECENT }).page();
        const settled = d.result.filter((x) => x.status === 'delivered' || x.status === 'failed' || x.attemptCount > 0);
        const ok = settled.filter((x) => x.status === 'delivered').length;
        return { channel: c, settled: settled.length, ok };
      }),
    );
    return rates;
  }, [t, props.changes]);
  return html`<${View} loaded=${channels} what="channels" empty=${(d: unknown[]) => d.length === 0} emptyText="This tenant has no channel; its Admin adds one with POST /v1/admin/channels.">
    ${(rows: { channel: ChannelView; settled: number; ok: number }[]) => html`<${TableRegion} label="Channels">
      <table>
        <thead><tr><th scope="col">Channel</th><th scope="col">State</th><th scope="col">Recent success</th><th scope="col">Events</th><th scope="col">Created</th></tr></thead>
        <tbody>
          ${rows.map(({ channel: c, settled, ok }) => html`<tr key=${c.channelId} class=${settled && ok < settled ? 'row-failing' : ''} aria-current=${props.selected === c.channelId ? 'true' : undefined}>
            <td><a href=${`#/channels/${encodeURIComponent(t)}/${c.channelId}`}>${c.description || c.url || c.subject || c.channelId}</a><br /><small>${c.type} · ${c.url ?? c.subject ?? ''}${c.exchange ? ` → ${c.exchange}` : ''}</small></td>
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

function Deliveries(props: { tenantId: string; channelId: string; onChanged: () => void }) {
  const { tenantId: t, channelId: c } = props;
  const [status, setStatus] = useState('');
  const [notice, setNotice] = useState<{ kind: 'ok' | 'error'; text: string } | null>(null);
  const [secret, setSecret] = useState<string | null>(null);
  const [from, setFrom] = useState('');
  const deliveries = useLoad(
    () => admin.tenantChannel.deliveries(t, c, { limit: 50, ...(status ? { status: status as NonNullable<DeliveryQuery['status']> } : {}) }).page(),
    [t, c, status],
  );

  const retry = async (d: DeliveryView) => {
    try {
      const res = await admin.tenantDelivery.retry(t, d.deliveryId);
      setNotice({ kind: res.result.status === 'delivered' ? 'ok' : 'error', text: `Delivery of ${d.eventType} ${d.status === 'delivered' ? 'sent again' : 'retried'}: ${res.result.status}.` });
      deliveries.reload();
      props.onChanged();
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
      props.onChanged();
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
        <${Field} label="Replay events from" id="d-from" hint=${`Your time (${localZone()})`}><input id="d-from" type="datetime-local" value=${from} aria-describedby="d-from-hint" onInput=${(e: Event) => setFrom((e.target as HTMLInputElement).value)} /><//>
        <button type="submit">Replay</button>
      </form>
      <${ConfirmButton} label="Rotate secret" confirm="Rotate" danger=${true} onConfirm=${rotate}
        question="Rotate this channel's signing secret? The new one is shown once; the receiver must take it before the previous one stops signing (24 h by default)." />
      <button type="button" onClick=${deliveries.reload}>Refresh</button>
    </div>
    <${View} loaded=${deliveries} what="deliveries" empty=${(p: DeliveryPageResponse) => p.result.length === 0} emptyText="No delivery on this channel yet.">
      ${(p: DeliveryPageResponse) => html`<${TableRegion} label="Deliveries">
        <table>
          <thead><tr><th scope="col">Event</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Next attempt</th><th scope="col">Action</th></tr></thead>
          <tbody>
            ${p.result.map((d) => html`<tr key=${d.deliveryId} data-status=${d.status}>
              <td>${d.eventType}<br /><small>${when(d.createdAt)}</small></td>
              <td><${Badge} tone=${d.status === 'delivered' ? 'good' : d.status === 'failed' ? 'bad' : 'warn'}>${d.status}<//>${d.status === 'delivered' ? html`<br /><small>${when(d.deliveredAt)}</small>` : null}</td>
              <td><ol class="attempts">${d.attempts.map((a) => html`<li>${when(a.at)}: ${a.statusCode ?? 'no answer'} in ${a.durationMs} ms${a.error ? ` (${a.error})` : ''}</li>`)}</ol></td>
              <td>${nextAttempt(d)}</td>
              <td>${d.status === 'delivered'
                ? html`<${ConfirmButton} label="Send again" confirm="Send again" onConfirm=${() => retry(d)}
                    question=${`Delivered ${when(d.deliveredAt)}. Send ${d.eventType} again? The receiver gets it a second time (same webhook-id).`} />`
                : html`<button type="button" onClick=${() => retry(d)} aria-label=${`Retry now: ${d.eventType}`}>Retry now</button>`}</td>
            </tr>`)}
          </tbody>
        </table>
      <//>`}
    <//>
  </section>`;
}

/** A delivered or failed delivery has no next attempt; a pending one says when, or that it is due. */
function nextAttempt(d: DeliveryView): string {
  if (d.status === 'delivered') return '— (delivered)';
  if (d.status === 'failed') return '— (gave up)';
  return d.nextAttemptAt ? when(d.nextAttemptAt) : 'due now';
}
