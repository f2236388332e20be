// Cores: every started core of this gateway process, failing ones first; a tenant's own view has more
// (what each offers, routes and shadow) on its page.
import { admin } from '../api.js';
import { Badge, TableRegion, View, html, useLoad } from '../ui.js';
import { failing } from '../types.js';
import type { GatewayCoresResponse } from '../../../sdk/src/generated/types.js';

export function CoresPage() {
  const cores = useLoad(() => admin.gateway.cores(), []);
  return html`<section aria-labelledby="cores-page-h">
    <h1 id="cores-page-h">Cores</h1>
    <p>Each core this gateway process has started, with its breaker and its calls over the last five minutes. A core starts on its tenant's first call. Tenants on the same core share its breaker: one tenant's failed calls open it for all of them.</p>
    <button type="button" onClick=${cores.reload}>Refresh</button>
    <${View} loaded=${cores} what="cores" empty=${(d: GatewayCoresResponse) => d.result.length === 0} emptyText="No core has started yet: cores start on their tenant's first call.">
      ${(d: GatewayCoresResponse) => {
        const rows = [...d.result].sort((a, b) => Number(failing(b)) - Number(failing(a)));
        return html`<${TableRegion} label="Cores">
          <table>
            <thead><tr><th scope="col">Tenant</th><th scope="col">Core</th><th scope="col">Breaker</th><th scope="col">Calls</th><th scope="col">Error rate</th><th scope="col">Latency avg/max</th></tr></thead>
            <tbody>
              ${rows.map((c) => html`<tr key=${`${c.tenantId}/${c.connector}`} class=${failing(c) ? 'row-failing' : ''}>
                <td><a href=${`#/tenants/${encodeURIComponent(c.tenantId)}`}>${c.tenantId}</a></td>
                <td>${c.connector} <small>(${c.connectorId})</small></td>
                <td><${Badge} tone=${c.breaker === 'open' ? 'bad' : c.breaker === 'half-open' ? 'warn' : 'good'}>${c.breaker ?? 'none'}<//>${c.breakerSharedWith.length ? html`<br /><small>shared with ${c.breakerSharedWith.join(', ')}</small>` : null}</td>
                <td>${c.recent.calls}</td>
                <td>${failing(c) ? html`<${Badge} tone="bad">${Math.round(c.recent.errorRate * 1000) / 10}%<//>` : `${Math.round(c.recent.errorRate * 1000) / 10}%`}</td>
                <td>${c.recent.latencyMs.avg} / ${c.recent.latencyMs.max} ms</td>
              </tr>`)}
            </tbody>
          </table>
        <//>`;
      }}
    <//>
  </section>`;
}
