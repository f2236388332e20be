// One writer per file-core directory: an exclusive lock file naming its holder, with stale-lock recovery.
import { randomBytes } from 'node:crypto';
import { link, readFile, stat, unlink, writeFile } from 'node:fs/promises';
import { unlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { ConnectorUnavailableError } from '../contract.js';

export const LOCK_FILE = 'LOCK';
const BREAK_FILE = 'LOCK.break';
/** A breaker is held for microseconds; one older than this was left by a killed process. */
const BREAK_STALE_MS = 5_000;
const POLL_MS = 25;

export interface LockInfo {
  pid: number;
  host: string;
  nonce: string;
  since: string;
}

/** Locks this process holds, by lock path → nonce: lets an own-pid lock be told apart from a stale one. */
const held = new Map<string, string>();
// Locks of a process that exits without close() are released on the way out (SIGKILL cannot be caught:
// that case is the stale-lock check below).
process.once('exit', () => {
  for (const path of held.keys()) {
    try {
      unlinkSync(path);
    } catch {
      // already gone
    }
  }
});

export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export async function readLock(dir: string): Promise<LockInfo | null | 'unreadable'> {
  let text: string;
  try {
    text = await readFile(join(dir, LOCK_FILE), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  try {
    const info = JSON.parse(text) as LockInfo;
    return typeof info.pid === 'number' && typeof info.nonce === 'string' ? info : 'unreadable';
  } catch {
    return 'unreadable';
  }
}

/** A lock is stale when its holder on this host is gone. A lock from another host is never judged stale. */
function isStale(path: string, info: LockInfo): boolean {
  if (info.host !== hostname()) return false;
  if (info.pid === process.pid) return held.get(path) !== info.nonce;
  return !pidAlive(info.pid);
}

export class DirLock {
  private released = false;

  private constructor(
    readonly dir: string,
    readonly info: LockInfo,
  ) {}

  /**
   * Takes the directory's lock, waiting up to `timeoutMs` for a live holder to let go. The lock file is
   * written under a temporary name and hard-linked into place, so it never exists half-written.
   */
  static async acquire(dir: string, timeoutMs: number): Promise<DirLock> {
    const path = join(dir, LOCK_FILE);
    const info: LockInfo = { pid: process.pid, host: hostname(), nonce: randomBytes(8).toString('hex'), since: new Date().toISOString() };
    const tmp = join(dir, `${LOCK_FILE}.tmp-${process.pid}-${info.nonce}`);
    await writeFile(tmp, JSON.stringify(info), { flag: 'wx' });
    const deadline = Date.now() + timeoutMs;
    try {
      for (;;) {
        try {
          await link(tmp, path);
          held.set(path, info.nonce);
          return new DirLock(dir, info);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        }
        const current = await readLock(dir);
        if (current === null) continue;
        if (current !== 'unreadable' && isStale(path, current)) {
          await breakStale(dir, current);
          continue;
        }
        if (Date.now() >= deadline) throw busy(dir, current);
        await new Promise((r) => setTimeout(r, POLL_MS));
      }
    } finally {
      await unlink(tmp).catch(() => undefined);
    }
  }

  /** Removes the lock file if it is still this holder's. */
  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    const path = join(this.dir, LOCK_FILE);
    const current = await readLock(this.dir).catch(() => null);
    if (current && current !== 'unreadable' && current.nonce === this.info.nonce) await unlink(path).catch(() => undefined);
    if (held.get(path) === this.info.nonce) held.delete(path);
  }
}

function busy(dir: string, current: LockInfo | 'unreadable'): ConnectorUnavailableError {
  if (current === 'unreadable') {
    return new ConnectorUnavailableError(
      `File core directory ${dir} is locked and its lock file cannot be read; remove ${join(dir, LOCK_FILE)} once no process uses the directory.`,
    );
  }
  return new ConnectorUnavailableError(
    `File core directory ${dir} is locked by pid ${current.pid} on ${current.host} since ${current.since}; ` +
      'one process at a time may open it (stop that process, or point this tenant at another directory).',
  );
}

/**
 * Removes a stale lock. Two processes may find the same stale lock; the breaker file (O_EXCL) makes
 * them take turns, and the nonce re-check stops the second from removing the lock the first just took.
 */
async function breakStale(dir: string, stale: LockInfo): Promise<void> {
  const breaker = join(dir, BREAK_FILE);
  try {
    await writeFile(breaker, String(process.pid), { flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    const s = await stat(breaker).catch(() => null);
    if (s && Date.now() - s.mtimeMs > BREAK_STALE_MS) await unlink(breaker).catch(() => undefined);
    else await new Promise((r) => setTimeout(r, POLL_MS));
    return;
  }
  try {
    const current = await readLock(dir);
    if (current && current !== 'unreadable' && current.nonce === stale.nonce) await unlink(join(dir, LOCK_FILE));
  } finally {
    await unlink(breaker).catch(() => undefined);
  }
}
