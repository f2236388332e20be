// What the generated methods call (both clients implement it, sdk/src/http.ts): one operation sent, with its retries, its encryption and its dialect's
// errors; and cursor paging as an async iterator.

/** An operation as the generator describes it (generated/operations.ts). */
export interface OperationMeta {
  readonly id: string;
  readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Fastify path syntax: `/v1/cards/:cardId/lock`. */
  readonly path: string;
  /** Path parameters in path order: the method's first arguments. */
  readonly params: readonly string[];
  readonly dialect: 'envelope' | 'problem';
  /**
   * `read`: retried on connection errors (and 429/503 with Retry-After); `write`: sent with an Idempotency-Key and
   * retried with the same key; `once`: a write whose route keeps no idempotency record, never retried.
   */
  readonly kind: 'read' | 'write' | 'once';
  /** Whether it needs a token (all but login and the key set). */
  readonly auth: boolean;
  /** Whether the gateway calls the core (a 202 pending may answer). */
  readonly callsCore: boolean;
  readonly paged: boolean;
  /** Body fields that may be sent as JWEs (dotted paths, `[]` for array items). */
  readonly encryptedFields: readonly string[];
  /** Management operations: the path parameter naming the tenant whose key a password is encrypted to. */
  readonly tenantParam?: string;
}

export interface CallOptions {
  /** The write's Idempotency-Key; a fresh UUID by default, the same one on every retry. */
  idempotencyKey?: string;
  /** Send the body as a JWE (`Content-Type: application/jose`); default: the client's `encryptBodies`. */
  encryptBody?: boolean;
  /** Encrypt the operation's encryptable fields (passwords, address lines, PIN blocks); default: the client's (true unless set). */
  encryptFields?: boolean;
  /** Open sealed response fields (compact JWEs to the registered client key) with the client's `clientKey`. */
  decrypt?: boolean;
  /** Extra request headers (`X-Request-Id`, say). */
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** This call's timeout per attempt, instead of the client's `attemptTimeoutMs`. */
  attemptTimeoutMs?: number;
  /** This call's overall deadline, instead of the client's `deadlineMs`. */
  deadlineMs?: number;
}

export type PageOptions = Omit<CallOptions, 'idempotencyKey' | 'encryptBody' | 'encryptFields'>;

/**
 * A 202: the core accepted the request but has not confirmed it. Not done, not failed: check later (read the
 * card or the limit) before sending it again. Never thrown, never mistaken for a success: test `isPending(r)`.
 */
export interface Pending {
  readonly pending: true;
  readonly status: 202;
  readonly operation: string;
  readonly detail: string | undefined;
  readonly requestId: string | undefined;
  /** The write's Idempotency-Key: a retry with it is safe (202 answers are not stored). */
  readonly idempotencyKey: string | undefined;
}

export const isPending = (value: unknown): value is Pending =>
  typeof value === 'object' && value !== null && (value as { pending?: unknown }).pending === true;

export interface Transport {
  call(op: OperationMeta, params: readonly string[], body: unknown, query: unknown, options?: CallOptions): Promise<unknown>;
  paged<T, R extends PageShape<T>>(
    op: OperationMeta,
    params: readonly string[],
    body: unknown,
    query: unknown,
    options?: PageOptions,
  ): Paged<T, R>;
}

/** A page of a cursor-paged list: the next cursor is `pagination.nextCursor` (`pagination.next` in the audit trail). */
export interface PageShape<T> {
  result: readonly T[];
  pagination: { nextCursor?: string | null; next?: string | null } | null;
}

/** A page answered 202 while iterating items: an iterator has no place to return it. */
export class CardlinePendingError extends Error {
  override readonly name = 'CardlinePendingError';
  constructor(readonly pending: Pending) {
    super(`${pending.operation}: the core has not confirmed the request yet (202)`);
  }
}

/**
 * A cursor-paged list: `for await (const tx of list)` walks every item, page after page; `pages()` yields each
 * page's whole answer. Nothing is fetched until it is iterated.
 */
export class Paged<T, R extends PageShape<T>> implements AsyncIterable<T> {
  constructor(private readonly fetchPage: (cursor: string | undefined) => Promise<R | Pending>) {}

  /**
   * One page: the first, or the one a previous page's cursor names (`pagination.nextCursor`, or `next` in an
   * audit trail), for a reader that pages on demand (a table with Next and Previous).
   */
  async page(cursor?: string | null): Promise<R> {
    const page = await this.fetchPage(cursor ?? undefined);
    if (isPending(page)) throw new CardlinePendingError(page);
    return page;
  }

  async *pages(): AsyncGenerator<R, void, undefined> {
    let cursor: string | undefined;
    do {
      const page = await this.fetchPage(cursor);
      if (isPending(page)) throw new CardlinePendingError(page);
      yield page;
      cursor = page.pagination?.nextCursor ?? page.pagination?.next ?? undefined;
    } while (cursor !== undefined);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    for await (const page of this.pages()) yield* page.result;
  }

  /** Every item, in one array (mind the size of what you list). */
  async toArray(): Promise<T[]> {
    const out: T[] = [];
    for await (const item of this) out.push(item);
    return out;
  }
}
