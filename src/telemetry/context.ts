// A Context as a chain of single values: the API's own copies its whole Map and makes three closures on every
// setValue, once per span made current (decision 0449). Contexts made from ROOT stay chains.
import type { Context, ContextManager } from '@opentelemetry/api';

class Chain implements Context {
  constructor(
    private readonly parent: Chain | undefined,
    private readonly key: symbol | undefined,
    private readonly value: unknown,
  ) {}

  getValue(key: symbol): unknown {
    return this.key === key ? this.value : this.parent?.getValue(key);
  }

  setValue(key: symbol, value: unknown): Context {
    return new Chain(this, key, value);
  }

  deleteValue(key: symbol): Context {
    return new Chain(this, key, undefined);
  }
}

export const ROOT: Context = new Chain(undefined, undefined, undefined);

/**
 * CARDLINE_TRACING_CONTEXT=explicit: no AsyncLocalStorage, so no promise hooks on Node 20 (decision 0456). Nothing
 * is active: every span is given its parent, and a statement run without one is not traced.
 */
export class ExplicitContextManager implements ContextManager {
  active(): Context {
    return ROOT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(_ctx: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F> {
    return fn.call(thisArg, ...args);
  }
  bind<T>(_ctx: Context, target: T): T {
    return target;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    return this;
  }
}
