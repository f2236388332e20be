// Secrets for a connector run outside a gateway (the conformance kit, tests, a gateway given no master key):
// AES-256-GCM under a random key held only by this object, the context bound as additional data, so a value
// opens only in the place it was sealed for and never after the process ends.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { ConnectorSecrets } from '../contract.js';

export function ephemeralSecrets(): ConnectorSecrets {
  const key = randomBytes(32);
  return {
    seal(plaintext, context) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(Buffer.from(context));
      const sealed = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return [iv, sealed, cipher.getAuthTag()].map((part) => part.toString('base64url')).join('.');
    },
    open(sealed, context) {
      const [iv, ct, tag] = sealed.split('.');
      if (!iv || !ct || !tag) throw new Error('Unrecognised sealed value');
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      decipher.setAAD(Buffer.from(context));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
    },
  };
}
