// The connector registry: built-in definitions plus external modules named by a tenant's
// `connector.module`, and the check of a tenant's options against its definition's schema.
import type { FastifyBaseLogger } from 'fastify';
import type { ConnectorDefinition } from '../../../connectors/contract.js';
import { checkOptions, loadConnectorModule, moduleSpecifier } from '../../../connectors/loader.js';
import type { ConnectorChoice } from '../../../schemas/tenant.js';

/** A tenant's connector configuration cannot be used: unknown id, module not loadable, invalid options. */
export class ConnectorConfigError extends Error {
  constructor(
    readonly tenantId: string,
    readonly connectorId: string,
    readonly reason: string,
  ) {
    super(`Tenant '${tenantId}': connector '${connectorId}' ${reason}`);
    this.name = 'ConnectorConfigError';
  }
}

export type ConnectorConfig = ConnectorChoice;

export interface ConnectorRegistryOptions {
  /** Base directory of relative module paths in tenant configuration. */
  cwd?: string;
}

interface Registered {
  definition: ConnectorDefinition;
  /** 'built-in', or the import specifier of the module it came from. */
  source: string;
}

export const firstLine = (err: unknown): string => String((err as Error)?.message ?? err).split('\n')[0]!;

/** One line an operator can act on, without the tenant prefix the caller already shows. */
export function reasonOf(err: unknown): string {
  if (err instanceof ConnectorConfigError) return `connector '${err.connectorId}' ${err.reason}`;
  return firstLine(err);
}

export class ConnectorRegistry {
  private readonly registry = new Map<string, Registered>();
  private readonly modules = new Map<string, Promise<ConnectorDefinition>>();
  private readonly cwd: string;

  constructor(
    definitions: ConnectorDefinition[],
    private readonly logger: FastifyBaseLogger,
    opts: ConnectorRegistryOptions = {},
  ) {
    for (const d of definitions) {
      if (this.registry.has(d.id)) throw new Error(`Two connectors share the id '${d.id}'`);
      this.registry.set(d.id, { definition: d, source: 'built-in' });
    }
    this.cwd = opts.cwd ?? process.cwd();
  }

  /** Every registered connector id: built-ins and external modules loaded so far. */
  ids(): string[] {
    return [...this.registry.keys()];
  }

  /** A registered connector's definition (its options schema, for the console's form). */
  definition(id: string): ConnectorDefinition | undefined {
    return this.registry.get(id)?.definition;
  }

  private builtIns(): string[] {
    return [...this.registry.values()].filter((r) => r.source === 'built-in').map((r) => r.definition.id);
  }

  /** Validates a tenant's connector choice and options (errors name the field); a `module` must be loaded first. */
  validate(tenantId: string, connectorId: string, options: unknown): unknown {
    const registered = this.registry.get(connectorId);
    if (!registered) {
      throw new ConnectorConfigError(tenantId, connectorId, `is not registered (built in: ${this.builtIns().join(', ')}); name the module to load it from`);
    }
    const { value, problems } = checkOptions(registered.definition, options);
    if (problems.length) throw new ConnectorConfigError(tenantId, connectorId, `options are invalid: ${problems.join('; ')}`);
    return value;
  }

  /** Loads the connector's module when the configuration names one, then validates the options. */
  async prepare(tenantId: string, config: ConnectorConfig): Promise<{ definition: ConnectorDefinition; options: unknown }> {
    const definition = await this.definitionFor(tenantId, config);
    return { definition, options: this.validate(tenantId, config.id, config.options) };
  }

  /** The definition a tenant's configuration names, loading and registering an external module once. */
  private async definitionFor(tenantId: string, config: ConnectorConfig): Promise<ConnectorDefinition> {
    if (!config.module) {
      // Without a module only built-ins match, so the outcome never depends on which tenant loaded first.
      const registered = this.registry.get(config.id);
      if (registered?.source === 'built-in') return registered.definition;
      throw new ConnectorConfigError(tenantId, config.id, `is not a built-in connector (built in: ${this.builtIns().join(', ')}); name the module to load it from`);
    }
    const specifier = moduleSpecifier(config.module, this.cwd);
    let loading = this.modules.get(specifier);
    if (!loading) {
      loading = loadConnectorModule(config.module, this.cwd);
      this.modules.set(specifier, loading);
      // A module that failed (missing file, syntax error) is tried again next time, not cached broken.
      loading.catch(() => this.modules.delete(specifier));
    }
    let definition: ConnectorDefinition;
    try {
      definition = await loading;
    } catch (err) {
      throw new ConnectorConfigError(tenantId, config.id, `cannot be loaded: ${firstLine(err)}`);
    }
    if (definition.id !== config.id) {
      throw new ConnectorConfigError(tenantId, config.id, `is not what module '${config.module}' exports: it exports '${definition.id}'; set connector.id to '${definition.id}'`);
    }
    const registered = this.registry.get(definition.id);
    if (!registered) {
      this.registry.set(definition.id, { definition, source: specifier });
      this.logger.info({ connector: definition.id, version: definition.version, module: config.module }, 'external connector loaded');
    } else if (registered.source !== specifier) {
      const from = registered.source === 'built-in' ? 'a built-in connector' : `module ${registered.source}`;
      throw new ConnectorConfigError(tenantId, config.id, `from module '${config.module}' clashes with ${from} of the same id; give the plugin another id`);
    }
    return definition;
  }
}
