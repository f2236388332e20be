// The one atomic file write: write-file-atomic (temp file, fsync, rename) plus an fsync of the directory,
// without which the rename itself may not survive a power loss.
import { open } from 'node:fs/promises';
import { dirname } from 'node:path';
import writeFileAtomic from 'write-file-atomic';

/** Temp names write-file-atomic gives `file` (`<file>.<uint32>`): what a killed writer may leave behind. */
export const isAtomicTemp = (name: string, file: string): boolean => name.startsWith(`${file}.`) && /^\d+$/.test(name.slice(file.length + 1));

/** Writes `data` so that a crash leaves the old or the new content, never a torn one, and the new one durably. */
export async function writeDurably(file: string, data: string): Promise<void> {
  await writeFileAtomic(file, data, { mode: 0o600, fsync: true });
  const dir = await open(dirname(file), 'r');
  try {
    await dir.sync();
  } catch {
    // Some filesystems refuse fsync on a directory; the rename is still atomic there.
  } finally {
    await dir.close();
  }
}
