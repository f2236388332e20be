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
