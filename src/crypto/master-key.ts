// Encrypts private keys at rest under the master key (AES-256-GCM), so a copy of the store alone is useless.
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';

const VERSION = 'v1';

export class MasterKey {
  private readonly key: Buffer;
  constructor(encoded: string) {
    const key = Buffer.from(encoded, 'base64url');
    if (key.length !== 32) throw new Error('The master key must be 32 bytes, base64url-encoded');
    this.key = key;
  }

  /** A key for one purpose (HKDF-SHA256): handing it to a connector hands out nothing else. */
  derive(purpose: string): MasterKey {
    return new MasterKey(Buffer.from(hkdfSync('sha256', this.key, Buffer.alloc(0), `cardline:${purpose}`, 32)).toString('base64url'));
  }

  static generate(): string {
    return randomBytes(32).toString('base64url');
  }

  /** HMAC-SHA256 of a message under this key, hex: a digest that cannot be recomputed without the key. */
  mac(message: string): string {
    return createHmac('sha256', this.key).update(message).digest('hex');
  }

  /** `aad` binds the ciphertext to its row (tenant and kid), so rows cannot be swapped. */
  seal(plaintext: string, aad: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(aad));
    const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [VERSION, iv.toString('base64url'), ct.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.');
  }

  open(sealed: string, aad: string): string {
    const [version, iv, ct, tag] = sealed.split('.');
    if (version !== VERSION || !iv || !ct || !tag) throw new Error('Unrecognised sealed key format');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(aad));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
  }
}
