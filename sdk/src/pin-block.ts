// ISO 9564-1 PIN blocks as a bank's channel builds them before PUT /v1/cards/{cardId}/pin: formats 0 and 3
// (2-key triple-DES, 8-byte blocks) and 4 (AES, 16-byte blocks), enciphered under the PIN key shared with the
// gateway. Only node:crypto: the gateway's own PIN-block code (src/crypto/pin-block.ts) translates what this builds.
import { createCipheriv, randomBytes } from 'node:crypto';

export interface PinBlockRequest {
  pin: string;
  pan: string;
  /** The PIN key in hex. */
  keyHex: string;
  format: 0 | 3 | 4;
  /** Where fill digits come from; crypto.randomBytes unless a test fixes them. */
  random?: (size: number) => Buffer;
}

/** One block enciphered in ECB under the key: DES-EDE for 8-byte blocks, AES for 16-byte ones. */
function encipher(key: Buffer, block: Buffer): Buffer {
  const algorithm = block.length === 8 ? 'des-ede-ecb' : key.length === 16 ? 'aes-128-ecb' : 'aes-256-ecb';
  const cipher = createCipheriv(algorithm, key, null);
  cipher.setAutoPadding(false);
  return Buffer.concat([cipher.update(block), cipher.final()]);
}

const xor = (a: Buffer, b: Buffer) => Buffer.from(a.map((byte, i) => byte ^ b[i]!));

/** Returns the enciphered PIN block as upper-case hex. */
export function buildPinBlock({ pin, pan, keyHex, format, random = randomBytes }: PinBlockRequest): string {
  if (!/^\d{4,12}$/.test(pin)) throw new Error('The PIN must be 4 to 12 digits');
  if (!/^\d{12,19}$/.test(pan)) throw new Error('The PAN must be 12 to 19 digits');
  const key = Buffer.from(keyHex, 'hex');
  const lengthNibble = pin.length.toString(16).toUpperCase();

  if (format === 4) {
    if (key.length !== 16 && key.length !== 32) throw new Error('Format 4 needs an AES-128 or AES-256 key (32 or 64 hex digits)');
    // PIN field: 4, PIN length, PIN, 'A' fill to 8 bytes, then 8 random bytes.
    const pinField = Buffer.concat([Buffer.from(`4${lengthNibble}${pin}`.padEnd(16, 'A'), 'hex'), random(8)]);
    // PAN field: PAN length − 12, the PAN, zeros to 16 bytes.
    const panField = Buffer.from(`${pan.length - 12}${pan}`.padEnd(32, '0'), 'hex');
    // ISO 9564-1:2017: encipher the PIN field, XOR the PAN field, encipher again.
    return encipher(key, xor(encipher(key, pinField), panField)).toString('hex').toUpperCase();
  }

  if (key.length !== 16) throw new Error('Formats 0 and 3 need a 2-key triple-DES key (32 hex digits)');
  // Fill: F for format 0; random digits A–F for format 3.
  let fill = format === 0 ? 'F'.repeat(14 - pin.length) : '';
  while (fill.length < 14 - pin.length) {
    const b = random(1)[0]!;
    if (b < 252) fill += (10 + (b % 6)).toString(16).toUpperCase(); // unbiased: 252 = 42 × 6
  }
  const pinField = Buffer.from(`${format}${lengthNibble}${pin}${fill}`, 'hex');
  // PAN field: 0000 and the 12 rightmost PAN digits before the check digit.
  const panField = Buffer.from(`0000${pan.slice(0, -1).slice(-12).padStart(12, '0')}`, 'hex');
  return encipher(key, xor(pinField, panField)).toString('hex').toUpperCase();
}

