// Shared schema primitives: the single source for validation, types and OpenAPI.
import { Type, type Static } from '@sinclair/typebox';

/** Money is a decimal string, never a float (DESIGN §3): at most 15 integer digits and two decimals. */
export const AMOUNT_PATTERN = '^\\d{1,15}(\\.\\d{1,2})?$';
/** The same, excluding zero (0, 0.0, 000.00): a credit limit is positive. */
export const MONEY_PATTERN = '^(?!0+(\\.0{1,2})?$)\\d{1,15}(\\.\\d{1,2})?$';
export const Money = Type.String({ pattern: MONEY_PATTERN, description: 'a positive decimal string with at most two decimals' });
export const AmountOrZero = Type.String({ pattern: AMOUNT_PATTERN, description: 'a decimal string with at most two decimals' });

/** A string of one of `values`, typed as their union (a plain `enum` in the document, unlike a union of literals). */
export const stringEnum = <T extends readonly string[]>(values: T, description: string) =>
  Type.Unsafe<T[number]>({ type: 'string', enum: [...values], description });

/** No C0/C1 control character (a line break starts a CSV row); an explicit class, as tools misread `\p{Cc}`. */
export const CONTROL_CHARACTERS = '\\x00-\\x1F\\x7F-\\x9F';
export const PLAIN_TEXT_PATTERN = `^[^${CONTROL_CHARACTERS}]*$`;
/** Text of `minLength`..`maxLength` characters without control characters: an identifier, a name, an address line. */
export const PlainText = (minLength: number, maxLength: number) =>
  Type.String({ minLength, maxLength, pattern: PLAIN_TEXT_PATTERN, description: 'text without control characters (U+0000-U+001F, U+007F-U+009F)' });

export const Identifier = PlainText(1, 64);

/** Bidi_Control and zero-width format characters: a name holding one can show reversed or as another's. */
export const INVISIBLE_CHARACTERS = '\\u061C\\u180E\\u200B-\\u200F\\u202A-\\u202E\\u2060-\\u2064\\u2066-\\u2069\\uFEFF';
export const DISPLAY_NAME_PATTERN = `^[^${CONTROL_CHARACTERS}${INVISIBLE_CHARACTERS}]*$`;
/** A name people read and tell apart (a tenant's, an entity's): plain text without invisible characters either. */
export const DisplayName = (minLength: number, maxLength: number) =>
  Type.String({
    minLength,
    maxLength,
    pattern: DISPLAY_NAME_PATTERN,
    description:
      'text without control characters (U+0000-U+001F, U+007F-U+009F), bidirectional controls (U+061C, U+200E, U+200F, U+202A-U+202E, ' +
      'U+2066-U+2069) or zero-width characters (U+180E, U+200B-U+200D, U+2060-U+2064, U+FEFF)',
  });

/** Symbol key, so that ajv (strict) and the schema's JSON never see it (decision 0019). */
const SENSITIVE = Symbol.for('cardline.sensitive');

/** Marks a string field sensitive (decision 0019): it may arrive as a JWE to the tenant's key, and logs mask it. */
export const sensitive = <T extends import('@sinclair/typebox').TSchema>(schema: T): T => ({ ...schema, [SENSITIVE]: true });
export const isSensitive = (schema: unknown): boolean =>
  typeof schema === 'object' && schema !== null && (schema as Record<symbol, unknown>)[SENSITIVE] === true;

export const ROLES = ['Admin', 'Operations', 'API Integration', 'Read-Only'] as const;
export const Role = Type.Union(ROLES.map((r) => Type.Literal(r)));
export type Role = (typeof ROLES)[number];

/** Envelope of spec 2.6 (credit-line operations). */
export const EnvelopeException = Type.Object({
  errorCode: Type.String(),
  shortMessage: Type.String(),
  detailMessage: Type.String(),
});
export const envelopeOf = <T extends import('@sinclair/typebox').TSchema>(result: T) =>
  Type.Object({
    result: Type.Union([result, Type.Null()]),
    exception: Type.Union([EnvelopeException, Type.Null()]),
    pagination: Type.Null(),
  });

/** Envelope of spec 2.7 (card operations): the result and a null pagination. */
export const cardEnvelopeOf = <T extends import('@sinclair/typebox').TSchema>(result: T) =>
  Type.Object({ result, pagination: Type.Null() });

/** Problem record of spec 2.8. */
export const FieldError = Type.Object({ field: Type.String(), message: Type.String(), objectName: Type.String() });
export type FieldError = Static<typeof FieldError>;
export const Problem = Type.Object({
  type: Type.String(),
  title: Type.String(),
  status: Type.Integer(),
  message: Type.String(),
  fieldErrors: Type.Optional(Type.Array(FieldError)),
  detail: Type.Optional(Type.String()),
  businessCode: Type.Optional(Type.String()),
});
export type Problem = Static<typeof Problem>;

/** Symbol key (like SENSITIVE): how the OpenAPI document describes a query value that ajv checks as a string. */
const DOCUMENTED = Symbol.for('cardline.documented');

/** Query values arrive as strings (ajv does not coerce): documented as sent, with the bounds the operation checks. */
export const documentedAs = <T extends import('@sinclair/typebox').TSchema>(schema: T, documented: Record<string, unknown>): T => ({
  ...schema,
  [DOCUMENTED]: documented,
});
export const documentedFormOf = (schema: unknown): Record<string, unknown> | undefined =>
  typeof schema === 'object' && schema !== null ? ((schema as Record<symbol, unknown>)[DOCUMENTED] as Record<string, unknown> | undefined) : undefined;

/** A page size: digits at run time (then `Min`/`Max` from the operation's check), an integer 1..max in the document. */
export const PageLimit = (max: number, byDefault: number) => {
  const description = `1..${max}, default ${byDefault}`;
  return documentedAs(Type.String({ pattern: '^\\d{1,6}$', description }), { type: 'integer', minimum: 1, maximum: max, default: byDefault, description });
};

/** A calendar day as the document shows it: format `date` (a day that exists), year 0001 or later. */
export const DAY_PATTERN = '^(?!0000)\\d{4}-\\d{2}-\\d{2}$';
/** A day, YYYY-MM-DD: the route checks the digits, the operation that the day exists (`isDay`). */
export const Day = (description: string) =>
  documentedAs(Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description }), { type: 'string', format: 'date', pattern: DAY_PATTERN, description });
