// The Hsm interface: PIN keys held by a security module, PIN blocks translated between them inside it.
import {
  PinBlockError,
  isPinBlockFormat,
  keyTypeFits,
  parsePinBlockHex,
  toHex,
  translateEncipheredPinBlock,
  type BlockCipher,
  type PinBlockFormat,
  type PinKeyType,
  type RandomSource,
} from '../pin-block.js';

export type HsmKeyType = PinKeyType;
export { PIN_KEY_TYPES as HSM_KEY_TYPES } from '../pin-block.js';

export interface TranslatePinBlockInput {
  /** Hex of the block enciphered under `fromKeyId`. */
  pinBlock: string;
  format: PinBlockFormat;
  /** The card's PAN: formats 0 and 3 XOR it into the block, format 4 mixes it in between two encipherments. */
  pan: string;
  fromKeyId: string;
  toKeyId: string;
  /** Format of the result; defaults to `format`. */
  toFormat?: PinBlockFormat | undefined;
}

export interface TranslatePinBlockResult {
  /** Hex (upper case) of the block enciphered under `keyId`. */
  pinBlock: string;
  format: PinBlockFormat;
  keyId: string;
}

/**
 * One tenant's PIN keys, never in clear outside; the PIN is clear only inside `translatePinBlock`.
 * A malformed block throws `PinBlockError`, key problems `HsmError`.
 */
export interface Hsm {
  translatePinBlock(input: TranslatePinBlockInput): Promise<TranslatePinBlockResult>;
  /** Stores a key given in clear (development, tests, demo keys). A production HSM imports under a KEK. */
  importKey(keyId: string, type: HsmKeyType, key: Uint8Array): Promise<void>;
  generateKey(keyId: string, type: HsmKeyType): Promise<void>;
  /** The key's type, or null when the HSM holds no key of that id. */
  keyType(keyId: string): Promise<HsmKeyType | null>;
  close(): Promise<void>;
}

/** Gives each tenant its own `Hsm`: key ids are scoped by tenant, so one tenant never reaches another's keys. */
export interface HsmProvider {
  readonly kind: 'software' | 'pkcs11';
  forTenant(tenantId: string): Hsm;
  close(): Promise<void>;
}

export type HsmErrorReason = 'unknown-key' | 'key-exists' | 'key-type' | 'key-id' | 'unavailable';

/** A key problem (unknown, duplicate, wrong type for the format) or a module that failed. No secret in it. */
export class HsmError extends Error {
  /** The key the error is about, when it is about one. */
  readonly keyId: string | undefined;
  constructor(
    readonly reason: HsmErrorReason,
    message: string,
    options?: ErrorOptions & { keyId?: string },
  ) {
    super(message, options);
    this.name = 'HsmError';
    this.keyId = options?.keyId;
  }
}

const KEY_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export function checkKeyId(keyId: string): void {
  if (typeof keyId !== 'string' || !KEY_ID.test(keyId)) {
    throw new HsmError('key-id', 'A key id is 1 to 64 letters, digits, dots, dashes or underscores, starting with a letter or digit');
  }
}

/** Refuses key material that is the wrong length or, for 2-key TDES, degenerate (K1 = K2 is single DES). */
export function checkKeyMaterial(type: HsmKeyType, key: Uint8Array): void {
  const bytes = type === 'aes256' ? 32 : 16;
  if (key.length !== bytes) throw new HsmError('key-type', `A ${type} key is ${bytes} bytes`);
  if (type === 'tdes2' && Buffer.compare(Buffer.from(key.subarray(0, 8)), Buffer.from(key.subarray(8))) === 0) {
    throw new HsmError('key-type', 'A 2-key TDES key whose halves are equal is single DES and is refused');
  }
}

/** A key opened for one translation: its cipher and, when it holds clear material, a way to wipe it. */
export interface OpenedKey {
  type: HsmKeyType;
  cipher: BlockCipher;
  wipe?(): void;
}

/** The translation every HSM shares: check, open both keys, decipher → validate → re-encode → encipher. */
export async function translateWith(
  input: TranslatePinBlockInput,
  open: (keyId: string) => Promise<OpenedKey>,
  random?: RandomSource,
): Promise<TranslatePinBlockResult> {
  const toFormat = input.toFormat ?? input.format;
  if (!isPinBlockFormat(input.format) || !isPinBlockFormat(toFormat)) throw new PinBlockError('format');
  const block = parsePinBlockHex(input.pinBlock, input.format);
  const from = await open(input.fromKeyId);
  try {
    if (!keyTypeFits(from.type, input.format)) {
      throw new HsmError('key-type', `Key '${input.fromKeyId}' is ${from.type}; format ${input.format} needs ${needs(input.format)}`, { keyId: input.fromKeyId });
    }
    const to = await open(input.toKeyId);
    try {
      if (!keyTypeFits(to.type, toFormat)) {
        throw new HsmError('key-type', `Key '${input.toKeyId}' is ${to.type}; format ${toFormat} needs ${needs(toFormat)}`, { keyId: input.toKeyId });
      }
      const out = translateEncipheredPinBlock(block, input.pan, { format: input.format, cipher: from.cipher }, { format: toFormat, cipher: to.cipher }, random);
      return { pinBlock: toHex(out), format: toFormat, keyId: input.toKeyId };
    } finally {
      to.wipe?.();
    }
  } finally {
    from.wipe?.();
  }
}

const needs = (format: PinBlockFormat) => (format === 4 ? 'an AES key (aes128 or aes256)' : 'a 2-key TDES key (tdes2)');
