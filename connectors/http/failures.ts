// What the shared HTTP transport hands a connector's mapper (an answer), what a mapper hands back (a
// classified outcome), and how a transport error is classified (never sent, maybe sent, timeout).
import type { OperationResult } from '../contract.js';

/** A body that is empty, too large, cut off or not JSON. */
export const UNREADABLE = Symbol('unreadable body');

/** The core's answer: the status and the body parsed as JSON, or UNREADABLE. */
export interface CoreAnswer {
  status: number;
  body: unknown;
}

/** One answer read: `result` (pending when uncertain), or `unavailable`, `retryable` when a retry is safe. */
export type Classified<T> =
  | { kind: 'result'; result: OperationResult<T> }
  | { kind: 'unavailable'; retryable: boolean; reason: string };

/** `timeout`: outcome unknown, never retried; `not-sent`: the core never saw it; `maybe-sent`: it may have. */
export type TransportFailure = { kind: 'timeout'; code: string } | { kind: 'not-sent'; code: string } | { kind: 'maybe-sent'; code: string };

const NOT_SENT = new Set(['ECONNREFUSED', 'UND_ERR_CONNECT_TIMEOUT', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL']);
const TIMEOUTS = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_ABORTED', 'ABORT_ERR']);

function codesOf(err: unknown, depth = 0): string[] {
  if (depth > 3 || typeof err !== 'object' || err === null) return [];
  const e = err as { code?: unknown; name?: unknown; cause?: unknown; errors?: unknown };
  const own = typeof e.code === 'string' ? [e.code] : [];
  if (e.name === 'AbortError' || e.name === 'TimeoutError') own.push('ABORT_ERR');
  const nested = Array.isArray(e.errors) ? e.errors.flatMap((x) => codesOf(x, depth + 1)) : [];
  return [...own, ...codesOf(e.cause, depth + 1), ...nested];
}

/** Classifies an error thrown by the HTTP client; `aborted` is whether the call's own signal fired. */
export function classifyTransportError(err: unknown, aborted: boolean): TransportFailure {
  const codes = codesOf(err);
  const first = codes[0] ?? 'UNKNOWN';
  if (aborted) return { kind: 'timeout', code: first === 'UNKNOWN' ? 'ABORT_ERR' : first };
  const timeout = codes.find((c) => TIMEOUTS.has(c));
  if (timeout) return { kind: 'timeout', code: timeout };
  // Happy-eyeballs connects fail with an AggregateError: not sent only if every attempt was refused.
  if (codes.length > 0 && codes.every((c) => NOT_SENT.has(c))) return { kind: 'not-sent', code: first };
  return { kind: 'maybe-sent', code: first };
}
