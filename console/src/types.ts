// What the management API answers, as far as the pages read it.
export interface Tenant {
  id: string;
  name: string;
  status: 'active' | 'disabled';
  version: number;
  config: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
}

export interface User {
  username: string;
  role: string;
  disabled: boolean;
  locked: boolean;
  lastLoginAt: string | null;
}

interface Window {
  windowSeconds: number;
  calls: number;
  failures: number;
  errorRate: number;
  latencyMs: { avg: number; max: number };
}

export interface CoreState {
  tenantId: string;
  connector: string;
  connectorId: string;
  breaker: 'closed' | 'half-open' | 'open' | null;
  /** The other tenants whose core goes through the same breaker: their failures open it for this tenant too. */
  breakerSharedWith: string[];
  recent: Window;
}

export interface ConnectorView {
  name: string;
  id: string;
  started: boolean;
  problem: string | null;
  offers: string[];
  routed: string[];
  shadows: string[];
  breaker: 'closed' | 'half-open' | 'open' | null;
  recent: Window;
}

/** A core that an operator must look at: its breaker is open, or most of its recent calls failed. */
export const failing = (c: { breaker: string | null; recent: Window }): boolean => c.breaker === 'open' || (c.recent.calls > 0 && c.recent.errorRate >= 0.5);

/**
 * Why a failing core is marked: its breaker open (saying so when the breaker is shared with other tenants on the
 * same core, and how many of this tenant's own calls failed), or its error rate.
 */
export function failureOf(c: CoreState): string {
  const own = `${c.recent.failures} of this tenant's ${c.recent.calls} recent calls failed`;
  if (c.breaker !== 'open') return `${Math.round(c.recent.errorRate * 100)}% errors`;
  if (!c.breakerSharedWith.length) return 'breaker open';
  return `breaker open, shared with ${c.breakerSharedWith.join(', ')} on the same core: ${own}`;
}

/** The connector ids a tenant's configuration names (one connector, or several routed). */
export function connectorsOf(config: Record<string, unknown>): string[] {
  const one = config.connector as { id?: string } | undefined;
  const many = config.connectors as Record<string, { id?: string }> | undefined;
  if (many && typeof many === 'object') return Object.entries(many).map(([name, c]) => (c?.id && c.id !== name ? `${name} (${c.id})` : name));
  return one?.id ? [one.id] : [];
}
