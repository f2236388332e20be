// Lookup: a customer or a card of a tenant by id, from the tenant's core: masked card numbers only, contact
// details masked, and the recent transactions; or an authorization with its decision trail (which step decided, the
// rule that declined it, the decision endpoint's outcome, the core's decision).
import { useState } from 'preact/hooks';
import { admin, messageOf } from '../api.js';
import { Badge, Field, Notice, TableRegion, html, when } from '../ui.js';
import { TenantPicker } from './picker.js';
import type { TenantAuthorizationLookupResponse, TenantCardLookupResponse, TenantCustomerLookupResponse } from '../../../sdk/src/generated/types.js';
import { isPending } from '../../../sdk/src/transport.js';

// The shapes the management API answers, as the SDK generates them from the operation table.
type Found = TenantCustomerLookupResponse['result'] | TenantCardLookupResponse['result'] | TenantAuthorizationLookupResponse['result'];
type Kind = 'customer' | 'card' | 'authorization';
type Authorization = TenantAuthorizationLookupResponse['result'];
type Step = Authorization['authorization']['trail'][number];

const PLACEHOLDER: Record<Kind, string> = { customer: 'ENT-1001', card: 'CARD-3001', authorization: 'auth_…' };

export function LookupPage(props: { tenantId: string | null }) {
  const t = props.tenantId;
  const [kind, setKind] = useState<Kind>('customer');
  const [id, setId] = useState('');
  const [found, setFound] = useState<Found | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const lookUp = async (what: Kind, value: string) => {
    if (!t) return;
    setBusy(true);
    setError(null);
    setFound(null);
    try {
      const res =
        what === 'customer'
          ? await admin.tenantCustomer.lookup(t, value)
          : what === 'card'
            ? await admin.tenantCard.lookup(t, value)
            : await admin.tenantAuthorization.lookup(t, value);
      // A 202 (the core has not answered yet) has no result to show.
      if (isPending(res)) throw new Error('The core has not answered yet; look again in a moment.');
      setFound(res.result);
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };
  const look = (e: Event) => {
    e.preventDefault();
    void lookUp(kind, id.trim());
  };
  return html`<section aria-labelledby="lookup-h">
    <h1 id="lookup-h">Lookup</h1>
    <${TenantPicker} value=${t} base="#/lookup" />
    ${t
      ? html`<form class="inline" onSubmit=${look} aria-label="Look up a customer, a card or an authorization">
          <${Field} label="Look up" id="l-kind">
            <select id="l-kind" value=${kind} onChange=${(e: Event) => setKind((e.target as HTMLSelectElement).value as Kind)}>
              <option value="customer">a customer (entity id)</option><option value="card">a card (card id)</option>
              <option value="authorization">an authorization (its id)</option>
            </select>
          <//>
          <${Field} label="Id" id="l-id"><input id="l-id" required value=${id} onInput=${(e: Event) => setId((e.target as HTMLInputElement).value)} placeholder=${PLACEHOLDER[kind]} /><//>
          <button type="submit" class="primary" disabled=${busy}>${busy ? 'Looking up…' : 'Look up'}</button>
        </form>`
      : html`<p class="state empty">Choose a tenant, then a customer or a card id.</p>`}
    <${Notice} kind="error" text=${error} />
    ${found
      ? 'authorization' in found
        ? html`<${Trail} found=${found} />`
        : html`<${Result} found=${found} />`
      : t && !error && !busy
        ? html`<p class="state empty">Nothing looked up yet: give a customer's entity id, a card id from ${t}'s core, or an authorization id. Card numbers are shown masked.</p>`
        : null}
  </section>`;
}

function Result(props: { found: Exclude<Found, Authorization> }) {
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

const STEP_NAMES: Record<Step['step'], string> = {
  'card-state': 'Card state',
  'spend-controls': 'Spend controls',
  'decision-endpoint': 'Decision endpoint',
  core: 'Core',
};
const TONE = { approved: 'good', declined: 'bad', skipped: 'neutral' } as const;

/** What the decision endpoint did: answered, not configured, or its stand-in and why. */
function endpointOutcome(s: Step): string {
  if (s.outcome === 'skipped') return 'not configured';
  if (!s.standIn) return `answered: ${s.outcome}`;
  const standIn = s.outcome === 'approved' ? 'approve' : 'decline';
  const why = s.standIn === 'timeout' ? 'timed out' : s.standIn === 'busy' ? 'busy (every call slot taken)' : 'error';
  return `${why}: stand-in ${standIn}`;
}

/** An authorization and its trail: each step in order, the one whose answer stands marked. */
function Trail(props: { found: Authorization }) {
  const a = props.found.authorization;
  const rule = props.found.decidingRule;
  const decidedAt = a.status === 'DECLINED' ? a.trail.findIndex((s) => s.outcome === 'declined') : a.trail.length - 1;
  return html`<div>
    <section class="panel" aria-labelledby="auth-h">
      <h2 id="auth-h">Authorization <small class="mono">${a.authorizationId}</small></h2>
      <p><${Badge} tone=${a.status === 'APPROVED' ? 'good' : 'bad'}>${a.status}<//>${a.declineReason ? html` <small>${a.declineReason}</small>` : null}${' '}· decided by <strong>${STEP_NAMES[a.decidedBy]}</strong></p>
      <p>${a.amount} ${a.currency} asked · ${a.approvedAmount} held · ${a.merchant.name} <small>${a.merchant.mcc} · ${a.merchant.country} · ${a.channel}</small></p>
      <p>Card ${a.cardId}${a.entityId ? ` · customer ${a.entityId}` : ''} · ${when(a.at)}</p>
    </section>
    <section class="panel" aria-labelledby="trail-h">
      <h2 id="trail-h">Decision trail</h2>
      <ol class="trail">
        ${a.trail.map(
          (s, i) => html`<li key=${s.step} class=${i === decidedAt ? 'decided' : ''}>
            <div class="trail-head">
              <strong>${STEP_NAMES[s.step]}</strong>
              <${Badge} tone=${TONE[s.outcome]}>${s.outcome}<//>
              ${i === decidedAt ? html`<span class="decided-mark">decided here</span>` : null}
            </div>
            ${s.step === 'decision-endpoint' ? html`<p>${endpointOutcome(s)}</p>` : null}
            ${s.step === 'core' ? html`<p>the core's decision: ${s.outcome}${s.declineReason ? ` (${s.declineReason})` : ''}</p>` : null}
            ${s.step === 'spend-controls' && s.outcome === 'declined' && rule
              ? html`<p>rule <strong>${rule.name ?? '(removed since)'}</strong>${rule.version !== null ? ` · version ${rule.version}` : ''} <small class="mono">${rule.ruleId}</small></p>`
              : null}
            ${s.step === 'spend-controls' && s.evaluated ? html`<p><small>${s.evaluated} rule version${s.evaluated === 1 ? '' : 's'} evaluated${shadowNote(s)}</small></p>` : null}
            ${s.declineReason && s.step !== 'core' ? html`<p><small>${s.declineReason}</small></p>` : null}
            ${s.detail ? html`<p><small>${s.detail}</small></p>` : null}
          </li>`,
        )}
      </ol>
    </section>
  </div>`;
}

/** Shadow versions that would have declined: recorded, never enforced. */
function shadowNote(s: Step): string {
  const n = (s.rules ?? []).filter((r) => r.mode === 'shadow' && r.outcome === 'declined').length;
  return n ? `; ${n} shadow version${n === 1 ? '' : 's'} would have declined` : '';
}
