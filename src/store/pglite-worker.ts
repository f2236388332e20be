// The embedded store's thread: it owns the PGlite instance so PostgreSQL's work runs beside the event loop.
// Messages carry arrays of requests (one turn of the gateway's loop, decision 0208), each with an id its answer
// repeats: query (a named one prepared once, decision 0425), exec, begin/end (a transaction holding PGlite), dump,
// memory, close. A failure answers { error } with a database error's SQLSTATE only: its message may quote a row.
import { getHeapStatistics } from 'node:v8';
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite, type Transaction } from '@electric-sql/pglite';
import { namedQuery } from './pglite-prepared.js';

export interface PgliteWorkerData {
  dataDir: string;
  startParams: string[];
  loadDataDir?: ArrayBuffer;
}

export type WorkerRequest =
  | { id: number; op: 'query'; sql: string; params: unknown[]; tx?: number; name?: string }
  | { id: number; op: 'exec'; sql: string; tx?: number }
  | { id: number; op: 'begin' }
  | { id: number; op: 'end'; tx: number; commit: boolean }
  | { id: number; op: 'dump' }
  | { id: number; op: 'memory' }
  | { id: number; op: 'close' };

/** What may leave the thread of a database error: the fields StoreError keeps. */
export interface WorkerError {
  code?: string;
  severity?: string;
  schema?: string;
  table?: string;
  column?: string;
  dataType?: string;
  constraint?: string;
  /** Only for errors that are not the database's (they quote no row). */
  message?: string;
}

export interface WorkerAnswer {
  id: number;
  error?: WorkerError;
  rows?: unknown[];
  rowCount?: number;
  tx?: number;
  dump?: ArrayBuffer;
  memory?: ThreadMemory;
}

/** The store thread's own memory: its V8 heap in use and the WebAssembly memory PGlite runs PostgreSQL in. */
export interface ThreadMemory {
  heapUsed: number;
  /** The heap's pages as committed (used or not). */
  heapTotal: number;
  /** Memory outside the heap held by the thread's objects, of which array buffers (PGlite's in-memory files). */
  external: number;
  arrayBuffers: number;
  /** The WebAssembly memory's size as declared (its pages are resident only once PostgreSQL touched them). */
  wasm: number;
}

const SAFE = ['code', 'severity', 'schema', 'table', 'column', 'dataType', 'constraint'] as const;

function describe(err: unknown): WorkerError {
  const e = err as Record<string, unknown> | null;
  if (e && typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code) && 'severity' in e) {
    const out: WorkerError = {};
    for (const f of SAFE) if (typeof e[f] === 'string' && e[f]) out[f] = e[f];
    return out;
  }
  return { message: err instanceof Error ? err.message : String(err) };
}

interface OpenTx {
  tx: Transaction;
  end: (commit: boolean) => void;
  done: Promise<unknown>;
}

async function main(): Promise<void> {
  const port = parentPort;
  if (!port) throw new Error('pglite-worker runs as a worker thread');
  const data = workerData as PgliteWorkerData;
  const db = await PGlite.create(data.dataDir, { startParams: data.startParams, ...(data.loadDataDir ? { loadDataDir: new Blob([data.loadDataDir]) } : {}) });
  const open = new Map<number, OpenTx>();
  let nextTx = 1;

  let answers: WorkerAnswer[] = [];
  let transfers: ArrayBuffer[] = [];
  const flush = () => {
    const batch = answers;
    const moved = transfers;
    answers = [];
    transfers = [];
    if (batch.length) port.postMessage(batch, moved);
  };
  const answer = (msg: WorkerAnswer, transfer: ArrayBuffer[] = []) => {
    if (answers.push(msg) === 1) setImmediate(flush);
    transfers.push(...transfer);
  };
  const target = (tx: number | undefined) => {
    if (tx === undefined) return db;
    const t = open.get(tx);
    if (!t) throw new Error(`transaction ${tx} is not open`);
    return t.tx;
  };

  const handle = async (req: WorkerRequest): Promise<void> => {
    try {
      switch (req.op) {
        case 'query': {
          const named = req.name !== undefined && req.tx === undefined ? await namedQuery(db, req.name, req.sql, req.params) : null;
          if (named) return answer({ id: req.id, ...named });
          const r = await target(req.tx).query(req.sql, req.params);
          return answer({ id: req.id, rows: r.rows, rowCount: r.affectedRows ?? r.rows.length });
        }
        case 'exec':
          await target(req.tx).exec(req.sql);
          return answer({ id: req.id });
        case 'begin': {
          const tx = nextTx++;
          // PGlite's transaction() holds its lock until the callback settles: the callback waits for 'end'.
          const entry = {} as OpenTx;
          const started = new Promise<void>((began) => {
            entry.done = db.transaction(
              (t) =>
                new Promise<void>((resolve, reject) => {
                  entry.tx = t;
                  entry.end = (commit) => (commit ? resolve() : reject(new RollBack()));
                  open.set(tx, entry);
                  began();
                }),
            );
          });
          // A failed BEGIN never calls the callback: answer its error instead of waiting forever.
          await Promise.race([started, entry.done]);
          return answer({ id: req.id, tx });
        }
        case 'end': {
          const t = open.get(req.tx);
          if (!t) throw new Error(`transaction ${req.tx} is not open`);
          open.delete(req.tx);
          t.end(req.commit);
          try {
            await t.done;
          } catch (err) {
            if (!(err instanceof RollBack)) throw err;
          }
          return answer({ id: req.id });
        }
        case 'dump': {
          const blob = await db.dumpDataDir('none');
          const dump = await blob.arrayBuffer();
          return answer({ id: req.id, dump }, [dump]);
        }
        case 'memory': {
          // PGlite keeps its Emscripten module in `mod` (not part of its typed interface): read, never written.
          const wasm = (db as unknown as { mod?: { HEAPU8?: Uint8Array } }).mod?.HEAPU8?.byteLength ?? 0;
          const heap = getHeapStatistics();
          // In a worker, external and array buffers are this thread's (its isolate's), not the process's.
          const { external, arrayBuffers } = process.memoryUsage();
          return answer({ id: req.id, memory: { heapUsed: heap.used_heap_size, heapTotal: heap.total_heap_size, external, arrayBuffers, wasm } });
        }
        case 'close':
          if (!db.closed) await db.close();
          answer({ id: req.id });
          flush();
          port.close();
          return;
      }
    } catch (err) {
      answer({ id: req.id, error: describe(err) });
    }
  };

  port.on('message', (batch: WorkerRequest[]) => {
    for (const req of batch) void handle(req);
  });
  port.postMessage({ ready: true });
}

/** The rollback the gateway asked for: not an error of the transaction. */
class RollBack extends Error {}

main().catch((err: unknown) => {
  parentPort?.postMessage({ ready: false, error: describe(err) });
});
