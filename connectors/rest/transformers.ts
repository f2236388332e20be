// Pure mappings between the canonical operations and the core REST protocol v1: requests out, answers
// and transport failures in. No I/O here; every rule is a row in test/connectors/rest-transformers.test.ts.
import { Value } from '@sinclair/typebox/value';
import {
  pending,
  rejected,
  succeeded,
  type OperationResult,
  type PhysicalUpgradeInput,
  type PhysicalUpgradeResult,
  type UpgradeLimitInput,
  type UpgradeLimitResult,
} from '../contract.js';
import { toMinor } from '../shared/money.js';
import {
  BUSINESS_CODE_PATTERN,
  CoreAccepted,
  CoreCreditLimitApplied,
  CoreError,
  CorePhysicalUpgradeApplied,
  type CoreCreditLimitRequest,
  type CorePhysicalUpgradeRequest,
} from '../../schemas/core-protocol.js';

/** What the client hands back: the status and the body parsed as JSON, or UNREADABLE. */
export const UNREADABLE = Symbol('unreadable body');
export interface CoreAnswer {
  status: number;
  body: unknown;
}

/**
 * How an answer ends:
 * - `result`: an OperationResult for the gateway (succeeded, rejected, or pending for anything uncertain);
 * - `unavailable`: the core did not apply it (or said it failed); `retryable` when a retry under the same
 *   idempotency key is safe and may succeed.
 */
export type Classified<T> =
  | { kind: 'result'; result: OperationResult<T> }
  | { kind: 'unavailable'; retryable: boolean; reason: string };

// ── Requests ────────────────────────────────────────────────────────────────────────────────────────

export const creditLimitPath = (entityId: string) => `/v1/entities/${encodeURIComponent(entityId)}/credit-limit`;
export const PHYSICAL_UPGRADE_PATH = '/v1/cards/physical-upgrades';
export const HEALTH_PATH = '/v1/health';

export function toCoreCreditLimit(input: UpgradeLimitInput): CoreCreditLimitRequest {
  return { amount: input.amount, allowDecrease: input.allowDecrease };
}

/** Leaves out what the caller left out, so that the core applies its own defaults (primary address). */
export function toCorePhysicalUpgrade(input: PhysicalUpgradeInput): CorePhysicalUpgradeRequest {
  return {
    kitNo: input.kitNo,
    ...(input.entityId !== undefined ? { entityId: input.entityId } : {}),
    ...(input.cardId !== undefined ? { cardId: input.cardId } : {}),
    ...(input.communicationAddress !== undefined ? { communicationAddress: input.communicationAddress } : {}),
    ...(input.plasticCode !== undefined ? { plasticCode: input.plasticCode } : {}),
    lockOnUpgrade: input.lockOnUpgrade,
    ...(input.preferences !== undefined ? { preferences: input.preferences } : {}),
  };
}

// ── Answers ─────────────────────────────────────────────────────────────────────────────────────────

const BUSINESS_CODE = new RegExp(BUSINESS_CODE_PATTERN);
const MAX_MESSAGE = 500;

/**
 * A core's refusal text is shown to the caller: bounded, single-line, and any card-number-shaped digit
 * run masked, in case a core echoes one.
 */
export function cleanMessage(message: string): string {
  const oneLine = message.replace(/\p{Cc}+/gu, ' ').trim();
  const masked = oneLine.replace(/\d{13,19}/g, (run) => `${run.slice(0, 6)}${'*'.repeat(run.length - 10)}${run.slice(-4)}`);
  return masked.length > MAX_MESSAGE ? `${masked.slice(0, MAX_MESSAGE - 1)}…` : masked;
}

const sameAmount = (a: string, b: string) => {
  try {
    return toMinor(a) === toMinor(b);
  } catch {
    return false;
  }
};

/**
 * The status table shared by both operations; `applied` reads a 200 body, returning undefined when it
 * is not a well-formed confirmation of *this* request.
 */
function classify<T>(answer: CoreAnswer, applied: (body: unknown) => T | undefined): Classified<T> {
  const { status, body } = answer;
  const acceptedReference = () => (Value.Check(CoreAccepted, body) ? body.reference : undefined);
  if (status === 200) {
    if (Value.Check(CoreAccepted, body)) return { kind: 'result', result: pending(body.reference) };
    const value = applied(body);
    // A 200 we cannot read as a confirmation of this request may or may not have applied it.
    return { kind: 'result', result: value === undefined ? pending() : succeeded(value) };
  }
  if (status === 202) return { kind: 'result', result: pending(acceptedReference()) };
  if (status === 422) {
    if (Value.Check(CoreError, body) && BUSINESS_CODE.test(body.error.code)) {
      return { kind: 'result', result: rejected(body.error.code, cleanMessage(body.error.message)) };
    }
    return { kind: 'result', result: pending() };
  }
  if (status === 502 || status === 503 || status === 504) {
    return { kind: 'unavailable', retryable: true, reason: `the core answered ${status}` };
  }
  if (status >= 500 && status <= 599) return { kind: 'unavailable', retryable: false, reason: `the core answered ${status}` };
  // The protocol's own refusals: the request never reached the business logic, so nothing was applied.
  if (status === 400 || status === 401 || status === 403 || status === 404 || status === 405 || status === 413 || status === 415 || status === 429) {
    return { kind: 'unavailable', retryable: false, reason: `the core refused the request with ${status}` };
  }
  // Anything else (1xx, 3xx, other 2xx and 4xx) is not in the protocol: the outcome is unknown.
  return { kind: 'result', result: pending() };
}

export function fromCoreCreditLimit(answer: CoreAnswer, input: UpgradeLimitInput): Classified<UpgradeLimitResult> {
  return classify(answer, (body) => {
    if (!Value.Check(CoreCreditLimitApplied, body)) return undefined;
    if (body.entityId !== input.entityId || !sameAmount(body.newLimit, input.amount)) return undefined;
    return { entityId: body.entityId, previousLimit: body.previousLimit, newLimit: body.newLimit };
  });
}

export function fromCorePhysicalUpgrade(answer: CoreAnswer, input: PhysicalUpgradeInput): Classified<PhysicalUpgradeResult> {
  return classify(answer, (body) => {
    if (!Value.Check(CorePhysicalUpgradeApplied, body)) return undefined;
    if (body.kitNo !== input.kitNo) return undefined;
    if (input.entityId !== undefined && body.entityId !== input.entityId) return undefined;
    if (input.cardId !== undefined && body.cardId !== input.cardId) return undefined;
    return { cardId: body.cardId, entityId: body.entityId, kitNo: body.kitNo, state: body.cardState };
  });
}

// ── Transport failures ──────────────────────────────────────────────────────────────────────────────

/**
 * - `timeout`: no answer in time; the outcome is unknown (→ ConnectorTimeoutError, never retried).
 * - `not-sent`: the connection was never made, so the core certainly did not see the request.
 * - `maybe-sent`: the connection failed after the request may have reached the core.
 */
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

/** Full-jitter exponential backoff (AWS architecture blog): uniform in [0, min(max, base·2^attempt)]. */
export function backoffDelay(attempt: number, baseDelayMs: number, maxDelayMs: number, random: () => number = Math.random): number {
  const ceiling = Math.min(maxDelayMs, baseDelayMs * 2 ** attempt);
  return Math.floor(random() * ceiling);
}
