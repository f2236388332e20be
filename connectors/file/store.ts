// The file core's durable state: a snapshot plus an append-only, checksummed journal, written by one
// process at a time, with CoreBank (the mock's rules) applying every operation. Card numbers and CVVs are
// sealed in the snapshot under the tenant's connector secrets (decision 0048).
import { mkdir, open, readdir, stat, unlink, type FileHandle } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { crc32 } from 'node:zlib';
import { Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { ConnectorTimeoutError, ConnectorUnavailableError, isWriteOperation, type ConnectorSecrets, type OperationResult } from '../contract.js';
import { BLOCK_REASONS, CARD_FORMS, CARD_STATES, FULFILMENT_STEPS } from '../../schemas/card-lifecycle.js';
import { ENTITY_TYPES } from '../../schemas/entities.js';
import { CHANNELS, DECLINE_REASONS, HOLD_DECLINE_REASONS, TRANSACTION_STATUSES, TRANSACTION_TYPES } from '../../schemas/transactions.js';
import { CoreBank, type CoreOperation } from '../mock/core.js';
import { demoFixtures, emptyFixtures, fromSnapshot, toSnapshot, type MockCoreSnapshot, type MockCoreState } from '../mock/fixtures.js';
import { isAtomicTemp, writeDurably } from '../shared/durable-write.js';
import { DirLock } from './lock.js';

export const SNAPSHOT_FILE = 'snapshot.json';
export const JOURNAL_FILE = 'journal.log';
const FORMAT = 'cardline-file-core';
const DEFAULT_SNAPSHOT_EVERY = 1000;

/** The snapshot: state as of `seq`; v2 seals each card's pan and cvv, v1 (clear) is read and rewritten as v2. */
export interface SnapshotFile {
  format: typeof FORMAT;
  version: 1 | 2;
  seq: number;
  writtenAt: string;
  state: MockCoreSnapshot;
}

const SNAPSHOT_VERSION = 2;
const SEALED_CARD_FIELDS = ['pan', 'cvv'] as const;
const sealContext = (cardId: string, field: string) => `card/${cardId}/${field}`;

/** The state as written to disk: every card's PAN and CVV sealed. */
function sealState(state: MockCoreSnapshot, secrets: ConnectorSecrets): MockCoreSnapshot {
  return {
    ...state,
    cards: state.cards.map((c) => {
      const sealed = { ...c };
      for (const f of SEALED_CARD_FIELDS) if (sealed[f] !== undefined) sealed[f] = secrets.seal(sealed[f], sealContext(c.cardId, f));
      return sealed;
    }),
  };
}

/** The state of a version 2 snapshot with its PANs and CVVs opened; a wrong key is named as such. */
function openState(dir: string, state: MockCoreSnapshot, secrets: ConnectorSecrets): MockCoreSnapshot {
  return {
    ...state,
    cards: state.cards.map((c) => {
      const opened = { ...c };
      for (const f of SEALED_CARD_FIELDS) {
        if (opened[f] === undefined) continue;
        try {
          opened[f] = secrets.open(opened[f], sealContext(c.cardId, f));
        } catch {
          throw new ConnectorUnavailableError(
            `File core directory ${dir}: the card data in ${SNAPSHOT_FILE} was sealed under another key. The gateway's master key ` +
              '(CARDLINE_MASTER_KEY) or the tenant id is not the one that wrote this directory.',
          );
        }
      }
      return opened;
    }),
  };
}

/** One journal line: an operation CoreBank applied and its outcome, replayed on open. */
export interface JournalEntry {
  seq: number;
  op: CoreOperation;
  key?: string;
  input: unknown;
  result: unknown;
}

interface Logger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

// A line is `{"crc":"<8 hex>","entry":<entry JSON>}`: valid JSON for any reader, and the checksum
// covers the exact bytes of the entry, so no re-serialisation is needed to verify it.
const LINE_HEAD = '{"crc":"';
const LINE_MID = '","entry":';

export function encodeEntry(entry: JournalEntry): string {
  const json = JSON.stringify(entry);
  return `${LINE_HEAD}${crc32(json).toString(16).padStart(8, '0')}${LINE_MID}${json}}\n`;
}

/** The entry of one journal line (without its newline), or null when the line is torn or damaged. */
export function decodeLine(line: string): JournalEntry | null {
  const start = LINE_HEAD.length + 8 + LINE_MID.length;
  if (!line.startsWith(LINE_HEAD) || line.slice(LINE_HEAD.length + 8, start) !== LINE_MID || !line.endsWith('}')) return null;
  const json = line.slice(start, -1);
  if (crc32(json).toString(16).padStart(8, '0') !== line.slice(LINE_HEAD.length, LINE_HEAD.length + 8)) return null;
  try {
    const entry = JSON.parse(json) as JournalEntry;
    if (!Number.isSafeInteger(entry.seq) || !isWriteOperation(entry.op)) return null;
    return entry;
  } catch {
    return null;
  }
}

function corrupt(dir: string, problem: string): ConnectorUnavailableError {
  return new ConnectorUnavailableError(
    `File core directory ${dir}: ${problem}. Restore the directory from a backup or import fixtures into a new one (cardline file-core import).`,
  );
}

/** The journal continues from a different snapshot than the one read: a concurrent compaction (export retries). */
class JournalGapError extends Error {}

async function readOptional(path: string): Promise<{ text: string; ino: number } | null> {
  let fh: FileHandle;
  try {
    fh = await open(path, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  try {
    return { text: await fh.readFile('utf8'), ino: (await fh.stat()).ino };
  } finally {
    await fh.close();
  }
}

function parseSnapshot(dir: string, text: string): SnapshotFile {
  let snap: SnapshotFile;
  try {
    snap = JSON.parse(text) as SnapshotFile;
  } catch {
    throw corrupt(dir, `${SNAPSHOT_FILE} is not valid JSON`);
  }
  if (snap.format !== FORMAT || (snap.version !== 1 && snap.version !== 2) || !Number.isSafeInteger(snap.seq) || typeof snap.state !== 'object') {
    throw corrupt(dir, `${SNAPSHOT_FILE} is not a version 1 or 2 ${FORMAT} snapshot`);
  }
  return snap;
}

/** How each journaled operation is applied, live and on replay (setPin's input records the change, not the block). */
/** What each write takes: the parameter of CoreBank's method of that name. */
export type OperationInputs = { [O in CoreOperation]: Parameters<CoreBank[O]>[0] };

/** Applies a write by its name: CoreBank's method of that name, so a new write needs no line here. */
const apply = (bank: CoreBank, op: CoreOperation, input: unknown, key: string | undefined): OperationResult<unknown> =>
  (bank[op] as (input: unknown, key?: string) => OperationResult<unknown>).call(bank, input, key);

/** Applies one journal entry and checks that it produces the outcome that was acknowledged. */
function replay(dir: string, bank: CoreBank, e: JournalEntry): void {
  const key = e.key || undefined;
  const result = apply(bank, e.op, e.input, key);
  if (JSON.stringify(result) !== JSON.stringify(e.result)) {
    throw corrupt(dir, `replaying journal entry ${e.seq} (${e.op}) gives a different outcome than the one acknowledged; the core's rules changed while it was unapplied`);
  }
}

interface LoadedState {
  state: MockCoreState;
  /** Sequence of the last operation applied (snapshot plus journal). */
  seq: number;
  snapshotSeq: number;
  snapshotIno: number;
  replayed: number;
  journalBytes: number;
  /** A torn or damaged final part of the journal was ignored (an unacknowledged write cut by a crash). */
  ignoredTail: boolean;
  /** The snapshot holds card data in clear (version 1): the next snapshot seals it. */
  unsealed: boolean;
}

/** Reads the snapshot and replays the journal after it. Null when the directory holds no state yet. */
async function loadState(dir: string, secrets: ConnectorSecrets): Promise<LoadedState | null> {
  const snapFile = await readOptional(join(dir, SNAPSHOT_FILE));
  const journal = (await readOptional(join(dir, JOURNAL_FILE)))?.text ?? '';
  const lines = journal.split('\n');
  // The part after the last newline is an append cut short: never acknowledged, so ignored.
  const tail = lines.pop()!;
  if (!snapFile) {
    if (lines.some((l) => decodeLine(l))) throw corrupt(dir, `${JOURNAL_FILE} has entries but ${SNAPSHOT_FILE} is missing`);
    return null;
  }
  const snap = parseSnapshot(dir, snapFile.text);
  const state = fromSnapshot(snap.version === 1 ? snap.state : openState(dir, snap.state, secrets));
  const bank = new CoreBank(state);
  let seq = snap.seq;
  let replayed = 0;
  let damaged = -1;
  for (const [i, line] of lines.entries()) {
    const entry = decodeLine(line);
    if (!entry) {
      if (damaged < 0) damaged = i;
      continue;
    }
    // Damage followed by intact entries is not a cut-short append: acknowledged writes could be lost.
    if (damaged >= 0) throw corrupt(dir, `${JOURNAL_FILE} line ${damaged + 1} is damaged but later lines are intact`);
    // Entries already in the snapshot: a crash came between writing it and truncating the journal.
    if (entry.seq <= snap.seq) continue;
    if (entry.seq !== seq + 1) throw new JournalGapError(`${JOURNAL_FILE} jumps from entry ${seq} to ${entry.seq}`);
    replay(dir, bank, entry);
    seq = entry.seq;
    replayed++;
  }
  return {
    state,
    seq,
    snapshotSeq: snap.seq,
    snapshotIno: snapFile.ino,
    replayed,
    journalBytes: Buffer.byteLength(journal),
    ignoredTail: tail !== '' || damaged >= 0,
    unsealed: snap.version === 1,
  };
}

function serializeSnapshot(seq: number, state: MockCoreState, secrets: ConnectorSecrets): string {
  const file: SnapshotFile = {
    format: FORMAT,
    version: SNAPSHOT_VERSION,
    seq,
    writtenAt: new Date().toISOString(),
    state: sealState(toSnapshot(state), secrets),
  };
  return JSON.stringify(file);
}

async function fsyncDir(dir: string): Promise<void> {
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** Removes temp files killed writers left behind. Called only by the lock holder. */
async function removeTempFiles(dir: string): Promise<void> {
  for (const name of await readdir(dir)) {
    // Snapshot temps are only ever written by a lock holder, so any found now were left by a killed one.
    if (isAtomicTemp(name, SNAPSHOT_FILE)) await unlink(join(dir, name)).catch(() => undefined);
  }
}

async function truncateJournal(dir: string): Promise<void> {
  let fh: FileHandle;
  try {
    fh = await open(join(dir, JOURNAL_FILE), 'r+');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  try {
    await fh.truncate(0);
    await fh.sync();
  } finally {
    await fh.close();
  }
}

export interface FileStoreOptions {
  /** The tenant's directory; created when missing. */
  dir: string;
  /** Initial state when the directory holds none. */
  fixtures?: 'demo' | 'empty' | undefined;
  /** How long to wait for another holder of the directory's lock; 0 fails at once. */
  lockTimeoutMs?: number | undefined;
  /** Journal entries between snapshots (the journal is truncated after each). */
  snapshotEvery?: number | undefined;
  logger?: Logger | undefined;
  /** Seals the card data in snapshots; the same tenant and master key must open the directory again. */
  secrets: ConnectorSecrets;
}

interface Waiter {
  seq: number;
  resolve(): void;
  reject(err: Error): void;
}

/** An open file core: applied in memory at once, acknowledged once its journal line is fsync'd (group commit). */
export class FileStore {
  readonly bank: CoreBank;
  private pending: string[] = [];
  private appendedSeq: number;
  private durableSeq: number;
  private sinceSnapshot = 0;
  private waiters: Waiter[] = [];
  private flushing: Promise<void> | null = null;
  private failure: Error | null = null;
  private closing: Promise<void> | null = null;

  private constructor(
    readonly dir: string,
    state: MockCoreState,
    seq: number,
    private readonly journal: FileHandle,
    private readonly lock: DirLock,
    private readonly snapshotEvery: number,
    private readonly secrets: ConnectorSecrets,
  ) {
    this.bank = new CoreBank(state);
    this.appendedSeq = seq;
    this.durableSeq = seq;
  }

  /** Locks, loads, replays and compacts (no new line after a torn tail); ConnectorUnavailableError otherwise. */
  static async open(opts: FileStoreOptions): Promise<FileStore> {
    const dir = resolve(opts.dir);
    const unavailable = (err: unknown) =>
      err instanceof ConnectorUnavailableError
        ? err
        : new ConnectorUnavailableError(`File core directory ${dir} could not be opened: ${(err as Error).message}`, { cause: err });
    let lock: DirLock;
    try {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      lock = await DirLock.acquire(dir, opts.lockTimeoutMs ?? 0);
    } catch (err) {
      throw unavailable(err);
    }
    try {
      await removeTempFiles(dir);
      let loaded: LoadedState | null;
      try {
        loaded = await loadState(dir, opts.secrets);
      } catch (err) {
        throw err instanceof JournalGapError ? corrupt(dir, err.message) : err;
      }
      const state = loaded?.state ?? (opts.fixtures === 'empty' ? emptyFixtures() : demoFixtures());
      const seq = loaded?.seq ?? 0;
      if (!loaded || loaded.journalBytes > 0 || loaded.unsealed) {
        await writeDurably(join(dir, SNAPSHOT_FILE), serializeSnapshot(seq, state, opts.secrets));
        await truncateJournal(dir);
      }
      const journal = await open(join(dir, JOURNAL_FILE), 'a', 0o600);
      await fsyncDir(dir);
      if (loaded?.ignoredTail) opts.logger?.warn({ dir }, 'file core: ignored a torn journal tail (a write cut short by a crash, never acknowledged)');
      opts.logger?.info({ dir, seq, replayed: loaded?.replayed ?? 0, created: !loaded }, 'file core opened');
      return new FileStore(dir, state, seq, journal, lock, opts.snapshotEvery ?? DEFAULT_SNAPSHOT_EVERY, opts.secrets);
    } catch (err) {
      await lock.release();
      throw unavailable(err);
    }
  }

  /** Applies a write to memory at once and resolves once it is durable (see `execute`). */
  write<O extends CoreOperation>(op: O, input: OperationInputs[O], key: string | undefined, signal: AbortSignal): Promise<ReturnType<CoreBank[O]>> {
    return this.execute(op, input, key, signal, () => apply(this.bank, op, input, key)) as Promise<ReturnType<CoreBank[O]>>;
  }

  /** A read from memory that waits for earlier writes to be durable, so it never shows what a crash could undo. */
  async read<T>(signal: AbortSignal, read: (bank: CoreBank) => OperationResult<T>): Promise<OperationResult<T>> {
    this.check();
    if (signal.aborted) throw new ConnectorTimeoutError('deadline passed before the file core read its state');
    const result = read(this.bank);
    await this.durable(this.appendedSeq, signal);
    return result;
  }

  /** Throws when the store cannot take writes (closed, or a write failed and it must be re-opened). */
  check(): void {
    if (this.closing) throw new ConnectorUnavailableError(`File core ${this.dir} is closed.`);
    if (this.failure) {
      throw new ConnectorUnavailableError(
        `File core ${this.dir} stopped taking writes after a failed write (${this.failure.message}); re-open it.`,
        { cause: this.failure },
      );
    }
  }

  private async execute<T>(
    op: CoreOperation,
    input: unknown,
    key: string | undefined,
    signal: AbortSignal,
    apply: () => OperationResult<T>,
  ): Promise<OperationResult<T>> {
    this.check();
    if (signal.aborted) throw new ConnectorTimeoutError('deadline passed before the file core applied the operation');
    const result = apply();
    // A refusal without a key is not journaled but waits for earlier writes: it may rest on them.
    let target = this.appendedSeq;
    if (key || result.status === 'succeeded') {
      target = ++this.appendedSeq;
      this.pending.push(encodeEntry({ seq: target, op, ...(key ? { key } : {}), input, result }));
    }
    await this.durable(target, signal);
    return result;
  }

  private durable(seq: number, signal: AbortSignal): Promise<void> {
    if (this.durableSeq >= seq) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(new ConnectorTimeoutError('deadline passed while the file core was making the write durable; its outcome is unknown'));
      };
      const waiter: Waiter = {
        seq,
        resolve: () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        },
        reject: (err) => {
          signal.removeEventListener('abort', onAbort);
          reject(err);
        },
      };
      this.waiters.push(waiter);
      signal.addEventListener('abort', onAbort, { once: true });
      this.kick();
    });
  }

  private kick(): void {
    this.flushing ??= this.flushLoop().finally(() => {
      this.flushing = null;
    });
  }

  private async flushLoop(): Promise<void> {
    try {
      while (!this.failure) {
        if (this.appendedSeq > this.durableSeq && this.sinceSnapshot + this.pending.length >= this.snapshotEvery) {
          await this.snapshot();
        } else if (this.pending.length > 0) {
          const batch = Buffer.from(this.pending.join(''));
          const upTo = this.appendedSeq;
          this.pending = [];
          for (let off = 0; off < batch.length; ) off += (await this.journal.write(batch, off)).bytesWritten;
          await this.journal.datasync();
          this.sinceSnapshot = this.sinceSnapshot + (upTo - this.durableSeq);
          this.settle(upTo);
        } else {
          break;
        }
      }
    } catch (err) {
      // Memory may now be ahead of the disk: refuse further writes until re-opened from the files.
      this.failure = err as Error;
      const failed = this.waiters;
      this.waiters = [];
      for (const w of failed) {
        w.reject(new ConnectorUnavailableError(`File core ${this.dir}: the write could not be made durable (${this.failure.message}); outcome unknown.`));
      }
    }
  }

  /** Writes the whole state and empties the journal; entries a crash leaves behind are skipped by sequence. */
  private async snapshot(): Promise<void> {
    const seq = this.appendedSeq;
    const text = serializeSnapshot(seq, this.bank.state, this.secrets);
    this.pending = [];
    await writeDurably(join(this.dir, SNAPSHOT_FILE), text);
    await this.journal.truncate(0);
    await this.journal.sync();
    this.sinceSnapshot = 0;
    this.settle(seq);
  }

  private settle(seq: number): void {
    this.durableSeq = seq;
    const done = this.waiters.filter((w) => w.seq <= seq);
    this.waiters = this.waiters.filter((w) => w.seq > seq);
    for (const w of done) w.resolve();
  }

  /** Finishes pending writes, compacts the journal, closes the file and releases the lock. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      while (this.flushing) await this.flushing;
      try {
        if (!this.failure && this.sinceSnapshot > 0) await this.snapshot();
      } catch {
        // The journal still holds every acknowledged write; the next open replays it.
      }
      await this.journal.close().catch(() => undefined);
      await this.lock.release();
    })();
    return this.closing;
  }
}

const Address = Type.Object({
  address1: Type.String(),
  address2: Type.Optional(Type.String()),
  city: Type.String(),
  state: Type.String(),
  country: Type.String(),
  pin: Type.String(),
});
const Minor = Type.String({ pattern: '^-?[0-9]{1,20}$' });
const Id = Type.String({ minLength: 1, maxLength: 100 });
const oneOf = (values: readonly string[]) => Type.Union(values.map((v) => Type.Literal(v)));

/** What `importFixtures` accepts: the JSON `exportFixtures` produces (MockCoreSnapshot). */
const FixturesSchema = Type.Object({
  entities: Type.Array(
    Type.Object({
      entityId: Id,
      name: Type.String(),
      type: Type.Optional(oneOf(ENTITY_TYPES)),
      contact: Type.Optional(Type.Object({ email: Type.String(), mobile: Type.String() })),
      creditLimitMinor: Minor,
      outstandingMinor: Type.Optional(Minor),
      primaryAddress: Address,
    }),
  ),
  cards: Type.Array(
    Type.Object({
      cardId: Id,
      entityId: Id,
      form: Type.Union(CARD_FORMS.map((f) => Type.Literal(f))),
      state: Type.Union(CARD_STATES.map((st) => Type.Literal(st))),
      pan: Type.String({ pattern: '^[0-9]{12,19}$' }),
      expiry: Type.Optional(Type.String({ pattern: '^(0[1-9]|1[0-2])/[0-9]{2}$' })),
      cvv: Type.Optional(Type.String({ pattern: '^[0-9]{3,4}$' })),
      blockReason: Type.Optional(Type.Union(BLOCK_REASONS.map((r) => Type.Literal(r)))),
      pinSet: Type.Optional(Type.Boolean()),
      kitNo: Type.Optional(Id),
      fulfilment: Type.Optional(Type.Union(FULFILMENT_STEPS.map((f) => Type.Literal(f)))),
      deliveryAddress: Type.Optional(Address),
      plasticCode: Type.Optional(Type.Object({ code: Type.String(), description: Type.Optional(Type.String()) })),
      preferences: Type.Optional(Type.Unknown()),
      balanceMinor: Minor,
      replacedBy: Type.Optional(Id),
    }),
  ),
  transactions: Type.Optional(
    Type.Array(
      Type.Object({
        transactionId: Id,
        seq: Type.Integer({ minimum: 1 }),
        cardId: Id,
        entityId: Id,
        amountMinor: Minor,
        channel: oneOf(CHANNELS),
        merchant: Type.Object({ name: Type.String(), mcc: Type.String(), country: Type.String() }),
        international: Type.Boolean(),
        status: oneOf(TRANSACTION_STATUSES),
        declineReason: Type.Union([oneOf(DECLINE_REASONS), Type.Null()]),
        at: Type.String(),
        type: Type.Optional(oneOf(TRANSACTION_TYPES.filter((t) => t !== 'AUTHORIZATION'))),
        authorizationId: Type.Optional(Id),
      }),
    ),
  ),
  repayments: Type.Optional(Type.Array(Type.Object({ repaymentId: Id, entityId: Id, amountMinor: Minor, at: Type.String() }))),
  holds: Type.Optional(
    Type.Array(
      Type.Object({
        authorizationId: Id,
        cardId: Id,
        entityId: Id,
        approved: Type.Boolean(),
        declineReason: Type.Union([oneOf(HOLD_DECLINE_REASONS), Type.Null()]),
        authorizedMinor: Minor,
        heldMinor: Minor,
        clearedMinor: Minor,
        reversedMinor: Minor,
        refundedMinor: Minor,
        creditedMinor: Minor,
        at: Type.String(),
        merchant: Type.Optional(Type.Object({ name: Type.String(), mcc: Type.String(), country: Type.String() })),
        channel: Type.Optional(oneOf(CHANNELS)),
        international: Type.Optional(Type.Boolean()),
      }),
    ),
  ),
  kits: Type.Array(Type.Object({ kitNo: Id, allocatedTo: Type.Optional(Id), mappedTo: Type.Optional(Id) })),
  idempotency: Type.Optional(Type.Array(Type.Tuple([Type.String(), Type.Unknown()]))),
});

function checkFixtures(snapshot: unknown): MockCoreSnapshot {
  const problems = [...Value.Errors(FixturesSchema, snapshot)].slice(0, 5).map((e) => `${e.path || '/'}: ${e.message}`);
  if (problems.length) throw new Error(`Fixtures are invalid: ${problems.join('; ')}`);
  const s = snapshot as MockCoreSnapshot;
  const entities = new Set(s.entities.map((e) => e.entityId));
  const cards = new Set(s.cards.map((c) => c.cardId));
  for (const c of s.cards) if (!entities.has(c.entityId)) throw new Error(`Fixtures are invalid: card ${c.cardId} names unknown entity ${c.entityId}`);
  for (const t of s.transactions ?? []) {
    if (!cards.has(t.cardId)) throw new Error(`Fixtures are invalid: transaction ${t.transactionId} names unknown card ${t.cardId}`);
  }
  for (const k of s.kits) {
    if (k.allocatedTo && !entities.has(k.allocatedTo)) throw new Error(`Fixtures are invalid: kit ${k.kitNo} is allocated to unknown entity ${k.allocatedTo}`);
    if (k.mappedTo && !cards.has(k.mappedTo)) throw new Error(`Fixtures are invalid: kit ${k.kitNo} is mapped to unknown card ${k.mappedTo}`);
  }
  return s;
}

/** The directory's state as fixtures JSON (secrets opened); lock-free, so it reads beside a running gateway. */
export async function exportFixtures(dir: string, secrets: ConnectorSecrets): Promise<MockCoreSnapshot> {
  const abs = resolve(dir);
  for (let attempt = 1; ; attempt++) {
    try {
      const loaded = await loadState(abs, secrets);
      if (!loaded) throw new Error(`${abs} holds no file-core state (no ${SNAPSHOT_FILE})`);
      const now = await stat(join(abs, SNAPSHOT_FILE)).catch(() => null);
      if (now?.ino === loaded.snapshotIno) return toSnapshot(loaded.state);
    } catch (err) {
      if (!(err instanceof JournalGapError) || attempt >= 10) throw err;
    }
    if (attempt >= 10) throw new Error(`${abs} kept changing while being read; retry the export`);
  }
}

/** The highest sequence the directory's files mention, read leniently (import replaces the state anyway). */
async function highestSeq(dir: string): Promise<number> {
  let seq = 0;
  const snap = await readOptional(join(dir, SNAPSHOT_FILE));
  try {
    if (snap) seq = Math.max(seq, Number((JSON.parse(snap.text) as SnapshotFile).seq) || 0);
  } catch {
    // a damaged snapshot is replaced
  }
  const journal = await readOptional(join(dir, JOURNAL_FILE));
  for (const line of journal?.text.split('\n') ?? []) seq = Math.max(seq, decodeLine(line)?.seq ?? 0);
  return seq;
}

/** Replaces the state under the lock, sequenced above every journal entry so old entries cannot replay over it. */
export async function importFixtures(
  dir: string,
  snapshot: unknown,
  secrets: ConnectorSecrets,
  opts: { lockTimeoutMs?: number } = {},
): Promise<void> {
  const abs = resolve(dir);
  const state = fromSnapshot(checkFixtures(snapshot));
  await mkdir(abs, { recursive: true, mode: 0o700 });
  const lock = await DirLock.acquire(abs, opts.lockTimeoutMs ?? 0);
  try {
    await removeTempFiles(abs);
    await writeDurably(join(abs, SNAPSHOT_FILE), serializeSnapshot((await highestSeq(abs)) + 1, state, secrets));
    await truncateJournal(abs);
  } finally {
    await lock.release();
  }
}
