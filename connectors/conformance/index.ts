// The conformance suite, exported for connector authors: named scenarios, a runner and target helpers.
export type { ConformanceInstance, ConformanceTarget, Report, Scenario, ScenarioContext, ScenarioResult } from './types.js';
export { scenarios, FIXTURE_LIMIT } from './scenarios.js';
export { capabilityTable, offeredByTarget, runConformance, runScenario, targetFromDefinition, ConformanceOptionsError, silentLogger, type FreshOptions, type RunOptions } from './runner.js';
export { ConformanceFailure } from './expect.js';
export { routesToStatuses, statusLabel } from './lifecycle.js';
