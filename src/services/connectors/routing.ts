// A tenant's connectors by name and which one serves each core operation (decision 0111): read from its
// configuration (`connector`, or `connectors` + `routing`), checked when the configuration is saved.
import { CONTRACT, CONTRACT_OPERATIONS, OPERATION_GROUPS, isContractOperation, type ContractOperation, type OperationGroup } from '../../../connectors/contract.js';
import type { ConnectorChoice, TenantConfig } from '../../../schemas/tenant.js';

/** What routing and shadow entries may name: an operation, or a group of them. */
const isGroup = (key: string): key is OperationGroup => (OPERATION_GROUPS as readonly string[]).includes(key);

/** The operations a routing or shadow entry covers. */
function operationsNamed(key: string): ContractOperation[] {
  if (isContractOperation(key)) return [key];
  if (isGroup(key)) return CONTRACT_OPERATIONS.filter((o) => CONTRACT[o].group === key);
  return [];
}

/** A tenant's routing, resolved once per configuration object. */
export interface Routes {
  /** Every named connector; a single `connector` is named by its id. */
  connectors: Record<string, ConnectorChoice>;
  defaultName: string;
  byOperation: Record<ContractOperation, string>;
  /** Shadowed operations, with the shadow's name and settings. */
  shadow: { name: string; operations: Set<ContractOperation>; writes: 'none' | 'dry-run'; sampleRate: number } | null;
}

const resolved = new WeakMap<TenantConfig, Routes>();

/** The routes of a (validated) configuration; cached per configuration object, which a change replaces. */
export function routesOf(config: TenantConfig): Routes {
  let routes = resolved.get(config);
  if (!routes) {
    routes = resolve(config);
    resolved.set(config, routes);
  }
  return routes;
}

function resolve(config: TenantConfig): Routes {
  const connectors: Record<string, ConnectorChoice> = config.connectors ?? (config.connector ? { [config.connector.id]: config.connector } : {});
  const names = Object.keys(connectors);
  const defaultName = config.routing?.default ?? names[0] ?? '';
  const explicit = config.routing?.operations ?? {};
  const byOperation = Object.fromEntries(
    CONTRACT_OPERATIONS.map((o) => [o, explicit[o] ?? explicit[CONTRACT[o].group] ?? defaultName]),
  ) as Record<ContractOperation, string>;
  const s = config.shadow;
  const shadow = s
    ? { name: s.connector, operations: new Set(s.operations.flatMap(operationsNamed)), writes: s.writes ?? 'none', sampleRate: s.sampleRate ?? 1 }
    : null;
  return { connectors, defaultName, byOperation, shadow };
}

/**
 * A tenant's cores in one line (`cardline tenant list`, decision 0287): its connector's id; with several, each one
 * routing sends operations to, the default first, as `name=id` (the name alone where it is the id), then the
 * shadow: `old=rest, processor=rest (+shadow new=rest)`. `-` when none is named.
 */
export function connectorsLabel(config: TenantConfig): string {
  const { connectors, defaultName, byOperation, shadow } = resolve(config);
  const label = (name: string) => {
    const id = connectors[name]?.id;
    return id === undefined || id === name ? name : `${name}=${id}`;
  };
  const routed = [...new Set([defaultName, ...Object.values(byOperation)])].filter((name) => name !== '');
  const cores = routed.map(label).join(', ') || '-';
  return shadow ? `${cores} (+shadow ${label(shadow.name)})` : cores;
}

/** What the schema cannot say about `connector`, `connectors`, `routing` and `shadow`; each problem names its field. */
export function routingProblems(config: Partial<TenantConfig>): string[] {
  const problems: string[] = [];
  if (config.connector && config.connectors) problems.push('/connectors: name either connector (one core) or connectors with routing, not both; remove connector (null in a merge patch)');
  const names = new Set(Object.keys(config.connectors ?? (config.connector ? { [config.connector.id]: true } : {})));
  const known = (name: string, at: string) => {
    if (!names.has(name)) problems.push(`${at}: '${name}' is not a connector of this tenant (named: ${[...names].join(', ') || 'none'})`);
  };
  if (config.routing && !config.connectors) problems.push('/routing: routing chooses among connectors; name them under connectors');
  if (config.connectors && names.size > 1 && !config.routing?.default) problems.push('/routing/default: required when there are several connectors');
  if (config.routing?.default) known(config.routing.default, '/routing/default');
  for (const [key, name] of Object.entries(config.routing?.operations ?? {})) {
    if (operationsNamed(key).length === 0) problems.push(`/routing/operations/${key}: not a core operation or a group (${OPERATION_GROUPS.join(', ')})`);
    known(name, `/routing/operations/${key}`);
  }
  if (config.shadow) {
    known(config.shadow.connector, '/shadow/connector');
    for (const [i, key] of config.shadow.operations.entries()) {
      if (operationsNamed(key).length === 0) problems.push(`/shadow/operations/${i}: '${key}' is not a core operation or a group (${OPERATION_GROUPS.join(', ')})`);
    }
    if (problems.length === 0) {
      const routes = resolve(config as TenantConfig);
      const onItself = [...routes.shadow!.operations].filter((o) => routes.byOperation[o] === config.shadow!.connector);
      if (onItself.length) problems.push(`/shadow/connector: '${config.shadow.connector}' already serves ${onItself.join(', ')}; a shadow runs beside another connector`);
    }
  }
  return problems;
}

/** Operations the configuration sends to a connector that declares it does not offer them. */
export function offeringProblems(config: TenantConfig, offersOf: (name: string) => readonly ContractOperation[] | undefined): string[] {
  const problems: string[] = [];
  const check = (at: string, name: string, operations: ContractOperation[]) => {
    const offers = offersOf(name);
    const missing = offers ? operations.filter((o) => !offers.includes(o)) : [];
    if (missing.length) problems.push(`${at}: connector '${name}' (${config.connectors?.[name]?.id ?? name}) does not offer ${missing.join(', ')}`);
  };
  for (const [key, name] of Object.entries(config.routing?.operations ?? {})) check(`/routing/operations/${key}`, name, operationsNamed(key));
  if (config.shadow) check('/shadow/operations', config.shadow.connector, config.shadow.operations.flatMap(operationsNamed));
  return problems;
}
