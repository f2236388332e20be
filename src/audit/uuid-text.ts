// uuidv7()'s text built in one string, not 36 concatenations (about 1 KB of garbage per id, decision 0439).
import { uuidv7obj } from 'uuidv7';

const DIGIT = Uint8Array.from('0123456789abcdef', (c) => c.charCodeAt(0));
const DASH = 0x2d;
const TEXT = Buffer.alloc(36);

/** The 8-4-4-4-12 lowercase form of 16 bytes (the package's UUID.toString()), all 36 bytes of TEXT rewritten. */
export function uuidText(bytes: Uint8Array): string {
  let o = 0;
  for (let i = 0; i < 16; i++) {
    const b = bytes[i]!;
    TEXT[o++] = DIGIT[b >>> 4]!;
    TEXT[o++] = DIGIT[b & 0xf]!;
    if (i === 3 || i === 5 || i === 7 || i === 9) TEXT[o++] = DASH;
  }
  return TEXT.toString('latin1', 0, 36);
}

export const uuidv7Text = (): string => uuidText(uuidv7obj().bytes);

/** A uuidv7's 32 hex digits without dashes: ids that sort by creation, so a key index grows at its end (decision 0452). */
export const uuidv7Hex = (): string => hexText(uuidv7obj().bytes);

/** 16 bytes as the package's toHex() writes them, by Buffer's own encoder (no string built a digit at a time). */
export const hexText = (bytes: Uint8Array): string => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
