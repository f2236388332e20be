// The onboarding key is derived from the master key: every process sharing that key publishes the same public
// key and opens what was encrypted to it; another master key gives another key, which cannot open it.
import { describe, expect, it } from 'vitest';
import { decryptCompact, encryptCompact } from '../../src/crypto/jwe.js';
import { MasterKey } from '../../src/crypto/master-key.js';
import { onboardingKey } from '../../src/crypto/onboarding-key.js';

describe('onboardingKey', () => {
  it('is the same key for the same master key, another for another, and opens what was encrypted to it', async () => {
    const master = MasterKey.generate();
    const a = onboardingKey(new MasterKey(master));
    const b = onboardingKey(new MasterKey(master));
    const other = onboardingKey(new MasterKey(MasterKey.generate()));
    expect(b.publicJwk).toEqual(a.publicJwk);
    expect(other.publicJwk.x).not.toBe(a.publicJwk.x);
    expect(other.kid).not.toBe(a.kid);

    const jwe = await encryptCompact('first-admin-password', a.publicJwk);
    expect(new TextDecoder().decode(await decryptCompact(jwe, { keys: [b] }))).toBe('first-admin-password');
    await expect(decryptCompact(jwe, { keys: [{ ...other, kid: a.kid }] })).rejects.toThrow('The encrypted payload could not be processed');
  });
});
