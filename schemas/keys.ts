// Schemas of key management (DESIGN §4): the tenant's client key for response fields, the gateway's key
// lifecycle (Admin routes) and the encrypted card fields of a card read.
import { Type, type Static } from '@sinclair/typebox';
import { PublicJwk } from './auth.js';
import { cardEnvelopeOf } from './common.js';

/** A P-256 coordinate: 32 bytes, base64url without padding. */
const Coordinate = Type.String({ pattern: '^[A-Za-z0-9_-]{43}$' });

/** The tenant's public P-256 JWK for encrypted response fields; a private `d` is refused; no `kid`: its thumbprint. */
export const ClientJwk = Type.Object(
  {
    kty: Type.Literal('EC'),
    crv: Type.Literal('P-256'),
    x: Coordinate,
    y: Coordinate,
    kid: Type.Optional(Type.String({ minLength: 1, maxLength: 128, pattern: '^[\\w.:-]+$' })),
    use: Type.Optional(Type.Literal('enc')),
    alg: Type.Optional(Type.Literal('ECDH-ES+A256KW')),
  },
  { additionalProperties: false },
);
export type ClientJwk = Static<typeof ClientJwk>;

/** The client key as stored and returned: kid, use and alg always present. */
export const RegisteredClientJwk = Type.Object({
  kty: Type.Literal('EC'),
  crv: Type.Literal('P-256'),
  x: Type.String(),
  y: Type.String(),
  kid: Type.String(),
  use: Type.Literal('enc'),
  alg: Type.Literal('ECDH-ES+A256KW'),
});
export type RegisteredClientJwk = Static<typeof RegisteredClientJwk>;

export const ClientKeyBody = Type.Object({ jwk: ClientJwk }, { additionalProperties: false });
export type ClientKeyBody = Static<typeof ClientKeyBody>;

export const ClientKeyView = Type.Object({ jwk: RegisteredClientJwk, registeredAt: Type.String() });
export type ClientKeyView = Static<typeof ClientKeyView>;
export const ClientKeyResponse = cardEnvelopeOf(ClientKeyView);

/** A gateway public key as the Admin listing shows it (never the private half). */
export const GatewayKeyView = Type.Object({
  kid: Type.String(),
  use: Type.Union([Type.Literal('enc'), Type.Literal('sig')]),
  alg: Type.String(),
  status: Type.Union([Type.Literal('active'), Type.Literal('retiring'), Type.Literal('retired')]),
  createdAt: Type.String(),
  retireAt: Type.Union([Type.String(), Type.Null()]),
  publicJwk: PublicJwk,
});
export const GatewayKeyList = cardEnvelopeOf(Type.Array(GatewayKeyView));
/** One gateway key, as retiring it answers. */
export const GatewayKeyResponse = cardEnvelopeOf(GatewayKeyView);

/** A gateway key named in the path: a kid as the gateway assigns them (a UUID) or as older stores hold them. */
export const KidParams = Type.Object({ kid: Type.String({ minLength: 1, maxLength: 128, pattern: '^[\\w.:-]+$' }) }, { additionalProperties: false });
export type KidParams = Static<typeof KidParams>;

/** POST /v1/admin/keys/rotate. Without graceSeconds: 24 h for enc, token lifetime + 300 s for sig. */
export const RotateKeysBody = Type.Object(
  {
    use: Type.Union([Type.Literal('enc'), Type.Literal('sig')]),
    graceSeconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 90 * 24 * 3600 })),
  },
  { additionalProperties: false },
);
export type RotateKeysBody = Static<typeof RotateKeysBody>;

export const RotateKeysResponse = cardEnvelopeOf(
  Type.Object({
    message: Type.String(),
    active: GatewayKeyView.properties.publicJwk,
    replaced: Type.Array(
      Type.Object({
        kid: Type.String(),
        status: Type.Union([Type.Literal('retiring'), Type.Literal('retired')]),
        retireAt: Type.String(),
      }),
    ),
  }),
);

/**
 * A card's sensitive data, each a JWE to the tenant's client key with the bare value as plaintext;
 * present once a client key is registered, `cvv` only when the core returned one.
 */
export const SensitiveCardFields = Type.Object({
  pan: Type.String(),
  cvv: Type.Optional(Type.String()),
  expiry: Type.String(),
});
export type SensitiveCardFields = Static<typeof SensitiveCardFields>;
