// Schemas of the card routes (spec 2.5, 2.7, 4.3; preferences per DESIGN §3).
import { Type, type Static } from '@sinclair/typebox';
import { AmountOrZero, Identifier, PlainText, sensitive } from './common.js';

/** Spec 5.3 rule 2: address lines travel encrypted (a JWE string, decrypted before validation) and masked. */
const AddressLine = sensitive(PlainText(1, 2048));

export const CommunicationAddress = Type.Object(
  {
    address1: Type.Optional(AddressLine),
    address2: Type.Optional(AddressLine),
    city: Type.Optional(PlainText(1, 128)),
    state: Type.Optional(PlainText(1, 128)),
    country: Type.Optional(PlainText(1, 64)),
    pin: Type.Optional(PlainText(1, 16)),
    usePrimaryAddress: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type CommunicationAddress = Static<typeof CommunicationAddress>;

/** Address fields required unless usePrimaryAddress is true (DESIGN §3). */
export const REQUIRED_ADDRESS_FIELDS = ['address1', 'city', 'state', 'country', 'pin'] as const;

export const PlasticCode = Type.Object(
  {
    code: PlainText(1, 32),
    description: Type.Optional(Type.String({ maxLength: 256 })),
  },
  { additionalProperties: false },
);

export const ChannelPreference = Type.Object(
  {
    enabled: Type.Boolean(),
    dailyLimit: Type.Optional(AmountOrZero),
    dailyCount: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000 })),
  },
  { additionalProperties: false },
);

const channels = {
  atm: Type.Optional(ChannelPreference),
  pos: Type.Optional(ChannelPreference),
  ecom: Type.Optional(ChannelPreference),
  contactless: Type.Optional(ChannelPreference),
};

export const PreferenceCategory = Type.Object(
  { enabled: Type.Optional(Type.Boolean()), ...channels },
  { additionalProperties: false },
);

export const Preferences = Type.Object(
  { domestic: Type.Optional(PreferenceCategory), international: Type.Optional(PreferenceCategory) },
  { additionalProperties: false },
);
export type Preferences = Static<typeof Preferences>;

export const PhysicalUpgradeBody = Type.Object(
  {
    kitNo: PlainText(1, 64),
    entityId: Type.Optional(Identifier),
    cardId: Type.Optional(Identifier),
    communicationAddress: Type.Optional(CommunicationAddress),
    plasticCodeDto: Type.Optional(PlasticCode),
    lockOnUpgrade: Type.Optional(Type.Boolean({ default: false })),
    preferences: Type.Optional(Preferences),
  },
  { additionalProperties: false },
);
export type PhysicalUpgradeBody = Static<typeof PhysicalUpgradeBody>;

export const PhysicalUpgradeResponse = Type.Object({
  result: Type.Object({ message: Type.String() }),
  pagination: Type.Null(),
});
