// Schemas of the customer routes (spec §1 "customer management"): business entities, their contact and
// primary address (sensitive: masked in answers, in full only as JWEs to the tenant's client key), and the
// card issue and replacement that complete a card's life.
import { Type, type Static } from '@sinclair/typebox';
import { CardView } from './card-lifecycle-routes.js';
import { DisplayName, Identifier, Money, PlainText, cardEnvelopeOf, sensitive, stringEnum } from './common.js';

export const ENTITY_TYPES = ['INDIVIDUAL', 'BUSINESS'] as const;
export type EntityType = (typeof ENTITY_TYPES)[number];

/** Why a card is replaced; the card must be BLOCKED first (an expired card too). */
export const REPLACEMENT_REASONS = ['LOST', 'STOLEN', 'DAMAGED', 'EXPIRED'] as const;
export type ReplacementReason = (typeof REPLACEMENT_REASONS)[number];

/** One enum, so that a wrong value is one `Invalid` field error (as the block reason is). */
export const EntityTypeSchema = stringEnum(ENTITY_TYPES, 'INDIVIDUAL or BUSINESS');
export const ReplacementReasonSchema = stringEnum(REPLACEMENT_REASONS, 'why the card is replaced');

/** Patterns, not formats: the core protocol's schemas are checked with TypeBox's Value, which knows no formats. */
export const EMAIL_PATTERN = '^[^@\\s]{1,64}@[^@\\s]+\\.[^@\\s]+$';
/** E.164: a plus, a country code and the number, 8 to 15 digits in all. */
export const MOBILE_PATTERN = '^\\+[1-9]\\d{7,14}$';

/** Contact details: personal data, sent plain or as JWEs to the tenant's key, masked in every answer. */
export const Contact = Type.Object(
  {
    email: sensitive(Type.String({ minLength: 3, maxLength: 254, pattern: EMAIL_PATTERN })),
    mobile: sensitive(Type.String({ minLength: 9, maxLength: 16, pattern: MOBILE_PATTERN })),
  },
  { additionalProperties: false },
);
export type Contact = Static<typeof Contact>;

/** Address lines are encrypted and masked in transit (spec 5.3 rule 2), as on the physical upgrade. */
const AddressLine = sensitive(PlainText(1, 2048));

/** An entity's primary address: what `usePrimaryAddress: true` sends a physical card to. */
export const PrimaryAddress = Type.Object(
  {
    address1: AddressLine,
    address2: Type.Optional(AddressLine),
    city: PlainText(1, 128),
    state: PlainText(1, 128),
    country: PlainText(1, 64),
    pin: PlainText(1, 16),
  },
  { additionalProperties: false },
);
export type PrimaryAddress = Static<typeof PrimaryAddress>;

/** POST /v1/entities. `entityId` is the core's to assign when left out. */
export const RegisterEntityBody = Type.Object(
  {
    entityId: Type.Optional(Identifier),
    name: DisplayName(1, 256),
    type: EntityTypeSchema,
    contact: Contact,
    primaryAddress: PrimaryAddress,
    creditLimit: Money,
    issueVirtualCard: Type.Optional(Type.Boolean({ default: true })),
  },
  { additionalProperties: false },
);
export type RegisterEntityBody = Static<typeof RegisterEntityBody>;

/** PATCH /v1/entities/{entityId}: each part given replaces that part whole; at least one (checked by the route). */
export const UpdateEntityBody = Type.Object(
  { contact: Type.Optional(Contact), primaryAddress: Type.Optional(PrimaryAddress) },
  { additionalProperties: false },
);
export type UpdateEntityBody = Static<typeof UpdateEntityBody>;
export const ENTITY_PARTS = ['contact', 'primaryAddress'] as const;

/** POST /v1/cards/{cardId}/replace: a virtual replacement, or a physical one on `kitNo`. */
export const ReplaceCardBody = Type.Object(
  { reason: ReplacementReasonSchema, kitNo: Type.Optional(PlainText(1, 64)) },
  { additionalProperties: false },
);
export type ReplaceCardBody = Static<typeof ReplaceCardBody>;

const Decimal = (description: string) => Type.String({ description: `${description}: a decimal string` });

/** The personal data of an entity, each value a compact JWE to the tenant's client key (decision 0020). */
export const SensitiveEntityFields = Type.Object(
  {
    email: Type.String(),
    mobile: Type.String(),
    address1: Type.String(),
    address2: Type.Optional(Type.String()),
  },
  { additionalProperties: false, description: 'each value a compact JWE to the tenant client key' },
);

/** An entity as the gateway shows it: contact and address lines masked; `sensitive` when a client key is registered. */
export const EntityView = Type.Object({
  entityId: Type.String(),
  name: Type.String(),
  type: EntityTypeSchema,
  contact: Type.Object({ email: Type.String({ description: 'masked' }), mobile: Type.String({ description: 'masked' }) }),
  primaryAddress: Type.Object({
    address1: Type.String({ description: 'masked' }),
    address2: Type.Optional(Type.String({ description: 'masked' })),
    city: Type.String(),
    state: Type.String(),
    country: Type.String(),
    pin: Type.String(),
  }),
  creditLimit: Decimal('the credit limit'),
  outstanding: Decimal('what the entity owes'),
  availableCredit: Decimal('credit limit minus outstanding'),
  cardCount: Type.Integer({ minimum: 0 }),
  sensitive: Type.Optional(SensitiveEntityFields),
});
export type EntityView = Static<typeof EntityView>;

export const EntityResponse = cardEnvelopeOf(EntityView);
export const EntityRegisteredResponse = cardEnvelopeOf(
  Type.Object({ message: Type.String(), entity: EntityView, card: Type.Optional(CardView) }),
);
export const EntityUpdatedResponse = cardEnvelopeOf(Type.Object({ message: Type.String(), entity: EntityView }));
export const CardIssuedResponse = cardEnvelopeOf(Type.Object({ message: Type.String(), card: CardView }));
export const CardReplacedResponse = cardEnvelopeOf(Type.Object({ message: Type.String(), replacedCardId: Type.String(), card: CardView }));
