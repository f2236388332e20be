// The channel schemas composed from the list of channel types: the create body (one object at run time, so that
// a mistake answers one field error; a union discriminated by `type` in the documents), PATCH, the view and the
// answers that hold it. Named here for the documents and the SDK (CHANNEL_SCHEMAS): schemas/ may not read the list.
import { OptionalKind, Type, type Static, type TProperties, type TSchema } from '@sinclair/typebox';
import { CHANNEL_FIELDS, CHANNEL_PATCH_FIELDS, CHANNEL_VIEW_FIELDS, EventTypes, literals } from '../../../schemas/channels.js';
import { cardEnvelopeOf, documentedAs } from '../../../schemas/common.js';
import { pageOf } from '../../../schemas/page.js';
import { CHANNEL_TYPES, type ChannelTypeName } from './index.js';
import type { ChannelTypeDeclaration } from './type.js';

/** A schema whose static type is given: the composed schemas' fields are known only once the list is read. */
type Typed<S> = TSchema & { static: S };

export interface ChannelCreateBody {
  type: ChannelTypeName;
  eventTypes: Static<typeof EventTypes>;
  enabled?: boolean;
  description?: string;
  /** The type's own fields. */
  [field: string]: unknown;
}

export interface ChannelPatchBody {
  eventTypes?: Static<typeof EventTypes>;
  enabled?: boolean;
  description?: string | null;
  [field: string]: unknown;
}

export interface ChannelView {
  channelId: string;
  type: ChannelTypeName;
  eventTypes: string[];
  enabled: boolean;
  description?: string;
  disabledReason?: string;
  previousSecretUntil?: string;
  createdAt: string;
  updatedAt: string;
  [field: string]: unknown;
}

const NAMES = CHANNEL_TYPES.map((d) => d.type);
const DECLARATIONS: readonly ChannelTypeDeclaration[] = CHANNEL_TYPES;

export const isOptional = (schema: TSchema): boolean => (schema as unknown as Record<symbol, unknown>)[OptionalKind] === 'Optional';
/** What a field checks, whatever it says of itself. */
const constraintsOf = (schema: TSchema): string => JSON.stringify(schema, (key, value: unknown) => (key === 'description' ? undefined : value));

/** The types' fields by name, with the types declaring each; a shared field must check the same in both. */
export function fieldsOf(
  pick: (d: ChannelTypeDeclaration) => TProperties,
  declarations: readonly ChannelTypeDeclaration[] = DECLARATIONS,
): Map<string, { schema: TSchema; type: string }[]> {
  const out = new Map<string, { schema: TSchema; type: string }[]>();
  for (const d of declarations) {
    for (const [name, schema] of Object.entries(pick(d))) {
      const declared = out.get(name) ?? [];
      if (declared.length && constraintsOf(declared[0]!.schema) !== constraintsOf(schema)) {
        throw new Error(`Channel types ${declared[0]!.type} and ${d.type} both declare '${name}' but check it differently: rename one`);
      }
      if (name in CHANNEL_FIELDS || name === 'type') throw new Error(`Channel type ${d.type} declares '${name}', a field every channel has`);
      out.set(name, [...declared, { schema, type: d.type }]);
    }
  }
  return out;
}

/** A shared field as one schema: its own description when the types agree, else each type's. */
export function merged(declared: { schema: TSchema; type: string }[]): TSchema {
  const descriptions = [...new Set(declared.map(({ schema }) => (schema as { description?: string }).description).filter(Boolean))];
  const first = Type.Optional(declared[0]!.schema);
  if (descriptions.length <= 1) return first;
  return { ...first, description: declared.map(({ schema, type }) => `${type}: ${(schema as { description?: string }).description}`).join('; ') };
}

const pickFields = (d: ChannelTypeDeclaration) => d.fields;
const pickPatchable = (d: ChannelTypeDeclaration) => Object.fromEntries(d.patchable.map((name) => [name, d.fields[name]!]));

/** Each type's create body as the documents name it: `<name>ChannelCreateBody`. */
const createBodies = Object.fromEntries(
  DECLARATIONS.map((d) => [`${d.name}ChannelCreateBody`, Type.Object({ type: Type.Literal(d.type), ...CHANNEL_FIELDS, ...d.fields }, { additionalProperties: false })]),
);

/** POST /v1/admin/channels: one object checked per type at run time; the document shows the union. */
export const ChannelCreateBody = documentedAs(
  Type.Object(
    { type: literals(NAMES), ...CHANNEL_FIELDS, ...Object.fromEntries([...fieldsOf(pickFields)].map(([name, declared]) => [name, Type.Optional(declared[0]!.schema)])) },
    { additionalProperties: false },
  ),
  {
    oneOf: Object.values(createBodies),
    discriminator: { propertyName: 'type', mapping: Object.fromEntries(DECLARATIONS.map((d) => [d.type, `#/components/schemas/${d.name}ChannelCreateBody`])) },
  },
) as unknown as Typed<ChannelCreateBody>;

/** PATCH /v1/admin/channels/{channelId}: what changes; `description: null` removes it. The type stays. */
export const ChannelPatchBody = Type.Object(
  { ...CHANNEL_PATCH_FIELDS, ...Object.fromEntries([...fieldsOf(pickPatchable)].map(([name, declared]) => [name, merged(declared)])) },
  { additionalProperties: false, minProperties: 1 },
) as unknown as Typed<ChannelPatchBody>;

const { channelId, ...head } = CHANNEL_VIEW_FIELDS.head;
export const ChannelView = Type.Object({
  channelId,
  type: literals(NAMES),
  ...head,
  ...Object.fromEntries([...fieldsOf((d) => d.viewFields)].map(([name, declared]) => [name, Type.Optional(declared[0]!.schema)])),
  ...CHANNEL_VIEW_FIELDS.tail,
}) as unknown as Typed<ChannelView>;

/** A created channel or a rotated secret: the `whsec_` secret, shown this once. */
export const ChannelWithSecret = Type.Intersect([ChannelView, Type.Object({ secret: Type.Optional(Type.String({ description: 'shown once: keep it' })) })]);

export const ChannelResponse = cardEnvelopeOf(ChannelView);
export const ChannelSecretResponse = cardEnvelopeOf(ChannelWithSecret);
/** GET /v1/admin/channels: oldest first (by id, a UUIDv7), paged by key. */
export const ChannelPageResponse = pageOf(ChannelView);

/** The composed schemas by the names the documents and the SDK give them. */
export const CHANNEL_SCHEMAS: Readonly<Record<string, TSchema>> = {
  ChannelCreateBody,
  ...createBodies,
  ChannelPatchBody,
  ChannelView,
  ChannelWithSecret,
  ChannelResponse,
  ChannelSecretResponse,
  ChannelPageResponse,
};
