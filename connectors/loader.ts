// Loads connector definitions from a path or package name and checks their shape and options.
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Value } from '@sinclair/typebox/value';
import { KindGuard } from '@sinclair/typebox';
import type { ConnectorDefinition } from './contract.js';

/** A module that cannot be loaded or does not default-export a connector definition. */
export class ConnectorModuleError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ConnectorModuleError';
  }
}

/** What `import()` receives: a path resolved against `cwd`, else a package resolved from Cardline's install. */
export function moduleSpecifier(module: string, cwd = process.cwd()): string {
  if (module.startsWith('file:')) return module;
  if (module.startsWith('.') || isAbsolute(module)) return pathToFileURL(resolve(cwd, module)).href;
  return module;
}

/** Checks that a value has the shape of a `ConnectorDefinition`; problems name the field. */
export function checkDefinition(value: unknown, source: string): ConnectorDefinition {
  const problems: string[] = [];
  if (value === null || typeof value !== 'object') {
    throw new ConnectorModuleError(`${source}: the default export must be a connector definition (use defineConnector), got ${value === null ? 'null' : typeof value}`);
  }
  const d = value as Record<string, unknown>;
  if (typeof d.id !== 'string' || !/^[a-z0-9][a-z0-9._-]*$/.test(d.id)) problems.push('id must be a lower-case string such as "acme-core"');
  if (typeof d.version !== 'string' || d.version.length === 0) problems.push('version must be a non-empty string such as "1.0.0"');
  if (!KindGuard.IsSchema(d.optionsSchema)) problems.push('optionsSchema must be a TypeBox schema (Type.Object({...}))');
  if (typeof d.create !== 'function') problems.push('create must be a function (options, deps) => Connector');
  if (problems.length) throw new ConnectorModuleError(`${source}: not a connector definition: ${problems.join('; ')}`);
  return value as ConnectorDefinition;
}

/**
 * Imports a module; a TypeScript plugin in a compiled gateway goes through tsx (a dev dependency), registered
 * on first need.
 */
async function importModule(specifier: string): Promise<Record<string, unknown>> {
  try {
    return (await import(specifier)) as Record<string, unknown>;
  } catch (err) {
    if ((err as { code?: string })?.code !== 'ERR_UNKNOWN_FILE_EXTENSION' || !/\.[cm]?ts$/.test(specifier)) throw err;
  }
  tsxRegistered ??= import('tsx/esm/api').then(
    ({ register }) => void register(),
    () => {
      throw new Error('it is TypeScript and tsx (a dev dependency) is not installed here: name its JavaScript build (.js) instead');
    },
  );
  await tsxRegistered;
  // Another URL than the one that failed: the loader remembers that failure.
  return (await import(`${specifier}?tsx`)) as Record<string, unknown>;
}
let tsxRegistered: Promise<void> | undefined;

/** Imports a connector module and returns its default export, checked. */
export async function loadConnectorModule(module: string, cwd = process.cwd()): Promise<ConnectorDefinition> {
  const specifier = moduleSpecifier(module, cwd);
  let mod: Record<string, unknown>;
  try {
    mod = await importModule(specifier);
  } catch (err) {
    // The first line says what is missing; Node's requireStack and hints add nothing for an operator.
    const reason = String((err as Error)?.message ?? err).split('\n')[0];
    throw new ConnectorModuleError(`connector module '${module}' could not be loaded: ${reason}`, { cause: err });
  }
  let exported = mod.default;
  // A CommonJS build of a TypeScript plugin arrives as { default: { default: definition } }.
  if (exported && typeof exported === 'object' && !('create' in exported) && 'default' in exported) {
    exported = (exported as { default: unknown }).default;
  }
  if (exported === undefined) throw new ConnectorModuleError(`connector module '${module}' has no default export; export default defineConnector({...})`);
  return checkDefinition(exported, `connector module '${module}'`);
}

/** Fills the schema's defaults and validates; problems name the field (`/latencyMs: ...`). */
export function checkOptions(def: ConnectorDefinition, options: unknown): { value: unknown; problems: string[] } {
  const value = Value.Default(def.optionsSchema, structuredClone(options ?? {}));
  const problems = [...Value.Errors(def.optionsSchema, value)].map((e) => `${e.path || '/'}: ${e.message}`);
  return { value, problems };
}
