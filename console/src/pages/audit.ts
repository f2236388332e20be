// Audit: a trail (a tenant's or the platform's) with filters (changes only, by default), each record's detail,
// and whether the chain verifies, with the first break located and a link to the page that holds it.
import { useState } from 'preact/hooks';
import { admin } from '../api.js';
import { Badge, Field, TableRegion, View, html, localZone, useLoad, when } from '../ui.js';
import { TenantPicker } from './picker.js';
import type { AuditPage, AuditQuery, TenantAuditVerifyResponse } from '../../../sdk/src/generated/types.js';

type Broken = Extract<TenantAuditVerifyResponse['result'], { ok: false }>;

const OUTCOMES = ['succeeded', 'pending', 'unauthenticated', 'forbidden', 'refused', 'invalid', 'failed', 'replayed'];
// The trail opens on what changed: reads (lookups of a customer or a card) are one choice away.
const EMPTY = { kind: 'write', action: '', outcome: '', actor: '', targetId: '', from: '', to: '' };
const ALL = { ...EMPTY, kind: '' };

export function AuditPage(props: { tenantId: string | null }) {
  const t = props.tenantId;
  return html`<section aria-labelledby="audit-h">
    <h1 id="audit-h">Audit</h1>
    <${TenantPicker} value=${t} base="#/audit" platform=${true} />
    ${t ? html`<${Trail} key=${t} tenantId=${t} />` : html`<p class="state empty">Choose a trail: a tenant's, or the platform's.</p>`}
  </section>`;
}

function Trail(props: { tenantId: string }) {
  const t = props.tenantId;
  const [draft, setDraft] = useState(EMPTY);
  const [filters, setFilters] = useState(EMPTY);
  const [cursors, setCursors] = useState<(string | null)[]>([null]);
  const [open, setOpen] = useState<number | null>(null);
  const cursor = cursors[cursors.length - 1] ?? null;
  const verified = useLoad(() => admin.tenantAudit.verify(t), [t]);
  const query = (): Omit<AuditQuery, 'cursor'> => {
    const q: Record<string, string | number> = { limit: 50 };
    for (const [k, v] of Object.entries(filters)) if (v) q[k] = k === 'from' || k === 'to' ? new Date(v).toISOString() : v;
    return q as Omit<AuditQuery, 'cursor'>;
  };
  const records = useLoad(() => admin.tenantAudit.read(t, query()).page(cursor), [t, filters, cursor]);
  const brokenAt = verified.data && !verified.data.result.ok ? verified.data.result.seq : null;
  const set = (k: keyof typeof EMPTY) => (e: Event) => setDraft({ ...draft, [k]: (e.target as HTMLInputElement).value });
  // The broken record, wherever it is: every record (no filter), from the page whose first record it is.
  const showBroken = (v: Broken) => {
    setDraft(ALL);
    setFilters(ALL);
    setCursors(v.cursor ? [null, v.cursor] : [null]);
  };

  return html`
    <${View} loaded=${verified} what="the chain's verification">
      ${(v: TenantAuditVerifyResponse) =>
        v.result.ok
          ? html`<p class="notice ok" role="status" data-chain="verified">Chain verified: ${v.result.records} records in ${v.result.chains.length} ${v.result.chains.length === 1 ? 'chain' : 'chains'} (one per writer), each linked to the one before; root ${v.result.root.slice(0, 12)}…</p>`
          : html`<div class="notice error" role="alert" data-chain="broken">
              <p><strong>The chain does not verify.</strong> First break in chain ${v.result.chain} at position ${v.result.position}${v.result.seq === null ? '' : ` (record ${v.result.seq})`}: ${v.result.reason} (${v.result.detail}). ${v.result.records === 1 ? 'The record before it verifies' : `The ${v.result.records} records before it verify`}; the record is marked below.</p>
              <p>Keep the store as it is and compare with a backup: the records of that chain from position ${v.result.position} on cannot be trusted.</p>
              ${v.result.seq !== null ? html`<p><button type="button" onClick=${() => showBroken(v.result as Broken)}>Show record ${v.result.seq}</button></p>` : null}
            </div>`}
    <//>
    <form class="panel filters" onSubmit=${(e: Event) => { e.preventDefault(); setCursors([null]); setFilters(draft); }} aria-label="Filter the trail">
      <div class="grid">
        <${Field} label="Kind" id="f-kind">
          <select id="f-kind" value=${draft.kind} onChange=${set('kind')}><option value="write">changes only</option><option value="read">reads only</option><option value="">changes and reads</option></select>
        <//>
        <${Field} label="Action" id="f-action"><input id="f-action" value=${draft.action} onInput=${set('action')} placeholder="tenant.disable" /><//>
        <${Field} label="Outcome" id="f-outcome">
          <select id="f-outcome" value=${draft.outcome} onChange=${set('outcome')}><option value="">any</option>${OUTCOMES.map((o) => html`<option value=${o}>${o}</option>`)}</select>
        <//>
        <${Field} label="Actor" id="f-actor"><input id="f-actor" value=${draft.actor} onInput=${set('actor')} /><//>
        <${Field} label="Target" id="f-target"><input id="f-target" value=${draft.targetId} onInput=${set('targetId')} placeholder="any target value" /><//>
        <${Field} label="From" id="f-from" hint=${`Your time (${localZone()})`}><input id="f-from" type="datetime-local" value=${draft.from} onInput=${set('from')} aria-describedby="f-from-hint" /><//>
        <${Field} label="To" id="f-to" hint=${`Your time (${localZone()})`}><input id="f-to" type="datetime-local" value=${draft.to} onInput=${set('to')} aria-describedby="f-to-hint" /><//>
      </div>
      <div class="actions">
        <button type="submit" class="primary">Apply filters</button>
        <button type="button" onClick=${() => { setDraft(EMPTY); setFilters(EMPTY); setCursors([null]); }}>Clear</button>
      </div>
    </form>
    <${View} loaded=${records} what="audit records" empty=${(p: AuditPage) => p.result.length === 0} emptyText="No record matches these filters.">
      ${(p: AuditPage) => html`<${TableRegion} label="Audit records">
        <table>
          <thead><tr><th scope="col">Seq</th><th scope="col">When</th><th scope="col">Actor</th><th scope="col">Action</th><th scope="col">Target</th><th scope="col">Outcome</th><th scope="col">Detail</th></tr></thead>
          <tbody>
            ${p.result.map((r) => html`<tr key=${r.seq} class=${brokenAt === r.seq ? 'row-failing' : ''} data-seq=${r.seq}>
              <td>${r.seq}${brokenAt === r.seq ? html`<br /><${Badge} tone="bad">chain breaks here<//>` : null}</td>
              <td>${when(r.at)}</td>
              <td>${r.actor ?? '—'}${r.role ? html`<br /><small>${r.role}</small>` : null}</td>
              <td>${r.action}</td>
              <td><small>${Object.entries(r.target).map(([k, v]) => `${k}=${v}`).join(', ') || '—'}</small></td>
              <td><${Badge} tone=${r.outcome === 'succeeded' ? 'good' : r.outcome === 'replayed' || r.outcome === 'pending' ? 'neutral' : 'bad'}>${r.outcome}<//> <small>${r.status}</small></td>
              <td>
                <button type="button" aria-expanded=${open === r.seq} onClick=${() => setOpen(open === r.seq ? null : r.seq)}>${open === r.seq ? 'Hide' : 'Show'}</button>
                ${open === r.seq ? html`<dl class="detail">
                  <dt>Request</dt><dd>${r.method} ${r.route}</dd>
                  <dt>Request id</dt><dd>${r.requestId}</dd>
                  <dt>Origin</dt><dd>${r.origin ?? '—'}</dd>
                  <dt>Hash</dt><dd class="mono">${r.hash}</dd>
                  <dt>Previous</dt><dd class="mono">${r.prevHash}</dd>
                </dl>` : null}
              </td>
            </tr>`)}
          </tbody>
        </table>
      <//>
      <nav class="pager" aria-label="Audit pages">
        <button type="button" disabled=${cursors.length < 2} onClick=${() => setCursors(cursors.slice(0, -1))}>Newer</button>
        <button type="button" disabled=${!p.pagination?.next} onClick=${() => setCursors([...cursors, p.pagination!.next!])}>Older</button>
      </nav>`}
    <//>`;
}
