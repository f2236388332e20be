// A Context as a chain of single values: the API's own copies its whole Map and makes three closures on every
// setValue, once per span made current (decision 0449). Contexts made from ROOT stay chains.
import type { Context } from '@opentelemetry/api';

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
