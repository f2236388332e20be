// Cursors of lists paged newest first by a sequence column: opaque to clients, and only what this service
// issued is accepted back (a hand-made one is refused as invalid).
export const encodeSeqCursor = (seq: string): string => Buffer.from(JSON.stringify({ before: seq })).toString('base64url');

/** The sequence a cursor names, or null when it is not a cursor this service issued. */
export function decodeSeqCursor(cursor: string): string | null {
  try {
    const { before } = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { before?: unknown };
    if (typeof before !== 'string' || !/^\d{1,18}$/.test(before) || encodeSeqCursor(before) !== cursor) return null;
    return before;
  } catch {
    return null;
  }
}
