// The software HSM: keys sealed in the store per tenant, PIN blocks translated strictly between them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HsmError, type Hsm } from '../../src/crypto/hsm/index.js';
import { SoftwareHsmProvider } from '../../src/crypto/hsm/software.js';
import { MasterKey } from '../../src/crypto/master-key.js';
import { PinBlockError, decryptPinBlock, encryptPinBlock, softwareCipher, toHex, type RandomSource } from '../../src/crypto/pin-block.js';
import { hsmSettingsFromEnv } from '../../src/config.js';
import { migrate } from '../../src/store/migrate.js';
import { createTestDb, type TestDb } from '../helpers/app.js';

const hex = (h: string) => Buffer.from(h, 'hex');
const TDES_KEY = '042666B49184CF5C68DE9628D0397B36';
const AES_KEY = 'C1D0F8FB4958670DBA40AB1F3752EF0D';
const PAN0 = '4012345678909';
const PAN4 = '432198765432109870';
const BLOCK0 = '1B9C1845EB993A7A';
const BLOCK4 = 'CC17F65586BFD0953010226C4FC5B3CA';

/** Replays the format-4 vector's fill bytes on every call. */
const vectorRandom: RandomSource = (n) => hex('146C6601F4A8035C').subarray(0, n);

let testDb: TestDb;
let masterKey: MasterKey;
let acme: Hsm;
let other: Hsm;

beforeAll(async () => {
  testDb = await createTestDb();
  await migrate(testDb.db);
  for (const id of ['acme', 'other']) await testDb.db.query("INSERT INTO tenants (tenant_id, name, config) VALUES ($1, $1, '{}')", [id]);
  masterKey = new MasterKey(MasterKey.generate());
  const provider = new SoftwareHsmProvider({ db: testDb.db, masterKey, random: vectorRandom });
  acme = provider.forTenant('acme');
  other = provider.forTenant('other');
  await acme.importKey('zpk-tdes', 'tdes2', hex(TDES_KEY));
  await acme.importKey('zpk-tdes-copy', 'tdes2', hex(TDES_KEY));
  await acme.importKey('zpk-aes', 'aes128', hex(AES_KEY));
  await acme.importKey('core-aes', 'aes128', hex(AES_KEY));
});
afterAll(() => testDb?.drop());

describe('software HSM: translation', () => {
  it('re-enciphers the published vectors under another key of the same material, bit for bit', async () => {
    expect(await acme.translatePinBlock({ pinBlock: BLOCK4, format: 4, pan: PAN4, fromKeyId: 'zpk-aes', toKeyId: 'core-aes' })).toEqual({
      pinBlock: BLOCK4,
      format: 4,
      keyId: 'core-aes',
    });
    expect(
      await acme.translatePinBlock({ pinBlock: BLOCK0.toLowerCase(), format: 0, pan: PAN0, fromKeyId: 'zpk-tdes', toKeyId: 'zpk-tdes-copy' }),
    ).toEqual({ pinBlock: BLOCK0, format: 0, keyId: 'zpk-tdes-copy' });
  });

  it('translates format 0 under TDES to format 4 under AES (the core) and back to format 3', async () => {
    const to4 = await acme.translatePinBlock({ pinBlock: BLOCK0, format: 0, pan: PAN0, fromKeyId: 'zpk-tdes', toKeyId: 'core-aes', toFormat: 4 });
    expect(to4).toEqual({ pinBlock: expect.stringMatching(/^[0-9A-F]{32}$/), format: 4, keyId: 'core-aes' });
    expect(decryptPinBlock(hex(to4.pinBlock), PAN0, 4, softwareCipher('aes128', hex(AES_KEY)))).toBe('1234');
    const to3 = await acme.translatePinBlock({ pinBlock: to4.pinBlock, format: 4, pan: PAN0, fromKeyId: 'core-aes', toKeyId: 'zpk-tdes', toFormat: 3 });
    expect(decryptPinBlock(hex(to3.pinBlock), PAN0, 3, softwareCipher('tdes2', hex(TDES_KEY)))).toBe('1234');
  });

  it('works with generated keys of every type', async () => {
    await acme.generateKey('gen-aes256', 'aes256');
    await acme.generateKey('gen-tdes', 'tdes2');
    expect(await acme.keyType('gen-aes256')).toBe('aes256');
    expect(await acme.keyType('gen-tdes')).toBe('tdes2');
    const block = toHex(encryptPinBlock('987654321', PAN4, 4, softwareCipher('aes128', hex(AES_KEY))));
    const there = await acme.translatePinBlock({ pinBlock: block, format: 4, pan: PAN4, fromKeyId: 'zpk-aes', toKeyId: 'gen-aes256' });
    const viaTdes = await acme.translatePinBlock({ pinBlock: there.pinBlock, format: 4, pan: PAN4, fromKeyId: 'gen-aes256', toKeyId: 'gen-tdes', toFormat: 0 });
    const back = await acme.translatePinBlock({ pinBlock: viaTdes.pinBlock, format: 0, pan: PAN4, fromKeyId: 'gen-tdes', toKeyId: 'core-aes', toFormat: 4 });
    expect(decryptPinBlock(hex(back.pinBlock), PAN4, 4, softwareCipher('aes128', hex(AES_KEY)))).toBe('987654321');
  });

  it('refuses malformed blocks, another card and another key with PinBlockError', async () => {
    const base = { pinBlock: BLOCK4, format: 4 as const, pan: PAN4, fromKeyId: 'zpk-aes', toKeyId: 'core-aes' };
    const refusals = [
      { ...base, pinBlock: BLOCK4.slice(0, 30) },
      { ...base, pinBlock: `${BLOCK4.slice(0, 31)}G` },
      { ...base, pinBlock: BLOCK0, format: 0 as const, fromKeyId: 'zpk-tdes', toKeyId: 'zpk-tdes-copy', pan: '4012345678981' },
      { ...base, pan: '432198765432109871' },
      { ...base, fromKeyId: 'core-aes', pinBlock: toHex(encryptPinBlock('1234', PAN4, 4, softwareCipher('aes128', hex('00'.repeat(16))))) },
      { ...base, format: 1 as never },
    ];
    for (const input of refusals) await expect(acme.translatePinBlock(input)).rejects.toBeInstanceOf(PinBlockError);
  });

  it('refuses unknown keys and keys whose type does not fit the format with HsmError', async () => {
    await expect(acme.translatePinBlock({ pinBlock: BLOCK4, format: 4, pan: PAN4, fromKeyId: 'nope', toKeyId: 'core-aes' })).rejects.toMatchObject({
      name: 'HsmError',
      reason: 'unknown-key',
    });
    await expect(acme.translatePinBlock({ pinBlock: BLOCK4, format: 4, pan: PAN4, fromKeyId: 'zpk-tdes', toKeyId: 'core-aes' })).rejects.toMatchObject({
      reason: 'key-type',
      message: "Key 'zpk-tdes' is tdes2; format 4 needs an AES key (aes128 or aes256)",
    });
    await expect(
      acme.translatePinBlock({ pinBlock: BLOCK4, format: 4, pan: PAN4, fromKeyId: 'zpk-aes', toKeyId: 'core-aes', toFormat: 0 }),
    ).rejects.toMatchObject({ reason: 'key-type', message: "Key 'core-aes' is aes128; format 0 needs a 2-key TDES key (tdes2)" });
  });
});

describe('software HSM: keys', () => {
  it('keeps each tenant to its own keys', async () => {
    expect(await other.keyType('zpk-aes')).toBeNull();
    await expect(other.translatePinBlock({ pinBlock: BLOCK4, format: 4, pan: PAN4, fromKeyId: 'zpk-aes', toKeyId: 'core-aes' })).rejects.toMatchObject({
      reason: 'unknown-key',
    });
    // The same id in another tenant is another key.
    await other.importKey('zpk-aes', 'aes128', hex('000102030405060708090A0B0C0D0E0F'));
    await expect(other.translatePinBlock({ pinBlock: BLOCK4, format: 4, pan: PAN4, fromKeyId: 'zpk-aes', toKeyId: 'zpk-aes' })).rejects.toBeInstanceOf(
      PinBlockError,
    );
  });

  it('stores keys sealed under the master key, bound to tenant, id and type', async () => {
    const rows = await testDb.db.query<{ sealed_key: string; type: string }>("SELECT sealed_key, type FROM hsm_keys WHERE tenant_id = 'acme' AND key_id = 'zpk-aes'");
    expect(rows.rows[0]!.type).toBe('aes128');
    expect(rows.rows[0]!.sealed_key).not.toMatch(new RegExp(AES_KEY, 'i'));
    // A sealed key copied to another row cannot be opened there.
    await testDb.db.query("INSERT INTO hsm_keys (tenant_id, key_id, type, sealed_key) VALUES ('other', 'stolen', 'aes128', $1)", [rows.rows[0]!.sealed_key]);
    await expect(other.translatePinBlock({ pinBlock: BLOCK4, format: 4, pan: PAN4, fromKeyId: 'stolen', toKeyId: 'zpk-aes' })).rejects.toMatchObject({
      reason: 'unavailable',
    });
    // Another master key opens nothing.
    const foreign = new SoftwareHsmProvider({ db: testDb.db, masterKey: new MasterKey(MasterKey.generate()) }).forTenant('acme');
    await expect(foreign.translatePinBlock({ pinBlock: BLOCK4, format: 4, pan: PAN4, fromKeyId: 'zpk-aes', toKeyId: 'core-aes' })).rejects.toMatchObject({
      reason: 'unavailable',
    });
  });

  it('refuses duplicate ids, bad ids, wrong lengths and degenerate TDES keys', async () => {
    const cases: [() => Promise<void>, string][] = [
      [() => acme.importKey('zpk-aes', 'aes128', hex(AES_KEY)), 'key-exists'],
      [() => acme.generateKey('zpk-aes', 'aes256'), 'key-exists'],
      [() => acme.importKey('has space', 'aes128', hex(AES_KEY)), 'key-id'],
      [() => acme.importKey('', 'aes128', hex(AES_KEY)), 'key-id'],
      [() => acme.importKey('short', 'aes256', hex(AES_KEY)), 'key-type'],
      [() => acme.importKey('single-des', 'tdes2', hex('0123456789ABCDEF0123456789ABCDEF')), 'key-type'],
      [() => acme.importKey('rsa', 'rsa' as never, hex(AES_KEY)), 'key-type'],
    ];
    for (const [attempt, reason] of cases) {
      const err = await attempt().then(() => null, (e: unknown) => e);
      expect(err).toBeInstanceOf(HsmError);
      expect(err).toMatchObject({ reason });
    }
    expect(await acme.keyType('short')).toBeNull();
  });
});

describe('choosing the HSM (environment)', () => {
  it('defaults to the software HSM and names what pkcs11 is missing', () => {
    expect(hsmSettingsFromEnv({})).toEqual({ kind: 'software' });
    expect(() => hsmSettingsFromEnv({ CARDLINE_HSM: 'thales' })).toThrow("CARDLINE_HSM must be 'software' or 'pkcs11', not 'thales'");
    expect(() => hsmSettingsFromEnv({ CARDLINE_HSM: 'pkcs11', CARDLINE_PKCS11_LIBRARY: '/x.so' })).toThrow(
      'CARDLINE_HSM=pkcs11 needs CARDLINE_PKCS11_TOKEN_LABEL, CARDLINE_PKCS11_PIN',
    );
    expect(
      hsmSettingsFromEnv({ CARDLINE_HSM: 'pkcs11', CARDLINE_PKCS11_LIBRARY: '/x.so', CARDLINE_PKCS11_TOKEN_LABEL: 't', CARDLINE_PKCS11_PIN: '1' }),
    ).toEqual({ kind: 'pkcs11', library: '/x.so', tokenLabel: 't', pin: '1' });
  });
});
