// A cluster worker's half of the metrics exchange with the CARDLINE_WORKERS primary (src/cluster.ts): the worker
// registers its registry with prom-client's aggregator and asks the primary for everyone's metrics over IPC.
import cluster from 'node:cluster';
import client from 'prom-client';

/** Set by the primary in each worker's environment: 1 for the first (which migrates and seeds), 2… for the others. */
export const WORKER_INDEX_VARIABLE = 'CARDLINE_WORKER_INDEX';
export const METRICS_REQUEST = 'cardline:metrics-request';
export const METRICS_RESPONSE = 'cardline:metrics-response';

export interface Message {
  type?: string;
  id?: number;
  text?: string;
  error?: string;
}

/** Whether this process is a worker of a CARDLINE_WORKERS primary. */
export const isClusterWorker = (): boolean => cluster.isWorker && process.env[WORKER_INDEX_VARIABLE] !== undefined;

let metricsRequests = 0;
const pending = new Map<number, { resolve: (text: string) => void; reject: (err: Error) => void }>();
let listening = false;

/** In a worker: registers with the primary and returns a fetch of every worker's metrics; null outside a cluster. */
export function clusterMetrics(registry: client.Registry): (() => Promise<string>) | null {
  if (!isClusterWorker()) return null;
  // Constructing an AggregatorRegistry in a worker installs prom-client's answer to the primary's requests.
  new client.AggregatorRegistry();
  client.AggregatorRegistry.setRegistries([registry]);
  if (!listening) {
    listening = true;
    process.on('message', (m: Message) => {
      if (m?.type !== METRICS_RESPONSE || m.id === undefined) return;
      const waiting = pending.get(m.id);
      if (!waiting) return;
      pending.delete(m.id);
      if (m.error !== undefined) waiting.reject(new Error(m.error));
      else waiting.resolve(m.text ?? '');
    });
  }
  return () =>
    new Promise<string>((resolve, reject) => {
      const id = ++metricsRequests;
      pending.set(id, { resolve, reject });
      process.send!({ type: METRICS_REQUEST, id });
    });
}
