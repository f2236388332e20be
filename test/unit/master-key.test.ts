// Private keys sealed at rest: AES-256-GCM, bound to their row.
import { describe, expect, it } from 'vitest';
import { MasterKey } from '../../src/crypto/master-key.js';

describe('master key', () => {
  const mk = new MasterKey(MasterKey.generate());

  it('round-trips and hides the plaintext', () => {
    const sealed = mk.seal('{"d":"secret"}', 'cardline-key:demo:k1');
    expect(sealed).not.toContain('secret');
    expect(mk.open(sealed, 'cardline-key:demo:k1')).toBe('{"d":"secret"}');
  });

  it('refuses a ciphertext moved to another row', () => {
    const sealed = mk.seal('x', 'cardline-key:demo:k1');
    expect(() => mk.open(sealed, 'cardline-key:demo-b:k1')).toThrow();
  });

  it('refuses another master key and a tampered ciphertext', () => {
    const sealed = mk.seal('x', 'a');
    expect(() => new MasterKey(MasterKey.generate()).open(sealed, 'a')).toThrow();
    const parts = sealed.split('.');
    parts[2] = Buffer.from('y').toString('base64url');
    expect(() => mk.open(parts.join('.'), 'a')).toThrow();
  });

  it('refuses a key that is not 32 bytes', () => {
    expect(() => new MasterKey(Buffer.alloc(16).toString('base64url'))).toThrow(/32 bytes/);
  });
});
