// The gateway's store: one PostgreSQL dialect over PGlite (embedded default) or a server through pg.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import lockfile from 'proper-lockfile';
import pg from 'pg';
import type { PGlite, Transaction } from '@electric-sql/pglite';
import { PgliteThread } from './pglite-thread.js';
import { namedQuery } from './pglite-prepared.js';
import type { ThreadMemory, WorkerError } from './pglite-worker.js';
import type { Db, ListenHandlers, Listener, QueryResult, Queryable } from './queryable.js';
import { TracedDb } from './traced.js';
import { tracing } from '../telemetry/index.js';

export type { Db, Listener, Queryable } from './queryable.js';

/** PGlite is single-process: a second process opening the same directory would corrupt it. */
export class StoreInUseError extends Error {
  constructor(dir: string, holder: number | null) {
    super(
      `The data directory ${dir} is in use by another Cardline process (${holder === null ? 'a gateway or a CLI command' : `pid ${holder}, a gateway or a CLI command`}). ` +
        'While the gateway runs, call its management API instead: `CARDLINE_OPERATOR_KEY=<operator key> npx cardline --admin-url http://127.0.0.1:8081 <command>` ' +
        '(the demo printed an operator key at its first start). Otherwise stop that process first, or use a PostgreSQL server (DATABASE_URL) for concurrent access.',
    );
    this.name = 'StoreInUseError';
  }
}

const HOLDER_FILE = 'cardline.pid';

function holderOf(dataDir: string): number | null {
  try {
    const pid = Number(readFileSync(join(dataDir, HOLDER_FILE), 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/** The class of a SQLSTATE (its first two characters), as PostgreSQL's documentation names it. */
const SQLSTATE_CLASSES: Record<string, string> = {
  '08': 'connection exception',
  '0A': 'feature not supported',
  '21': 'cardinality violation',
  '22': 'data exception',
  '23': 'integrity constraint violation',
  '25': 'invalid transaction state',
  '28': 'invalid authorization specification',
  '3D': 'invalid catalog name',
  '40': 'transaction rollback',
  '42': 'syntax error or access rule violation',
  '53': 'insufficient resources',
  '54': 'program limit exceeded',
  '55': 'object not in prerequisite state',
  '57': 'operator intervention',
  '58': 'system error',
  P0: 'PL/pgSQL error',
  XX: 'internal error',
};

/** The names an error may carry that are the schema's, never a row's: safe to log. */
const SAFE_FIELDS = ['severity', 'schema', 'table', 'column', 'dataType', 'constraint'] as const;

/**
 * A database error reduced to its SQLSTATE, severity and object names: the driver's message, detail and
 * params quote rows and parameters, which must not reach a log, so it is dropped, not kept as `cause`.
 */
export class StoreError extends Error {
  readonly code: string;
  readonly severity?: string;
  readonly schema?: string;
  readonly table?: string;
  readonly column?: string;
  readonly dataType?: string;
  readonly constraint?: string;

  constructor(source: Record<string, unknown> & { code: string }) {
    const fields: Partial<Record<(typeof SAFE_FIELDS)[number], string>> = {};
    for (const f of SAFE_FIELDS) if (typeof source[f] === 'string' && source[f]) fields[f] = source[f];
    const on = [fields.table, fields.column && `column ${fields.column}`, fields.constraint && `constraint ${fields.constraint}`].filter(Boolean).join(', ');
    const kind = SQLSTATE_CLASSES[source.code.slice(0, 2)];
    super(`The store refused the statement: SQLSTATE ${source.code}${kind ? ` (${kind})` : ''}${on ? ` on ${on}` : ''}.`);
    this.name = 'StoreError';
    this.code = source.code;
    Object.assign(this, fields);
  }
}

/** A database's answer carries a SQLSTATE; a client-side failure (connection lost, pool closed) does not, and quotes no data. */
const isDatabaseError = (err: unknown): err is Record<string, unknown> & { code: string } =>
  typeof err === 'object' && err !== null && typeof (err as { code?: unknown }).code === 'string' && /^[0-9A-Z]{5}$/.test((err as { code: string }).code) && 'severity' in err;

/** Every error leaving the store goes through here. */
function safe(err: unknown): unknown {
  return isDatabaseError(err) && !(err instanceof StoreError) ? new StoreError(err) : err;
}

/** Runs a driver call, replacing a database error by its StoreError. */
async function guarded<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw safe(err);
  }
}

class PgliteDb implements Db {
  readonly kind = 'pglite' as const;
  constructor(
    private readonly pglite: PGlite,
    private readonly release: () => Promise<void> = async () => undefined,
  ) {}

  async query<T>(sql: string, params: unknown[] = [], options?: { name?: string }): Promise<QueryResult<T>> {
    const named = options?.name ? await guarded(() => namedQuery(this.pglite, options.name!, sql, params)) : null;
    if (named) return { rows: named.rows as T[], rowCount: named.rowCount };
    const r = await guarded(() => this.pglite.query<T>(sql, params));
    return { rows: r.rows, rowCount: r.affectedRows ?? r.rows.length };
  }

  async exec(sql: string): Promise<void> {
    await guarded(() => this.pglite.exec(sql));
  }

  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    return guarded(() =>
      this.pglite.transaction((tx: Transaction) =>
        fn({
          query: async <R>(sql: string, params: unknown[] = []) => {
            const r = await guarded(() => tx.query<R>(sql, params));
            return { rows: r.rows, rowCount: r.affectedRows ?? r.rows.length };
          },
          exec: async (sql: string) => void (await guarded(() => tx.exec(sql))),
        }),
      ),
    );
  }

  // PGlite is one process: there is nobody to take turns with.
  exclusive<T>(_lockId: number, fn: (db: Queryable) => Promise<T>): Promise<T> {
    return fn(this);
  }

  dump(): Promise<Blob> {
    return this.pglite.dumpDataDir('none');
  }

  async close(): Promise<void> {
    if (!this.pglite.closed) await this.pglite.close();
    await this.release();
  }
}

/** A database error from the store's thread (its safe fields only), or the thread's own failure. */
const threadError = (e: WorkerError): Error => (e.code ? new StoreError({ ...e, code: e.code }) : new Error(e.message ?? 'store error'));

/** PGlite on a thread of its own (src/store/pglite-thread.ts): the same store, off the event loop. */
class PgliteThreadDb implements Db {
  readonly kind = 'pglite' as const;
  private readonly direct: Queryable;
  private closed = false;

  constructor(
    private readonly thread: PgliteThread,
    private readonly release: () => Promise<void> = async () => undefined,
  ) {
    this.direct = thread.queryable(threadError);
  }

  query<T>(sql: string, params: unknown[] = [], options?: { name?: string }): Promise<QueryResult<T>> {
    return this.direct.query<T>(sql, params, options);
  }

  exec(sql: string): Promise<void> {
    return this.direct.exec(sql);
  }

  async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    const { tx } = await this.thread.call({ op: 'begin' }, threadError);
    let result: T;
    try {
      result = await fn(this.thread.queryable(threadError, tx));
    } catch (err) {
      await this.thread.call({ op: 'end', tx: tx!, commit: false }, threadError).catch(() => undefined);
      throw err;
    }
    await this.thread.call({ op: 'end', tx: tx!, commit: true }, threadError);
    return result;
  }

  exclusive<T>(_lockId: number, fn: (db: Queryable) => Promise<T>): Promise<T> {
    return fn(this);
  }

  /** The store thread's V8 heap and WebAssembly memory (the benchmark's breakdown). */
  async threadMemory(): Promise<ThreadMemory> {
    return (await this.thread.call({ op: 'memory' }, threadError)).memory!;
  }

  async dump(): Promise<Blob> {
    const { dump } = await this.thread.call({ op: 'dump' }, threadError);
    return new Blob([dump!]);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.thread.call({ op: 'close' }, threadError).catch(() => undefined);
    await this.thread.terminate();
    await this.release();
  }
}

class PostgresDb implements Db {
  readonly kind = 'postgres' as const;
  constructor(
    private readonly pool: pg.Pool,
    readonly connectionString: string,
  ) {}

  async listen(channel: string, handlers: ListenHandlers): Promise<Listener> {
    if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`not a channel name: ${channel}`);
    let closed = false;
    let client: pg.Client | null = null;
    let delayMs = 100;
    const connect = async (): Promise<void> => {
      const c = new pg.Client({ connectionString: this.connectionString });
      c.on('notification', (msg) => handlers.onMessage(msg.payload ?? ''));
      // A dropped connection is re-established with backoff; what was sent meanwhile is told as missed.
      c.on('error', (err) => handlers.onError(err));
      c.on('end', () => {
        if (closed) return;
        client = null;
        setTimeout(() => void reconnect(), delayMs).unref();
        delayMs = Math.min(delayMs * 2, 5_000);
      });
      await c.connect();
      await c.query(`LISTEN ${channel}`);
      client = c;
      delayMs = 100;
    };
    const reconnect = async (): Promise<void> => {
      if (closed) return;
      try {
        await connect();
        handlers.onReconnect();
      } catch (err) {
        handlers.onError(err);
        setTimeout(() => void reconnect(), delayMs).unref();
        delayMs = Math.min(delayMs * 2, 5_000);
      }
    };
    await connect();
    return {
      close: async () => {
        closed = true;
        await client?.end().catch(() => undefined);
      },
    };
  }

  async query<T>(sql: string, params: unknown[] = [], options?: { name?: string }): Promise<QueryResult<T>> {
    const r = await guarded(() => (options?.name ? this.pool.query({ name: options.name, text: sql, values: params }) : this.pool.query(sql, params)));
    return { rows: r.rows as T[], rowCount: r.rowCount ?? 0 };
  }

  async exec(sql: string): Promise<void> {
    await guarded(() => this.pool.query(sql));
  }

  async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    const client = await guarded(() => this.pool.connect());
    const tx = clientQueryable(client);
    try {
      await tx.exec('BEGIN');
      const result = await fn(tx);
      await tx.exec('COMMIT');
      return result;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }

  async exclusive<T>(lockId: number, fn: (db: Queryable) => Promise<T>): Promise<T> {
    const client = await guarded(() => this.pool.connect());
    const db = clientQueryable(client);
    try {
      await db.query('SELECT pg_advisory_lock($1)', [lockId]);
      try {
        return await fn(db);
      } finally {
        await db.query('SELECT pg_advisory_unlock($1)', [lockId]);
      }
    } finally {
      client.release();
    }
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

function clientQueryable(client: pg.PoolClient): Queryable {
  return {
    query: async <R>(sql: string, params: unknown[] = []) => {
      const r = await guarded(() => client.query(sql, params));
      return { rows: r.rows as R[], rowCount: r.rowCount ?? 0 };
    },
    exec: async (sql: string) => void (await guarded(() => client.query(sql))),
  };
}

export interface OpenOptions {
  databaseUrl?: string | undefined;
  /** PGlite data directory; 'memory://' keeps everything in memory (tests, benchmarks). */
  dataDir?: string;
  /** A migrated PGlite dump a new in-memory store starts from: about a second instead of initdb's several. */
  loadDataDir?: Blob;
  /** A new store on disk starts as a copy of this migrated template (default: dist/store-template/); null: initdb. */
  template?: string | null;
  /** PGlite on a worker thread of its own (the gateway's default), or in process (short CLI commands, tests). */
  thread?: boolean;
}

/** PGlite's shared buffers: all resident for the process's life (WebAssembly memory never shrinks); decision 0373. */
const PGLITE_SHARED_BUFFERS = '8MB';

async function openPglite(dataDir: string, opts: OpenOptions, release?: () => Promise<void>): Promise<Db> {
  const { PGlite } = await import('@electric-sql/pglite');
  const startParams = [...PGlite.defaultStartParams, '-c', `shared_buffers=${PGLITE_SHARED_BUFFERS}`];
  if (opts.thread) {
    const loadDataDir = opts.loadDataDir ? await opts.loadDataDir.arrayBuffer() : undefined;
    return new PgliteThreadDb(await PgliteThread.start({ dataDir, startParams, ...(loadDataDir ? { loadDataDir } : {}) }, threadError), release);
  }
  return new PgliteDb(await PGlite.create(dataDir, { startParams, ...(opts.loadDataDir ? { loadDataDir: opts.loadDataDir } : {}) }), release);
}

export async function openDb(opts: OpenOptions): Promise<Db> {
  const db = await openUntraced(opts);
  const t = tracing();
  return t ? new TracedDb(db, t) : db;
}

async function openUntraced(opts: OpenOptions): Promise<Db> {
  if (opts.databaseUrl) {
    const pool = new pg.Pool({ connectionString: opts.databaseUrl, max: 10 });
    // An idle client's error (server restart) must not crash the process; the next query reconnects.
    pool.on('error', () => undefined);
    return new PostgresDb(pool, opts.databaseUrl);
  }
  const dataDir = opts.dataDir ?? 'memory://';
  if (dataDir.startsWith('memory://')) return openPglite(dataDir, opts);
  mkdirSync(dataDir, { recursive: true });
  // The lock is refreshed every 5 s; one left by a killed process goes stale after 30 s.
  let release: () => Promise<void>;
  try {
    const unlock = await lockfile.lock(dataDir, { lockfilePath: join(dataDir, 'cardline.lock'), stale: 30_000, update: 5_000, retries: 0 });
    writeFileSync(join(dataDir, HOLDER_FILE), `${process.pid}\n`);
    release = async () => {
      rmSync(join(dataDir, HOLDER_FILE), { force: true });
      await unlock();
    };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOCKED') throw new StoreInUseError(dataDir, holderOf(dataDir));
    throw err;
  }
  try {
    // A new store starts from the migrated template made at install, when there is one of this code.
    const fresh = !existsSync(join(dataDir, 'PG_VERSION'));
    if (fresh && opts.template !== null) {
      const { copyTemplate, storeTemplate } = await import('./template.js');
      const template = opts.template ?? storeTemplate();
      if (template) copyTemplate(template, dataDir);
    }
    return await openPglite(dataDir, { ...opts, loadDataDir: undefined }, release);
  } catch (err) {
    await release();
    throw err;
  }
}

/** The data directory of a PGlite store as an uncompressed tarball, for `openDb({ loadDataDir })`. */
export function dumpPglite(store: Db): Promise<Blob> {
  const db = store instanceof TracedDb ? store.inner : store;
  if (!(db instanceof PgliteDb) && !(db instanceof PgliteThreadDb)) throw new Error('Only a PGlite store can be dumped');
  return db.dump();
}

/** The embedded store's thread's own memory, or null when the store runs on no thread of its own (the benchmark). */
export function storeThreadMemory(store: Db): Promise<ThreadMemory> | null {
  const db = store instanceof TracedDb ? store.inner : store;
  return db instanceof PgliteThreadDb ? db.threadMemory() : null;
}
