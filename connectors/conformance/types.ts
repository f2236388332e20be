// Types of the conformance suite: a target builds fresh connector instances, a scenario exercises one.
import type { Connector, ConnectorContext, ConnectorOperations, ContractOperation } from '../contract.js';

/** One connector instance for one scenario, and how to dispose of it (close pools, delete temp dirs). */
export interface ConformanceInstance {
  connector: Connector;
  cleanup(): Promise<void>;
}

/**
 * What the suite runs against: `create()` per scenario returns an instance holding the demo fixtures afresh
 * (ENT-1001..1003 at 50000.00 with one ACTIVE virtual card each, free kits KIT-2001..2005, KIT-2101 allocated
 * to ENT-1003, no KIT-9999); `dispose()` runs after the last scenario.
 */
export interface ConformanceTarget {
  name: string;
  create(): Promise<ConformanceInstance>;
  dispose?(): Promise<void>;
}

export interface ScenarioContext {
  /** The instance under test; calling what it does not offer ends the scenario as "not offered". */
  connector: ConnectorOperations & Connector;
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
  /** `not-offered`: the scenario needs an operation the connector does not offer (named in `reason`). */
  outcome: 'passed' | 'failed' | 'not-offered';
  /** False only for a failure: a connector that does not offer an operation is not broken. */
  ok: boolean;
  /** Why it failed or was not run: the unmet expectation, the error thrown, the operation not offered. */
  reason?: string;
  notOffered?: ContractOperation;
  /** The operations the scenario called (or reached for). */
  uses: ContractOperation[];
  durationMs: number;
}

export interface Report {
  target: string;
  passed: number;
  failed: number;
  notOffered: number;
  /** What the instances offered, in the contract table's order. */
  offers: ContractOperation[];
  results: ScenarioResult[];
}
