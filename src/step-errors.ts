// What a pipeline step declares beside its code: the errors it can answer, for which operations (decision
// 0220). The OpenAPI documents are built from these declarations (src/openapi/document.ts), so a
// step's refusals are documented on exactly the routes it runs on.
import type { CardlineError } from './errors.js';
import type { Operation } from './operations/define.js';

/** One thing that can go wrong, as a client sees it. */
export interface ErrorCase {
  /** Example name (unique per operation). */
  name: string;
  summary: string;
  error: CardlineError;
  /** The same answer on every operation of the dialect: documented once, under components.examples. */
  shared: boolean;
}

/** A step's declaration: the cases it can answer for an operation (none: it does not run on that operation's route). */
export interface StepErrors {
  step: string;
  cases(op: Operation): ErrorCase[];
}

export const errorCase = (name: string, summary: string, error: CardlineError, shared = true): ErrorCase => ({ name, summary, error, shared });

export const declareErrors = (step: string, cases: (op: Operation) => ErrorCase[]): StepErrors => ({ step, cases });

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** A request of this method changes state and has a body. */
export const isWrite = (method: string): boolean => MUTATING.has(method);

/** The operation's request has a body (a write). */
export const takesBody = (op: Operation): boolean => isWrite(op.method);

/** The operation is served on the management listener (an operator key is its principal). */
export const isManagement = (op: Operation): boolean => op.access === 'operator';

/**
 * Ends a callback-style hook with a step's work (a hook that mostly has nothing to wait for takes `done`: an
 * async one costs a promise and a turn on every request). A rejection without a value still fails the request.
 */
export const settle = (work: Promise<unknown>, done: (err?: Error) => void): void =>
  void work.then(
    () => done(),
    (err: unknown) => done(err instanceof Error ? err : new Error(`a pipeline step failed: ${String(err)}`)),
  );
