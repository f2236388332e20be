// A tenant's configuration, validated when a tenant is created or loaded (DESIGN §3, §6).
import { Type, type Static } from '@sinclair/typebox';
import { ApprovalPolicies } from './approvals.js';
import { Money, sensitive } from './common.js';
import { TenantPinConfig } from './pin.js';
import { COUNTRY_PATTERN } from './transactions.js';

export const DEFAULT_HOME_COUNTRY = 'PT';
export const DEFAULT_TIME_ZONE = 'UTC';
export const DEFAULT_CURRENCY = 'EUR';

export const TENANT_ID_PATTERN = '^[a-z0-9][a-z0-9-]{0,62}$';
/** An entry of encryption.requireEncryptedBody: `*`, or `[METHOD ]/path` with an optional trailing `*`. */
export const REQUIRE_ENCRYPTED_BODY_PATTERN = '^(\\*|((GET|POST|PUT|PATCH|DELETE) )?/[A-Za-z0-9._~:{}/-]*\\*?)$';

/** The decision endpoint's deadline (decision 0338): the default, and the most a card network's own timeout leaves. */
export const DECISION_DEADLINE_DEFAULT_MS = 1000;
export const DECISION_DEADLINE_MAX_MS = 3000;
export const DECISION_DEADLINE_MIN_MS = 100;
/** A Standard Webhooks secret: `whsec_` and base64 of 24 to 64 random bytes. */
export const DECISION_SECRET_PATTERN = '^whsec_[A-Za-z0-9+/]{32,86}={0,2}$';
export const STAND_INS = ['approve', 'decline'] as const;
export type StandIn = (typeof STAND_INS)[number];

/** The tenant's real-time decision endpoint (POST /v1/authorizations asks it after the spend controls). */
export const DecisionEndpointConfig = Type.Object(
  {
    url: Type.String({ minLength: 8, maxLength: 2048, description: 'https URL, under the same address policy as webhooks' }),
    /** Signs each request per Standard Webhooks; sealed in the store, never shown back or logged. */
    secret: sensitive(Type.String({ pattern: DECISION_SECRET_PATTERN, description: 'whsec_ and base64 of 24 to 64 random bytes; never shown back' })),
    deadlineMs: Type.Optional(
      Type.Integer({ minimum: DECISION_DEADLINE_MIN_MS, maximum: DECISION_DEADLINE_MAX_MS, default: DECISION_DEADLINE_DEFAULT_MS, description: 'how long the pipeline waits for the answer' }),
    ),
    standIn: Type.Union([Type.Literal('approve'), Type.Literal('decline')], { description: 'what stands when the endpoint times out, errs or answers what is not an answer' }),
  },
  { additionalProperties: false },
);
export type DecisionEndpointConfig = Static<typeof DecisionEndpointConfig>;

/** A connector a tenant names: which one, from where, with which options. */
export const ConnectorChoice = Type.Object(
  {
    /** A built-in connector's id, or the id an external module's definition declares. */
    id: Type.String({ minLength: 1 }),
    /** An external connector: a path or package name whose default export defines the connector of this id. */
    module: Type.Optional(Type.String({ minLength: 1 })),
    options: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { additionalProperties: false },
);

/** A connector's name in `connectors`, `routing` and `shadow` (and in audit records and metrics). */
export const CONNECTOR_NAME_PATTERN = '^[a-z][a-z0-9-]{0,31}$';
const ConnectorName = Type.String({ pattern: CONNECTOR_NAME_PATTERN });

export const TenantConfig = Type.Object(
  {
    /** The tenant's one connector (every operation goes to it). Use `connectors` and `routing` for several. */
    connector: Type.Optional(ConnectorChoice),
    /** Several connectors by name (decision 0111); `routing` says which serves what. Not with `connector`. */
    connectors: Type.Optional(Type.Record(ConnectorName, ConnectorChoice, { minProperties: 1, maxProperties: 8 })),
    /** Which connector serves an operation: its own entry, else its group's (`cards`, `pin`…), else `default`. */
    routing: Type.Optional(
      Type.Object(
        {
          default: Type.Optional(ConnectorName),
          operations: Type.Optional(Type.Record(Type.String({ minLength: 1, maxLength: 64 }), ConnectorName)),
        },
        { additionalProperties: false },
      ),
    ),
    /** A candidate core beside the primary (decision 0112): reads repeated and compared, writes only as dry-run. */
    shadow: Type.Optional(
      Type.Object(
        {
          connector: ConnectorName,
          operations: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { minItems: 1, maxItems: 32 }),
          writes: Type.Optional(Type.Union([Type.Literal('none'), Type.Literal('dry-run')], { default: 'none' })),
          sampleRate: Type.Optional(Type.Number({ minimum: 0, maximum: 1, default: 1 })),
        },
        { additionalProperties: false },
      ),
    ),
    tokenLifetimeSeconds: Type.Integer({ minimum: 60, maximum: 86_400, default: 3600 }),
    creditLimit: Type.Object(
      {
        maximum: Money,
        allowDecrease: Type.Boolean(),
      },
      { additionalProperties: false },
    ),
    encryption: Type.Object(
      {
        /** When false (the default) a password must arrive as a JWE. */
        allowPlaintextPassword: Type.Boolean(),
        /** Routes whose body must be a JWE (0019), as docs/api.md writes them, with a method and a `*` suffix. */
        requireEncryptedBody: Type.Optional(
          Type.Array(Type.String({ pattern: REQUIRE_ENCRYPTED_BODY_PATTERN, maxLength: 256 }), { maxItems: 100 }),
        ),
      },
      { additionalProperties: false },
    ),
    /** A sandbox tenant may call the simulation routes under /v1/sandbox/; any other gets 404 there. */
    sandbox: Type.Optional(Type.Boolean({ default: false })),
    /** Requests per minute (fixed window) for all the tenant's callers together and per user; absent: unlimited. */
    rateLimit: Type.Optional(
      Type.Object(
        {
          perTenantPerMinute: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000_000 })),
          perUserPerMinute: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000_000 })),
        },
        { additionalProperties: false },
      ),
    ),
    /** The bank's home country (ISO 3166-1 alpha-2): a merchant elsewhere makes a transaction international. */
    homeCountry: Type.Optional(Type.String({ pattern: COUNTRY_PATTERN, default: DEFAULT_HOME_COUNTRY })),
    /** The IANA time zone that decides what a day is: daily card limits, report days, date filters. */
    timeZone: Type.Optional(Type.String({ minLength: 1, maxLength: 64, default: DEFAULT_TIME_ZONE })),
    /** The cards' currency (ISO 4217): an authorization in another is refused. Default EUR. */
    currency: Type.Optional(Type.String({ pattern: '^[A-Z]{3}$', default: DEFAULT_CURRENCY })),
    /** How POST /v1/authorizations decides (schemas/authorizations.ts). */
    authorization: Type.Optional(
      Type.Object(
        {
          /** When the credit available is below the amount, approve what is available instead of declining. Default false. */
          partialApproval: Type.Optional(Type.Boolean({ default: false })),
          /** The tenant's real-time decision endpoint; absent: the pipeline's step is skipped. */
          decision: Type.Optional(DecisionEndpointConfig),
        },
        { additionalProperties: false },
      ),
    ),
    /**
     * What the gateway does with a caller's W3C `traceparent` while it traces (OpenTelemetry): `continue` the
     * caller's trace (the default), or `link`: start a trace of its own that only links to the caller's, so that
     * a caller outside the bank's trust can neither join the gateway's traces nor decide their sampling.
     */
    traceContext: Type.Optional(Type.Union([Type.Literal('continue'), Type.Literal('link')], { default: 'continue' })),
    /** PIN translation keys (schemas/pin.ts); a tenant without them cannot set PINs. */
    pin: Type.Optional(TenantPinConfig),
    /**
     * Four eyes (schemas/approvals.ts): the writes that wait for a second person, per operation, with an
     * optional condition, the roles that approve, how many approvals, and how long a request waits.
     */
    approvals: Type.Optional(ApprovalPolicies),
  },
  { additionalProperties: false },
);
export type TenantConfig = Static<typeof TenantConfig>;

export type ConnectorChoice = Static<typeof ConnectorChoice>;

/** What a configuration leaves out is taken from here (the single connector only when it names no `connectors`). */
export const DEFAULT_TENANT_CONFIG: TenantConfig & { connector: ConnectorChoice } = {
  connector: { id: 'mock', options: {} },
  tokenLifetimeSeconds: 3600,
  creditLimit: { maximum: '1000000.00', allowDecrease: false },
  encryption: { allowPlaintextPassword: false },
};
