// Builds each tenant's connector from the registry, validates its options, and calls it with a deadline.
import { Value } from '@sinclair/typebox/value';
import type { FastifyBaseLogger } from 'fastify';
import {
  ConnectorTimeoutError,
  ConnectorUnavailableError,
  type Connector,
  type ConnectorContext,
  type ConnectorDefinition,
  type OperationResult,
} from '../../connectors/contract.js';
import { CardlineError, Errors } from '../errors.js';
import type { Tenant } from './tenants.js';

export class ConnectorConfigError extends Error {
  constructor(tenantId: string, connectorId: string, problems: string[]) {
    super(`Tenant '${tenantId}': connector '${connectorId}' options are invalid: ${problems.join('; ')}`);
    this.name = 'ConnectorConfigError';
  }
}

interface Instance {
  connectorId: string;
  optionsJson: string;
  connector: Promise<Connector>;
}

export class ConnectorService {
  private readonly registry = new Map<string, ConnectorDefinition>();
  private readonly instances = new Map<string, Instance>();

  constructor(
    definitions: ConnectorDefinition[],
    private readonly logger: FastifyBaseLogger,
    private readonly timeoutMs: number,
  ) {
    for (const d of definitions) {
      if (this.registry.has(d.id)) throw new Error(`Two connectors share the id '${d.id}'`);
      this.registry.set(d.id, d);
    }
  }

  ids(): string[] {
    return [...this.registry.keys()];
  }

  /** Validates a tenant's connector choice and options; errors name the field. */
  validate(tenantId: string, connectorId: string, options: unknown): unknown {
    const def = this.registry.get(connectorId);
    if (!def) throw new ConnectorConfigError(tenantId, connectorId, [`unknown connector; registered: ${this.ids().join(', ')}`]);
    const withDefaults = Value.Default(def.optionsSchema, structuredClone(options ?? {}));
    const errors = [...Value.Errors(def.optionsSchema, withDefaults)].map((e) => `${e.path || '/'}: ${e.message}`);
    if (errors.length) throw new ConnectorConfigError(tenantId, connectorId, errors);
    return withDefaults;
  }

  /** The tenant's connector, created on first use and rebuilt when its configuration changes. */
  forTenant(tenant: Tenant): Promise<Connector> {
    const { id, options = {} } = tenant.config.connector;
    const optionsJson = JSON.stringify(options);
    const existing = this.instances.get(tenant.id);
    if (existing && existing.connectorId === id && existing.optionsJson === optionsJson) return existing.connector;
    if (existing) void existing.connector.then((c) => c.close?.()).catch(() => undefined);
    const connector = (async () => {
      const validated = this.validate(tenant.id, id, options);
      return this.registry.get(id)!.create(validated as never, { tenantId: tenant.id, logger: this.logger.child({ tenant: tenant.id, connector: id }) });
    })();
    this.instances.set(tenant.id, { connectorId: id, optionsJson, connector });
    // A connector that fails to start is retried on the next request rather than cached broken.
    connector.catch(() => {
      if (this.instances.get(tenant.id)?.connector === connector) this.instances.delete(tenant.id);
    });
    return connector;
  }

  /**
   * Calls one operation under the request's deadline and maps the outcome: succeeded → value;
   * rejected → business error; pending → 202; transport failures → 502/504.
   */
  async invoke<T>(
    tenant: Tenant,
    ctx: Omit<ConnectorContext, 'signal' | 'tenantId'>,
    call: (connector: Connector, ctx: ConnectorContext) => Promise<OperationResult<T>>,
  ): Promise<T> {
    let connector: Connector;
    try {
      connector = await this.forTenant(tenant);
    } catch (err) {
      ctx.logger.error({ err, tenant: tenant.id }, 'connector failed to start');
      throw Errors.unavailable(`The core-banking connector of tenant '${tenant.id}' is not available.`);
    }
    const signal = AbortSignal.timeout(this.timeoutMs);
    let result: OperationResult<T>;
    try {
      result = await call(connector, { ...ctx, tenantId: tenant.id, signal });
    } catch (err) {
      if (err instanceof CardlineError) throw err;
      if (err instanceof ConnectorTimeoutError || signal.aborted) throw Errors.coreTimeout();
      if (err instanceof ConnectorUnavailableError) {
        ctx.logger.warn({ err: { name: err.name, message: err.message } }, 'core unavailable');
        throw Errors.coreUnavailable();
      }
      throw err;
    }
    // A late success after the deadline is not reported as success: the caller already gave up.
    if (signal.aborted) throw Errors.coreTimeout();
    switch (result.status) {
      case 'succeeded':
        return result.value;
      case 'rejected':
        throw Errors.business(result.code, result.message);
      case 'pending':
        throw Errors.corePending();
    }
  }

  async close(): Promise<void> {
    const all = [...this.instances.values()];
    this.instances.clear();
    await Promise.allSettled(all.map(async (i) => (await i.connector).close?.()));
  }
}
