// The gateway's two error dialects as typed errors (spec 2.6 and 2.8): the envelope of the credit-line routes
// and the problem record of every other route. A 202 "pending" is not an error: see `Pending` in transport.ts.

/** One field the gateway refused, as a problem's `fieldErrors` lists it. */
export interface FieldError {
  field: string;
  message: string;
  objectName: string;
}

/** What every error the SDK throws for an answer carries. */
export abstract class CardlineError extends Error {
  /** The HTTP status (0: no answer came). */
  abstract readonly status: number;
  /** The gateway's `X-Request-Id`: quote it to support. */
  abstract readonly requestId: string | undefined;
}

/** The envelope of spec 2.6 (`exception` set): credit-line routes. `code` is `errorCode`, e.g. `ERR_409`. */
export class CardlineEnvelopeError extends CardlineError {
  override readonly name = 'CardlineEnvelopeError';
  readonly code: string;
  readonly shortMessage: string;
  /** The envelope carries no field errors: they are named in `message` (`detailMessage`). */
  readonly fieldErrors: readonly FieldError[] = [];
  constructor(
    readonly status: number,
    exception: { errorCode: string; shortMessage: string; detailMessage: string },
    readonly requestId: string | undefined,
  ) {
    super(exception.detailMessage);
    this.code = exception.errorCode;
    this.shortMessage = exception.shortMessage;
  }
}

/** The problem record of spec 2.8: every route but the credit-line ones. */
export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  /** `error.business`, `error.validation`, `error.http.<status>`. */
  message: string;
  detail?: string;
  fieldErrors?: FieldError[];
  businessCode?: string;
}

export class CardlineProblemError extends CardlineError {
  override readonly name = 'CardlineProblemError';
  readonly type: string;
  readonly title: string;
  /** The problem's `message` key: `error.business`, `error.validation`, `error.http.<status>`. */
  readonly code: string;
  /** The business refusal (`PPCUST_018`, `CARD_STATE_INVALID`), when it is one. */
  readonly businessCode: string | undefined;
  readonly detail: string | undefined;
  readonly fieldErrors: readonly FieldError[];
  constructor(
    readonly status: number,
    readonly problem: ProblemBody,
    readonly requestId: string | undefined,
  ) {
    super(problem.detail ?? (problem.fieldErrors?.map((e) => `${e.field}: ${e.message}`).join('; ') || problem.title));
    this.type = problem.type;
    this.title = problem.title;
    this.code = problem.message;
    this.businessCode = problem.businessCode;
    this.detail = problem.detail;
    this.fieldErrors = problem.fieldErrors ?? [];
  }
}

/** No answer: the connection failed (after the retries the operation allows), or the answer was not the gateway's. */
export class CardlineConnectionError extends CardlineError {
  override readonly name: string = 'CardlineConnectionError';
  constructor(
    message: string,
    readonly status: number,
    readonly requestId: string | undefined,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * No answer in time: the last attempt outlived `attemptTimeoutMs` (`ATTEMPT_TIMEOUT`, after the retries the
 * operation allows), or the call outlived `deadlineMs` (`DEADLINE_EXCEEDED`). A write may have been applied:
 * send it again with the same `idempotencyKey`, or read what it changed.
 */
export class CardlineTimeoutError extends CardlineConnectionError {
  override readonly name = 'CardlineTimeoutError';
  readonly code: 'ATTEMPT_TIMEOUT' | 'DEADLINE_EXCEEDED';
  constructor(
    op: { method: string; path: string },
    which: 'attempt' | 'deadline',
    /** The timeout that ran out, in ms. */
    readonly timeoutMs: number,
    /** The attempts sent, the last one included. */
    readonly attempts: number,
    /** A write's Idempotency-Key: sending it again with this key is safe. */
    readonly idempotencyKey: string | undefined,
    options?: { cause?: unknown },
  ) {
    super(
      which === 'deadline'
        ? `${op.method} ${op.path}: no answer within the call's deadline of ${timeoutMs} ms (${attempts} attempt${attempts === 1 ? '' : 's'})`
        : `${op.method} ${op.path}: no answer within ${timeoutMs} ms, ${attempts} attempt${attempts === 1 ? '' : 's'}`,
      0,
      undefined,
      options,
    );
    this.code = which === 'deadline' ? 'DEADLINE_EXCEEDED' : 'ATTEMPT_TIMEOUT';
  }
}
