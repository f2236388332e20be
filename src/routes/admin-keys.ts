// Admin key management (DESIGN §4), problem dialect, Admin only: the gateway's keys (list, rotate) and the
// tenant's client key for encrypted response fields (register, read).
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { FieldError, Role } from '../../schemas/common.js';
import { ClientKeyBody, ClientKeyResponse, GatewayKeyList, RotateKeysBody, RotateKeysResponse } from '../../schemas/keys.js';
import { isOnCurve } from '../crypto/client-keys.js';
import { defaultGraceSeconds } from '../crypto/keys.js';
import { Errors } from '../errors.js';

/** DESIGN §3: tenant configuration, users and keys are the Admin's. */
const ADMIN: readonly Role[] = ['Admin'];

const bodyOf = (request: FastifyRequest) => (request.body ?? {}) as Record<string, unknown>;

/** What the schema cannot say: the coordinates must be a point on P-256. */
function checkClientKey(request: FastifyRequest): FieldError[] {
  const { jwk } = request.body as ClientKeyBody;
  return isOnCurve(jwk) ? [] : [{ field: 'jwk', message: 'Invalid', objectName: 'clientKeyRequest' }];
}

const adminKeyRoutes: FastifyPluginAsync = async (app) => {
  const { keys, clientKeys } = app.cardline;

  app.get('/v1/admin/keys', {
    schema: { response: { 200: GatewayKeyList } },
    config: { dialect: 'problem', roles: ADMIN, objectName: 'keysRequest', audit: { action: 'keys.list' } },
    handler: async (request) => ({ result: await keys.list(request.tenant!.id), pagination: null }),
  });

  app.post<{ Body: RotateKeysBody }>('/v1/admin/keys/rotate', {
    schema: { body: RotateKeysBody, response: { 200: RotateKeysResponse } },
    config: {
      dialect: 'problem',
      roles: ADMIN,
      objectName: 'keyRotationRequest',
      audit: { action: 'keys.rotate', target: (req) => ({ use: bodyOf(req).use }) },
    },
    handler: async (request) => {
      const tenant = request.tenant!;
      const { use } = request.body;
      const grace = request.body.graceSeconds ?? defaultGraceSeconds(use, tenant.config.tokenLifetimeSeconds);
      const { active, replaced } = await keys.rotate(tenant.id, use, grace);
      const what = use === 'enc' ? 'encryption' : 'signing';
      return {
        result: {
          message: `New ${what} key ${active.kid} is active; ${replaced.length} previous key(s) ${grace === 0 ? 'retired' : `retiring after ${grace} s`}`,
          active,
          replaced,
        },
        pagination: null,
      };
    },
  });

  app.put<{ Body: ClientKeyBody }>('/v1/admin/client-key', {
    schema: { body: ClientKeyBody, response: { 200: ClientKeyResponse } },
    config: {
      dialect: 'problem',
      roles: ADMIN,
      objectName: 'clientKeyRequest',
      check: checkClientKey,
      audit: {
        action: 'client-key.register',
        target: (req) => ({ kid: (bodyOf(req).jwk as Record<string, unknown> | undefined)?.kid }),
      },
    },
    handler: async (request) => ({ result: await clientKeys.register(request.tenant!.id, request.body.jwk), pagination: null }),
  });

  app.get('/v1/admin/client-key', {
    schema: { response: { 200: ClientKeyResponse } },
    config: { dialect: 'problem', roles: ADMIN, objectName: 'clientKeyRequest', audit: { action: 'client-key.read' } },
    handler: async (request) => {
      const key = await clientKeys.get(request.tenant!.id);
      if (!key) throw Errors.clientKeyMissing();
      return { result: key, pagination: null };
    },
  });
};

export default adminKeyRoutes;
