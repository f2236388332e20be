import { randomBytes } from 'node:crypto';
import { UUID, uuidv7obj } from 'uuidv7';
import { describe, expect, it } from 'vitest';
import { hexText, uuidText, uuidv7Hex, uuidv7Text } from '../../src/audit/uuid-text.js';

describe('uuidText (decision 0439)', () => {
  it('writes any 16 bytes exactly as the uuidv7 package does (toString, and toHex as hexText)', () => {
    const cases = [new Uint8Array(16), new Uint8Array(16).fill(0xff), ...Array.from({ length: 5000 }, () => new Uint8Array(randomBytes(16)))];
    for (const bytes of cases) expect(uuidText(bytes)).toBe(UUID.ofInner(bytes).toString());
    for (const bytes of cases) expect(hexText(bytes)).toBe(UUID.ofInner(bytes).toHex());
    for (let i = 0; i < 1000; i++) {
      const id = uuidv7obj();
      expect(uuidText(id.bytes)).toBe(id.toString());
    }
  });

  it('gives version-7 ids in increasing order, each its own string', () => {
    const ids = Array.from({ length: 2000 }, () => uuidv7Text());
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('uuidv7Hex: a version-7 id as 32 hex digits, in increasing order, each its own string (decision 0452)', () => {
    const ids = Array.from({ length: 2000 }, () => uuidv7Hex());
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{12}7[0-9a-f]{3}[89ab][0-9a-f]{15}$/);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
