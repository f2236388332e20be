// The list of channel types as the rest of the gateway asks it: a type by name, the field errors of a create
// body or a PATCH, the business codes the channel operations answer, and the senders of a process.
import type { BusinessCodeId } from '../../../schemas/business-codes.js';
import type { FieldError } from '../../../schemas/common.js';
import { CHANNEL_TYPES, type ChannelTypeName } from './index.js';
import { isOptional } from './schemas.js';
import type { ChannelSender, ChannelTypeDeclaration, SenderContext } from './type.js';

const BY_NAME = new Map<string, ChannelTypeDeclaration>(CHANNEL_TYPES.map((d) => [d.type, d]));

/** The type's declaration; undefined for a name the list does not hold (a store written by a newer version). */
export const channelTypeOf = (name: string): ChannelTypeDeclaration | undefined => BY_NAME.get(name);

export const CHANNEL_TYPE_NAMES: readonly ChannelTypeName[] = CHANNEL_TYPES.map((d) => d.type);

/** Every type's own fields, in list order. */
const OWN_FIELDS = [...new Set(CHANNEL_TYPES.flatMap((d) => Object.keys(d.fields)))];

const unique = <T>(values: T[]): T[] => [...new Set(values)];

/** The refusals the channel operations document, in list order. */
export const CHANNEL_REFUSALS: { create: BusinessCodeId[]; update: BusinessCodeId[] } = {
  create: unique(CHANNEL_TYPES.flatMap((d) => d.refusals.create)),
  update: unique(CHANNEL_TYPES.flatMap((d) => d.refusals.update)),
};

/** A body's fields as its type wants them: a missing required one is `NotNull`, another type's `UnknownProperty`. */
export function typeFieldErrors(
  body: Readonly<Record<string, unknown>>,
  type: string,
  objectName: string,
  mode: 'create' | 'patch',
): FieldError[] {
  const d = channelTypeOf(type);
  const errors: FieldError[] = [];
  for (const field of OWN_FIELDS) {
    const own = d?.fields[field];
    const allowed = own !== undefined && (mode === 'create' || d!.patchable.includes(field));
    if (body[field] === undefined) {
      if (mode === 'create' && own !== undefined && !isOptional(own)) errors.push({ field, message: 'NotNull', objectName });
    } else if (!allowed) {
      errors.push({ field, message: 'UnknownProperty', objectName });
    }
  }
  return errors;
}

/** A declaration's own fields of a body: what it is given to check and store. */
export const ownFieldsOf = (body: Readonly<Record<string, unknown>>, d: ChannelTypeDeclaration): Record<string, unknown> =>
  Object.fromEntries(Object.keys(d.fields).filter((f) => body[f] !== undefined).map((f) => [f, body[f]]));

/** Each type's sender in this process, made with the services and closed with them. */
export class ChannelSenders {
  private readonly senders = new Map<string, ChannelSender>();

  /** `overrides` replace a type's sender (tests). */
  constructor(ctx: SenderContext, overrides: Partial<Record<ChannelTypeName, ChannelSender>> = {}) {
    for (const d of CHANNEL_TYPES) this.senders.set(d.type, overrides[d.type] ?? d.sender(ctx));
  }

  of(type: string): ChannelSender | undefined {
    return this.senders.get(type);
  }

  async close(): Promise<void> {
    await Promise.all([...this.senders.values()].map((s) => s.close()));
  }
}
