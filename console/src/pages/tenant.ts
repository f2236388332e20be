// One tenant: its configuration as a form and as JSON (sent as a merge patch; the box then shows the stored,
// merged configuration), its cores (what they offer, breaker and whom it is shared with, error rate, latency,
// shadow), and its users (add, Read-Only unless chosen, unlock, disable, reset password, remove) with the
// last-Admin rule shown before it bites.
import { useState } from 'preact/hooks';
import { admin, messageOf } from '../api.js';
import { Badge, ConfirmButton, Field, Notice, TableRegion, View, html, useLoad, when } from '../ui.js';
import { failing, type ConnectorView, type ShadowSummary, type TenantView, type UserView } from '../types.js';
import type { ConnectorsResponse, ShadowSummaryResponse, TenantResponse, UserPageResponse } from '../../../sdk/src/generated/types.js';

export function TenantPage(props: { tenantId: string }) {
  const id = props.tenantId;
  const tenant = useLoad(() => admin.tenant.read(id), [id]);
  return html`<section aria-labelledby="tenant-h">
    <p><a href="#/tenants">← All tenants</a></p>
    <h1 id="tenant-h">Tenant ${id}</h1>
    <${View} loaded=${tenant} what=${`tenant ${id}`}>
      ${(t: TenantResponse) => html`
        <${Configuration} tenant=${t.result} onSaved=${tenant.reload} />
        <${Cores} tenantId=${id} />
        <${Users} tenantId=${id} />`}
    <//>
  </section>`;
}

function Configuration(props: { tenant: TenantView; onSaved: () => void }) {
  const t = props.tenant;
  const [name, setName] = useState(t.name);
  const [json, setJson] = useState(JSON.stringify(t.config, null, 2));
  const [notice, setNotice] = useState<{ kind: 'ok' | 'error'; text: string } | null>(null);
  const send = async (patch: Record<string, unknown>) => {
    try {
      // The answer is the tenant as stored: the patch merged into its configuration, secrets as "***".
      const saved = await admin.tenant.update(t.id, patch);
      setName(saved.result.name);
      setJson(JSON.stringify(saved.result.config, null, 2));
      setNotice({ kind: 'ok', text: 'Saved. Secrets stay sealed and show as "***"; leave them as they are to keep them.' });
      props.onSaved();
    } catch (err) {
      setNotice({ kind: 'error', text: messageOf(err) });
    }
  };
  const saveJson = async (e: Event) => {
    e.preventDefault();
    let config: unknown;
    try {
      config = JSON.parse(json);
    } catch (err) {
      setNotice({ kind: 'error', text: `The configuration is not valid JSON (${(err as Error).message}); correct it and save again.` });
      return;
    }
    await send({ config: withoutSecrets(config) });
  };
  return html`<section class="panel" aria-labelledby="config-h">
    <h2 id="config-h">Configuration <${Badge} tone=${t.status === 'active' ? 'good' : 'neutral'}>${t.status}<//></h2>
    <p>Version ${t.version} · created ${when(t.createdAt)} · changed ${when(t.updatedAt)}</p>
    <${Notice} kind=${notice?.kind ?? 'ok'} text=${notice?.text ?? null} />
    <form class="inline" onSubmit=${(e: Event) => { e.preventDefault(); void send({ name }); }}>
      <${Field} label="Name" id="cfg-name"><input id="cfg-name" value=${name} onInput=${(e: Event) => setName((e.target as HTMLInputElement).value)} /><//>
      <button type="submit">Save name</button>
    </form>
    <form onSubmit=${saveJson}>
      <${Field} label="Configuration (JSON, sent as a merge patch)" id="cfg-json" hint="A field set to null is removed. Secrets shown as *** are kept.">
        <textarea id="cfg-json" rows="12" class="mono" value=${json} onInput=${(e: Event) => setJson((e.target as HTMLTextAreaElement).value)} aria-describedby="cfg-json-hint"></textarea>
      <//>
      <button type="submit" class="primary">Save configuration</button>
    </form>
  </section>`;
}

/** "***" stands for a sealed secret: left out of the patch so that the stored one is kept. */
function withoutSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutSecrets);
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (v !== '***') out[k] = withoutSecrets(v);
    return out;
  }
  return value;
}

function Cores(props: { tenantId: string }) {
  const cores = useLoad(() => admin.tenant.connectors(props.tenantId), [props.tenantId]);
  const shadow = useLoad(() => admin.tenantShadow.summary(props.tenantId), [props.tenantId]);
  // Which of these cores' breakers other tenants share (the gateway's view of every started core).
  const gateway = useLoad(() => admin.gateway.cores(), [props.tenantId]);
  const sharedWith = (name: string) => gateway.data?.result.find((c) => c.tenantId === props.tenantId && c.connector === name)?.breakerSharedWith ?? [];
  return html`<section class="panel" aria-labelledby="cores-h">
    <h2 id="cores-h">Cores</h2>
    <${View} loaded=${cores} what="cores" empty=${(d: ConnectorsResponse) => d.result.length === 0} emptyText="This tenant names no core.">
      ${(d: ConnectorsResponse) => html`<${CoreTable} rows=${d.result} sharedWith=${sharedWith} />`}
    <//>
    <h3>Shadow comparisons</h3>
    <${View} loaded=${shadow} what="shadow comparisons" empty=${(d: ShadowSummaryResponse) => d.result.length === 0} emptyText="No shadow core: nothing is compared.">
      ${(d: ShadowSummaryResponse) => html`<${TableRegion} label="Shadow comparisons">
        <table>
          <thead><tr><th scope="col">Operation</th><th scope="col">Match rate</th><th scope="col">Match</th><th scope="col">Diverged</th><th scope="col">Error</th><th scope="col">Dropped</th></tr></thead>
          <tbody>${d.result.map((r: ShadowSummary) => html`<tr key=${r.operation}>
            <td>${r.operation}</td>
            <td>${r.matchRate === null ? '— (nothing compared yet)' : html`<${Badge} tone=${r.matchRate === 1 ? 'good' : r.matchRate >= 0.99 ? 'warn' : 'bad'}>${Math.round(r.matchRate * 1000) / 10}%<//>`}</td>
            <td>${r.match}</td><td>${r.diverged}</td><td>${r.error}</td><td>${r.dropped}</td>
          </tr>`)}</tbody>
        </table>
      <//>`}
    <//>
  </section>`;
}

function CoreTable(props: { rows: ConnectorView[]; sharedWith: (name: string) => string[] }) {
  return html`<${TableRegion} label="Cores">
    <table>
      <thead><tr><th scope="col">Core</th><th scope="col">Breaker</th><th scope="col">Calls (5 min)</th><th scope="col">Error rate</th><th scope="col">Latency avg/max</th><th scope="col">Offers</th><th scope="col">Shadow</th></tr></thead>
      <tbody>
        ${props.rows.map((c) => html`<tr key=${c.name} class=${failing(c) ? 'row-failing' : ''}>
          <td>${c.name} <small>(${c.id})</small>${c.problem ? html`<div><${Badge} tone="bad">not started: ${c.problem}<//></div>` : null}</td>
          <td><${Badge} tone=${c.breaker === 'open' ? 'bad' : c.breaker === 'half-open' ? 'warn' : 'good'}>${c.breaker ?? 'none'}<//>${props.sharedWith(c.name).length
            ? html`<br /><small>shared with ${props.sharedWith(c.name).join(', ')} on the same core: their failed calls open it too</small>`
            : null}</td>
          <td>${c.recent.calls}</td>
          <td>${Math.round(c.recent.errorRate * 1000) / 10}%</td>
          <td>${c.recent.latencyMs.avg} / ${c.recent.latencyMs.max} ms</td>
          <td><small>${c.offers.length} operations${c.routed.length ? `, ${c.routed.length} routed here` : ''}</small></td>
          <td><small>${c.shadows.length ? c.shadows.join(', ') : '—'}</small></td>
        </tr>`)}
      </tbody>
    </table>
  <//>`;
}

function Users(props: { tenantId: string }) {
  const id = props.tenantId;
  const users = useLoad(() => admin.tenantUser.list(id, { limit: 200 }).page(), [id]);
  const [notice, setNotice] = useState<{ kind: 'ok' | 'error'; text: string } | null>(null);
  // The least privilege unless the operator chooses more.
  const [form, setForm] = useState({ username: '', role: 'Read-Only', password: '' });
  const [reset, setReset] = useState<{ username: string; password: string } | null>(null);
  const act = async (what: string, call: () => Promise<unknown>) => {
    try {
      await call();
      setNotice({ kind: 'ok', text: what });
      users.reload();
    } catch (err) {
      setNotice({ kind: 'error', text: messageOf(err) });
    }
  };
  const add = (e: Event) => {
    e.preventDefault();
    void act(`User '${form.username}' added as ${form.role}.`, async () => {
      // The password leaves this browser only as a JWE to the tenant's key (CardlineAdmin encrypts it).
      await admin.tenantUser.create(id, { username: form.username, role: form.role as UserView['role'], password: form.password });
      setForm({ username: '', role: form.role, password: '' });
    });
  };
  return html`<section class="panel" aria-labelledby="users-h">
    <h2 id="users-h">Users</h2>
    <${Notice} kind=${notice?.kind ?? 'ok'} text=${notice?.text ?? null} />
    <${View} loaded=${users} what="users" empty=${(p: UserPageResponse) => p.result.length === 0} emptyText="No user yet: add the tenant's first Admin below.">
      ${(p: UserPageResponse) => {
        const admins = p.result.filter((u) => u.role === 'Admin' && !u.disabled);
        const last = (u: UserView) => u.role === 'Admin' && !u.disabled && admins.length === 1;
        return html`<${TableRegion} label="Users">
          <table>
            <thead><tr><th scope="col">User</th><th scope="col">Role</th><th scope="col">State</th><th scope="col">Last login</th><th scope="col">Actions</th></tr></thead>
            <tbody>
              ${p.result.map((u) => html`<tr key=${u.username}>
                <td>${u.username}${last(u) ? html`<div><small class="hint">The last Admin: it cannot be disabled or removed until another Admin exists.</small></div>` : null}</td>
                <td>${u.role}</td>
                <td>${u.disabled ? html`<${Badge} tone="neutral">disabled<//>` : u.locked ? html`<${Badge} tone="warn">locked<//>` : html`<${Badge} tone="good">active<//>`}</td>
                <td>${when(u.lastLoginAt)}</td>
                <td class="actions">
                  ${u.locked ? html`<button type="button" onClick=${() => act(`'${u.username}' unlocked.`, () => admin.tenantUser.unlock(id, u.username))}>Unlock</button>` : null}
                  ${u.disabled
                    ? html`<button type="button" onClick=${() => act(`'${u.username}' enabled.`, () => admin.tenantUser.update(id, u.username, { disabled: false }))}>Enable</button>`
                    : html`<button type="button" disabled=${last(u)} onClick=${() => act(`'${u.username}' disabled.`, () => admin.tenantUser.update(id, u.username, { disabled: true }))}>Disable</button>`}
                  <button type="button" onClick=${() => setReset({ username: u.username, password: '' })}>Reset password</button>
                  ${last(u)
                    ? html`<button type="button" disabled>Remove</button>`
                    : html`<${ConfirmButton} label="Remove" question=${`Remove ${u.username}?`} confirm="Remove" danger=${true}
                        onConfirm=${() => act(`'${u.username}' removed.`, () => admin.tenantUser.remove(id, u.username))} />`}
                </td>
              </tr>`)}
            </tbody>
          </table>
        <//>`;
      }}
    <//>
    ${reset
      ? html`<form class="inline" onSubmit=${(e: Event) => {
          e.preventDefault();
          void act(`Password of '${reset.username}' set; its tokens are revoked.`, async () => {
            await admin.tenantUser.setPassword(id, reset.username, { password: reset.password });
            setReset(null);
          });
        }}>
          <${Field} label=${`New password for ${reset.username}`} id="reset-pw">
            <input id="reset-pw" type="password" required autocomplete="new-password" value=${reset.password} onInput=${(e: Event) => setReset({ ...reset, password: (e.target as HTMLInputElement).value })} />
          <//>
          <button type="submit" class="primary">Set password</button>
          <button type="button" onClick=${() => setReset(null)}>Cancel</button>
        </form>`
      : null}
    <form class="inline" onSubmit=${add} aria-label="Add a user">
      <${Field} label="Username" id="u-name"><input id="u-name" required value=${form.username} onInput=${(e: Event) => setForm({ ...form, username: (e.target as HTMLInputElement).value })} autocomplete="off" /><//>
      <${Field} label="Role" id="u-role">
        <select id="u-role" value=${form.role} onChange=${(e: Event) => setForm({ ...form, role: (e.target as HTMLSelectElement).value })}>
          ${['Read-Only', 'API Integration', 'Operations', 'Admin'].map((r) => html`<option value=${r}>${r}</option>`)}
        </select>
      <//>
      <${Field} label="Password" id="u-pw"><input id="u-pw" type="password" required autocomplete="new-password" value=${form.password} onInput=${(e: Event) => setForm({ ...form, password: (e.target as HTMLInputElement).value })} /><//>
      <button type="submit" class="primary">Add user</button>
    </form>
  </section>`;
}
