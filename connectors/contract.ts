// The connector contract: what every core-banking connector implements. These doc comments are the
// authoring guide for connector writers.
import type { Static, TSchema } from '@sinclair/typebox';
import type { FastifyBaseLogger } from 'fastify';
import type { CommunicationAddress, Preferences } from '../schemas/cards.js';

/**
 * Everything a connector learns about the request it serves. Connectors are stateless between calls;
 * whatever they need per tenant comes from their options at `create` time.
 */
export interface ConnectorContext {
  /** The tenant the call is made for. A connector instance serves exactly one tenant. */
  tenantId: string;
  /** The gateway's request id: forward it to the core so that both sides' logs can be joined. */
  requestId: string;
  /** A child logger bound to the request. Never log card numbers, CVVs, PIN blocks or keys. */
  logger: FastifyBaseLogger;
  /**
   * Aborts when the request's deadline passes. Pass it to every I/O call (undici takes `signal`).
   * After it fires the gateway answers 504 whatever the connector returns, so stop work promptly.
   */
  signal: AbortSignal;
  /** The caller's Idempotency-Key when it sent one: forward it so that the core applies a retry once. */
  idempotencyKey?: string | undefined;
}

/**
 * The outcome of an operation the core understood.
 * - `succeeded`: the core confirmed the change; `value` describes the new state.
 * - `pending`: the core accepted the request but has not confirmed it (or the connector cannot tell).
 *   Report anything uncertain as pending, never as success.
 * - `rejected`: the core refused for a business reason. `code` is a business code from
 *   `schemas/business-codes.ts` (or one your core documents); `message` is shown to the caller.
 */
export type OperationResult<T> =
  | { status: 'succeeded'; value: T }
  | { status: 'pending'; reference?: string }
  | { status: 'rejected'; code: string; message: string };

export const succeeded = <T>(value: T): OperationResult<T> => ({ status: 'succeeded', value });
export const pending = <T>(reference?: string): OperationResult<T> =>
  reference === undefined ? { status: 'pending' } : { status: 'pending', reference };
export const rejected = <T>(code: string, message: string): OperationResult<T> => ({ status: 'rejected', code, message });

/** Throw when the core cannot be reached or answers with a failure it did not explain (→ 502). */
export class ConnectorUnavailableError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ConnectorUnavailableError';
  }
}

/** Throw when the core did not answer before the deadline (→ 504). The outcome is unknown. */
export class ConnectorTimeoutError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ConnectorTimeoutError';
  }
}

/** True for a ConnectorUnavailableError, also one thrown by a plugin that bundles its own copy of this file. */
export const isConnectorUnavailableError = (err: unknown): boolean =>
  err instanceof ConnectorUnavailableError || (err instanceof Error && err.name === 'ConnectorUnavailableError');

/** True for a ConnectorTimeoutError, also one thrown by a plugin that bundles its own copy of this file. */
export const isConnectorTimeoutError = (err: unknown): boolean =>
  err instanceof ConnectorTimeoutError || (err instanceof Error && err.name === 'ConnectorTimeoutError');

/** Input of `upgradeLimit`: set the entity's credit limit to `amount`. */
export interface UpgradeLimitInput {
  entityId: string;
  /** The new limit: a positive decimal string with at most two decimals. Never convert it to a float. */
  amount: string;
  /**
   * Product rule from the tenant's configuration: when false, an amount below the current limit must
   * be rejected with LIMIT_DECREASE_NOT_ALLOWED. Check it against the current limit atomically.
   */
  allowDecrease: boolean;
}

export interface UpgradeLimitResult {
  entityId: string;
  previousLimit: string;
  newLimit: string;
}

/**
 * Input of `upgradeToPhysical`: map an existing virtual card to the physical kit `kitNo`.
 * Card identification (DESIGN §3): `cardId` names the card; else `entityId` names the entity whose single
 * virtual card is upgraded; else the kit must already be allocated to an entity in the core.
 * Refuse an unknown kit, a kit already mapped or a kit allocated to another entity with PPCUST_018.
 */
export interface PhysicalUpgradeInput {
  kitNo: string;
  entityId?: string | undefined;
  cardId?: string | undefined;
  /** Omitted or `{ usePrimaryAddress: true }` means the entity's primary address on file. */
  communicationAddress?: CommunicationAddress | undefined;
  plasticCode?: { code: string; description?: string | undefined } | undefined;
  /** When true the card is issued PENDING_ACTIVATION until the customer activates it. */
  lockOnUpgrade: boolean;
  preferences?: Preferences | undefined;
}

export interface PhysicalUpgradeResult {
  cardId: string;
  entityId: string;
  kitNo: string;
  state: 'ACTIVE' | 'PENDING_ACTIVATION';
}

/** One async method per operation the gateway routes. */
export interface Connector {
  upgradeLimit(input: UpgradeLimitInput, ctx: ConnectorContext): Promise<OperationResult<UpgradeLimitResult>>;
  upgradeToPhysical(input: PhysicalUpgradeInput, ctx: ConnectorContext): Promise<OperationResult<PhysicalUpgradeResult>>;
  /** Optional readiness probe: resolve when the core can take calls, throw when it cannot. */
  health?(): Promise<void>;
  /** Release pools, files and timers. Called on shutdown and when a tenant's configuration changes. */
  close?(): Promise<void>;
}

export interface ConnectorDeps {
  tenantId: string;
  logger: FastifyBaseLogger;
}

/**
 * A connector module's default export. `optionsSchema` validates the tenant's options at boot (errors
 * name the field); `create` builds one instance per tenant. A built-in connector is one line in
 * `connectors/index.ts`; a plugin elsewhere is named in a tenant's configuration as
 * `{ "id": "acme-core", "module": "./plugins/acme-core/index.js", "options": {...} }` and must pass
 * `npm run connector:check -- <module>` (the conformance suite in `connectors/conformance/`).
 */
export interface ConnectorDefinition<S extends TSchema = TSchema> {
  /** Stable id that tenants name in their configuration, such as `mock` or `acme-core`. */
  id: string;
  /** Semantic version of the connector; a breaking change of behaviour gets a new id. */
  version: string;
  optionsSchema: S;
  create(options: Static<S>, deps: ConnectorDeps): Connector | Promise<Connector>;
}

export function defineConnector<S extends TSchema>(def: ConnectorDefinition<S>): ConnectorDefinition<S> {
  return def;
}
