// Schemas of the credit-line routes (spec 2.4, 4.2).
import { Type, type Static } from '@sinclair/typebox';
import { Identifier, Money, envelopeOf } from './common.js';

export const UpgradeLimitBody = Type.Object(
  { entityId: Identifier, amount: Money },
  { additionalProperties: false },
);
export type UpgradeLimitBody = Static<typeof UpgradeLimitBody>;

export const UpgradeLimitResponse = envelopeOf(Type.Boolean());

/** POST .../fetchLimit: read an entity's credit limit (envelope dialect, like upgradeLimit). */
export const FetchLimitBody = Type.Object({ entityId: Identifier }, { additionalProperties: false });
export type FetchLimitBody = Static<typeof FetchLimitBody>;

export const FetchLimitResponse = envelopeOf(
  Type.Object({
    entityId: Type.String(),
    creditLimit: Type.String({ description: 'a decimal string: "50000.00"' }),
    outstanding: Type.String({ description: 'what the entity owes, a decimal string' }),
    availableCredit: Type.String({ description: 'creditLimit − outstanding, a decimal string' }),
  }),
);
