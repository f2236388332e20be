// The lists paged by key (tenants, a tenant's users, operator keys, admin users, channels): the query and the
// answer, the same shape as the transaction list's (`limit`, `cursor`, `pagination.nextCursor`).
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { PageLimit } from './common.js';

export const PAGE_MAX = 200;
export const PAGE_DEFAULT = 50;

/** Query values are strings (no coercion): `limit` digits, the cursor opaque. */
export const PageQuery = Type.Object(
  {
    limit: Type.Optional(PageLimit(PAGE_MAX, PAGE_DEFAULT)),
    cursor: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_-]{1,1024}$', description: '`pagination.nextCursor` of the previous page' })),
  },
  { additionalProperties: false },
);
export type PageQuery = Static<typeof PageQuery>;

/** In key order; `nextCursor` names the next page, null on the last. */
export const pageOf = <T extends TSchema>(item: T) =>
  Type.Object({
    result: Type.Array(item),
    pagination: Type.Object({ nextCursor: Type.Union([Type.String(), Type.Null()]) }),
  });
