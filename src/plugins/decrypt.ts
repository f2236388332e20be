// Decrypts JWE fields before validation (preValidation), so the schema sees plaintext.
import fp from 'fastify-plugin';
import type { FastifyPluginAsync } from 'fastify';
import { Errors } from '../errors.js';
import { JweError, decryptCompact, looksLikeCompactJwe } from '../crypto/jwe.js';

const decryptPlugin: FastifyPluginAsync = async (app) => {
  app.addHook('preValidation', async (request) => {
    const fields = request.routeOptions.config.encryptedFields;
    const tenant = request.tenant;
    if (!fields?.length || !tenant) return;
    const body = request.body;
    if (body === null || typeof body !== 'object' || Array.isArray(body)) return;
    const record = body as Record<string, unknown>;
    for (const { field, required } of fields) {
      const value = record[field];
      if (typeof value !== 'string') continue;
      if (!looksLikeCompactJwe(value)) {
        if (required?.(tenant)) throw Errors.plaintextPassword();
        continue;
      }
      const { enc } = await app.cardline.keys.forTenant(tenant.id);
      try {
        const plain = await decryptCompact(value, {
          keys: enc,
          replayGuard: (jti, expiresAt) => app.cardline.replay.firstUse(tenant.id, jti, expiresAt),
        });
        record[field] = new TextDecoder('utf-8', { fatal: true }).decode(plain);
      } catch (err) {
        if (err instanceof JweError || err instanceof TypeError) {
          request.log.info({ reason: err instanceof JweError ? err.reason : 'not utf-8', field }, 'encrypted field refused');
          throw Errors.encryptedPayload();
        }
        throw err;
      }
    }
  });
};

export default fp(decryptPlugin, { name: 'decrypt', dependencies: ['auth'] });
