// PUT /v1/cards/{cardId}/pin (DESIGN §4): the tenant's PIN block is translated to the core's PIN key by the
// HSM service and handed to the connector. Nothing of it is kept in clear: no event payload, and an
// Idempotency-Key's record holds a keyed fingerprint of the body, never the block or a plain digest of it.
import { Type, type Static } from '@sinclair/typebox';
import { Identifier, type FieldError } from '../../schemas/common.js';
import { SetPinBody, SetPinResponse } from '../../schemas/pin.js';
import { blockSizeOf } from '../crypto/pin-block.js';
import { Errors } from '../errors.js';
import { INVALID_PIN_BLOCK } from '../services/identity/pins.js';
import { defineOperation } from './define.js';

const OBJECT_NAME = 'setPinRequest';

const SetPinParams = Type.Object({ cardId: Identifier }, { additionalProperties: false });

/** The block's length is public: a 32-digit block with format 0 is a plain input mistake, named as such. */
function checkLength(body: Static<typeof SetPinBody>): FieldError[] {
  return body.pinBlock.length === blockSizeOf(body.format) * 2 ? [] : [{ field: 'pinBlock', message: 'Size', objectName: OBJECT_NAME }];
}

export const pinOperations = [
  defineOperation({
    id: 'card.set-pin',
    method: 'PUT',
    url: '/v1/cards/:cardId/pin',
    summary: "Set a card's PIN from an ISO 9564-1 PIN block",
    description:
      "The block (format 0, 3 or 4, hex) is enciphered under the tenant's PIN key, or under `keyId`, and may additionally be " +
      "sent as a compact JWE. It is translated to the core's PIN key inside the HSM and never stored or logged.",
    tag: 'PIN',
    dialect: 'problem',
    access: 'card-write',
    objectName: OBJECT_NAME,
    params: SetPinParams,
    body: SetPinBody,
    response: SetPinResponse,
    encryptedFields: [{ field: 'pinBlock' }],
    check: ({ body }) => checkLength(body),
    // The body holds a PIN block: fingerprinted under the gateway's key, never a plain digest (decision 0175).
    idempotent: 'sealed',
    callsCore: true,
    refusals: ['PIN_NOT_CONFIGURED', 'CARD_NOT_FOUND', 'CARD_STATE_INVALID'],
    errors: [
      Errors.badRequest(INVALID_PIN_BLOCK),
      Errors.unavailable("PIN translation for tenant 'demo' is not available: its PIN key configuration or HSM needs attention from the gateway operator."),
    ],
    execute: async ({ params, body, tenant, core, services, log }) => {
      const route = services.pins.route(tenant, body.keyId);
      const card = await core('getCard', { cardId: params.cardId });
      const block = await services.pins.translate(route, body, card.sensitive.pan, log);
      return core('setPin', { cardId: params.cardId, ...block });
    },
    view: () => ({ result: { message: 'PIN set' }, pagination: null }),
    // The card only: never the block, the format or the key.
    audit: { target: { cardId: 'params' } },
    event: { type: 'card.pin-set', payload: (r) => ({ cardId: r.cardId }) },
  }),
];
