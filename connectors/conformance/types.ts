// Types of the conformance suite: a target builds fresh connector instances, a scenario exercises one.
import type { Connector, ConnectorContext } from '../contract.js';

/** One connector instance for one scenario, and how to dispose of it (close pools, delete temp dirs). */
export interface ConformanceInstance {
  connector: Connector;
  cleanup(): Promise<void>;
}

/**
 * What the suite runs against. `create()` is called once per scenario and must return an instance
 * whose core holds the demo fixtures, freshly (the scenarios change state): ENT-1001..1003 with a
 * credit limit of 50000.00, nothing outstanding and one ACTIVE virtual card each, no transaction, free kits KIT-2001..2005, KIT-2101
 * allocated to ENT-1003, no KIT-9999. `dispose()`, if given, runs once after the last scenario.
 */
export interface ConformanceTarget {
  name: string;
  create(): Promise<ConformanceInstance>;
  dispose?(): Promise<void>;
}

export interface ScenarioContext {
  connector: Connector;
  /** A fresh call context: tenant `conformance`, a unique request id, a silent logger, a 5 s deadline. */
  ctx(overrides?: Partial<ConnectorContext>): ConnectorContext;
}

export interface Scenario {
  /** A sentence a report reads well with: `upgrades a virtual card to a free kit`. */
  name: string;
  run(s: ScenarioContext): Promise<void>;
}

export interface ScenarioResult {
  scenario: string;
  ok: boolean;
  /** Why it failed: the unmet expectation, or the error thrown. */
  reason?: string;
  durationMs: number;
}

export interface Report {
  target: string;
  passed: number;
  failed: number;
  results: ScenarioResult[];
}
