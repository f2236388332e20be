// Approvals: a tenant's requests held by its approval policy (pending first), each with what will execute, its
// maker, its expiry and the approvals given so far; the operator approves (after a confirmation) or rejects with
// a reason where the policy names Operator, and reads what an executed request answered.
import { useState } from 'preact/hooks';
import { admin, messageOf } from '../api.js';
import { Badge, ConfirmButton, Field, Notice, TableRegion, View, html, useLoad, when } from '../ui.js';
import type { ApprovalPageResponse, ApprovalView } from '../../../sdk/src/generated/types.js';
import { TenantPicker } from './picker.js';

const STATUSES = ['pending', 'executing', 'executed', 'rejected', 'cancelled', 'expired'] as const;
const OPERATOR = 'Operator';

export function ApprovalsPage(props: { tenantId: string | null }) {
  const t = props.tenantId;
  return html`<section aria-labelledby="approvals-h">
    <h1 id="approvals-h">Approvals</h1>
    <${TenantPicker} value=${t} base="#/approvals" />
    ${t ? html`<${Approvals} key=${t} tenantId=${t} />` : html`<p class="state empty">Choose a tenant to see the requests that wait for a second person.</p>`}
  </section>`;
}

/** What an approval comes to after a decision, in a sentence. */
function decided(a: ApprovalView): { kind: 'ok' | 'error'; text: string } {
  if (a.status === 'pending') return { kind: 'ok', text: `Approved (${a.approvals.length} of ${a.approvalsNeeded}): ${a.operation} waits for another approver.` };
  if (a.status === 'rejected') return { kind: 'ok', text: `Rejected: ${a.operation} by ${a.maker.username} will not run.` };
  if (a.status === 'executed' && a.outcome) {
    const ok = a.outcome.status >= 200 && a.outcome.status < 300;
    const detail = (a.outcome.body as { detail?: string; exception?: { detailMessage?: string } } | null) ?? null;
    const why = detail?.detail ?? detail?.exception?.detailMessage;
    return ok
      ? { kind: 'ok', text: `Approved and executed: ${a.operation} answered ${a.outcome.status}.` }
      : { kind: 'error', text: `Approved and executed, but ${a.operation} was refused (${a.outcome.status})${why ? `: ${why}` : '.'}` };
  }
  return { kind: 'ok', text: `The approval is ${a.status}.` };
}

function Approvals(props: { tenantId: string }) {
  const t = props.tenantId;
  const [status, setStatus] = useState<string>('pending');
  const [cursors, setCursors] = useState<(string | null)[]>([null]);
  const [notice, setNotice] = useState<{ kind: 'ok' | 'error'; text: string } | null>(null);
  const [rejecting, setRejecting] = useState<{ id: string; reason: string } | null>(null);
  const cursor = cursors[cursors.length - 1] ?? null;
  const approvals = useLoad(
    () => admin.tenantApproval.list(t, { limit: 20, ...(status ? { status: status as (typeof STATUSES)[number] } : {}) }).page(cursor),
    [t, status, cursor],
  );

  const act = async (call: () => Promise<ApprovalView>) => {
    try {
      setNotice(decided(await call()));
      setRejecting(null);
    } catch (err) {
      setNotice({ kind: 'error', text: messageOf(err) });
    }
    approvals.reload();
  };
  const approve = (a: ApprovalView) =>
    act(async () => {
      const answer = await admin.tenantApproval.approve(t, a.approvalId);
      if (!('result' in answer)) throw new Error('The gateway has not confirmed the decision yet; refresh to see it.');
      return answer.result;
    });
  const reject = (e: Event) => {
    e.preventDefault();
    if (!rejecting) return;
    const { id, reason } = rejecting;
    void act(async () => (await admin.tenantApproval.reject(t, id, { reason })).result);
  };

  return html`
    <div class="toolbar">
      <${Field} label="Status" id="a-status">
        <select id="a-status" value=${status} onChange=${(e: Event) => { setStatus((e.target as HTMLSelectElement).value); setCursors([null]); }}>
          ${STATUSES.map((s) => html`<option value=${s}>${s}</option>`)}<option value="">all</option>
        </select>
      <//>
      <button type="button" onClick=${approvals.reload}>Refresh</button>
    </div>
    <${Notice} kind=${notice?.kind ?? 'ok'} text=${notice?.text ?? null} />
    <${View} loaded=${approvals} what="approvals" empty=${(p: ApprovalPageResponse) => p.result.length === 0}
      emptyText=${status === 'pending' ? 'Nothing waits for approval on this tenant.' : status ? `No ${status} approval on this tenant.` : 'No approval on this tenant yet.'}>
      ${(p: ApprovalPageResponse) => html`<${TableRegion} label="Approvals">
        <table>
          <thead><tr><th scope="col">Request</th><th scope="col">Maker</th><th scope="col">Approvals</th><th scope="col">Expires</th><th scope="col">Decision</th></tr></thead>
          <tbody>
            ${p.result.map((a) => html`<tr key=${a.approvalId} data-approval=${a.approvalId} data-status=${a.status}>
              <td><strong>${a.operation}</strong><br /><small class="mono path">${a.request.method} ${a.request.path.split('/').map((part, i) => (i ? html`/<wbr />${part}` : part))}</small><${Body} value=${a.request.body} /></td>
              <td>${a.maker.username}<br /><small>${a.maker.role} · ${when(a.createdAt)}</small></td>
              <td>${a.approvals.length} of ${a.approvalsNeeded}${a.approvals.length
                ? html`<ul class="cards">${a.approvals.map((g) => html`<li><small>${g.by} (${g.role}), ${when(g.at)}</small></li>`)}</ul>`
                : null}<div><small>Approvers: ${a.approvers.join(', ')}</small></div></td>
              <td>${a.status === 'pending' || a.status === 'expired' ? when(a.expiresAt) : '—'}</td>
              <td>${decision(a)}</td>
            </tr>`)}
          </tbody>
        </table>
      <//>
      ${rejecting
        ? html`<form class="panel inline" onSubmit=${reject} aria-label="Reject the request">
            <${Field} label="Reason for rejecting" id="a-reason" hint="The maker and the tenant's audit trail see it (1-500 characters).">
              <input id="a-reason" required maxlength="500" value=${rejecting.reason} aria-describedby="a-reason-hint" ref=${(el: HTMLInputElement | null) => el?.focus()}
                onInput=${(e: Event) => setRejecting({ ...rejecting, reason: (e.target as HTMLInputElement).value })} />
            <//>
            <button type="submit" class="danger">Reject</button>
            <button type="button" onClick=${() => setRejecting(null)}>Cancel</button>
          </form>`
        : null}
      <nav class="pager" aria-label="Approval pages">
        <span>Page ${cursors.length}</span>
        <button type="button" disabled=${cursors.length < 2} onClick=${() => setCursors(cursors.slice(0, -1))}>Previous page</button>
        <button type="button" disabled=${!p.pagination?.nextCursor} onClick=${() => setCursors([...cursors, p.pagination!.nextCursor!])}>Next page</button>
      </nav>`}
    <//>`;

  function decision(a: ApprovalView) {
    if (a.status === 'executed' && a.outcome) {
      const ok = a.outcome.status >= 200 && a.outcome.status < 300;
      return html`<${Badge} tone=${ok ? 'good' : 'bad'}>executed: ${a.outcome.status}<//>`;
    }
    if (a.status === 'rejected' && a.rejection) return html`<${Badge} tone="neutral">rejected<//><br /><small>by ${a.rejection.by}: ${a.rejection.reason}</small>`;
    if (a.status !== 'pending') return html`<${Badge} tone="neutral">${a.status}<//>`;
    if (!a.approvers.includes(OPERATOR)) return html`<small class="hint">Only ${a.approvers.join(', ')} may decide: the policy does not name Operator.</small>`;
    const what = `${a.operation} by ${a.maker.username}`;
    return html`<div class="actions">
      <${ConfirmButton} label="Approve" confirm="Approve" onConfirm=${() => approve(a)}
        question=${a.approvals.length + 1 >= a.approvalsNeeded ? `Approve ${what}? It executes now.` : `Approve ${what}? It then waits for ${a.approvalsNeeded - a.approvals.length - 1} more.`} />
      <button type="button" onClick=${() => setRejecting({ id: a.approvalId, reason: '' })} aria-label=${`Reject ${what}`}>Reject</button>
    </div>`;
  }
}

/** The held body: each field on a line, a secret one as the gateway shows it ("[encrypted]"). */
function Body(props: { value: unknown }) {
  const v = props.value;
  if (v === null || v === undefined || typeof v !== 'object') return null;
  const entries = Object.entries(v as Record<string, unknown>);
  if (!entries.length) return null;
  return html`<dl class="detail">${entries.map(([k, x]) => html`<dt>${k}</dt><dd>${typeof x === 'string' ? x : JSON.stringify(x)}</dd>`)}</dl>`;
}
