// ISO 9564-1 PIN blocks, formats 0, 3 and 4: encoding, strict decoding, encipherment and translation.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

export type PinBlockFormat = 0 | 3 | 4;

/** Key types a PIN key may have: 2-key triple DES (formats 0 and 3) or AES (format 4). */
export const PIN_KEY_TYPES = ['tdes2', 'aes128', 'aes256'] as const;
export type PinKeyType = (typeof PIN_KEY_TYPES)[number];

/** Returns `size` random bytes; tests pass a fixed source to reproduce published vectors. */
export type RandomSource = (size: number) => Uint8Array;

/**
 * A block cipher in ECB over exactly one block, with a key that never leaves it (node:crypto in the
 * software HSM, C_Encrypt/C_Decrypt inside a PKCS#11 token).
 */
export interface BlockCipher {
  readonly blockSize: 8 | 16;
  encrypt(block: Uint8Array): Buffer;
  decrypt(block: Uint8Array): Buffer;
}

export type PinBlockErrorReason =
  | 'format'
  | 'pin'
  | 'pan'
  | 'block-hex'
  | 'block-length'
  | 'key-type'
  | 'control'
  | 'pin-length'
  | 'pin-digit'
  | 'fill';

// Fixed texts: a message never carries the PIN, the block or the PAN.
const MESSAGES: Record<PinBlockErrorReason, string> = {
  format: 'Unsupported PIN block format: 0, 3 and 4 are supported',
  pin: 'A PIN is 4 to 12 decimal digits',
  pan: 'A PAN is 12 to 19 decimal digits',
  'block-hex': 'A PIN block is hexadecimal',
  'block-length': 'The PIN block length does not match its format (8 bytes for formats 0 and 3, 16 for format 4)',
  'key-type': 'The key type does not match the PIN block format (triple DES for formats 0 and 3, AES for format 4)',
  control: 'The PIN block control field does not match its format',
  'pin-length': 'The PIN length field is outside 4 to 12',
  'pin-digit': 'The PIN field holds a non-decimal digit',
  fill: 'The PIN block fill digits are invalid for its format',
};

/** A PIN block that cannot be built or does not decode strictly. `reason` is for tests and operators. */
export class PinBlockError extends Error {
  constructor(readonly reason: PinBlockErrorReason) {
    super(MESSAGES[reason]);
    this.name = 'PinBlockError';
  }
}

const PIN = /^\d{4,12}$/;
const PAN = /^\d{12,19}$/;
const HEX = /^[0-9A-Fa-f]*$/;

export const isPinBlockFormat = (value: unknown): value is PinBlockFormat => value === 0 || value === 3 || value === 4;

/** Bytes of a block in the given format: 8 for the DES-era formats 0 and 3, 16 for the AES format 4. */
export function blockSizeOf(format: PinBlockFormat): 8 | 16 {
  if (!isPinBlockFormat(format)) throw new PinBlockError('format');
  return format === 4 ? 16 : 8;
}

/** Key types whose cipher block fits the format. */
export const keyTypeFits = (type: PinKeyType, format: PinBlockFormat): boolean => (format === 4) === (type !== 'tdes2');

const KEY_BYTES: Record<PinKeyType, number> = { tdes2: 16, aes128: 16, aes256: 32 };

/** A one-block ECB cipher over a clear key held in process memory (software HSM, tests, client example). */
export function softwareCipher(type: PinKeyType, key: Uint8Array): BlockCipher {
  if (key.length !== KEY_BYTES[type]) throw new PinBlockError('key-type');
  const algorithm = type === 'tdes2' ? 'des-ede-ecb' : type === 'aes128' ? 'aes-128-ecb' : 'aes-256-ecb';
  const blockSize = type === 'tdes2' ? 8 : 16;
  const run = (decrypt: boolean, block: Uint8Array): Buffer => {
    if (block.length !== blockSize) throw new PinBlockError('block-length');
    const c = decrypt ? createDecipheriv(algorithm, key, null) : createCipheriv(algorithm, key, null);
    c.setAutoPadding(false);
    return Buffer.concat([c.update(block), c.final()]);
  };
  return { blockSize, encrypt: (b) => run(false, b), decrypt: (b) => run(true, b) };
}

/** Parses a block given as hex, strictly: hex digits only, and the length of the format. */
export function parsePinBlockHex(hex: string, format: PinBlockFormat): Buffer {
  const size = blockSizeOf(format);
  if (typeof hex !== 'string' || !HEX.test(hex)) throw new PinBlockError('block-hex');
  if (hex.length !== size * 2) throw new PinBlockError('block-length');
  return Buffer.from(hex, 'hex');
}

export const toHex = (block: Uint8Array): string => Buffer.from(block).toString('hex').toUpperCase();

function nibblesToBytes(nibbles: Uint8Array): Buffer {
  const out = Buffer.alloc(nibbles.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = (nibbles[2 * i]! << 4) | nibbles[2 * i + 1]!;
  return out;
}

function bytesToNibbles(bytes: Uint8Array): Uint8Array {
  const out = new Uint8Array(bytes.length * 2);
  for (let i = 0; i < bytes.length; i++) {
    out[2 * i] = bytes[i]! >> 4;
    out[2 * i + 1] = bytes[i]! & 0x0f;
  }
  return out;
}

function xor(a: Uint8Array, b: Uint8Array): Buffer {
  const out = Buffer.alloc(a.length);
  for (let i = 0; i < a.length; i++) out[i] = a[i]! ^ b[i]!;
  return out;
}

function checkPan(pan: string): void {
  if (typeof pan !== 'string' || !PAN.test(pan)) throw new PinBlockError('pan');
}

/**
 * The PAN field. Formats 0 and 3: `0000` and the 12 rightmost PAN digits excluding the check digit.
 * Format 4 (ISO 9564-1:2017): one nibble M = PAN length − 12, the PAN, zeros to 16 bytes.
 */
export function panField(pan: string, format: PinBlockFormat): Buffer {
  checkPan(pan);
  const size = blockSizeOf(format);
  if (format === 4) {
    const m = pan.length - 12;
    return Buffer.from(`${m}${pan}`.padEnd(size * 2, '0'), 'hex');
  }
  return Buffer.from(`0000${pan.slice(0, -1).slice(-12)}`, 'hex');
}

/** Random nibbles in 10..15 (A–F), without modulo bias. */
function randomFillNibbles(count: number, random: RandomSource): Uint8Array {
  const out = new Uint8Array(count);
  let filled = 0;
  while (filled < count) {
    for (const b of random(count - filled + 4)) {
      if (filled === count) break;
      if (b < 252) out[filled++] = 10 + (b % 6);
    }
  }
  return out;
}

/**
 * The plain PIN field from PIN digit values (0–9). Format 0: `0 N PIN F…F`; format 3: `3 N PIN` and
 * random A–F fill; format 4: `4 N PIN` and `A` fill to 8 bytes, then 8 random bytes.
 */
function pinFieldFromDigits(digits: Uint8Array, format: PinBlockFormat, random: RandomSource): Buffer {
  const fieldNibbles = 16;
  const nibbles = new Uint8Array(fieldNibbles);
  try {
    nibbles[0] = format;
    nibbles[1] = digits.length;
    nibbles.set(digits, 2);
    const fillFrom = 2 + digits.length;
    if (format === 0) nibbles.fill(0x0f, fillFrom);
    else if (format === 3) nibbles.set(randomFillNibbles(fieldNibbles - fillFrom, random), fillFrom);
    else nibbles.fill(0x0a, fillFrom);
    const field = nibblesToBytes(nibbles);
    if (format !== 4) return field;
    const tail = random(8);
    if (tail.length !== 8) throw new Error('The random source returned too few bytes');
    const out = Buffer.concat([field, tail]);
    field.fill(0);
    return out;
  } finally {
    nibbles.fill(0);
  }
}

/** The PIN digits of a plain PIN field, checked strictly (control nibble, length 4-12, digits, the format's fill). */
function digitsFromPinField(field: Uint8Array, format: PinBlockFormat): Uint8Array {
  const nibbles = bytesToNibbles(field.subarray(0, 8));
  try {
    if (nibbles[0] !== format) throw new PinBlockError('control');
    const n = nibbles[1]!;
    if (n < 4 || n > 12) throw new PinBlockError('pin-length');
    for (let i = 2; i < 2 + n; i++) if (nibbles[i]! > 9) throw new PinBlockError('pin-digit');
    for (let i = 2 + n; i < 16; i++) {
      const f = nibbles[i]!;
      const ok = format === 0 ? f === 0x0f : format === 3 ? f >= 0x0a : f === 0x0a;
      if (!ok) throw new PinBlockError('fill');
    }
    return nibbles.slice(2, 2 + n);
  } finally {
    nibbles.fill(0);
  }
}

function pinDigits(pin: string): Uint8Array {
  if (typeof pin !== 'string' || !PIN.test(pin)) throw new PinBlockError('pin');
  return Uint8Array.from(pin, (c) => c.charCodeAt(0) - 48);
}

const defaultRandom: RandomSource = (size) => randomBytes(size);

/** The clear form from digit values: formats 0 and 3, PIN field ⊕ PAN field; format 4, the plain PIN field. */
function clearFromDigits(digits: Uint8Array, pan: string, format: PinBlockFormat, random: RandomSource): Buffer {
  const pf = panField(pan, format);
  const field = pinFieldFromDigits(digits, format, random);
  if (format === 4) return field;
  const clear = xor(field, pf);
  field.fill(0);
  return clear;
}

function digitsFromClear(clear: Uint8Array, pan: string, format: PinBlockFormat): Uint8Array {
  const size = blockSizeOf(format);
  const pf = panField(pan, format);
  if (clear.length !== size) throw new PinBlockError('block-length');
  if (format === 4) return digitsFromPinField(clear, format);
  const field = xor(clear, pf);
  try {
    return digitsFromPinField(field, format);
  } finally {
    field.fill(0);
  }
}

/**
 * Encodes a PIN for a card. Formats 0 and 3 give the clear ISO block (PIN field ⊕ PAN field); format 4
 * gives the plain PIN field, since its PAN field is applied between two encipherments.
 */
export function encodePinBlock(pin: string, pan: string, format: PinBlockFormat, random: RandomSource = defaultRandom): Buffer {
  blockSizeOf(format);
  const digits = pinDigits(pin);
  try {
    return clearFromDigits(digits, pan, format, random);
  } finally {
    digits.fill(0);
  }
}

/** Decodes the clear form of `encodePinBlock`, strictly, for the given card. */
export function decodePinBlock(clear: Uint8Array, pan: string, format: PinBlockFormat): string {
  const digits = digitsFromClear(clear, pan, format);
  try {
    return String.fromCharCode(...Array.from(digits, (d) => d + 48));
  } finally {
    digits.fill(0);
  }
}

function checkCipher(cipher: BlockCipher, format: PinBlockFormat): void {
  if (cipher.blockSize !== blockSizeOf(format)) throw new PinBlockError('key-type');
}

/** Enciphers a clear form. Format 4 (ISO 9564-1:2017): E(K, E(K, PIN field) ⊕ PAN field). */
function encipherPinBlock(clear: Uint8Array, pan: string, format: PinBlockFormat, cipher: BlockCipher): Buffer {
  checkCipher(cipher, format);
  if (clear.length !== blockSizeOf(format)) throw new PinBlockError('block-length');
  if (format !== 4) return cipher.encrypt(clear);
  const inner = cipher.encrypt(clear);
  const mixed = xor(inner, panField(pan, format));
  return cipher.encrypt(mixed);
}

/** Deciphers to the clear form, without validating it (see `decodePinBlock`). */
function decipherPinBlock(block: Uint8Array, pan: string, format: PinBlockFormat, cipher: BlockCipher): Buffer {
  checkCipher(cipher, format);
  if (block.length !== blockSizeOf(format)) throw new PinBlockError('block-length');
  if (format !== 4) return cipher.decrypt(block);
  const mixed = cipher.decrypt(block);
  const inner = xor(mixed, panField(pan, format));
  return cipher.decrypt(inner);
}

/** Encodes and enciphers: what a client (or a test) sends. */
export function encryptPinBlock(pin: string, pan: string, format: PinBlockFormat, cipher: BlockCipher, random: RandomSource = defaultRandom): Buffer {
  checkCipher(cipher, format);
  const clear = encodePinBlock(pin, pan, format, random);
  try {
    return encipherPinBlock(clear, pan, format, cipher);
  } finally {
    clear.fill(0);
  }
}

/** Deciphers and decodes strictly. Tests and tools only: the gateway translates without a PIN string. */
export function decryptPinBlock(block: Uint8Array, pan: string, format: PinBlockFormat, cipher: BlockCipher): string {
  const clear = decipherPinBlock(block, pan, format, cipher);
  try {
    return decodePinBlock(clear, pan, format);
  } finally {
    clear.fill(0);
  }
}

export interface TranslateSide {
  format: PinBlockFormat;
  cipher: BlockCipher;
}

/**
 * Translates an enciphered block to another key and format for the same card, validating strictly; the PIN
 * exists only as digits in buffers zeroed before this returns, never as a string.
 */
export function translateEncipheredPinBlock(
  block: Uint8Array,
  pan: string,
  from: TranslateSide,
  to: TranslateSide,
  random: RandomSource = defaultRandom,
): Buffer {
  checkCipher(from.cipher, from.format);
  checkCipher(to.cipher, to.format);
  checkPan(pan);
  const clear = decipherPinBlock(block, pan, from.format, from.cipher);
  let digits: Uint8Array | undefined;
  let reencoded: Buffer | undefined;
  try {
    digits = digitsFromClear(clear, pan, from.format);
    reencoded = clearFromDigits(digits, pan, to.format, random);
    return encipherPinBlock(reencoded, pan, to.format, to.cipher);
  } finally {
    clear.fill(0);
    digits?.fill(0);
    reencoded?.fill(0);
  }
}
