// GET /v1/audit: the query (strict: unknown parameters are refused), a record as a tenant sees it, a page.
import { Type, type Static } from '@sinclair/typebox';
import { PageLimit, cardEnvelopeOf } from './common.js';

/** How a call ended, derived from its status; `replayed`: an idempotent duplicate answered again (src/plugins/audit.ts). */
export const AUDIT_OUTCOMES = ['succeeded', 'pending', 'unauthenticated', 'forbidden', 'refused', 'invalid', 'failed', 'replayed'] as const;
export type AuditOutcome = (typeof AUDIT_OUTCOMES)[number];

export const AUDIT_PAGE_MAX = 500;
export const AUDIT_PAGE_DEFAULT = 50;

const Text = (maxLength: number) => Type.String({ minLength: 1, maxLength });

/** `limit` is a digit string (no coercion, STYLE §6); its range (1..500) and the cursor are the route's to check. */
export const AuditQuery = Type.Object(
  {
    from: Type.Optional(Type.String({ format: 'date-time', description: 'inclusive lower bound of `at`, ISO 8601 with offset' })),
    to: Type.Optional(Type.String({ format: 'date-time', description: 'exclusive upper bound of `at`, ISO 8601 with offset' })),
    actor: Type.Optional(Text(128)),
    action: Type.Optional(Text(64)),
    outcome: Type.Optional(Type.Union(AUDIT_OUTCOMES.map((o) => Type.Literal(o)))),
    route: Type.Optional(Text(256)),
    targetId: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'matches any value of `target`' })),
    requestId: Type.Optional(Text(128)),
    kind: Type.Optional(
      Type.Union([Type.Literal('write'), Type.Literal('read')], { description: '`write`: only records of changes (every method but GET); `read`: only reads (GET)' }),
    ),
    limit: Type.Optional(PageLimit(AUDIT_PAGE_MAX, AUDIT_PAGE_DEFAULT)),
    cursor: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_-]{1,32}$', description: '`pagination.nextCursor` of the previous page' })),
  },
  { additionalProperties: false },
);
export type AuditQuery = Static<typeof AuditQuery>;

const Nullable = <T extends import('@sinclair/typebox').TSchema>(t: T, options: import('@sinclair/typebox').SchemaOptions = {}) => Type.Union([t, Type.Null()], options);

/** A record of the tenant's own trail; `hash` and `prevHash` let a client re-verify the chain. */
export const AuditRecordView = Type.Object({
  seq: Type.Integer({ minimum: 1 }),
  chain: Type.String({ description: "the writer's chain the record belongs to (one per gateway process writing at the same time, continued by later ones; `legacy` for records written before)" }),
  position: Type.Integer({ minimum: 1, description: 'the place of the record in its chain, from 1; `prevHash` is the hash of the record before it there' }),
  id: Type.String(),
  at: Type.String({ format: 'date-time' }),
  actor: Nullable(Type.String()),
  role: Nullable(Type.String()),
  action: Type.String(),
  method: Type.String(),
  route: Type.String(),
  target: Type.Record(Type.String(), Type.String()),
  outcome: Type.String(),
  status: Type.Integer(),
  requestId: Type.String(),
  origin: Nullable(Type.String()),
  hash: Type.String(),
  prevHash: Type.String(),
});
export type AuditRecordView = Static<typeof AuditRecordView>;

/** Newest first; `nextCursor` as on every list, `next` the same value for earlier clients (decision 0282). */
export const AuditPage = Type.Object({
  result: Type.Array(AuditRecordView),
  pagination: Type.Object({
    nextCursor: Nullable(Type.String()),
    next: Nullable(Type.String(), { deprecated: true, description: 'the same as `nextCursor`; kept for earlier clients, to be removed' }),
    limit: Type.Integer(),
  }),
});
export type AuditPage = Static<typeof AuditPage>;

/** One writer's chain as a checkpoint names it: its size and the hash of its last record. */
export const AuditChainHead = Type.Object({
  chain: Type.String(),
  size: Type.Integer({ minimum: 0 }),
  head: Type.String({ description: 'hex SHA-256 of the record at position `size`' }),
});

/**
 * A signed checkpoint (decision 0202): a compact ES256 JWS of the same fields; save it and prove later
 * that today's trail extends it: `npx cardline audit verify --tenant T --checkpoint FILE`.
 */
export const AuditCheckpoint = Type.Object({
  tenantId: Type.String(),
  at: Type.String({ format: 'date-time', description: 'when the checkpoint was taken' }),
  size: Type.Integer({ minimum: 0, description: 'records in the trail, all chains' }),
  root: Type.String({ description: 'hex SHA-256 over every chain and its size and head' }),
  chains: Type.Array(AuditChainHead),
  kid: Type.String(),
  jws: Type.String(),
});
export type AuditCheckpoint = Static<typeof AuditCheckpoint>;
export const AuditCheckpointResponse = cardEnvelopeOf(AuditCheckpoint);
