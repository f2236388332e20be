// Which tenant a page shows: a select over the tenants (the first page of 200), kept in the address.
import { admin } from '../api.js';
import { Field, html, useLoad } from '../ui.js';

export function TenantPicker(props: { value: string | null; base: string; platform?: boolean }) {
  const tenants = useLoad(() => admin.tenant.list({ limit: 200 }).page(), []);
  return html`<div class="toolbar">
    <${Field} label="Tenant" id="pick-tenant">
      <select id="pick-tenant" value=${props.value ?? ''} onChange=${(e: Event) => {
        const v = (e.target as HTMLSelectElement).value;
        location.hash = v ? `${props.base}/${encodeURIComponent(v)}` : props.base;
      }}>
        <option value="">${tenants.loading ? 'Loading tenants…' : 'Choose a tenant'}</option>
        ${props.platform ? html`<option value="_platform">The platform (operators' own actions)</option>` : null}
        ${(tenants.data?.result ?? []).map((t) => html`<option value=${t.id}>${t.id} — ${t.name}</option>`)}
      </select>
    <//>
    ${tenants.error ? html`<p role="alert" class="notice error">Could not load the tenants: ${tenants.error}</p>` : null}
  </div>`;
}
