// Schemas of a tenant's cores as its Admin (and its operator) sees them: each named connector with what it
// offers, what is routed to it and how it has been doing; and the shadow core's divergences and summary.
import { Type, type Static } from '@sinclair/typebox';
import { PageLimit } from './common.js';

const Window = Type.Object({
  windowSeconds: Type.Integer({ description: 'how far back the figures go' }),
  calls: Type.Integer(),
  failures: Type.Integer({ description: 'calls the core failed (unavailable, timed out, answered what the connector could not read); refusals are answers' }),
  errorRate: Type.Number({ description: 'failures / calls; 0 without calls' }),
  latencyMs: Type.Object({ avg: Type.Number(), max: Type.Number() }),
});

export const ConnectorView = Type.Object({
  name: Type.String({ description: "the connector's name in the configuration (its id when the tenant has one)" }),
  id: Type.String({ description: 'the connector: mock, rest, file, or a plugin id' }),
  started: Type.Boolean(),
  /** Why it is not started, when it is not. */
  problem: Type.Union([Type.String(), Type.Null()]),
  offers: Type.Array(Type.String(), { description: 'the core operations it offers' }),
  routed: Type.Array(Type.String(), { description: 'the core operations routed to it' }),
  shadows: Type.Array(Type.String(), { description: 'the operations it runs in shadow for' }),
  breaker: Type.Union([Type.Literal('closed'), Type.Literal('half-open'), Type.Literal('open'), Type.Null()], { description: 'its circuit breaker, when it has one' }),
  recent: Window,
});
export type ConnectorView = Static<typeof ConnectorView>;

export const ConnectorsResponse = Type.Object({ result: Type.Array(ConnectorView), pagination: Type.Null() });

export const SHADOW_PAGE_MAX = 200;

export const DivergenceQuery = Type.Object(
  {
    limit: Type.Optional(PageLimit(SHADOW_PAGE_MAX, 50)),
    cursor: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$', description: '`pagination.nextCursor` of the previous page' })),
  },
  { additionalProperties: false },
);

export const DivergenceView = Type.Object({
  id: Type.String(),
  at: Type.String({ description: 'when the shadow answered' }),
  operation: Type.String(),
  connector: Type.String({ description: 'the shadow connector' }),
  requestId: Type.String({ description: 'the request whose call was copied' }),
  differences: Type.Array(
    Type.Object({
      path: Type.String({ description: 'the field, `.`-separated (array items by index)' }),
      primary: Type.Unknown({ description: "the primary's value; \"***\" for a sensitive field" }),
      shadow: Type.Unknown({ description: "the shadow's value; \"***\" for a sensitive field" }),
    }),
  ),
});

/** Newest first; `nextCursor` names the next (older) page, null on the last. */
export const DivergencePageResponse = Type.Object({
  result: Type.Array(DivergenceView),
  pagination: Type.Object({ nextCursor: Type.Union([Type.String(), Type.Null()]) }),
});

export const ShadowSummaryResponse = Type.Object({
  result: Type.Array(
    Type.Object({
      operation: Type.String(),
      calls: Type.Integer(),
      match: Type.Integer(),
      diverged: Type.Integer(),
      error: Type.Integer(),
      dropped: Type.Integer({ description: 'calls not copied because the shadow queue was full' }),
      matchRate: Type.Union([Type.Number(), Type.Null()], { description: 'match / (match + diverged)' }),
    }),
  ),
  pagination: Type.Null(),
});
