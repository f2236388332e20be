// Route schemas compiled once per process, not once per app: Fastify's own compilers wrapped and keyed weakly
// by schema object, so every app (public, management, the CLI's, each test's) reuses the first compilation.
import { AjvCompiler } from '@fastify/ajv-compiler';
import type { FastifyServerOptions } from 'fastify';
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';

interface RouteSchema {
  schema: unknown;
  method: string;
  url: string;
  httpPart?: string;
  httpStatus?: string;
}
type Compile = (route: RouteSchema) => unknown;
type Factory = (externalSchemas: unknown, options: unknown) => Compile;

/** True when options carry code (plugins, hooks): those cannot be compared, so nothing is shared. */
const hasCode = (value: unknown): boolean =>
  typeof value === 'function' || (value !== null && typeof value === 'object' && Object.values(value as Record<string, unknown>).some(hasCode));

function shared(factory: Factory): Factory {
  const byContext = new Map<string, WeakMap<object, unknown>>();
  return (externalSchemas, options) => {
    if (hasCode(options)) return factory(externalSchemas, options);
    const context = JSON.stringify([externalSchemas, options ?? null]);
    let compiled = byContext.get(context);
    if (!compiled) byContext.set(context, (compiled = new WeakMap()));
    // The app's own compiler (its Ajv) is made only when a schema is new to this process.
    let own: Compile | null = null;
    return (route) => {
      // A boolean schema (`true`, `false`) is not an object to key by: compiled each time, as it is cheap.
      if (route.schema === null || typeof route.schema !== 'object') return (own ??= factory(externalSchemas, options))(route);
      let fn = compiled.get(route.schema);
      if (fn === undefined) {
        fn = (own ??= factory(externalSchemas, options))(route);
        compiled.set(route.schema, fn);
      }
      return fn;
    };
  };
}

/** Fastify's `schemaController.compilersFactory`, shared by every app of the process. */
export const compilersFactory = {
  buildValidator: shared(AjvCompiler() as unknown as Factory),
  buildSerializer: shared(SerializerSelector() as unknown as Factory),
} as unknown as NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>;
