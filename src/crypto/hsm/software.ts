// A software HSM for development: PIN keys sealed under the master key in the store (table hsm_keys).
import { randomBytes } from 'node:crypto';
import { softwareCipher, type RandomSource } from '../pin-block.js';
import type { MasterKey } from '../master-key.js';
import type { Db } from '../../store/db.js';
import {
  HSM_KEY_TYPES,
  HsmError,
  checkKeyId,
  checkKeyMaterial,
  translateWith,
  type Hsm,
  type HsmKeyType,
  type HsmProvider,
  type TranslatePinBlockInput,
  type TranslatePinBlockResult,
} from './index.js';

/** Binds a sealed key to its row: moving it to another tenant, id or type makes it unopenable. */
const aad = (tenantId: string, keyId: string, type: HsmKeyType) => `cardline-hsm-key:${tenantId}:${keyId}:${type}`;

const isKeyType = (v: unknown): v is HsmKeyType => (HSM_KEY_TYPES as readonly unknown[]).includes(v);

export interface SoftwareHsmOptions {
  db: Db;
  masterKey: MasterKey;
  tenantId: string;
  /** Fill digits of formats 3 and 4 (tests pass a fixed source). */
  random?: RandomSource;
}

/** Keys sealed in the store, opened for one translation then wiped: for development, not a security boundary. */
class SoftwareHsm implements Hsm {
  constructor(private readonly opts: SoftwareHsmOptions) {}

  async importKey(keyId: string, type: HsmKeyType, key: Uint8Array): Promise<void> {
    checkKeyId(keyId);
    if (!isKeyType(type)) throw new HsmError('key-type', `Unknown key type; use ${HSM_KEY_TYPES.join(', ')}`);
    checkKeyMaterial(type, key);
    const { db, masterKey, tenantId } = this.opts;
    const sealed = masterKey.seal(Buffer.from(key).toString('hex'), aad(tenantId, keyId, type));
    const r = await db.query(
      'INSERT INTO hsm_keys (tenant_id, key_id, type, sealed_key) VALUES ($1, $2, $3, $4) ON CONFLICT (tenant_id, key_id) DO NOTHING',
      [tenantId, keyId, type, sealed],
    );
    if (r.rowCount === 0) throw new HsmError('key-exists', `Tenant '${tenantId}' already has a PIN key '${keyId}'`);
  }

  async generateKey(keyId: string, type: HsmKeyType): Promise<void> {
    if (!isKeyType(type)) throw new HsmError('key-type', `Unknown key type; use ${HSM_KEY_TYPES.join(', ')}`);
    const key = randomBytes(type === 'aes256' ? 32 : 16);
    try {
      await this.importKey(keyId, type, key);
    } finally {
      key.fill(0);
    }
  }

  async keyType(keyId: string): Promise<HsmKeyType | null> {
    const r = await this.opts.db.query<{ type: string }>('SELECT type FROM hsm_keys WHERE tenant_id = $1 AND key_id = $2', [this.opts.tenantId, keyId]);
    const type = r.rows[0]?.type;
    return isKeyType(type) ? type : null;
  }

  translatePinBlock(input: TranslatePinBlockInput): Promise<TranslatePinBlockResult> {
    return translateWith(input, (keyId) => this.open(keyId), this.opts.random);
  }

  private async open(keyId: string) {
    const { db, masterKey, tenantId } = this.opts;
    const r = await db.query<{ type: string; sealed_key: string }>('SELECT type, sealed_key FROM hsm_keys WHERE tenant_id = $1 AND key_id = $2', [
      tenantId,
      keyId,
    ]);
    const row = r.rows[0];
    if (!row || !isKeyType(row.type)) throw new HsmError('unknown-key', `Tenant '${tenantId}' has no PIN key '${keyId}'`, { keyId });
    let material: Buffer;
    try {
      material = Buffer.from(masterKey.open(row.sealed_key, aad(tenantId, keyId, row.type)), 'hex');
    } catch (err) {
      throw new HsmError('unavailable', `PIN key '${keyId}' of tenant '${tenantId}' cannot be opened with this master key`, { cause: err, keyId });
    }
    return { type: row.type, cipher: softwareCipher(row.type, material), wipe: () => material.fill(0) };
  }

  async close(): Promise<void> {}
}

/** One software HSM per tenant over the gateway's store. */
export class SoftwareHsmProvider implements HsmProvider {
  readonly kind = 'software' as const;
  constructor(private readonly opts: Omit<SoftwareHsmOptions, 'tenantId'>) {}

  forTenant(tenantId: string): Hsm {
    return new SoftwareHsm({ ...this.opts, tenantId });
  }

  async close(): Promise<void> {}
}
