// What the pages read of the management API's answers: the SDK's types, generated from the operation table
// (types only here; the client is bundled from the same sources), so a page cannot drift from its route.
import type {
  ChannelView,
  ConnectorView,
  DeliveryView,
  GatewayConnectorsResponse,
  GatewayCoresResponse,
  GatewayFiguresResponse,
  ShadowSummaryResponse,
  TenantView,
  UserView,
} from '../../sdk/src/generated/types.js';

export type { ChannelView, ConnectorView, DeliveryView, TenantView, UserView };
export type CoreState = GatewayCoresResponse['result'][number];
export type ShadowSummary = ShadowSummaryResponse['result'][number];
export type Figures = GatewayFiguresResponse['result'];
export type ConnectorChoice = GatewayConnectorsResponse['result'][number];

/** A core that an operator must look at: its breaker is open, or most of its recent calls failed. */
export const failing = (c: Pick<CoreState, 'breaker' | 'recent'>): boolean => c.breaker === 'open' || (c.recent.calls > 0 && c.recent.errorRate >= 0.5);

/** Why a core is marked failing: its breaker (saying when shared with other tenants) or its error rate. */
export function failureOf(c: CoreState): string {
  const own = `${c.recent.failures} of this tenant's ${c.recent.calls} recent calls failed`;
  if (c.breaker !== 'open') return `${Math.round(c.recent.errorRate * 100)}% errors`;
  if (!c.breakerSharedWith.length) return 'breaker open';
  return `breaker open, shared with ${c.breakerSharedWith.join(', ')} on the same core: ${own}`;
}

/** The connector ids a tenant's configuration names (one connector, or several routed). */
export function connectorsOf(config: TenantView['config']): string[] {
  const one = config.connector as { id?: string } | undefined;
  const many = config.connectors as Record<string, { id?: string }> | undefined;
  if (many && typeof many === 'object') return Object.entries(many).map(([name, c]) => (c?.id && c.id !== name ? `${name} (${c.id})` : name));
  return one?.id ? [one.id] : [];
}
