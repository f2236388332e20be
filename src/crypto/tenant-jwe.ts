// Opens a compact JWE a client encrypted to one of its tenant's gateway keys, once (its jti is then spent):
// the decrypt step's and the management API's way in. Every failure is the one generic 400 (decision 0008).
import type { FastifyBaseLogger } from 'fastify';
import { Errors } from '../errors.js';
import { JweError, decryptCompact } from './jwe.js';
import type { KeySource } from './keys.js';

/** Spends a JWE's jti: true the first time a (tenant, jti) is seen while it could still pass (the replay cache). */
interface ReplayGuard {
  firstUse(tenantId: string, jti: string, expiresAt: Date): Promise<boolean>;
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

export async function openTenantJwe(
  deps: { keys: KeySource; replay: ReplayGuard },
  tenantId: string,
  compact: string,
  log: FastifyBaseLogger,
  what: string,
): Promise<string> {
  const { enc } = await deps.keys.forTenant(tenantId);
  try {
    const plain = await decryptCompact(compact, {
      keys: enc,
      replayGuard: (jti, expiresAt) => deps.replay.firstUse(tenantId, jti, expiresAt),
    });
    return UTF8.decode(plain);
  } catch (err) {
    if (err instanceof JweError || err instanceof TypeError) {
      log.info({ reason: err instanceof JweError ? err.reason : 'not utf-8', field: what }, 'encrypted value refused');
      throw Errors.encryptedPayload();
    }
    throw err;
  }
}
