// What runs SQL, whichever store answers it: the embedded PGlite (in process or on its thread) or PostgreSQL.
export interface QueryResult<T> {
  rows: T[];
  rowCount: number;
}

export interface Queryable {
  /** `options.name`: a hot statement prepared once per PostgreSQL connection under this name (0228); PGlite ignores it. */
  query<T = Record<string, unknown>>(sql: string, params?: unknown[], options?: { name?: string }): Promise<QueryResult<T>>;
  /** Runs a script of several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
}

/** A LISTEN held open on its own connection; `close` ends it. */
export interface Listener {
  close(): Promise<void>;
}

export interface ListenHandlers {
  onMessage(payload: string): void;
  /** The connection was lost and is back: messages sent meanwhile were missed. */
  onReconnect(): void;
  onError(err: unknown): void;
}

export interface Db extends Queryable {
  readonly kind: 'pglite' | 'postgres';
  /** PostgreSQL only: the connection string for connections beside the pool; holds the password, never logged. */
  readonly connectionString?: string;
  /** PostgreSQL only: LISTEN on a dedicated, reconnecting connection (the embedded store hears itself directly). */
  listen?(channel: string, handlers: ListenHandlers): Promise<Listener>;
  /** Runs fn in one transaction; commits when it resolves, rolls back when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /** Runs fn holding a cluster-wide advisory lock (migrations, seeding), so replicas take turns. */
  exclusive<T>(lockId: number, fn: (db: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}
