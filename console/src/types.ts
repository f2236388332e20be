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

/** The connector ids a tenant's configuration names (one connector, or several routed). */
export function connectorsOf(config: Record<string, unknown>): string[] {
  const one = config.connector as { id?: string } | undefined;
  const many = config.connectors as Record<string, { id?: string }> | undefined;
  if (many && typeof many === 'object') return Object.entries(many).map(([name, c]) => (c?.id && c.id !== name ? `${name} (${c.id})` : name));
  return one?.id ? [one.id] : [];
}
