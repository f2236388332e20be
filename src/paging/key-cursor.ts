// Keyset paging of the lists ordered by a unique key (tenants by id, users by username, operator keys by
// name, channels by id): a page is the `limit` rows after the key its cursor names, so a row added or removed
// while a client pages never shifts the pages it has not seen yet (decision 0105). The cursor is opaque to
// clients: base64url of `{"after":"<key>"}`, the last key of the page shown, and only the canonical spelling
// this service issues is accepted back.
import type { FieldError } from '../../schemas/common.js';
import { PAGE_DEFAULT, PAGE_MAX, type PageQuery } from '../../schemas/page.js';

/** A page: its rows and the cursor of the next one, null on the last. */
export interface KeyPage<T> {
  items: T[];
  nextCursor: string | null;
}

/** The longest key a cursor may name (a username: 128 characters). */
const KEY_MAX = 256;

export const encodeKeyCursor = (after: string): string => Buffer.from(JSON.stringify({ after }), 'utf8').toString('base64url');

/** The key a cursor names, or null when it is not a cursor this service issued (or names no key of this list). */
export function decodeKeyCursor(cursor: string, isKey: (key: string) => boolean = () => true): string | null {
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    const after = (parsed as { after?: unknown } | null)?.after;
    if (typeof after !== 'string' || after.length === 0 || after.length > KEY_MAX || encodeKeyCursor(after) !== cursor || !isKey(after)) return null;
    return after;
  } catch {
    return null;
  }
}

/** A paged list's query errors: `limit` out of range (`Min`/`Max`), a `cursor` the list did not issue. */
export function pageQueryErrors(
  q: { limit?: number | string; cursor?: string },
  objectName: string,
  cursorValid: (cursor: string) => boolean,
  max: number = PAGE_MAX,
): FieldError[] {
  const errors: FieldError[] = [];
  if (q.limit !== undefined) {
    const n = Number(q.limit);
    if (n < 1) errors.push({ field: 'limit', message: 'Min', objectName });
    else if (n > max) errors.push({ field: 'limit', message: 'Max', objectName });
  }
  if (q.cursor !== undefined && !cursorValid(q.cursor)) errors.push({ field: 'cursor', message: 'Invalid', objectName });
  return errors;
}

/** Whether a cursor is one of a key-paged list whose keys `isKey` accepts. */
export const keyCursorOf =
  (isKey: (key: string) => boolean) =>
  (cursor: string): boolean =>
    decodeKeyCursor(cursor, isKey) !== null;

/** The page size and the key to start after, from a query pageQueryErrors accepted. */
export function pageBounds(q: PageQuery): { limit: number; after: string | null } {
  return {
    limit: q.limit === undefined ? PAGE_DEFAULT : Number(q.limit),
    after: q.cursor === undefined ? null : decodeKeyCursor(q.cursor),
  };
}

/** The page from `LIMIT limit + 1` rows: the extra row only says a next page exists. */
export function keyPage<R, T>(rows: R[], limit: number, keyOf: (row: R) => string, view: (row: R) => T): KeyPage<T> {
  const shown = rows.slice(0, limit);
  const last = shown[shown.length - 1];
  return { items: shown.map(view), nextCursor: rows.length > limit && last !== undefined ? encodeKeyCursor(keyOf(last)) : null };
}
