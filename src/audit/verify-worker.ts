// A thread of the parallel audit verification (decision 0211): it walks its chains in the exported snapshot on
// its own connection, checking each record the quick way, and hands back the first record not plainly in place
// so the verification names the break exactly.
import { hash as digest } from 'node:crypto';
import { parentPort, workerData } from 'node:worker_threads';
import pg from 'pg';
import { GENESIS_HASH, QUICK_COLUMNS, quickText, type QuickRow } from './chain.js';

export interface ChainTask {
  chain: string;
  /** A checkpoint's size and head for this chain: the record at that position must have that hash. */
  savedSize: number;
  savedHead: string | null;
}

export interface VerifyWorkerData {
  connectionString: string;
  snapshot: string;
  tenantId: string;
  pageSize: number;
  chains: ChainTask[];
}

/** Where a chain's quick walk ended: at its end (`done`), or before a record it leaves to the exact walk. */
export type ChainWalk =
  | { chain: string; state: 'done'; size: number; hash: string; lastSeq: number }
  | { chain: string; state: 'stopped'; expected: number; prev: string; prevSeq: number }
  | { chain: string; state: 'failed'; message: string };

async function walk(client: pg.Client, data: VerifyWorkerData, task: ChainTask): Promise<ChainWalk> {
  const { chain, savedSize, savedHead } = task;
  const text = `SELECT ${QUICK_COLUMNS}
                  FROM audit_log WHERE tenant_id = $1 AND chain = $2 AND position >= $3 ORDER BY position LIMIT $4`;
  const fetch = (from: number) => client.query<QuickRow>({ text, values: [data.tenantId, chain, from, data.pageSize], rowMode: 'array' });
  let expected = 1;
  let prev = GENESIS_HASH;
  let prevSeq = 0;
  let next = fetch(expected);
  for (;;) {
    const page = await next;
    // The next page is asked for before this one is hashed: the store reads it meanwhile.
    if (page.rows.length === data.pageSize) {
      next = fetch(expected + data.pageSize);
      next.catch(() => undefined);
    }
    for (const row of page.rows) {
      const position = Number(row[0]);
      const seq = Number(row[1]);
      const hash = row[15];
      // In place, in seq order, linked to the record before, whole, and not contradicting the checkpoint.
      // Anything else is left to the exact walk.
      if (
        position !== expected ||
        !(seq > prevSeq) ||
        row[14] !== prev ||
        digest('sha256', quickText(data.tenantId, row), 'hex') !== hash ||
        (savedSize === position && savedHead !== hash)
      ) {
        return { chain, state: 'stopped', expected, prev, prevSeq };
      }
      prev = hash;
      prevSeq = seq;
      expected += 1;
    }
    if (page.rows.length < data.pageSize) break;
  }
  return { chain, state: 'done', size: expected - 1, hash: prev, lastSeq: prevSeq };
}

async function main(): Promise<void> {
  const data = workerData as VerifyWorkerData;
  const port = parentPort!;
  const client = new pg.Client({ connectionString: data.connectionString });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    await client.query(`SET TRANSACTION SNAPSHOT '${data.snapshot.replace(/'/g, "''")}'`);
    for (const task of data.chains) port.postMessage(await walk(client, data, task));
    await client.query('COMMIT');
  } catch (err) {
    // The connection or the snapshot failed: the chains not yet answered are walked by the verification itself.
    const message = err instanceof Error ? err.message : String(err);
    for (const task of data.chains) port.postMessage({ chain: task.chain, state: 'failed', message } satisfies ChainWalk);
  } finally {
    await client.end().catch(() => undefined);
  }
}

await main();
