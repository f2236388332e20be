// Key management for the tenant's Admin (DESIGN §4), problem dialect: the gateway's keys (list, rotate, retire)
// and the tenant's client key for encrypted response fields (register, read).
import type { FieldError } from '../../schemas/common.js';
import { ClientKeyBody, ClientKeyResponse, GatewayKeyList, GatewayKeyResponse, KidParams, RotateKeysBody, RotateKeysResponse } from '../../schemas/keys.js';
import { isOnCurve } from '../crypto/client-keys.js';
import { defaultGraceSeconds } from '../crypto/keys.js';
import { KeyLifecycleError } from '../services/identity/key-ring.js';
import { Errors } from '../errors.js';
import { defineOperation } from './define.js';

/** What the schema cannot say: the coordinates must be a point on P-256. */
function checkClientKey(body: ClientKeyBody): FieldError[] {
  return isOnCurve(body.jwk) ? [] : [{ field: 'jwk', message: 'Invalid', objectName: 'clientKeyRequest' }];
}

export const adminKeyOperations = [
  defineOperation({
    id: 'keys.list',
    method: 'GET',
    url: '/v1/admin/keys',
    summary: "The tenant's gateway keys: public halves and lifecycle",
    tag: 'Keys',
    dialect: 'problem',
    access: 'admin',
    objectName: 'keysRequest',
    response: GatewayKeyList,
    execute: ({ tenant, services }) => services.keys.list(tenant.id),
    view: (keys) => ({ result: keys, pagination: null }),
    audit: {},
  }),

  defineOperation({
    id: 'keys.rotate',
    method: 'POST',
    url: '/v1/admin/keys/rotate',
    summary: 'Rotate the tenant\'s encryption or signing key',
    description:
      'A new active key; the replaced ones keep working until the grace ends (default 24 h for enc, token lifetime + 300 s for sig).',
    tag: 'Keys',
    dialect: 'problem',
    access: 'admin',
    objectName: 'keyRotationRequest',
    body: RotateKeysBody,
    response: RotateKeysResponse,
    approval: {},
    execute: async ({ tenant, body, services }) => {
      const grace = body.graceSeconds ?? defaultGraceSeconds(body.use, tenant.config.tokenLifetimeSeconds);
      return { grace, ...(await services.keys.rotate(tenant.id, body.use, grace)) };
    },
    view: ({ grace, active, replaced }, { body }) => {
      const what = body.use === 'enc' ? 'encryption' : 'signing';
      return {
        result: {
          message: `New ${what} key ${active.kid} is active; ${replaced.length} previous key(s) ${grace === 0 ? 'retired' : `retiring after ${grace} s`}`,
          active,
          replaced,
        },
        pagination: null,
      };
    },
    audit: { target: { use: 'body' } },
    event: {
      type: 'keys.rotated',
      payload: ({ active, replaced }, { body }) => ({ use: body.use, kid: String(active.kid), replaced: replaced.map((k) => k.kid) }),
    },
    examples: { body: { use: 'enc' } },
  }),

  defineOperation({
    id: 'keys.retire',
    method: 'POST',
    url: '/v1/admin/keys/:kid/retire',
    summary: 'Retire a replaced gateway key at once',
    description:
      'For a suspected compromise: a key that a rotation replaced stops being accepted and published now rather than when its grace ' +
      'ends. The active key of its use cannot be retired: rotate that use first.',
    tag: 'Keys',
    dialect: 'problem',
    access: 'admin',
    objectName: 'keyRetirementRequest',
    params: KidParams,
    response: GatewayKeyResponse,
    refusals: ['KEY_ACTIVE'],
    errors: [Errors.keyNotFound('0b5e9c1a-4f3d-4c1e-9a7b-2f6d8e1c3a5b')],
    execute: async ({ tenant, params, services }) => {
      try {
        return await services.keys.retire(tenant.id, params.kid);
      } catch (err) {
        if (err instanceof KeyLifecycleError && err.reason === 'unknown-key') throw Errors.keyNotFound(params.kid);
        if (err instanceof KeyLifecycleError && err.reason === 'active-key') throw Errors.business('KEY_ACTIVE', err.message);
        throw err;
      }
    },
    view: (key) => ({ result: key, pagination: null }),
    audit: { target: { kid: 'params' } },
    event: { type: 'keys.retired', payload: (key) => ({ use: key.use, kid: key.kid }) },
  }),

  defineOperation({
    id: 'client-key.register',
    method: 'PUT',
    url: '/v1/admin/client-key',
    summary: "Register the tenant's client key for encrypted response fields",
    description: 'An EC P-256 public JWK (no `d`); PAN, CVV and expiry of card reads are encrypted to it.',
    tag: 'Keys',
    dialect: 'problem',
    access: 'admin',
    objectName: 'clientKeyRequest',
    body: ClientKeyBody,
    response: ClientKeyResponse,
    check: ({ body }) => checkClientKey(body),
    execute: ({ tenant, body, services }) => services.clientKeys.register(tenant.id, body.jwk),
    view: (key) => ({ result: key, pagination: null }),
    audit: { target: { kid: 'body.jwk.kid' } },
  }),

  defineOperation({
    id: 'client-key.read',
    method: 'GET',
    url: '/v1/admin/client-key',
    summary: "The tenant's registered client key",
    tag: 'Keys',
    dialect: 'problem',
    access: 'admin',
    objectName: 'clientKeyRequest',
    response: ClientKeyResponse,
    errors: [Errors.clientKeyMissing()],
    execute: async ({ tenant, services }) => {
      const key = await services.clientKeys.get(tenant.id);
      if (!key) throw Errors.clientKeyMissing();
      return key;
    },
    view: (key) => ({ result: key, pagination: null }),
    audit: {},
  }),
];
