// Verifies a tenant's audit trail as stored: every chain (decision 0200) walked in order, each hash, link and
// head recomputed, every record belonging to a chain; against a checkpoint (0202), that it is a prefix of today's
// trail. Long chains on PostgreSQL are walked on worker threads (0211), the first break handed back here.
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { Db, Queryable } from '../store/db.js';
import { AT_ISO_SQL, AUDIT_COLUMNS, GENESIS_HASH, fromRow, recordHashAt, trailRoot, type AuditRecord, type AuditRow } from './chain.js';
import type { ChainTask, ChainWalk, VerifyWorkerData } from './verify-worker.js';

export type { ChainWalk } from './verify-worker.js';

/** Why the trail does not verify, at the first place where it breaks. */
export type BreakReason =
  /** The record's contents no longer match its hash, or a record was rewritten with a fresh hash. */
  | 'edited'
  /** A position is missing from a chain: the record was deleted (or the chain has a gap). */
  | 'deleted'
  /** The record is intact but sits at another place than the one it was written at. */
  | 'reordered'
  /** audit_chains does not name the chain's last record (the last record deleted, the head altered, or no head). */
  | 'head-mismatch'
  /** The saved checkpoint is not a prefix of today's trail: a chain shorter than it, or another hash at its size. */
  | 'checkpoint-mismatch';

/** A chain's size and head, as a checkpoint names them. */
export interface ChainHead {
  chain: string;
  size: number;
  head: string;
}

export type VerifyResult =
  | { ok: true; records: number; chains: ChainHead[]; root: string }
  | {
      ok: false;
      chain: string;
      position: number;
      /** The seq of the record there, when there is one. */
      seq: number | null;
      reason: BreakReason;
      detail: string;
      /** Records verified before the break (all chains). */
      records: number;
    };

export const BREAK_LABELS: Record<BreakReason, string> = {
  edited: 'edited record',
  deleted: 'deleted record or gap',
  reordered: 'reordered records',
  'head-mismatch': 'head mismatch',
  'checkpoint-mismatch': 'not an extension of the checkpoint',
};

export interface VerifyOptions {
  /** Records read per query; memory stays bounded by one page whatever the trail's length. */
  pageSize?: number;
  /** A checkpoint's chains (its signature already checked): the trail must extend each of them. */
  checkpoint?: readonly ChainHead[];
  /**
   * With a checkpoint: walk each chain from the checkpoint's size on, proving the trail extends it without
   * reading the covered records again; an edit among them is found only by a full verification (0202).
   */
  since?: boolean;
  /** PostgreSQL: chains of at least this many records are walked on worker threads (decision 0211); default 20 000. */
  parallelFrom?: number;
  /** Worker threads at most for that; default: the cores Node may use. */
  threads?: number;
  /** Told how each chain's walk on a thread ended (tests, benches). */
  onThreadWalk?: (walk: ChainWalk) => void;
}

const DEFAULT_PAGE = 1000;
/** A worker's page: four strings a record, so a larger page costs the collector little and saves round trips. */
const WORKER_PAGE = 5000;
const DEFAULT_PARALLEL_FROM = 20_000;

/** Verifies one tenant's trail in one REPEATABLE READ snapshot while gateways keep appending. */
export function verifyChain(db: Db, tenantId: string, opts: VerifyOptions = {}): Promise<VerifyResult> {
  return db.transaction(async (tx) => {
    await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
    return verifyTrail(tx, tenantId, opts, db.kind === 'postgres' ? db.connectionString : undefined);
  });
}

/** A worker's young generation: 64 MB halves the collector's share for page-sized rows (decision 0211). */
const WORKER_LIMITS = { maxYoungGenerationSizeMb: 64 };

/** The worker's module: the TypeScript source through tsx's loader under tsx/vitest, else the compiled file. */
function spawnWorker(data: VerifyWorkerData): Worker {
  const self = import.meta.url;
  if (self.endsWith('.ts')) {
    const url = new URL('./verify-worker.ts', self).href;
    const code = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(url)}); })`;
    return new Worker(code, { eval: true, workerData: data, resourceLimits: WORKER_LIMITS });
  }
  return new Worker(new URL('./verify-worker.js', self), { workerData: data, resourceLimits: WORKER_LIMITS });
}

/** Parallel walks in flight: each chain's answer, and how to stop them all. */
interface ParallelWalks {
  walks: Map<string, Promise<ChainWalk>>;
  stop(): Promise<void>;
}

/** Walks `tasks` on up to `threads` workers in `snapshot`, largest chains first; what a failed one left is walked here. */
function startWalks(connectionString: string, snapshot: string, tenantId: string, pageSize: number, tasks: (ChainTask & { size: number })[], threads: number): ParallelWalks {
  const groups = Array.from({ length: Math.max(1, Math.min(threads, tasks.length)) }, () => ({ load: 0, chains: [] as ChainTask[] }));
  for (const t of [...tasks].sort((a, b) => b.size - a.size)) {
    const g = groups.reduce((least, x) => (x.load < least.load ? x : least));
    g.load += t.size;
    g.chains.push({ chain: t.chain, savedSize: t.savedSize, savedHead: t.savedHead });
  }
  const walks = new Map<string, Promise<ChainWalk>>();
  const workers: Worker[] = [];
  for (const g of groups) {
    const resolvers = new Map<string, (w: ChainWalk) => void>();
    for (const t of g.chains) walks.set(t.chain, new Promise((resolve) => resolvers.set(t.chain, resolve)));
    const answer = (w: ChainWalk) => {
      resolvers.get(w.chain)?.(w);
      resolvers.delete(w.chain);
    };
    const worker = spawnWorker({ connectionString, snapshot, tenantId, pageSize, chains: g.chains });
    worker.on('message', answer);
    const fail = (message: string) => {
      for (const chain of [...resolvers.keys()]) answer({ chain, state: 'failed', message });
    };
    worker.on('error', (err) => fail(err.message));
    worker.on('exit', (code) => fail(`exited with code ${code}`));
    workers.push(worker);
  }
  return { walks, stop: async () => void (await Promise.all(workers.map((w) => w.terminate()))) };
}

type Broken = Extract<VerifyResult, { ok: false }>;

/** Whether a chain is walked from the checkpoint's head on (`since`) rather than from position 1. */
const fromSaved = (opts: VerifyOptions, saved: ChainHead | undefined): boolean => opts.since === true && saved !== undefined && saved.size > 0;

async function verifyTrail(tx: Queryable, tenantId: string, opts: VerifyOptions, connectionString?: string): Promise<VerifyResult> {
  const pageSize = opts.pageSize ?? DEFAULT_PAGE;
  const stored = await tx.query<{ chain: string; size: string | number; head: string; last_seq: string | number }>(
    'SELECT chain, size, head, last_seq FROM audit_chains WHERE tenant_id = $1 ORDER BY chain',
    [tenantId],
  );
  const heads = new Map(stored.rows.map((r) => [r.chain, { size: Number(r.size), head: r.head, lastSeq: Number(r.last_seq) }]));
  // The chains that hold records, found by a loose index scan (one probe per chain, not a scan of the trail).
  const present = await tx.query<{ chain: string }>(
    `WITH RECURSIVE c AS (
       SELECT min(chain) AS chain FROM audit_log WHERE tenant_id = $1
       UNION ALL
       SELECT (SELECT min(chain) FROM audit_log WHERE tenant_id = $1 AND chain > c.chain) FROM c WHERE c.chain IS NOT NULL
     )
     SELECT chain FROM c WHERE chain IS NOT NULL`,
    [tenantId],
  );
  const names = [...new Set([...heads.keys(), ...present.rows.map((r) => r.chain)])].sort();
  const checkpoint = new Map((opts.checkpoint ?? []).map((c) => [c.chain, c]));

  // Long whole chains are hashed on worker threads in this snapshot; the walk takes their answers in order.
  const parallelFrom = opts.parallelFrom ?? DEFAULT_PARALLEL_FROM;
  const tasks = connectionString
    ? names.flatMap((chain) => {
        const head = heads.get(chain);
        const saved = checkpoint.get(chain);
        if (!head || head.size === 0 || head.size < parallelFrom || fromSaved(opts, saved)) return [];
        return [{ chain, size: head.size, savedSize: saved?.size ?? 0, savedHead: saved?.head ?? null }];
      })
    : [];
  let parallel: ParallelWalks | null = null;
  if (tasks.length > 0) {
    const snapshot = (await tx.query<{ snapshot: string }>('SELECT pg_export_snapshot() AS snapshot')).rows[0]!.snapshot;
    parallel = startWalks(connectionString!, snapshot, tenantId, opts.pageSize ?? WORKER_PAGE, tasks, opts.threads ?? availableParallelism());
  }
  try {
    return await joinChains(tx, tenantId, opts, names, heads, checkpoint, parallel, pageSize);
  } finally {
    await parallel?.stop();
  }
}

async function joinChains(
  tx: Queryable,
  tenantId: string,
  opts: VerifyOptions,
  names: string[],
  heads: Map<string, { size: number; head: string; lastSeq: number }>,
  checkpoint: Map<string, ChainHead>,
  parallel: ParallelWalks | null,
  pageSize: number,
): Promise<VerifyResult> {
  let records = 0;
  const chains: ChainHead[] = [];
  for (const chain of names) {
    const head = heads.get(chain);
    const saved = checkpoint.get(chain);
    const quick = await parallel?.walks.get(chain);
    if (quick) opts.onThreadWalk?.(quick);
    const result =
      quick?.state === 'done'
        ? { size: quick.size, hash: quick.hash, lastSeq: quick.lastSeq }
        : await walkChain(
            tx, tenantId, chain, pageSize, records, saved, fromSaved(opts, saved),
            quick?.state === 'stopped' ? quick : undefined,
          );
    if ('ok' in result) return result;
    const { size, hash, lastSeq } = result;
    const broken = (position: number, seq: number | null, reason: BreakReason, detail: string): Broken => ({
      ok: false, chain, position, seq, reason, detail, records: records + size,
    });
    if (!head) return broken(size, lastSeq || null, 'head-mismatch', `chain ${chain} has ${size} records but no head`);
    if (head.size > size) {
      return broken(size + 1, null, 'head-mismatch', `the head of chain ${chain} names position ${head.size}, but the chain ends at position ${size}: records were deleted from its end`);
    }
    if (head.size < size) return broken(head.size + 1, null, 'head-mismatch', `the head of chain ${chain} names position ${head.size}, but the chain goes on to position ${size}`);
    if (head.head !== hash || head.lastSeq !== lastSeq) return broken(size, lastSeq || null, 'head-mismatch', `the head of chain ${chain} does not match its record at position ${size}`);
    if (saved && saved.size > size) {
      return broken(size + 1, null, 'checkpoint-mismatch', `the checkpoint names position ${saved.size} of chain ${chain}, but the chain ends at position ${size}`);
    }
    records += size;
    chains.push({ chain, size, head: hash });
  }
  for (const saved of checkpoint.values()) {
    if (saved.size > 0 && !names.includes(saved.chain)) {
      return { ok: false, chain: saved.chain, position: 1, seq: null, reason: 'checkpoint-mismatch', detail: `chain ${saved.chain} of the checkpoint (${saved.size} records) is gone`, records };
    }
  }
  return { ok: true, records, chains, root: trailRoot(tenantId, chains) };
}

/** Walks one chain; its size, head and last seq, or the first break. */
async function walkChain(
  tx: Queryable,
  tenantId: string,
  chain: string,
  pageSize: number,
  before: number,
  saved: ChainHead | undefined,
  fromSaved: boolean,
  /** Where a quick walk stopped: the records before `expected` verified, the last one's hash and seq. */
  resume?: { expected: number; prev: string; prevSeq: number },
): Promise<{ size: number; hash: string; lastSeq: number } | Broken> {
  let expected = resume?.expected ?? (fromSaved ? saved!.size : 1);
  /** The hash the next record must link to; null: the checkpoint's last record, taken as it is if its hash is the checkpoint's. */
  let prev: string | null = resume?.prev ?? (fromSaved ? null : GENESIS_HASH);
  let prevSeq = resume?.prevSeq ?? 0;
  const broken = (position: number, seq: number | null, reason: BreakReason, detail: string): Broken => ({
    ok: false, chain, position, seq, reason, detail, records: before + expected - 1,
  });
  const fetch = (from: number) =>
    tx.query<AuditRow & { at_iso: string }>(
      // `at` as text: the hash is recomputed without parsing a Date per record (the largest cost after the hash).
      `SELECT ${AUDIT_COLUMNS.replace(' at,', '')}, ${AT_ISO_SQL} AS at_iso
         FROM audit_log WHERE tenant_id = $1 AND chain = $2 AND position >= $3 ORDER BY position LIMIT $4`,
      [tenantId, chain, from, pageSize],
    );
  let next = fetch(expected);
  for (;;) {
    const page = await next;
    // The next page is requested before this one is hashed, so the store reads it meanwhile.
    if (page.rows.length === pageSize) {
      next = fetch(expected + pageSize);
      next.catch(() => undefined);
    }
    for (const row of page.rows) {
      const position = Number(row.position);
      const seq = Number(row.seq);
      const intact =
        recordHashAt(
          row.prev_hash,
          {
            tenantId, seq, id: row.id, actor: row.actor, role: row.role, action: row.action, method: row.method, route: row.route,
            target: row.target, outcome: row.outcome, status: Number(row.status), requestId: row.request_id, origin: row.origin,
          },
          row.at_iso,
        ) === row.hash;
      // The common case, without building a record: in place, linked, whole, in seq order, not contradicting the checkpoint.
      if (prev !== null && position === expected && row.prev_hash === prev && intact && seq > prevSeq && !(saved && saved.size === position && saved.head !== row.hash)) {
        prev = row.hash;
        prevSeq = seq;
        expected += 1;
        continue;
      }
      const r = fromRow(tenantId, { ...row, at: row.at_iso });
      if (prev === null) {
        if (r.position !== expected || r.hash !== saved!.head || !intact) {
          return broken(expected, null, 'checkpoint-mismatch', `position ${expected} of chain ${chain} no longer holds the record the checkpoint names`);
        }
        prev = r.hash;
        prevSeq = r.seq;
        expected += 1;
        continue;
      }
      if (r.position !== expected) {
        const missing = r.position - 1 === expected ? `position ${expected} is missing` : `positions ${expected} to ${r.position - 1} are missing`;
        return broken(expected, null, 'deleted', `chain ${chain}: ${missing}; the next record is seq ${r.seq} at position ${r.position}`);
      }
      if (r.prevHash === prev) {
        if (!intact) {
          const original = await writtenAs(tx, tenantId, r, row.at_iso, prevSeq);
          return original !== null
            ? broken(r.position, r.seq, 'reordered', `the record at seq ${r.seq} was written as seq ${original}`)
            : broken(r.position, r.seq, 'edited', "the record's contents do not match its hash");
        }
        if (r.seq <= prevSeq) return broken(r.position, r.seq, 'reordered', `seq ${r.seq} follows seq ${prevSeq} in chain ${chain}`);
      } else if (intact) {
        // Whole, but committing to another predecessor: moved from elsewhere in the chain, or the one before it rewritten.
        const from = await positionOf(tx, tenantId, chain, r.prevHash);
        if (from !== null && from !== r.position - 1) {
          return broken(r.position, r.seq, 'reordered', `the record at position ${r.position} of chain ${chain} was written after position ${from}`);
        }
        return r.position > 1
          ? broken(r.position - 1, prevSeq, 'edited', `the record was rewritten: seq ${r.seq} commits to a different hash for it`)
          : broken(r.position, r.seq, 'edited', 'the first record of the chain does not start from the genesis hash');
      } else {
        return broken(r.position, r.seq, 'edited', `the record's contents do not match its hash, and it does not link to position ${r.position - 1}`);
      }
      if (saved && saved.size === r.position && saved.head !== r.hash) {
        return broken(r.position, r.seq, 'checkpoint-mismatch', `the checkpoint names another hash at position ${r.position} of chain ${chain}: the trail was rewritten since`);
      }
      prev = r.hash;
      prevSeq = r.seq;
      expected += 1;
    }
    if (page.rows.length < pageSize) break;
  }
  if (prev === null) return broken(expected, null, 'checkpoint-mismatch', `position ${expected} of chain ${chain} no longer holds the record the checkpoint names`);
  return { size: expected - 1, hash: prev, lastSeq: prevSeq };
}

/** Where the record with this hash sits in the chain, if anywhere. */
async function positionOf(tx: Queryable, tenantId: string, chain: string, hash: string): Promise<number | null> {
  const r = await tx.query<{ position: string | number }>('SELECT position FROM audit_log WHERE tenant_id = $1 AND chain = $2 AND hash = $3 LIMIT 1', [
    tenantId,
    chain,
    hash,
  ]);
  return r.rows[0] ? Number(r.rows[0].position) : null;
}

/** The seq a record was written at when only its seq changed (swapped seqs); null for an edit. */
async function writtenAs(tx: Queryable, tenantId: string, r: AuditRecord, atIso: string, after: number): Promise<number | null> {
  const candidates = await tx.query<{ seq: string | number }>(
    'SELECT seq FROM audit_log WHERE tenant_id = $1 AND chain = $2 AND seq > $3 AND seq <> $4 ORDER BY seq LIMIT 64',
    [tenantId, r.chain, after, r.seq],
  );
  for (const c of candidates.rows) {
    const seq = Number(c.seq);
    if (recordHashAt(r.prevHash, { ...r, seq }, atIso) === r.hash) return seq;
  }
  return null;
}
