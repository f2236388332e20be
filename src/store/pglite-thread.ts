// The embedded store on its own thread: the event loop posts statements, in order, one message per turn
// (decision 0208), and takes the answers while PGlite works beside it.
import { Worker } from 'node:worker_threads';
import type { PgliteWorkerData, WorkerAnswer, WorkerError, WorkerRequest } from './pglite-worker.js';
import type { QueryResult, Queryable } from './queryable.js';

/** A request without its id (the id is the thread's business). */
type Request = WorkerRequest extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never;

/** The store thread's young generation in MB (decision 0214): its objects live for one statement. */
const STORE_THREAD_YOUNG_MB = 8;

/** The worker's module: the TypeScript source through tsx's loader under tsx, else the compiled file. */
function spawnWorker(data: PgliteWorkerData): Worker {
  const self = import.meta.url;
  const options = { workerData: data, transferList: data.loadDataDir ? [data.loadDataDir] : [], resourceLimits: { maxYoungGenerationSizeMb: STORE_THREAD_YOUNG_MB } };
  if (self.endsWith('.ts')) {
    const url = new URL('./pglite-worker.ts', self).href;
    const code = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(url)}); })`;
    return new Worker(code, { eval: true, ...options });
  }
  return new Worker(new URL('./pglite-worker.js', self), options);
}


export class PgliteThread {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (a: WorkerAnswer) => void; reject: (e: unknown) => void }>();
  private failure: Error | null = null;
  /** Requests of this turn of the event loop, posted together at its end. */
  private outbox: WorkerRequest[] = [];
  /** Messages posted to the thread (tests: requests of one turn share one). */
  messagesPosted = 0;

  private constructor(private readonly worker: Worker) {
    worker.on('message', (answers: WorkerAnswer[]) => {
      for (const a of answers) {
        const p = this.pending.get(a.id);
        if (!p) continue;
        this.pending.delete(a.id);
        p.resolve(a);
      }
    });
    const fail = (err: Error) => {
      this.failure ??= err;
      for (const p of this.pending.values()) p.reject(this.failure);
      this.pending.clear();
    };
    worker.on('error', (err) => fail(new Error(`the embedded store's thread failed: ${err.message}`)));
    worker.on('exit', (code) => fail(new Error(`the embedded store's thread exited (code ${code})`)));
  }

  static async start(data: PgliteWorkerData, toError: (e: WorkerError) => Error): Promise<PgliteThread> {
    const worker = spawnWorker(data);
    await new Promise<void>((resolve, reject) => {
      const onMessage = (m: { ready?: boolean; error?: WorkerError }) => {
        if (m.ready === undefined) return;
        worker.off('message', onMessage);
        worker.off('error', onError);
        if (m.ready) resolve();
        else {
          void worker.terminate();
          reject(toError(m.error ?? { message: 'the embedded store did not open' }));
        }
      };
      const onError = (err: Error) => reject(err);
      worker.on('message', onMessage);
      worker.once('error', onError);
    });
    worker.unref();
    return new PgliteThread(worker);
  }

  private readonly flush = () => {
    const batch = this.outbox;
    this.outbox = [];
    if (!batch.length) return;
    this.messagesPosted++;
    this.worker.postMessage(batch);
  }

  /** Sends one request and waits for its answer; a failure answer becomes toError(its description). */
  async call(req: Request, toError: (e: WorkerError) => Error): Promise<WorkerAnswer> {
    if (this.failure) throw this.failure;
    const id = this.nextId++;
    // The thread keeps the process alive only while a statement is under way (as PGlite in process would).
    if (this.pending.size === 0) this.worker.ref();
    const answer = await new Promise<WorkerAnswer>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      // The first request of a turn schedules the post; later ones of the same turn ride along, in order.
      if (this.outbox.push({ ...req, id } as WorkerRequest) === 1) queueMicrotask(this.flush);
    }).finally(() => {
      if (this.pending.size === 0) this.worker.unref();
    });
    if (answer.error) throw toError(answer.error);
    return answer;
  }

  /** Statements of one transaction (tx) or of none. */
  queryable(toError: (e: WorkerError) => Error, tx?: number): Queryable {
    return {
      query: async <T>(sql: string, params: unknown[] = [], options?: { name?: string }): Promise<QueryResult<T>> => {
        const a = await this.call(tx === undefined ? { op: 'query', sql, params, ...(options?.name ? { name: options.name } : {}) } : { op: 'query', sql, params, tx }, toError);
        return { rows: a.rows as T[], rowCount: a.rowCount ?? 0 };
      },
      exec: async (sql: string): Promise<void> => {
        await this.call(tx === undefined ? { op: 'exec', sql } : { op: 'exec', sql, tx }, toError);
      },
    };
  }

  async terminate(): Promise<void> {
    await this.worker.terminate();
  }
}
