// The PKCS#11 HSM against SoftHSM2, on a token this test makes in its own directory. Skipped (with a
// message) where SoftHSM2 or the pkcs11js addon is missing, so a laptop's `npm test` passes; CI installs both.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HsmError, type Hsm, type TranslatePinBlockInput } from '../../src/crypto/hsm/index.js';
import { Pkcs11HsmProvider } from '../../src/crypto/hsm/pkcs11.js';
import { SoftwareHsmProvider } from '../../src/crypto/hsm/software.js';
import { MasterKey } from '../../src/crypto/master-key.js';
import { PinBlockError, decryptPinBlock, encryptPinBlock, softwareCipher, toHex, type RandomSource } from '../../src/crypto/pin-block.js';
import { migrate } from '../../src/store/migrate.js';
import { createTestDb, type TestDb } from '../helpers/app.js';

const LIBRARIES = [
  process.env.SOFTHSM2_LIB,
  '/usr/lib/softhsm/libsofthsm2.so',
  '/usr/lib/x86_64-linux-gnu/softhsm/libsofthsm2.so',
  '/usr/lib/aarch64-linux-gnu/softhsm/libsofthsm2.so',
  '/usr/local/lib/softhsm/libsofthsm2.so',
  '/opt/homebrew/lib/softhsm/libsofthsm2.so',
];
const library = LIBRARIES.find((p): p is string => !!p && existsSync(p));
const hasUtil = (() => {
  try {
    execFileSync('softhsm2-util', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
const hasAddon = (() => {
  try {
    createRequire(import.meta.url)('pkcs11js');
    return true;
  } catch {
    return false;
  }
})();
const available = !!library && hasUtil && hasAddon;
if (!available) {
  const why = !library || !hasUtil ? 'SoftHSM2 is not installed (apt-get install softhsm2)' : 'the pkcs11js addon did not build (npm ci with a C++ compiler)';
  // .ci/run installs SoftHSM2: in CI a skip would hide a broken install step.
  if (process.env.CI === 'true') throw new Error(`hsm-pkcs11 cannot run in CI: ${why}`);
  console.warn(`SKIPPED hsm-pkcs11: ${why}`);
}

const hex = (h: string) => Buffer.from(h, 'hex');
const TDES_KEY = '042666B49184CF5C68DE9628D0397B36';
const AES_KEY = 'C1D0F8FB4958670DBA40AB1F3752EF0D';
const PAN0 = '4012345678909';
const PAN4 = '432198765432109870';
const BLOCK0 = '1B9C1845EB993A7A';
const BLOCK4 = 'CC17F65586BFD0953010226C4FC5B3CA';
const vectorRandom: RandomSource = (n) => hex('146C6601F4A8035C').subarray(0, n);
const TOKEN = 'cardline-test';
const USER_PIN = '246810';

let dir: string;
let provider: Pkcs11HsmProvider;
let acme: Hsm;
const open = () => Pkcs11HsmProvider.open({ library: library!, tokenLabel: TOKEN, pin: USER_PIN, random: vectorRandom });

describe.skipIf(!available)('PKCS#11 HSM (SoftHSM2)', () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cardline-softhsm-'));
    const conf = join(dir, 'softhsm2.conf');
    const tokens = join(dir, 'tokens');
    mkdirSync(tokens);
    writeFileSync(conf, `directories.tokendir = ${tokens}\nobjectstore.backend = file\nlog.level = ERROR\n`);
    // The library reads SOFTHSM2_CONF when it initialises: set before the first open, in this process only.
    process.env.SOFTHSM2_CONF = conf;
    execFileSync('softhsm2-util', ['--init-token', '--free', '--label', TOKEN, '--so-pin', '13579', '--pin', USER_PIN], {
      env: { ...process.env, SOFTHSM2_CONF: conf },
      stdio: 'ignore',
    });
    provider = await open();
    acme = provider.forTenant('acme');
    await acme.importKey('zpk-tdes', 'tdes2', hex(TDES_KEY));
    await acme.importKey('zpk-tdes-copy', 'tdes2', hex(TDES_KEY));
    await acme.importKey('zpk-aes', 'aes128', hex(AES_KEY));
    await acme.importKey('core-aes', 'aes128', hex(AES_KEY));
  });
  afterAll(async () => {
    await provider?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('re-enciphers the published vectors inside the token, bit for bit', async () => {
    expect(await acme.translatePinBlock({ pinBlock: BLOCK4, format: 4, pan: PAN4, fromKeyId: 'zpk-aes', toKeyId: 'core-aes' })).toEqual({
      pinBlock: BLOCK4,
      format: 4,
      keyId: 'core-aes',
    });
    expect(await acme.translatePinBlock({ pinBlock: BLOCK0, format: 0, pan: PAN0, fromKeyId: 'zpk-tdes', toKeyId: 'zpk-tdes-copy' })).toEqual({
      pinBlock: BLOCK0,
      format: 0,
      keyId: 'zpk-tdes-copy',
    });
  });

  it('gives the same blocks as the software HSM with the same keys', async () => {
    const testDb: TestDb = await createTestDb();
    try {
      await migrate(testDb.db);
      await testDb.db.query("INSERT INTO tenants (tenant_id, name, config) VALUES ('acme', 'acme', '{}')");
      const soft = new SoftwareHsmProvider({ db: testDb.db, masterKey: new MasterKey(MasterKey.generate()), random: vectorRandom }).forTenant('acme');
      await soft.importKey('zpk-tdes', 'tdes2', hex(TDES_KEY));
      await soft.importKey('core-aes', 'aes128', hex(AES_KEY));
      const inputs: TranslatePinBlockInput[] = [
        { pinBlock: BLOCK0, format: 0, pan: PAN0, fromKeyId: 'zpk-tdes', toKeyId: 'core-aes', toFormat: 4 },
        { pinBlock: BLOCK0, format: 0, pan: PAN0, fromKeyId: 'zpk-tdes', toKeyId: 'zpk-tdes', toFormat: 3 },
        { pinBlock: BLOCK4, format: 4, pan: PAN4, fromKeyId: 'core-aes', toKeyId: 'zpk-tdes', toFormat: 0 },
      ];
      for (const input of inputs) expect(await acme.translatePinBlock(input)).toEqual(await soft.translatePinBlock(input));
    } finally {
      await testDb.drop();
    }
  });

  it('translates format 0 under TDES to format 4 under AES with generated keys', async () => {
    await acme.generateKey('gen-aes256', 'aes256');
    await acme.generateKey('gen-tdes', 'tdes2');
    expect(await acme.keyType('gen-aes256')).toBe('aes256');
    expect(await acme.keyType('gen-tdes')).toBe('tdes2');
    expect(await acme.keyType('zpk-aes')).toBe('aes128');
    const there = await acme.translatePinBlock({ pinBlock: BLOCK0, format: 0, pan: PAN0, fromKeyId: 'zpk-tdes', toKeyId: 'gen-aes256', toFormat: 4 });
    const viaTdes = await acme.translatePinBlock({ pinBlock: there.pinBlock, format: 4, pan: PAN0, fromKeyId: 'gen-aes256', toKeyId: 'gen-tdes', toFormat: 3 });
    const back = await acme.translatePinBlock({ pinBlock: viaTdes.pinBlock, format: 3, pan: PAN0, fromKeyId: 'gen-tdes', toKeyId: 'core-aes', toFormat: 4 });
    expect(decryptPinBlock(hex(back.pinBlock), PAN0, 4, softwareCipher('aes128', hex(AES_KEY)))).toBe('1234');
  });

  it('refuses malformed blocks, another card and another key with PinBlockError', async () => {
    const base = { pinBlock: BLOCK4, format: 4 as const, pan: PAN4, fromKeyId: 'zpk-aes', toKeyId: 'core-aes' };
    const refusals: TranslatePinBlockInput[] = [
      { ...base, pinBlock: BLOCK4.slice(0, 30) },
      { ...base, pan: '432198765432109871' },
      { ...base, pinBlock: toHex(encryptPinBlock('1234', PAN4, 4, softwareCipher('aes128', hex('00'.repeat(16))))) },
      { ...base, format: 0, fromKeyId: 'zpk-tdes', toKeyId: 'zpk-tdes-copy', pan: '4012345678981', pinBlock: BLOCK0 },
    ];
    for (const input of refusals) await expect(acme.translatePinBlock(input)).rejects.toBeInstanceOf(PinBlockError);
  });

  it('refuses unknown keys, wrong key types and duplicates with HsmError, and keeps tenants apart', async () => {
    const other = provider.forTenant('other');
    await expect(other.translatePinBlock({ pinBlock: BLOCK4, format: 4, pan: PAN4, fromKeyId: 'zpk-aes', toKeyId: 'core-aes' })).rejects.toMatchObject({
      name: 'HsmError',
      reason: 'unknown-key',
      message: "Tenant 'other' has no PIN key 'zpk-aes'",
    });
    expect(await other.keyType('zpk-aes')).toBeNull();
    await expect(acme.translatePinBlock({ pinBlock: BLOCK4, format: 4, pan: PAN4, fromKeyId: 'zpk-tdes', toKeyId: 'core-aes' })).rejects.toMatchObject({
      reason: 'key-type',
    });
    await expect(acme.importKey('zpk-aes', 'aes128', hex(AES_KEY))).rejects.toMatchObject({ reason: 'key-exists' });
    await expect(acme.importKey('x/y', 'aes128', hex(AES_KEY))).rejects.toBeInstanceOf(HsmError);
    await expect(acme.importKey('single', 'tdes2', hex('0123456789ABCDEF0123456789ABCDEF'))).rejects.toMatchObject({ reason: 'key-type' });
  });

  it('holds keys as sensitive, non-extractable token objects', () => {
    const inner = provider as unknown as {
      lib: typeof import('pkcs11js');
      p11: import('pkcs11js').PKCS11;
      find(label: string): { handle: Buffer } | null;
      run<T>(fn: (session: Buffer) => T): T;
    };
    const { handle } = inner.find('cardline/acme/zpk-aes')!;
    const { lib, p11 } = inner;
    const attrs = inner.run((s) =>
      p11.C_GetAttributeValue(s, handle, [{ type: lib.CKA_TOKEN }, { type: lib.CKA_SENSITIVE }, { type: lib.CKA_EXTRACTABLE }]),
    );
    expect(attrs.map((a) => (a.value as Buffer)[0])).toEqual([1, 1, 0]);
    expect(() => inner.run((s) => p11.C_GetAttributeValue(s, handle, [{ type: lib.CKA_VALUE }]))).toThrow(/CKR_ATTRIBUTE_SENSITIVE/);
  });

  it('keeps keys across a restart of the provider', async () => {
    await provider.close();
    provider = await open();
    acme = provider.forTenant('acme');
    expect(await acme.translatePinBlock({ pinBlock: BLOCK4, format: 4, pan: PAN4, fromKeyId: 'zpk-aes', toKeyId: 'core-aes' })).toMatchObject({ pinBlock: BLOCK4 });
  });

  it('fails fast at open, naming what to fix, and allows one provider per library and process', async () => {
    await expect(open()).rejects.toMatchObject({
      name: 'HsmError',
      message: `The PKCS#11 library '${library}' is already open in this process; share its provider`,
    });
    await provider.close();
    await expect(Pkcs11HsmProvider.open({ library: library!, tokenLabel: 'no-such-token', pin: USER_PIN })).rejects.toMatchObject({
      name: 'HsmError',
      message: `No PKCS#11 token labelled 'no-such-token' in '${library}'`,
    });
    await expect(Pkcs11HsmProvider.open({ library: '/nonexistent/libpkcs11.so', tokenLabel: TOKEN, pin: USER_PIN })).rejects.toMatchObject({
      message: expect.stringMatching(/^The PKCS#11 library '\/nonexistent\/libpkcs11.so' cannot be loaded/),
    });
    await expect(Pkcs11HsmProvider.open({ library: library!, tokenLabel: TOKEN, pin: '000000' })).rejects.toMatchObject({
      message: `The PKCS#11 token '${TOKEN}' refused the session or login (CKR_PIN_INCORRECT)`,
    });
    // Failed opens leave nothing behind: the next one works.
    provider = await open();
    acme = provider.forTenant('acme');
    expect(await acme.translatePinBlock({ pinBlock: BLOCK4, format: 4, pan: PAN4, fromKeyId: 'zpk-aes', toKeyId: 'core-aes' })).toMatchObject({ pinBlock: BLOCK4 });
  });
});
