// Lookup: a customer or a card of a tenant by id, from the tenant's core: masked card numbers only, contact
// details masked, and the recent transactions.
import { useState } from 'preact/hooks';
import { admin, messageOf } from '../api.js';
import { Badge, Field, Notice, TableRegion, html, when } from '../ui.js';
import { TenantPicker } from './picker.js';
import type { TenantCardLookupResponse, TenantCustomerLookupResponse } from '../../../sdk/src/generated/types.js';
import { isPending } from '../../../sdk/src/transport.js';

// The shapes the management API answers, as the SDK generates them from the operation table.
type Found = TenantCustomerLookupResponse['result'] | TenantCardLookupResponse['result'];

export function LookupPage(props: { tenantId: string | null }) {
  const t = props.tenantId;
  const [kind, setKind] = useState<'customer' | 'card'>('customer');
  const [id, setId] = useState('');
  const [found, setFound] = useState<Found | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const look = async (e: Event) => {
    e.preventDefault();
    if (!t) return;
    setBusy(true);
    setError(null);
    setFound(null);
    try {
      const res = kind === 'customer' ? await admin.tenantCustomer.lookup(t, id.trim()) : await admin.tenantCard.lookup(t, id.trim());
      // A 202 (the core has not answered yet) has no result to show.
      if (isPending(res)) throw new Error('The core has not answered yet; look again in a moment.');
      setFound(res.result);
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };
  return html`<section aria-labelledby="lookup-h">
    <h1 id="lookup-h">Lookup</h1>
    <${TenantPicker} value=${t} base="#/lookup" />
    ${t
      ? html`<form class="inline" onSubmit=${look} aria-label="Look up a customer or a card">
          <${Field} label="Look up" id="l-kind">
            <select id="l-kind" value=${kind} onChange=${(e: Event) => setKind((e.target as HTMLSelectElement).value as 'customer' | 'card')}>
              <option value="customer">a customer (entity id)</option><option value="card">a card (card id)</option>
            </select>
          <//>
          <${Field} label="Id" id="l-id"><input id="l-id" required value=${id} onInput=${(e: Event) => setId((e.target as HTMLInputElement).value)} placeholder=${kind === 'customer' ? 'ENT-1001' : 'CARD-3001'} /><//>
          <button type="submit" class="primary" disabled=${busy}>${busy ? 'Looking up…' : 'Look up'}</button>
        </form>`
      : html`<p class="state empty">Choose a tenant, then a customer or a card id.</p>`}
    <${Notice} kind="error" text=${error} />
    ${found
      ? html`<${Result} found=${found} />`
      : t && !error && !busy
        ? html`<p class="state empty">Nothing looked up yet: give a customer's entity id or a card id from ${t}'s core. Card numbers are shown masked.</p>`
        : null}
  </section>`;
}

function Result(props: { found: Found }) {
  const f = props.found;
  const cards = 'entity' in f ? f.cards : [f.card];
  return html`<div>
    ${'entity' in f
      ? html`<section class="panel" aria-labelledby="entity-h">
          <h2 id="entity-h">${f.entity.name} <small>${f.entity.entityId} · ${f.entity.type}</small></h2>
          <p>Contact ${f.entity.contact.email} · ${f.entity.contact.mobile}</p>
          <p>Credit limit ${f.entity.creditLimit} · outstanding ${f.entity.outstanding} · available ${f.entity.availableCredit}</p>
        </section>`
      : null}
    <section class="panel" aria-labelledby="cards-h">
      <h2 id="cards-h">Cards</h2>
      ${cards.length === 0
        ? html`<p class="state empty">No card.</p>`
        : html`<ul class="cards">${cards.map((c) => html`<li><span class="mono">${c.panMasked}</span> ${c.cardId} · ${c.form} · <${Badge} tone=${c.state === 'ACTIVE' ? 'good' : 'neutral'}>${c.state}<//></li>`)}</ul>`}
    </section>
    <section class="panel" aria-labelledby="tx-h">
      <h2 id="tx-h">Recent transactions</h2>
      ${f.transactions.length === 0
        ? html`<p class="state empty">No transaction yet.</p>`
        : html`<${TableRegion} label="Recent transactions">
            <table>
              <thead><tr><th scope="col">When</th><th scope="col">Card</th><th scope="col">Merchant</th><th scope="col">Amount</th><th scope="col">Status</th></tr></thead>
              <tbody>${f.transactions.map((x) => html`<tr key=${x.transactionId}>
                <td>${when(x.at)}</td>
                <td>${x.cardId}</td>
                <td>${x.merchant.name} <small>${x.merchant.country} · ${x.channel}</small></td>
                <td class="mono">${x.amount}</td>
                <td><${Badge} tone=${x.status === 'APPROVED' ? 'good' : 'bad'}>${x.status}<//>${x.declineReason ? html` <small>${x.declineReason}</small>` : null}</td>
              </tr>`)}</tbody>
            </table>
          <//>`}
    </section>
  </div>`;
}
