// A PKCS#11 HSM: PIN keys as non-extractable secret keys in a token, used through C_Encrypt/C_Decrypt.
import type * as Pkcs11Types from 'pkcs11js';
import { PinBlockError, type BlockCipher, type RandomSource } from '../pin-block.js';
import {
  HSM_KEY_TYPES,
  HsmError,
  checkKeyId,
  checkKeyMaterial,
  translateWith,
  type Hsm,
  type HsmKeyType,
  type HsmProvider,
  type OpenedKey,
  type TranslatePinBlockInput,
  type TranslatePinBlockResult,
} from './index.js';

type Pkcs11Module = typeof Pkcs11Types;
type Handle = Buffer;

export interface Pkcs11Options {
  /** Path of the vendor's PKCS#11 library (SoftHSM2: /usr/lib/softhsm/libsofthsm2.so). */
  library: string;
  tokenLabel: string;
  pin: string;
  /** Fill digits of formats 3 and 4 (tests pass a fixed source). */
  random?: RandomSource;
}

/** Objects are labelled `cardline/<tenant>/<key id>`: neither part may hold a slash, so labels never collide. */
const labelOf = (tenantId: string, keyId: string) => `cardline/${tenantId}/${keyId}`;

/** Errors after which the session is gone (token removed, module restarted): open a new one and retry. */
const SESSION_LOST = new Set(['CKR_SESSION_HANDLE_INVALID', 'CKR_SESSION_CLOSED', 'CKR_DEVICE_REMOVED', 'CKR_TOKEN_NOT_PRESENT', 'CKR_USER_NOT_LOGGED_IN', 'CKR_DEVICE_ERROR']);
const HANDLE_LOST = new Set(['CKR_OBJECT_HANDLE_INVALID', 'CKR_KEY_HANDLE_INVALID']);

const ckr = (err: unknown): string => /CKR_[A-Z_]+/.exec(String((err as Error)?.message ?? err))?.[0] ?? 'unknown error';

/**
 * Cryptoki's login belongs to the process: a second provider on one library would share or end it,
 * so one provider per library and process, shared by the gateway.
 */
const inUse = new Set<string>();

/** Reads a CK_ULONG attribute (little-endian on the platforms Node runs on). */
const ulong = (value: unknown): number => (Buffer.isBuffer(value) ? value.readUIntLE(0, Math.min(6, value.length)) : Number(value));

/** One logged-in session on one token, shared by every tenant: pkcs11js calls are synchronous, so they never interleave. */
export class Pkcs11HsmProvider implements HsmProvider {
  readonly kind = 'pkcs11' as const;
  private session: Handle | null = null;
  private readonly handles = new Map<string, { handle: Handle; type: HsmKeyType }>();
  private closed = false;

  private constructor(
    private readonly lib: Pkcs11Module,
    private readonly p11: Pkcs11Types.PKCS11,
    private readonly slot: Handle,
    private readonly opts: Pkcs11Options,
  ) {}

  /** Loads the library, finds the token and logs in, failing fast with what to fix: no start with an unusable PIN setup. */
  static async open(opts: Pkcs11Options): Promise<Pkcs11HsmProvider> {
    let lib: Pkcs11Module;
    try {
      lib = (await import('pkcs11js')).default as unknown as Pkcs11Module;
    } catch (err) {
      throw new HsmError('unavailable', 'The pkcs11js module is not installed or did not build (it needs node-gyp and a C++ compiler); run npm ci again', { cause: err });
    }
    const p11 = new lib.PKCS11();
    try {
      p11.load(opts.library);
    } catch (err) {
      throw new HsmError('unavailable', `The PKCS#11 library '${opts.library}' cannot be loaded: ${String((err as Error).message).split('\n')[0]}`);
    }
    if (inUse.has(opts.library)) {
      throw new HsmError('unavailable', `The PKCS#11 library '${opts.library}' is already open in this process; share its provider`);
    }
    let initialised = false;
    try {
      p11.C_Initialize();
      initialised = true;
      inUse.add(opts.library);
      const slot = p11.C_GetSlotList(true).find((s) => p11.C_GetTokenInfo(s).label.trim() === opts.tokenLabel);
      if (!slot) throw new HsmError('unavailable', `No PKCS#11 token labelled '${opts.tokenLabel}' in '${opts.library}'`);
      const provider = new Pkcs11HsmProvider(lib, p11, slot, opts);
      provider.login();
      return provider;
    } catch (err) {
      try {
        if (initialised) {
          inUse.delete(opts.library);
          p11.C_Finalize();
        }
        p11.close();
      } catch {
        // Already failing: the first error is the one to report.
      }
      if (err instanceof HsmError) throw err;
      throw new HsmError('unavailable', `The PKCS#11 token '${opts.tokenLabel}' refused the session or login (${ckr(err)})`);
    }
  }

  private login(): Handle {
    const { p11, lib } = this;
    const session = p11.C_OpenSession(this.slot, lib.CKF_RW_SESSION | lib.CKF_SERIAL_SESSION);
    try {
      p11.C_Login(session, lib.CKU_USER, this.opts.pin);
    } catch (err) {
      // Another session of this application already logged the token in: that login covers this one.
      if (ckr(err) !== 'CKR_USER_ALREADY_LOGGED_IN') {
        p11.C_CloseSession(session);
        throw err;
      }
    }
    this.session = session;
    this.handles.clear();
    return session;
  }

  /** Runs fn on the session; when the session was lost (token restarted), logs in again and retries once. */
  run<T>(fn: (session: Handle) => T): T {
    if (this.closed) throw new HsmError('unavailable', 'The PKCS#11 HSM is closed');
    try {
      return fn(this.session ?? this.login());
    } catch (err) {
      if (!SESSION_LOST.has(ckr(err))) throw err;
      this.session = null;
      try {
        return fn(this.login());
      } catch (retryErr) {
        throw new HsmError('unavailable', `The PKCS#11 token '${this.opts.tokenLabel}' is unavailable (${ckr(retryErr)})`);
      }
    }
  }

  /** The key's handle and type, cached; null when the token holds no such key. */
  find(label: string): { handle: Handle; type: HsmKeyType } | null {
    const hit = this.handles.get(label);
    if (hit) return hit;
    const { p11, lib } = this;
    return this.run((session) => {
      p11.C_FindObjectsInit(session, [
        { type: lib.CKA_CLASS, value: lib.CKO_SECRET_KEY },
        { type: lib.CKA_LABEL, value: label },
      ]);
      let found: Handle[];
      try {
        found = p11.C_FindObjects(session, 2);
      } finally {
        p11.C_FindObjectsFinal(session);
      }
      if (found.length === 0) return null;
      if (found.length > 1) throw new HsmError('unavailable', `Several keys in the token carry the label '${label}'; remove the duplicates`);
      const handle = found[0]!;
      const [keyType] = p11.C_GetAttributeValue(session, handle, [{ type: lib.CKA_KEY_TYPE }]);
      const kt = ulong(keyType?.value);
      let type: HsmKeyType;
      if (kt === lib.CKK_DES2) type = 'tdes2';
      else if (kt === lib.CKK_AES) {
        const [len] = p11.C_GetAttributeValue(session, handle, [{ type: lib.CKA_VALUE_LEN }]);
        const bytes = ulong(len?.value);
        if (bytes !== 16 && bytes !== 32) throw new HsmError('key-type', `Key '${label}' is AES-${bytes * 8}; PIN keys are AES-128 or AES-256`);
        type = bytes === 16 ? 'aes128' : 'aes256';
      } else throw new HsmError('key-type', `Key '${label}' is neither 2-key TDES nor AES`);
      const entry = { handle, type };
      this.handles.set(label, entry);
      return entry;
    });
  }

  /** Attributes of every PIN key: in the token, never leaves it, encrypts and decrypts only. */
  keyTemplate(label: string): Pkcs11Types.Template {
    const { lib } = this;
    return [
      { type: lib.CKA_CLASS, value: lib.CKO_SECRET_KEY },
      { type: lib.CKA_TOKEN, value: true },
      { type: lib.CKA_PRIVATE, value: true },
      { type: lib.CKA_SENSITIVE, value: true },
      { type: lib.CKA_EXTRACTABLE, value: false },
      { type: lib.CKA_ENCRYPT, value: true },
      { type: lib.CKA_DECRYPT, value: true },
      { type: lib.CKA_WRAP, value: false },
      { type: lib.CKA_UNWRAP, value: false },
      { type: lib.CKA_LABEL, value: label },
      { type: lib.CKA_ID, value: Buffer.from(label) },
    ];
  }

  create(label: string, type: HsmKeyType, key: Uint8Array | null): void {
    if (this.find(label)) throw new HsmError('key-exists', `The token already holds a key '${label}'`);
    const { p11, lib } = this;
    const template = this.keyTemplate(label);
    const aesLen = type === 'aes256' ? 32 : 16;
    if (type === 'tdes2') template.push({ type: lib.CKA_KEY_TYPE, value: lib.CKK_DES2 });
    else template.push({ type: lib.CKA_KEY_TYPE, value: lib.CKK_AES });
    this.run((session) => {
      if (key) {
        const value = Buffer.from(key);
        try {
          p11.C_CreateObject(session, [...template, { type: lib.CKA_VALUE, value }]);
        } finally {
          value.fill(0);
        }
      } else if (type === 'tdes2') {
        p11.C_GenerateKey(session, { mechanism: lib.CKM_DES2_KEY_GEN }, template);
      } else {
        p11.C_GenerateKey(session, { mechanism: lib.CKM_AES_KEY_GEN }, [...template, { type: lib.CKA_VALUE_LEN, value: aesLen }]);
      }
    });
  }

  /** A one-block ECB cipher whose key stays in the token. */
  cipher(label: string, handle: Handle, type: HsmKeyType): BlockCipher {
    const { p11, lib } = this;
    const blockSize = type === 'tdes2' ? 8 : 16;
    const mechanism = type === 'tdes2' ? lib.CKM_DES3_ECB : lib.CKM_AES_ECB;
    const call = (decrypt: boolean, block: Uint8Array): Buffer => {
      if (block.length !== blockSize) throw new PinBlockError('block-length');
      const input = Buffer.from(block);
      const output = Buffer.alloc(blockSize);
      try {
        return this.run((session) => {
          if (decrypt) {
            p11.C_DecryptInit(session, { mechanism }, handle);
            return Buffer.from(p11.C_Decrypt(session, input, output));
          }
          p11.C_EncryptInit(session, { mechanism }, handle);
          return Buffer.from(p11.C_Encrypt(session, input, output));
        });
      } catch (err) {
        if (HANDLE_LOST.has(ckr(err))) this.handles.delete(label);
        throw err;
      } finally {
        input.fill(0);
        output.fill(0);
      }
    };
    return { blockSize, encrypt: (b) => call(false, b), decrypt: (b) => call(true, b) };
  }

  forTenant(tenantId: string): Hsm {
    return new Pkcs11Hsm(this, tenantId, this.opts.random);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.handles.clear();
    const { p11 } = this;
    try {
      if (this.session) {
        try {
          p11.C_Logout(this.session);
        } catch {
          // Logged out already: closing is what matters.
        }
        p11.C_CloseSession(this.session);
      }
      p11.C_Finalize();
    } finally {
      inUse.delete(this.opts.library);
      p11.close();
    }
  }
}

const isKeyType = (v: unknown): v is HsmKeyType => (HSM_KEY_TYPES as readonly unknown[]).includes(v);

/** One tenant's view of the token: only keys labelled with its id. */
class Pkcs11Hsm implements Hsm {
  constructor(
    private readonly provider: Pkcs11HsmProvider,
    private readonly tenantId: string,
    private readonly random: RandomSource | undefined,
  ) {}

  async translatePinBlock(input: TranslatePinBlockInput): Promise<TranslatePinBlockResult> {
    try {
      return await translateWith(input, async (keyId) => this.open(keyId), this.random);
    } catch (err) {
      if (err instanceof PinBlockError || err instanceof HsmError) throw err;
      throw new HsmError('unavailable', `The PKCS#11 token failed during a PIN translation (${ckr(err)})`);
    }
  }

  private open(keyId: string): OpenedKey {
    const label = labelOf(this.tenantId, keyId);
    const key = this.provider.find(label);
    if (!key) throw new HsmError('unknown-key', `Tenant '${this.tenantId}' has no PIN key '${keyId}'`, { keyId });
    return { type: key.type, cipher: this.provider.cipher(label, key.handle, key.type) };
  }

  async importKey(keyId: string, type: HsmKeyType, key: Uint8Array): Promise<void> {
    checkKeyId(keyId);
    if (!isKeyType(type)) throw new HsmError('key-type', `Unknown key type; use ${HSM_KEY_TYPES.join(', ')}`);
    checkKeyMaterial(type, key);
    this.guard(() => this.provider.create(labelOf(this.tenantId, keyId), type, key));
  }

  async generateKey(keyId: string, type: HsmKeyType): Promise<void> {
    checkKeyId(keyId);
    if (!isKeyType(type)) throw new HsmError('key-type', `Unknown key type; use ${HSM_KEY_TYPES.join(', ')}`);
    this.guard(() => this.provider.create(labelOf(this.tenantId, keyId), type, null));
  }

  async keyType(keyId: string): Promise<HsmKeyType | null> {
    return this.guard(() => this.provider.find(labelOf(this.tenantId, keyId))?.type ?? null);
  }

  private guard<T>(fn: () => T): T {
    try {
      return fn();
    } catch (err) {
      if (err instanceof HsmError) throw err;
      throw new HsmError('unavailable', `The PKCS#11 token refused the operation (${ckr(err)})`);
    }
  }

  /** The session belongs to the provider; closing one tenant's view closes nothing. */
  async close(): Promise<void> {}
}
