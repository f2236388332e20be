// The demo tenants' PIN keys: published test keys, so that a demo client can build PIN blocks. Never production.
import type { TenantPinConfig } from '../../../schemas/pin.js';
import type { Hsm, HsmKeyType } from './index.js';

/** The tenant's (channel's) PIN keys are the ISO 9564 test-vector keys of test/fixtures/pin-blocks.json. */
export const DEMO_PIN_KEYS: readonly { keyId: string; type: HsmKeyType; hex: string | null }[] = [
  /** AES-128, formats 4: the tenant's default PIN key. */
  { keyId: 'demo-zpk-aes', type: 'aes128', hex: 'C1D0F8FB4958670DBA40AB1F3752EF0D' },
  /** 2-key TDES, formats 0 and 3: name it with `keyId` in the request. */
  { keyId: 'demo-zpk-tdes', type: 'tdes2', hex: '042666B49184CF5C68DE9628D0397B36' },
  /** The core's PIN key: generated, known to nobody (the mock core records that a PIN was set, nothing more). */
  { keyId: 'demo-core-pek', type: 'aes128', hex: null },
];

export const DEMO_PIN_CONFIG: TenantPinConfig = { tenantKeyId: 'demo-zpk-aes', coreKeyId: 'demo-core-pek', coreFormat: 4 };

/** Puts the demo keys in the tenant's HSM; keys already there (a PKCS#11 token reused) are left alone. */
export async function seedDemoPinKeys(hsm: Hsm): Promise<void> {
  for (const k of DEMO_PIN_KEYS) {
    if (await hsm.keyType(k.keyId)) continue;
    if (k.hex) await hsm.importKey(k.keyId, k.type, Buffer.from(k.hex, 'hex'));
    else await hsm.generateKey(k.keyId, k.type);
  }
}
