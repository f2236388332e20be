// Schemas of the authentication and key-discovery routes (spec 2.2, 2.3).
import { Type, type Static } from '@sinclair/typebox';

export const AuthenticateBody = Type.Object(
  {
    username: Type.String({ minLength: 1, maxLength: 128 }),
    password: Type.String({ minLength: 1, maxLength: 8192 }),
  },
  { additionalProperties: false },
);
export type AuthenticateBody = Static<typeof AuthenticateBody>;

export const TokenResponse = Type.Object({ id_token: Type.String() });

export const PublicJwk = Type.Object(
  {
    kty: Type.String(),
    crv: Type.String(),
    x: Type.String(),
    y: Type.String(),
    kid: Type.String(),
    use: Type.String(),
    alg: Type.String(),
  },
  { additionalProperties: false },
);
export const Jwks = Type.Object({ keys: Type.Array(PublicJwk) });
