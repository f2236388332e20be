// Small assertions for conformance scenarios: no test framework, so the suite also runs from a CLI.
import type { OperationResult } from '../contract.js';
import { toMinor } from '../shared/money.js';

/** A scenario's expectation was not met; the message is shown as the reason in the report. */
export class ConformanceFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConformanceFailure';
  }
}

export function fail(message: string): never {
  throw new ConformanceFailure(message);
}

export function check(condition: unknown, message: string): asserts condition {
  if (!condition) fail(message);
}

/** A result in one short phrase, for failure messages. */
export function describeResult(result: unknown): string {
  if (result === null || typeof result !== 'object' || !('status' in result)) return `not an OperationResult (${JSON.stringify(result)})`;
  const r = result as OperationResult<unknown>;
  switch (r.status) {
    case 'succeeded':
      return `succeeded ${JSON.stringify(r.value)}`;
    case 'rejected':
      return `rejected ${r.code} (${r.message})`;
    case 'pending':
      return `pending${r.reference ? ` ${r.reference}` : ''}`;
    default:
      return `an unknown status ${JSON.stringify((r as { status: unknown }).status)}`;
  }
}

export function expectSucceeded<T>(result: OperationResult<T>, what: string): T {
  if (result?.status !== 'succeeded') fail(`${what}: expected succeeded, got ${describeResult(result)}`);
  if (result.value === null || typeof result.value !== 'object') fail(`${what}: succeeded without a value object`);
  return result.value;
}

export function expectRejected(result: OperationResult<unknown>, what: string, code?: string): { code: string; message: string } {
  if (result?.status !== 'rejected') fail(`${what}: expected rejected${code ? ` ${code}` : ''}, got ${describeResult(result)}`);
  if (code !== undefined && result.code !== code) fail(`${what}: expected business code ${code}, got ${result.code} (${result.message})`);
  if (typeof result.message !== 'string' || result.message.length === 0) fail(`${what}: a rejection must carry a message for the caller`);
  return result;
}

export function expectEqual(actual: unknown, expected: unknown, what: string): void {
  if (actual !== expected) fail(`${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
}

/** Amounts compare by value ('75000.00' = '75000.0'), never as floats. */
export function expectAmount(actual: unknown, expected: string, what: string): void {
  let same = false;
  try {
    same = typeof actual === 'string' && toMinor(actual) === toMinor(expected);
  } catch {
    same = false;
  }
  if (!same) fail(`${what}: expected amount ${expected}, got ${JSON.stringify(actual)}`);
}

/** JSON with object keys sorted, so that two values compare by content, not key order. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

/** Deep equality of plain JSON values (key order ignored). */
export function expectSame(actual: unknown, expected: unknown, what: string): void {
  if (canonical(actual) !== canonical(expected)) fail(`${what}: expected ${canonical(expected)}, got ${canonical(actual)}`);
}

export { luhnValid } from '../shared/pan.js';
