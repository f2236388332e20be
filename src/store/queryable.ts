// What runs SQL, whichever store answers it: the embedded PGlite (in process or on its thread) or PostgreSQL.
export interface QueryResult<T> {
  rows: T[];
  rowCount: number;
}

export interface Queryable {
  /**
   * `options.name`: a statement run on the hot path with this exact text every time. On PostgreSQL it is parsed
   * and planned once per connection and kept under this name (a prepared statement), so that each run skips
   * parsing and planning (decision 0228). One name, one text. PGlite ignores it.
   */
  query<T = Record<string, unknown>>(sql: string, params?: unknown[], options?: { name?: string }): Promise<QueryResult<T>>;
  /** Runs a script of several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
}
