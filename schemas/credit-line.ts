// Schemas of the credit-line routes (spec 2.4, 4.2).
import { Type, type Static } from '@sinclair/typebox';
import { Identifier, Money, envelopeOf } from './common.js';

export const UpgradeLimitBody = Type.Object(
  { entityId: Identifier, amount: Money },
  { additionalProperties: false },
);
export type UpgradeLimitBody = Static<typeof UpgradeLimitBody>;

export const UpgradeLimitResponse = envelopeOf(Type.Boolean());
