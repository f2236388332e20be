// Tenants: the list (searched by the gateway over every tenant, paging, status, cores, dates; a failing core stands out), onboarding a bank
// with its first Admin (connector options checked against the connector's own schema first), and disable /
// enable with a confirmation.
import { useEffect, useState } from 'preact/hooks';
import { admin, messageOf } from '../api.js';
import { Badge, ConfirmButton, Field, Notice, TableRegion, View, html, useLoad, when } from '../ui.js';
import { connectorsOf, failing, failureOf, type ConnectorChoice, type TenantView } from '../types.js';
import type { TenantPageResponse } from '../../../sdk/src/generated/types.js';

const PAGE = 20;
/** How long typing pauses before the gateway is asked (one request per pause, not per key). */
const SEARCH_DEBOUNCE_MS = 300;
/** The longest text GET /v1/tenants searches for (its `q`). */
const SEARCH_MAX = 128;

export function TenantsPage() {
  const [cursors, setCursors] = useState<(string | null)[]>([null]);
  const cursor = cursors[cursors.length - 1] ?? null;
  const [search, setSearch] = useState('');
  // The text searched: the gateway searches every tenant's id and name (GET /v1/tenants?q=), not this page.
  const [query, setQuery] = useState('');
  const [notice, setNotice] = useState<{ kind: 'ok' | 'error'; text: string } | null>(null);
  useEffect(() => {
    const timer = setTimeout(() => {
      const q = search.trim();
      if (q === query) return;
      setQuery(q);
      setCursors([null]);
    }, SEARCH_DEBOUNCE_MS);
    return () => clearTimeout(timer);
  }, [search]);
  const tenants = useLoad(() => admin.tenant.list({ limit: PAGE, ...(query ? { q: query } : {}) }).page(cursor), [query, cursor]);
  const cores = useLoad(() => admin.gateway.cores(), [tenants.data]);
  // A core that starts failing while the list is open is marked within 15 s.
  useEffect(() => {
    const timer = setInterval(cores.reload, 15_000);
    return () => clearInterval(timer);
  }, [cores.reload]);
  const failingOf = (id: string) => (cores.data?.result ?? []).filter((c) => c.tenantId === id && failing(c));

  const setStatus = async (t: TenantView, verb: 'disable' | 'enable') => {
    try {
      await admin.tenant[verb](t.id);
      setNotice({ kind: 'ok', text: `Tenant ${t.id} ${verb === 'disable' ? 'disabled: its calls are refused until it is enabled' : 'enabled'}.` });
      tenants.reload();
    } catch (err) {
      setNotice({ kind: 'error', text: messageOf(err) });
    }
  };

  return html`<section aria-labelledby="tenants-h">
    <h1 id="tenants-h">Tenants</h1>
    <${Notice} kind=${notice?.kind ?? 'ok'} text=${notice?.text ?? null} />
    <${Onboard} onDone=${(text: string) => { setNotice({ kind: 'ok', text }); tenants.reload(); }} />
    <div class="toolbar">
      <${Field} label="Search tenants" id="tenant-search" hint="Part of an id or a name, in any case: every tenant is searched.">
        <input id="tenant-search" type="search" value=${search} maxLength=${SEARCH_MAX} autocomplete="off" aria-describedby="tenant-search-hint"
          onInput=${(e: Event) => setSearch((e.target as HTMLInputElement).value)} placeholder="id or name" />
      <//>
    </div>
    <${View} loaded=${tenants} what="tenants" empty=${(p: TenantPageResponse) => !query && cursors.length === 1 && p.result.length === 0} emptyText="No tenant yet: onboard the first bank above.">
      ${(page: TenantPageResponse) => {
        const rows = page.result;
        return html`
          <${TableRegion} label="Tenants">
            <table>
              <thead><tr><th scope="col">Tenant</th><th scope="col">Status</th><th scope="col">Cores</th><th scope="col">Created</th><th scope="col">Changed</th><th scope="col">Actions</th></tr></thead>
              <tbody>
                ${rows.length === 0 ? html`<tr><td colspan="6">No tenant's id or name holds “${query}”: check the spelling, or clear the search to see every tenant.</td></tr>` : null}
                ${rows.map((t) => {
                  const bad = failingOf(t.id);
                  return html`<tr key=${t.id} class=${bad.length ? 'row-failing' : ''} data-tenant=${t.id}>
                    <td><a href=${`#/tenants/${encodeURIComponent(t.id)}`}>${t.id}</a><br /><small>${t.name}</small></td>
                    <td><${Badge} tone=${t.status === 'active' ? 'good' : 'neutral'}>${t.status}<//></td>
                    <td>
                      ${connectorsOf(t.config).join(', ') || '—'}
                      ${bad.map((c) => html`<div><${Badge} tone="bad">core failing: ${c.connector} (${failureOf(c)})<//></div>`)}
                    </td>
                    <td>${when(t.createdAt)}</td>
                    <td>${when(t.updatedAt)}</td>
                    <td>
                      ${t.status === 'active'
                        ? html`<${ConfirmButton} label=${`Disable ${t.id}`} question=${`Disable ${t.id}? Its users and API calls are refused until enabled.`} confirm="Disable" danger=${true} onConfirm=${() => setStatus(t, 'disable')} />`
                        : html`<${ConfirmButton} label=${`Enable ${t.id}`} question=${`Enable ${t.id} again?`} confirm="Enable" onConfirm=${() => setStatus(t, 'enable')} />`}
                    </td>
                  </tr>`;
                })}
              </tbody>
            </table>
          <//>
          <nav class="pager" aria-label="Tenant pages">
            <button type="button" disabled=${cursors.length < 2} onClick=${() => setCursors(cursors.slice(0, -1))}>Previous page</button>
            <span aria-live="polite">${query ? `Search “${query}”, page ${cursors.length}` : `Page ${cursors.length}`}</span>
            <button type="button" disabled=${!page.pagination?.nextCursor} onClick=${() => setCursors([...cursors, page.pagination!.nextCursor!])}>Next page</button>
          </nav>`;
      }}
    <//>
  </section>`;
}

/** The first Admin's password rule, the gateway's own (stated before sending, checked again by the gateway). */
const PASSWORD_MIN = 8;
const COUNTRY = /^[A-Z]{2}$/;
const MONEY = /^(?!0+(\.0{1,2})?$)\d{1,15}(\.\d{1,2})?$/;
/** The IANA zones this browser knows, offered as the time zone's suggestions. */
const ZONES: readonly string[] = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [];

const EMPTY_FORM = { id: '', name: '', connector: 'mock', options: '{ "fixtures": "demo" }', homeCountry: '', timeZone: '', maximum: '', admin: 'admin', password: '' };

/** What is wrong with the form before anything is sent, in the order of its fields; null when nothing is. */
function formProblem(form: typeof EMPTY_FORM): string | null {
  if (!COUNTRY.test(form.homeCountry)) return 'Home country: two capital letters (ISO 3166-1), such as PT or GB.';
  if (!form.timeZone.trim()) return 'Time zone: choose the IANA zone that decides the bank\'s days, such as Europe/Lisbon.';
  if (!MONEY.test(form.maximum)) return 'Maximum credit limit: a positive amount with at most two decimals, such as 250000.00.';
  if (!form.admin.trim()) return "First Admin's username: the bank's first Admin signs in with it.";
  if (form.password.length < PASSWORD_MIN) return `First Admin's password: at least ${PASSWORD_MIN} characters (this one has ${form.password.length}).`;
  return null;
}

/** Onboard a bank and its first Admin by one call, both or neither; nothing about the bank assumed. */
function Onboard(props: { onDone: (text: string) => void }) {
  const [open, setOpen] = useState(false);
  const [form, setForm] = useState(EMPTY_FORM);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const connectors = useLoad(() => (open ? admin.gateway.connectors() : Promise.resolve(null)), [open]);
  const set = (k: keyof typeof form) => (e: Event) => setForm({ ...form, [k]: (e.target as HTMLInputElement).value });
  // A connector's options schema is JSON Schema: its properties and required names are all the hint shows.
  const schema = connectors.data?.result.find((c) => c.id === form.connector)?.optionsSchema as { properties?: Record<string, unknown>; required?: string[] } | null | undefined;

  if (!open) return html`<p><button type="button" class="primary" onClick=${() => setOpen(true)}>Onboard a tenant</button></p>`;

  const submit = async (e: Event) => {
    e.preventDefault();
    setError(null);
    let options: unknown;
    try {
      options = form.options.trim() ? JSON.parse(form.options) : {};
    } catch {
      setError('The connector options are not valid JSON: check quotes and commas, e.g. { "baseUrl": "https://core.bank.example" }.');
      return;
    }
    const problem = formProblem(form);
    if (problem) {
      setError(problem);
      return;
    }
    setBusy(true);
    try {
      // The connector's own schema decides, before anything is created.
      const check = await admin.gateway.connectorCheck({ id: form.connector, options });
      if (!check.result.ok) {
        setError(`The connector options are refused: ${check.result.problem}. Correct them and send again.`);
        return;
      }
      await admin.tenant.create({
        id: form.id,
        ...(form.name ? { name: form.name } : {}),
        config: {
          connector: { id: form.connector, options },
          homeCountry: form.homeCountry,
          timeZone: form.timeZone.trim(),
          creditLimit: { maximum: form.maximum, allowDecrease: false },
        },
        admin: { username: form.admin.trim(), password: form.password },
      });
      setOpen(false);
      setForm(EMPTY_FORM);
      props.onDone(`Tenant ${form.id} onboarded with its first Admin '${form.admin.trim()}'.`);
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };

  return html`<form class="panel" onSubmit=${submit} aria-labelledby="onboard-h" noValidate>
    <h2 id="onboard-h">Onboard a tenant</h2>
    <p>The tenant and its first Admin are created together, or not at all.</p>
    <${Notice} kind="error" text=${error} />
    <div class="grid">
      <${Field} label="Tenant id" id="t-id" hint="What the bank sends in its TENANT header: lower-case letters, digits, '-'.">
        <input id="t-id" required value=${form.id} onInput=${set('id')} aria-describedby="t-id-hint" autocomplete="off" />
      <//>
      <${Field} label="Name" id="t-name"><input id="t-name" value=${form.name} onInput=${set('name')} /><//>
      <${Field} label="Core connector" id="t-connector">
        <select id="t-connector" value=${form.connector} onChange=${set('connector')}>
          ${(connectors.data?.result ?? [{ id: 'mock', optionsSchema: null }]).map((c: ConnectorChoice) => html`<option value=${c.id}>${c.id}</option>`)}
        </select>
      <//>
      <${Field} label="Connector options (JSON)" id="t-options"
        hint=${schema?.properties ? `Options: ${Object.keys(schema.properties).map((k) => (schema.required?.includes(k) ? `${k} (required)` : k)).join(', ')}` : 'Checked against the connector’s schema before the tenant is created.'}>
        <textarea id="t-options" rows="3" value=${form.options} onInput=${set('options')} aria-describedby="t-options-hint"></textarea>
      <//>
      <${Field} label="Home country" id="t-country" hint="ISO 3166-1 alpha-2, such as PT or GB: a merchant elsewhere makes a card transaction international.">
        <input id="t-country" required maxLength=${2} value=${form.homeCountry} autocomplete="off" aria-describedby="t-country-hint"
          onInput=${(e: Event) => setForm({ ...form, homeCountry: (e.target as HTMLInputElement).value.toUpperCase() })} />
      <//>
      <${Field} label="Time zone" id="t-zone" hint="The IANA zone that decides the bank's days: daily card limits, report days, date filters.">
        <input id="t-zone" required list="t-zones" value=${form.timeZone} onInput=${set('timeZone')} autocomplete="off" aria-describedby="t-zone-hint" placeholder="Europe/Lisbon" />
        <datalist id="t-zones">${ZONES.map((z) => html`<option value=${z} />`)}</datalist>
      <//>
      <${Field} label="Maximum credit limit" id="t-maximum" hint="The highest credit limit the bank's product allows, a decimal such as 250000.00.">
        <input id="t-maximum" required inputMode="decimal" value=${form.maximum} onInput=${set('maximum')} autocomplete="off" aria-describedby="t-maximum-hint" />
      <//>
      <${Field} label="First Admin's username" id="t-admin"><input id="t-admin" required value=${form.admin} onInput=${set('admin')} autocomplete="off" /><//>
      <${Field} label="First Admin's password" id="t-password" hint=${`At least ${PASSWORD_MIN} characters. Encrypted in this browser to the gateway's onboarding key; never sent in clear.`}>
        <input id="t-password" type="password" required value=${form.password} onInput=${set('password')} autocomplete="new-password" aria-describedby="t-password-hint" />
      <//>
    </div>
    <div class="actions">
      <button type="submit" class="primary" disabled=${busy}>${busy ? 'Creating…' : 'Create tenant'}</button>
      <button type="button" onClick=${() => setOpen(false)}>Cancel</button>
    </div>
  </form>`;
}
