// ISO 9564-1 PIN blocks for PUT /v1/cards/{cardId}/pin: formats 0 and 3 (2-key triple-DES, des.js: Web Crypto has
// no DES) and 4 (AES, Web Crypto), enciphered under the PIN key shared with the gateway; runs in any runtime.
import des from 'des.js';

export interface PinBlockRequest {
  pin: string;
  pan: string;
  /** The PIN key in hex. */
  keyHex: string;
  format: 0 | 3 | 4;
  /** Where fill digits come from; crypto.getRandomValues unless a test fixes them. */
  random?: (size: number) => Uint8Array;
}

type Bytes = Uint8Array<ArrayBuffer>;

const randomBytes = (size: number) => globalThis.crypto.getRandomValues(new Uint8Array(size));

const fromHex = (hex: string) => Uint8Array.from(hex.match(/../g) ?? [], (byte) => parseInt(byte, 16));
const toHex = (bytes: Bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('').toUpperCase();
const xor = (a: Bytes, b: Bytes) => a.map((byte, i) => byte ^ b[i]!);

// Web Crypto has no ECB: the first block of CBC under a zero IV is the block's ECB encipherment.
async function aesBlock(key: Bytes, block: Bytes): Promise<Bytes> {
  const subtle = globalThis.crypto.subtle;
  const cryptoKey = await subtle.importKey('raw', key, 'AES-CBC', false, ['encrypt']);
  return new Uint8Array(await subtle.encrypt({ name: 'AES-CBC', iv: new Uint8Array(16) }, cryptoKey, block)).slice(0, 16);
}

/** One 8-byte block under 2-key triple-DES (K1 K2 K1), ECB. */
function tdesBlock(key: Bytes, block: Bytes): Bytes {
  const cipher = des.EDE.create({ type: 'encrypt', key: [...key, ...key.subarray(0, 8)], padding: false });
  return Uint8Array.from([...cipher.update(block), ...cipher.final()]);
}

/** Resolves to the enciphered PIN block as upper-case hex. */
export async function buildPinBlock({ pin, pan, keyHex, format, random = randomBytes }: PinBlockRequest): Promise<string> {
  if (!/^\d{4,12}$/.test(pin)) throw new Error('The PIN must be 4 to 12 digits');
  if (!/^\d{12,19}$/.test(pan)) throw new Error('The PAN must be 12 to 19 digits');
  if (!/^(?:[0-9A-Fa-f]{2})+$/.test(keyHex)) throw new Error('The key must be hex digits');
  const key = fromHex(keyHex);
  const lengthNibble = pin.length.toString(16).toUpperCase();

  if (format === 4) {
    if (key.length !== 16 && key.length !== 32) throw new Error('Format 4 needs an AES-128 or AES-256 key (32 or 64 hex digits)');
    // PIN field: 4, PIN length, PIN, 'A' fill to 8 bytes, then 8 random bytes.
    const pinField = new Uint8Array([...fromHex(`4${lengthNibble}${pin}`.padEnd(16, 'A')), ...random(8).subarray(0, 8)]);
    // PAN field: PAN length − 12, the PAN, zeros to 16 bytes.
    const panField = fromHex(`${pan.length - 12}${pan}`.padEnd(32, '0'));
    // ISO 9564-1:2017: encipher the PIN field, XOR the PAN field, encipher again.
    return toHex(await aesBlock(key, xor(await aesBlock(key, pinField), panField)));
  }

  if (key.length !== 16) throw new Error('Formats 0 and 3 need a 2-key triple-DES key (32 hex digits)');
  // Fill: F for format 0; random digits A–F for format 3.
  let fill = format === 0 ? 'F'.repeat(14 - pin.length) : '';
  while (fill.length < 14 - pin.length) {
    const b = random(1)[0]!;
    if (b < 252) fill += (10 + (b % 6)).toString(16).toUpperCase(); // unbiased: 252 = 42 × 6
  }
  const pinField = fromHex(`${format}${lengthNibble}${pin}${fill}`);
  // PAN field: 0000 and the 12 rightmost PAN digits before the check digit.
  const panField = fromHex(`0000${pan.slice(0, -1).slice(-12).padStart(12, '0')}`);
  return toHex(tdesBlock(key, xor(pinField, panField)));
}
