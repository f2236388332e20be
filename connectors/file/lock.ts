// One writer per file-core directory: proper-lockfile's lock (an atomic mkdir kept fresh by its holder),
// and beside it the holder's pid and host, so that a lock left by a killed process on this host is
// recovered at once instead of after proper-lockfile's staleness period.
import { hostname } from 'node:os';
import { join } from 'node:path';
import { readFile, rm, stat, utimes } from 'node:fs/promises';
import lockfile from 'proper-lockfile';
import { ConnectorUnavailableError } from '../contract.js';
import { writeDurably } from '../shared/durable-write.js';

/** The lock itself (a directory proper-lockfile creates and removes). */
export const LOCK_FILE = 'LOCK';
/** Who holds it: pid, host, since, and the lock directory's inode (an owner file of an older lock is ignored). */
export const OWNER_FILE = 'LOCK.owner';
/** A holder on another host (a shared volume) is judged by mtime only: its lock is stale after this long without refresh. */
const STALE_MS = 30_000;
const POLL_MS = 25;

interface LockInfo {
  pid: number;
  host: string;
  since: string;
  ino: number;
}

export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Directories this process holds: an own-pid owner file of a lock not held here was left by an earlier process with our pid. */
const held = new Set<string>();

async function readLock(dir: string): Promise<LockInfo | null> {
  try {
    const info = JSON.parse(await readFile(join(dir, OWNER_FILE), 'utf8')) as LockInfo;
    return typeof info.pid === 'number' && typeof info.ino === 'number' ? info : null;
  } catch {
    return null;
  }
}

/** The holder of the lock there now; an owner file written for an older lock says nothing of this one. */
async function holderOf(dir: string): Promise<LockInfo | null> {
  const [info, lock] = await Promise.all([readLock(dir), stat(join(dir, LOCK_FILE)).catch(() => null)]);
  return info && lock && info.ino === lock.ino ? info : null;
}

/** True when the lock in `dir` was left by a process of this host that is gone. */
async function leftByTheDead(dir: string): Promise<boolean> {
  const info = await holderOf(dir);
  if (!info || info.host !== hostname()) return false;
  if (info.pid === process.pid) return !held.has(dir);
  return !pidAlive(info.pid);
}

export class DirLock {
  private released = false;

  private constructor(
    readonly dir: string,
    private readonly unlock: () => Promise<void>,
  ) {}

  /** Takes the directory's lock, waiting up to `timeoutMs`; a dead holder's lock is marked stale to be broken. */
  static async acquire(dir: string, timeoutMs: number, onCompromised: (err: Error) => void = () => undefined): Promise<DirLock> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        const unlock = await lockfile.lock(dir, { lockfilePath: join(dir, LOCK_FILE), stale: STALE_MS, retries: 0, realpath: false, onCompromised });
        held.add(dir);
        const { ino } = await stat(join(dir, LOCK_FILE));
        const info: LockInfo = { pid: process.pid, host: hostname(), since: new Date().toISOString(), ino };
        await writeDurably(join(dir, OWNER_FILE), JSON.stringify(info));
        return new DirLock(dir, unlock);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ELOCKED') throw err;
      }
      if (await leftByTheDead(dir)) {
        await utimes(join(dir, LOCK_FILE), 0, 0).catch(() => undefined);
        continue;
      }
      if (Date.now() >= deadline) throw busy(dir, await holderOf(dir));
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  }

  /** Gives the lock up; the owner file goes first, so it never names a lock that is not there. */
  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    await rm(join(this.dir, OWNER_FILE), { force: true });
    held.delete(this.dir);
    await this.unlock().catch(() => undefined);
  }
}

function busy(dir: string, current: LockInfo | null): ConnectorUnavailableError {
  if (!current) {
    return new ConnectorUnavailableError(
      `File core directory ${dir} is locked by another process; one process at a time may open it (stop that process, or point this tenant at another directory).`,
    );
  }
  return new ConnectorUnavailableError(
    `File core directory ${dir} is locked by pid ${current.pid} on ${current.host} since ${current.since}; ` +
      'one process at a time may open it (stop that process, or point this tenant at another directory).',
  );
}
