// PIN management (DESIGN §4): the set-PIN request and answer, and a tenant's PIN key configuration.
import { Type, type Static } from '@sinclair/typebox';

/** ISO 9564-1 formats the gateway accepts: 0 and 3 (2-key TDES, 8-byte blocks), 4 (AES, 16-byte blocks). */
export const PinBlockFormat = Type.Union([Type.Literal(0), Type.Literal(3), Type.Literal(4)]);
export type PinBlockFormat = Static<typeof PinBlockFormat>;

/** An HSM key id: scoped to the tenant, never a secret. */
export const PIN_KEY_ID_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$';
export const PinKeyId = Type.String({ pattern: PIN_KEY_ID_PATTERN });

/** A tenant's PIN translation: from its zone PIN key to the core's key and format; without it set-PIN answers 409. */
export const TenantPinConfig = Type.Object(
  {
    tenantKeyId: PinKeyId,
    coreKeyId: PinKeyId,
    coreFormat: PinBlockFormat,
  },
  { additionalProperties: false },
);
export type TenantPinConfig = Static<typeof TenantPinConfig>;

/** 16 hex digits (formats 0, 3) or 32 (format 4); which one the format needs is checked after the schema. */
export const PIN_BLOCK_PATTERN = '^[0-9A-Fa-f]{16}([0-9A-Fa-f]{16})?$';

/** PUT /v1/cards/{cardId}/pin: `pinBlock` under the tenant's PIN key, optionally inside a JWE. */
export const SetPinBody = Type.Object(
  {
    pinBlock: Type.String({ pattern: PIN_BLOCK_PATTERN }),
    format: PinBlockFormat,
    keyId: Type.Optional(PinKeyId),
  },
  { additionalProperties: false },
);
export type SetPinBody = Static<typeof SetPinBody>;

export const SetPinResponse = Type.Object(
  {
    result: Type.Object({ message: Type.String() }, { additionalProperties: false }),
    pagination: Type.Null(),
  },
  { additionalProperties: false },
);
export type SetPinResponse = Static<typeof SetPinResponse>;
