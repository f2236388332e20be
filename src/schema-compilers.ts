// Route schemas compiled once per process, not once per app, and at first use, not at start (decision 0394):
// Fastify's own compilers wrapped and keyed weakly by schema object, so every app reuses the first compilation.
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
type Fn = ((...args: unknown[]) => unknown) & { errors?: unknown; schemaEnv?: unknown };

/** The compilations not yet run: compilePending() runs them (a test checks that every route's schemas compile). */
const pending = new Set<() => unknown>();

/** `compile` run once, at the first call of the function it returns (or by compilePending). */
function once(compile: () => Fn): () => Fn {
  let fn: Fn | undefined;
  const get = (): Fn => {
    if (fn === undefined) {
      fn = compile();
      pending.delete(get);
    }
    return fn;
  };
  pending.add(get);
  return get;
}

/** Ajv's validator, compiled at its first call; its `errors` (and `schemaEnv`, which Fastify reads) as Ajv's. */
function lazyValidator(compile: () => Fn): Fn {
  const fn = once(compile);
  const lazy: Fn = (...args) => {
    const valid = fn()(...args);
    lazy.errors = fn().errors;
    return valid;
  };
  Object.defineProperty(lazy, 'schemaEnv', { get: () => fn().schemaEnv });
  return lazy;
}

/** fast-json-stringify's serializer, compiled at its first call. */
function lazySerializer(compile: () => Fn): Fn {
  const fn = once(compile);
  return (data) => fn()(data);
}

/** Compiles every schema registered so far and not yet used; returns how many. */
export function compilePending(): number {
  const all = [...pending];
  for (const compile of all) compile();
  return all.length;
}

/** True when options carry code (plugins, hooks): those cannot be compared, so nothing is shared. */
const hasCode = (value: unknown): boolean =>
  typeof value === 'function' || (value !== null && typeof value === 'object' && Object.values(value as Record<string, unknown>).some(hasCode));

function shared(factory: Factory, lazily: (compile: () => Fn) => Fn): Factory {
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
        fn = lazily(() => (own ??= factory(externalSchemas, options))(route) as Fn);
        compiled.set(route.schema, fn);
      }
      return fn;
    };
  };
}

/** Fastify's `schemaController.compilersFactory`, shared by every app of the process. */
export const compilersFactory = {
  buildValidator: shared(AjvCompiler() as unknown as Factory, lazyValidator),
  buildSerializer: shared(SerializerSelector() as unknown as Factory, lazySerializer),
} as unknown as NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>;
