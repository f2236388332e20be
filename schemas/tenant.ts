// A tenant's configuration, validated when a tenant is created or loaded (DESIGN §3, §6).
import { Type, type Static } from '@sinclair/typebox';
import { Money } from './common.js';

export const TENANT_ID_PATTERN = '^[a-z0-9][a-z0-9-]{0,62}$';

export const TenantConfig = Type.Object(
  {
    connector: Type.Object(
      {
        /** A built-in connector's id, or the id an external module's definition declares. */
        id: Type.String({ minLength: 1 }),
        /**
         * An external connector: a path (relative to the gateway's working directory, or absolute) or a
         * package name, whose default export is a connector definition with the id above.
         */
        module: Type.Optional(Type.String({ minLength: 1 })),
        options: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
      },
      { additionalProperties: false },
    ),
    tokenLifetimeSeconds: Type.Integer({ minimum: 60, maximum: 86_400, default: 3600 }),
    creditLimit: Type.Object(
      {
        maximum: Money,
        allowDecrease: Type.Boolean(),
      },
      { additionalProperties: false },
    ),
    encryption: Type.Object(
      {
        /** When false (the default) a password must arrive as a JWE. */
        allowPlaintextPassword: Type.Boolean(),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);
export type TenantConfig = Static<typeof TenantConfig>;

export const DEFAULT_TENANT_CONFIG: TenantConfig = {
  connector: { id: 'mock', options: {} },
  tokenLifetimeSeconds: 3600,
  creditLimit: { maximum: '1000000.00', allowDecrease: false },
  encryption: { allowPlaintextPassword: false },
};
