// The mock core's banks: each bank's state (fixtures, or its snapshot file), one operation at a time per
// bank, and every change written atomically before it is answered.
import { mkdir, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeDurably } from '../shared/durable-write.js';
import { CoreBank } from '../mock/core.js';
import {
  demoFixtures,
  emptyFixtures,
  fromSnapshot,
  toSnapshot,
  type MockCoreSnapshot,
  type MockCoreState,
} from '../mock/fixtures.js';
import { BANK_ID_PATTERN } from '../../schemas/core-protocol.js';

const SNAPSHOT_FORMAT = 'cardline-mock-core-bank/1';
const BANK_ID = new RegExp(BANK_ID_PATTERN);

interface SnapshotFile {
  format: typeof SNAPSHOT_FORMAT;
  bankId: string;
  savedAt: string;
  state: MockCoreSnapshot;
}

interface Slot {
  /** The last queued operation; the next one starts when it settles. */
  tail: Promise<unknown>;
  /** Loaded on first use; dropped when a write fails so that the file is the truth again. */
  state?: MockCoreState | undefined;
}

export interface BankStoreOptions {
  /** Where snapshots live; without it banks live in memory only. */
  dataDir?: string | undefined;
  /** What a bank without a snapshot starts from. */
  fixtures: 'demo' | 'empty';
}

export class BankStoreError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'BankStoreError';
  }
}


export class BankStore {
  private readonly slots = new Map<string, Slot>();
  private dirReady: Promise<void> | undefined;

  constructor(private readonly opts: BankStoreOptions) {}

  /** Runs `fn` alone on the bank and, with `persist`, writes its snapshot before resolving (a failed write undoes). */
  exclusive<T>(bankId: string, fn: (bank: CoreBank) => T, persist: (result: T) => boolean = () => false): Promise<T> {
    const slot = this.slot(bankId);
    const run = slot.tail.then(async () => {
      slot.state ??= await this.load(bankId);
      const result = fn(new CoreBank(slot.state));
      if (this.opts.dataDir && persist(result)) {
        try {
          await this.save(bankId, slot.state);
        } catch (err) {
          slot.state = undefined;
          throw new BankStoreError(`bank '${bankId}': the snapshot could not be written`, { cause: err });
        }
      }
      return result;
    });
    slot.tail = run.catch(() => undefined);
    return run;
  }

  /** Restores one bank, or every bank known in memory or on disk, to its fixtures. Returns the ids. */
  async reset(bankId?: string): Promise<string[]> {
    const ids = bankId ? [bankId] : [...new Set([...this.slots.keys(), ...(await this.banksOnDisk())])].sort();
    await Promise.all(
      ids.map((id) => {
        const slot = this.slot(id);
        const run = slot.tail.then(async () => {
          slot.state = this.fixtures();
          if (this.opts.dataDir) await this.save(id, slot.state);
        });
        slot.tail = run.catch(() => undefined);
        return run;
      }),
    );
    return ids;
  }

  /** Waits for every queued operation, so that a closing server leaves complete snapshots. */
  async drain(): Promise<void> {
    await Promise.all([...this.slots.values()].map((s) => s.tail));
  }

  private slot(bankId: string): Slot {
    // The id becomes a file name: the route schema checks it, and so does this, in case of another caller.
    if (!BANK_ID.test(bankId)) throw new BankStoreError(`'${bankId}' is not a bank id`);
    let slot = this.slots.get(bankId);
    if (!slot) {
      slot = { tail: Promise.resolve() };
      this.slots.set(bankId, slot);
    }
    return slot;
  }

  private fixtures(): MockCoreState {
    return this.opts.fixtures === 'empty' ? emptyFixtures() : demoFixtures();
  }

  private file(bankId: string): string {
    return join(this.opts.dataDir!, `${bankId}.json`);
  }

  private async load(bankId: string): Promise<MockCoreState> {
    if (!this.opts.dataDir) return this.fixtures();
    let text: string;
    try {
      text = await readFile(this.file(bankId), 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return this.fixtures();
      throw new BankStoreError(`bank '${bankId}': the snapshot could not be read`, { cause: err });
    }
    let parsed: SnapshotFile;
    try {
      parsed = JSON.parse(text) as SnapshotFile;
    } catch (err) {
      throw new BankStoreError(`bank '${bankId}': ${this.file(bankId)} is not JSON; delete it to start from fixtures`, { cause: err });
    }
    if (parsed?.format !== SNAPSHOT_FORMAT || parsed.bankId !== bankId || typeof parsed.state !== 'object') {
      throw new BankStoreError(`bank '${bankId}': ${this.file(bankId)} is not a ${SNAPSHOT_FORMAT} snapshot of this bank`);
    }
    return fromSnapshot(parsed.state);
  }

  private async save(bankId: string, state: MockCoreState): Promise<void> {
    this.dirReady ??= mkdir(this.opts.dataDir!, { recursive: true, mode: 0o700 }).then(
      () => undefined,
      (err: unknown) => {
        this.dirReady = undefined;
        throw err;
      },
    );
    await this.dirReady;
    const file: SnapshotFile = { format: SNAPSHOT_FORMAT, bankId, savedAt: new Date().toISOString(), state: toSnapshot(state) };
    await writeDurably(this.file(bankId), `${JSON.stringify(file, null, 2)}\n`);
  }

  private async banksOnDisk(): Promise<string[]> {
    if (!this.opts.dataDir) return [];
    try {
      const names = await readdir(this.opts.dataDir);
      return names.filter((n) => n.endsWith('.json')).map((n) => n.slice(0, -5)).filter((id) => BANK_ID.test(id));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
  }
}
