// The store's statements as spans, while tracing is on (src/telemetry/): each query under the span of the work
// that runs it (a pipeline step, the audit's group commit, a delivery), never a trace of its own. The text is
// the statement's, with its parameters as placeholders: no value the statement carries is recorded.
import type { Context } from '@opentelemetry/api';
import type { Tracing } from '../telemetry/index.js';
import type { Db, Listener, QueryResult, Queryable } from './queryable.js';

/** The statement's first keyword (SELECT, INSERT, WITH…), the span's name when the statement has no name of its own. */
const verbOf = (sql: string): string => /^\s*([A-Za-z]+)/.exec(sql)?.[1]?.toUpperCase() ?? 'SQL';

function traceQueryable(q: Queryable, t: Tracing, system: string, parent?: Context): Queryable {
  const statement = <R>(sql: string, run: () => Promise<R>, name?: string): Promise<R> => {
    const operation = verbOf(sql);
    return t.inSpan(
      name ?? operation,
      () => ({ 'db.system.name': system, 'db.operation.name': operation, 'db.query.text': sql, ...(name ? { 'db.query.summary': name } : {}) }),
      run,
      { kind: t.api.SpanKind.CLIENT, requireParent: true, parent },
    );
  };
  return {
    query: <T>(sql: string, params?: unknown[], options?: { name?: string }): Promise<QueryResult<T>> =>
      statement(sql, () => q.query<T>(sql, params, options), options?.name),
    exec: (sql: string) => statement(sql, () => q.exec(sql)),
  };
}

/** The store's statements under `parent` (not the active context); the store itself when untraced. */
export function tracedUnder(db: Db, parent: Context | undefined): Queryable {
  return parent && db instanceof TracedDb ? traceQueryable(db.inner, db.t, db.system, parent) : db;
}

/** A store whose statements are traced; `inner` is the store itself. */
export class TracedDb implements Db {
  readonly kind: Db['kind'];
  readonly connectionString?: string;
  readonly listen?: (channel: string, handlers: Parameters<NonNullable<Db['listen']>>[1]) => Promise<Listener>;
  private readonly q: Queryable;
  readonly system: string;

  constructor(
    readonly inner: Db,
    readonly t: Tracing,
  ) {
    this.kind = inner.kind;
    if (inner.connectionString !== undefined) this.connectionString = inner.connectionString;
    if (inner.listen) this.listen = inner.listen.bind(inner);
    this.system = inner.kind === 'postgres' ? 'postgresql' : 'pglite';
    this.q = traceQueryable(inner, t, this.system);
  }

  query<T>(sql: string, params?: unknown[], options?: { name?: string }): Promise<QueryResult<T>> {
    return this.q.query<T>(sql, params, options);
  }

  exec(sql: string): Promise<void> {
    return this.q.exec(sql);
  }

  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    return this.inner.transaction((tx) => fn(traceQueryable(tx, this.t, this.system)));
  }

  exclusive<T>(lockId: number, fn: (db: Queryable) => Promise<T>): Promise<T> {
    return this.inner.exclusive(lockId, (db) => fn(traceQueryable(db, this.t, this.system)));
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
