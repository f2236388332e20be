// Each of a tenant's connectors as an operator and the tenant's Admin see it: what it offers, what is
// routed to it or shadowed on it, its breaker, and its calls over the last minutes (decision 0113).
import { CONTRACT_OPERATIONS, offeredBy } from '../../../connectors/contract.js';
import type { ConnectorView } from '../../../schemas/core-routing.js';
import type { ConnectorHealth } from './connector-health.js';
import { reasonOf } from './connector-registry.js';
import type { ConnectorInstances } from './connector-instances.js';
import { routesOf } from './routing.js';
import type { Tenant } from '../tenancy/tenants.js';

/** By name, whatever order the configuration's store keeps its keys in. */
export async function connectorsView(deps: { connectors: ConnectorInstances; core: { health: ConnectorHealth } }, tenant: Tenant): Promise<ConnectorView[]> {
  const routes = routesOf(tenant.config);
  return Promise.all(
    Object.entries(routes.connectors)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(async ([name, choice]): Promise<ConnectorView> => {
      let offers: string[] = [];
      let breaker: ConnectorView['breaker'] = null;
      let problem: string | null = null;
      try {
        const lease = await deps.connectors.acquire(tenant, name);
        try {
          offers = offeredBy(lease.connector);
          breaker = lease.connector.breakerState?.() ?? null;
        } finally {
          lease.release();
        }
      } catch (err) {
        problem = reasonOf(err);
      }
      return {
        name,
        id: choice.id,
        started: problem === null,
        problem,
        offers,
        routed: CONTRACT_OPERATIONS.filter((o) => routes.byOperation[o] === name),
        shadows: routes.shadow?.name === name ? CONTRACT_OPERATIONS.filter((o) => routes.shadow!.operations.has(o)) : [],
        breaker,
        recent: deps.core.health.window(tenant.id, name),
      };
    }),
  );
}
