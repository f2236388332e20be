// PUT /v1/cards/{cardId}/pin (DESIGN §4), problem dialect: translates the tenant's PIN block to the
// core's PIN key in the tenant's HSM and hands the result to the connector. Nothing of it is kept.
import type { FastifyPluginAsync } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import { Identifier, type FieldError } from '../../schemas/common.js';
import { SetPinBody, SetPinResponse } from '../../schemas/pin.js';
import { HsmError, type TranslatePinBlockResult } from '../crypto/hsm/index.js';
import { PinBlockError, blockSizeOf } from '../crypto/pin-block.js';
import { Errors } from '../errors.js';

const OBJECT_NAME = 'setPinRequest';

const SetPinParams = Type.Object({ cardId: Identifier }, { additionalProperties: false });
type SetPinParams = Static<typeof SetPinParams>;

/**
 * The one answer to every block that fails after decryption (wrong key, wrong card, bad control or
 * length or fill): telling them apart would make the route an oracle for whoever probes it.
 */
const INVALID_BLOCK = "The PIN block is not valid for this card under the tenant's PIN key and the given format.";

/** The block's length is public: a 32-digit block with format 0 is a plain input mistake, named as such. */
function checkLength(body: SetPinBody): FieldError[] {
  const { pinBlock, format } = body;
  if (typeof pinBlock !== 'string' || pinBlock.length === blockSizeOf(format) * 2) return [];
  return [{ field: 'pinBlock', message: 'Size', objectName: OBJECT_NAME }];
}

const pinRoutes: FastifyPluginAsync = async (app) => {

  app.put<{ Params: SetPinParams; Body: SetPinBody }>('/v1/cards/:cardId/pin', {
    schema: { params: SetPinParams, body: SetPinBody, response: { 200: SetPinResponse } },
    config: {
      dialect: 'problem',
      roles: ['Admin', 'Operations', 'API Integration'],
      objectName: OBJECT_NAME,
      encryptedFields: [{ field: 'pinBlock' }],
      check: (req) => checkLength(req.body as SetPinBody),
      // Setting the same PIN twice is harmless, and an idempotency record would keep a digest of the block.
      idempotency: false,
      // The card only: never the block, the format or the key.
      audit: {
        action: 'card.set-pin',
        target: (req) => ({ cardId: (req.params as Partial<SetPinParams>)?.cardId }),
        event: { type: 'card.pin-set', payload: (_req, result) => ({ cardId: (result as { cardId: string }).cardId }) },
      },
    },
    handler: async (request) => {
      const tenant = request.tenant!;
      const { cardId } = request.params;
      const { pinBlock, format, keyId } = request.body;
      const pin = tenant.config.pin;
      if (!pin) {
        throw Errors.business(
          'PIN_NOT_CONFIGURED',
          `Tenant '${tenant.id}' has no PIN keys configured; the gateway operator must set its pin section (tenantKeyId, coreKeyId, coreFormat) before PINs can be set.`,
        );
      }
      const hsm = app.cardline.hsm?.forTenant(tenant.id);
      if (!hsm) throw Errors.unavailable('PIN translation is not available on this gateway.');
      const fromKeyId = keyId ?? pin.tenantKeyId;
      if (keyId !== undefined && keyId === pin.coreKeyId) {
        throw Errors.badRequest("keyId names the core's PIN key; send the block under one of the tenant's PIN keys.");
      }
      const card = await request.callCore('getCard', { cardId });

      let translated: TranslatePinBlockResult;
      try {
        translated = await hsm.translatePinBlock({
          pinBlock,
          format,
          pan: card.sensitive.pan,
          fromKeyId,
          toKeyId: pin.coreKeyId,
          toFormat: pin.coreFormat,
        });
      } catch (err) {
        if (err instanceof PinBlockError) {
          if (err.reason === 'pan') {
            request.log.error({ cardId }, 'the core returned a card number a PIN block cannot be bound to');
            throw Errors.internal();
          }
          // The reason helps an operator; the caller gets one answer whatever it is.
          request.log.info({ reason: err.reason }, 'PIN block refused');
          throw Errors.badRequest(INVALID_BLOCK);
        }
        if (err instanceof HsmError && err.keyId === fromKeyId && fromKeyId !== pin.tenantKeyId && err.reason === 'unknown-key') {
          throw Errors.badRequest(`The tenant has no PIN key '${fromKeyId}'.`);
        }
        if (err instanceof HsmError && err.keyId === fromKeyId && err.reason === 'key-type') {
          throw Errors.badRequest(`${err.message}; send a block of a format that key serves, or name another key with keyId.`);
        }
        if (err instanceof HsmError) {
          request.log.error({ reason: err.reason, keyId: err.keyId, detail: err.message }, 'PIN translation failed');
          throw Errors.unavailable(
            `PIN translation for tenant '${tenant.id}' is not available: its PIN key configuration or HSM needs attention from the gateway operator.`,
          );
        }
        throw err;
      }

      await request.callCore('setPin', { cardId, pinBlock: translated.pinBlock, format: translated.format, keyId: translated.keyId });
      return { result: { message: 'PIN set' }, pagination: null };
    },
  });
};

export default pinRoutes;
