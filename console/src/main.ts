// The Cardline operations console: sign-in with an operator key (exchanged for a session cookie the page
// never sees), then the pages, routed by the address's hash so that every view has a link.
import 'uplot/dist/uPlot.min.css';
import './style.css';
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { messageOf, session, sessionRequest, type SessionInfo } from './api.js';
import { Field, Notice, html } from './ui.js';
import { ApprovalsPage } from './pages/approvals.js';
import { AuditPage } from './pages/audit.js';
import { ChannelsPage } from './pages/channels.js';
import { CoresPage } from './pages/cores.js';
import { FiguresPage } from './pages/figures.js';
import { LookupPage } from './pages/lookup.js';
import { TenantPage } from './pages/tenant.js';
import { TenantsPage } from './pages/tenants.js';

const NAV = [
  ['#/tenants', 'Tenants'],
  ['#/channels', 'Channels'],
  ['#/approvals', 'Approvals'],
  ['#/audit', 'Audit'],
  ['#/cores', 'Cores'],
  ['#/figures', 'Live figures'],
  ['#/lookup', 'Lookup'],
] as const;

function useHash(): string {
  const [hash, setHash] = useState(location.hash || '#/tenants');
  useEffect(() => {
    const on = () => setHash(location.hash || '#/tenants');
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return hash;
}

/** The address's parts, decoded; null when one is not valid percent-encoding (a link cut short, a typo). */
function partsOf(hash: string): string[] | null {
  try {
    return hash.replace(/^#\/?/, '').split('/').map((p) => decodeURIComponent(p));
  } catch {
    return null;
  }
}

const notFound = (hash: string) =>
  html`<section aria-labelledby="notfound-h"><h1 id="notfound-h">Not found</h1><p>There is no page “${hash}”. <a href="#/tenants">Go to the tenants</a>.</p></section>`;

function Page(props: { hash: string }) {
  const parts = partsOf(props.hash);
  if (!parts) return notFound(props.hash);
  const [section, a = null, b = null] = parts;
  switch (section) {
    case 'tenants':
      return a ? html`<${TenantPage} key=${a} tenantId=${a} />` : html`<${TenantsPage} />`;
    case 'channels':
      return html`<${ChannelsPage} tenantId=${a} channelId=${b} />`;
    case 'approvals':
      return html`<${ApprovalsPage} tenantId=${a} />`;
    case 'audit':
      return html`<${AuditPage} tenantId=${a} />`;
    case 'cores':
      return html`<${CoresPage} />`;
    case 'figures':
      return html`<${FiguresPage} />`;
    case 'lookup':
      return html`<${LookupPage} tenantId=${a} />`;
    default:
      return notFound(props.hash);
  }
}

function SignIn(props: { message: string | null; onSignedIn: (s: SessionInfo) => void }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const info = (await sessionRequest('POST', { key }))!;
      setKey('');
      props.onSignedIn(info);
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };
  return html`<main id="main" class="signin">
    <form class="panel" onSubmit=${submit} aria-labelledby="signin-h">
      <h1 id="signin-h">Cardline console</h1>
      <p>Sign in with your operator key. The key is exchanged for a session and is not kept in this browser.</p>
      <${Notice} kind="ok" text=${props.message} />
      <${Notice} kind="error" text=${error} />
      <${Field} label="Operator key" id="op-key" hint=${`An operator with a key creates yours while the gateway runs: CARDLINE_OPERATOR_KEY=<their key> npx cardline --admin-url ${location.origin} operator-key create --name <your name>`}>
        <input id="op-key" type="password" required autocomplete="off" value=${key} onInput=${(e: Event) => setKey((e.target as HTMLInputElement).value)} aria-describedby="op-key-hint" />
      <//>
      <button type="submit" class="primary" disabled=${busy}>${busy ? 'Signing in…' : 'Sign in'}</button>
    </form>
  </main>`;
}

function App() {
  const [state, setState] = useState<{ kind: 'checking' } | { kind: 'out'; message: string | null } | { kind: 'in'; info: SessionInfo }>({ kind: 'checking' });
  const hash = useHash();
  useEffect(() => {
    session.onSignedOut((message) => {
      session.clear();
      setState({ kind: 'out', message });
    });
    sessionRequest('GET').then(
      (info) => {
        session.set(info!.csrfToken);
        setState({ kind: 'in', info: info! });
      },
      () => setState({ kind: 'out', message: null }),
    );
  }, []);
  useEffect(() => {
    // Signed out, the page is the sign-in form whatever the address names.
    const label = state.kind === 'out' ? 'Sign in' : state.kind === 'in' ? NAV.find(([href]) => hash.startsWith(href))?.[1] : undefined;
    document.title = label ? `${label} · Cardline console` : 'Cardline console';
  }, [hash, state.kind]);

  if (state.kind === 'checking') return html`<main class="loading" aria-busy="true"><p role="status">Loading the console…</p></main>`;
  if (state.kind === 'out')
    return html`<${SignIn} message=${state.message} onSignedIn=${(info: SessionInfo) => { session.set(info.csrfToken); setState({ kind: 'in', info }); }} />`;

  const signOut = async () => {
    try {
      await sessionRequest('DELETE');
    } finally {
      session.clear();
      setState({ kind: 'out', message: 'Signed out.' });
    }
  };
  return html`
    <a class="skip" href="#main" onClick=${(e: Event) => { e.preventDefault(); document.getElementById('main')?.focus(); }}>Skip to content</a>
    <header class="top">
      <span class="brand">Cardline</span>
      <nav aria-label="Console">
        <ul>${NAV.map(([href, label]) => html`<li><a href=${href} aria-current=${hash.startsWith(href) ? 'page' : undefined}>${label}</a></li>`)}</ul>
      </nav>
      <span class="who">Signed in as <strong>${state.info.operator}</strong> <button type="button" onClick=${signOut}>Sign out</button></span>
    </header>
    <main id="main" tabindex="-1"><${Page} hash=${hash} /></main>`;
}

render(html`<${App} />`, document.getElementById('app')!);
