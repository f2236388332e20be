// The connector services in three parts, one job each: the registry (definitions, modules, options),
// the instances (one per tenant, health) and the caller (deadline, outcome mapping, counters).
import type { FastifyBaseLogger } from 'fastify';
import type { ConnectorDefinition } from '../../../connectors/contract.js';
import { ConnectorInstances, type ConnectorInstancesOptions } from './connector-instances.js';
import { ConnectorRegistry, type ConnectorRegistryOptions } from './connector-registry.js';
import { CoreCaller } from './core-caller.js';
import type { Observer } from '../infrastructure/metrics.js';

export { ConnectorRegistry } from './connector-registry.js';
export { ConnectorInstances, type DegradedTenant } from './connector-instances.js';
export { CoreCaller } from './core-caller.js';
export type {
  ContractOperation as ConnectorOperation,
  OperationInput as InputOf,
  OperationValue as ValueOf,
} from '../../../connectors/contract.js';

export interface ConnectorServices {
  connectorRegistry: ConnectorRegistry;
  /** The instances: `forTenant`, `start`, `readiness`, `close`. */
  connectors: ConnectorInstances;
  /** The caller: `invoke`, and each connector's recent calls (`health`). */
  core: CoreCaller;
}

export type ConnectorServicesOptions = ConnectorRegistryOptions &
  Omit<ConnectorInstancesOptions, 'startTimeoutMs'> & {
    /** Monotonic clock in milliseconds (tests replace it), for probes and latencies alike. */
    now?: () => number;
    observer?: Pick<Observer, 'connectorCall'>;
  };

/** The three parts wired; `timeoutMs` bounds one call and a connector's start before its tenant is degraded. */
export function createConnectorServices(
  definitions: ConnectorDefinition[],
  logger: FastifyBaseLogger,
  timeoutMs: number,
  opts: ConnectorServicesOptions = {},
): ConnectorServices {
  const connectorRegistry = new ConnectorRegistry(definitions, logger, opts);
  const connectors = new ConnectorInstances(connectorRegistry, logger, { ...opts, startTimeoutMs: timeoutMs });
  return {
    connectorRegistry,
    connectors,
    core: new CoreCaller(connectors, { timeoutMs, ...(opts.now ? { now: opts.now } : {}), observer: opts.observer }),
  };
}
