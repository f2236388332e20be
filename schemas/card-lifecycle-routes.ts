// Schemas of the card lifecycle routes: activate, lock, unlock, block, card reads, preferences and the
// sandbox fulfilment helper (DESIGN §3). The states and transitions themselves live in card-lifecycle.ts.
import { Type, type Static } from '@sinclair/typebox';
import { BLOCK_REASONS, CARD_FORMS, CARD_STATES, FULFILMENT_STEPS } from './card-lifecycle.js';
import { PlasticCode, Preferences } from './cards.js';
import { Identifier, PlainText, cardEnvelopeOf } from './common.js';
import { SensitiveCardFields } from './keys.js';

/** A closed set as one `enum`, so a wrong value is one `Invalid` and a wrong type one `TypeMismatch`. */
const stringEnum = <T extends readonly string[]>(values: T, description: string) =>
  Type.Unsafe<T[number]>({ type: 'string', enum: [...values], description });

export const BlockReasonCode = stringEnum(BLOCK_REASONS, 'why the card is blocked permanently');

/** A kit number, bounded as on the physical-upgrade route. */
const KitNo = PlainText(1, 64);

export const CardIdParams = Type.Object({ cardId: Identifier }, { additionalProperties: false });
export type CardIdParams = Static<typeof CardIdParams>;

export const EntityIdParams = Type.Object({ entityId: Identifier }, { additionalProperties: false });
export type EntityIdParams = Static<typeof EntityIdParams>;

/** POST /card/activate: the card is named by cardId, entityId or kitNo; at least one (checked by the route). */
export const CardActivationBody = Type.Object(
  { cardId: Type.Optional(Identifier), entityId: Type.Optional(Identifier), kitNo: Type.Optional(KitNo) },
  { additionalProperties: false },
);
export type CardActivationBody = Static<typeof CardActivationBody>;

/** Identifiers of which CardActivationBody needs at least one. */
export const CARD_REF_FIELDS = ['cardId', 'entityId', 'kitNo'] as const;

export const BlockCardBody = Type.Object({ reasonCode: BlockReasonCode }, { additionalProperties: false });
export type BlockCardBody = Static<typeof BlockCardBody>;

/** A card as shown: PAN, CVV and expiry never in clear (DESIGN §4). */
export const CardView = Type.Object({
  cardId: Type.String(),
  entityId: Type.String(),
  form: stringEnum(CARD_FORMS, 'VIRTUAL or PHYSICAL'),
  state: stringEnum(CARD_STATES, 'the card state (DESIGN §3)'),
  fulfilment: Type.Optional(stringEnum(FULFILMENT_STEPS, 'physical cards only')),
  kitNo: Type.Optional(Type.String()),
  panMasked: Type.String({ description: 'first six and last four digits, the rest masked' }),
  blockReason: Type.Optional(BlockReasonCode),
});
export type CardView = Static<typeof CardView>;

/** One card in full; `sensitive` (JWEs to the client key) only once a client key is registered (0020). */
export const CardDetailsView = Type.Composite([
  CardView,
  Type.Object({
    plasticCode: Type.Optional(PlasticCode),
    preferences: Type.Optional(Preferences),
    sensitive: Type.Optional(SensitiveCardFields),
  }),
]);
export type CardDetailsView = Static<typeof CardDetailsView>;

/** The card operation's envelope (spec 2.7): `result` holds the message, `pagination` is null. */
const cardEnvelope = cardEnvelopeOf;

export const CardOperationResponse = cardEnvelope(Type.Object({ message: Type.String(), card: CardView }));
export const CardListResponse = cardEnvelope(Type.Array(CardView));
export const CardResponse = cardEnvelope(CardDetailsView);

/** Preferences as stored and as applied: a disabled category disables its channels (decision 0010). */
export const PreferencesView = Type.Object({ cardId: Type.String(), preferences: Preferences, effective: Preferences });
export const PreferencesResponse = cardEnvelope(PreferencesView);
export const PreferencesUpdateResponse = cardEnvelope(
  Type.Composite([Type.Object({ message: Type.String() }), PreferencesView]),
);
