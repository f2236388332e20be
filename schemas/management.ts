// Schemas of the management listener (the platform operator's API) and of the tenant Admin's user and
// configuration routes: tenants, their users, operator keys.
import { Type, type Static } from '@sinclair/typebox';
import { PublicJwk } from './auth.js';
import { CONTROL_CHARACTERS, DisplayName, INVISIBLE_CHARACTERS, PLAIN_TEXT_PATTERN, Role, cardEnvelopeOf } from './common.js';
import { PageQuery, pageOf } from './page.js';
import { DecisionEndpointConfig, TENANT_ID_PATTERN, TenantConfig } from './tenant.js';

export const TenantIdParams = Type.Object({ tenantId: Type.String({ pattern: TENANT_ID_PATTERN }) }, { additionalProperties: false });
export type TenantIdParams = Static<typeof TenantIdParams>;

/** No space at either end, no slash, no control character (written out, not \p{Cc}: see CONTROL_CHARACTERS). */
export const Username = Type.String({
  minLength: 1,
  maxLength: 128,
  pattern: `^[^\\s/${CONTROL_CHARACTERS}](?:[^/${CONTROL_CHARACTERS}]*[^\\s/${CONTROL_CHARACTERS}])?$`,
});
/** A new user's name: no invisible character either; only creation checks it, so older users stay reachable. */
export const NewUsername = Type.String({
  minLength: 1,
  maxLength: 128,
  pattern: `^[^\\s/${CONTROL_CHARACTERS}${INVISIBLE_CHARACTERS}](?:[^/${CONTROL_CHARACTERS}${INVISIBLE_CHARACTERS}]*[^\\s/${CONTROL_CHARACTERS}${INVISIBLE_CHARACTERS}])?$`,
});
const USERNAME = new RegExp(Username.pattern!);
export const isUsername = (value: string): boolean => value.length <= Username.maxLength! && USERNAME.test(value);
export const UsernameParams = Type.Object({ username: Username }, { additionalProperties: false });
export type UsernameParams = Static<typeof UsernameParams>;
export const TenantUserParams = Type.Object({ tenantId: TenantIdParams.properties.tenantId, username: Username }, { additionalProperties: false });
export type TenantUserParams = Static<typeof TenantUserParams>;

/** A password in a body: a compact JWE to the tenant's key (plain text only where the tenant allows it). */
const Password = Type.String({ minLength: 1, maxLength: 8192 });

/** POST /v1/tenants: the tenant's id, name and whole configuration (schemas/tenant.ts; defaults fill the rest). */
export const TenantCreateBody = Type.Object(
  {
    id: Type.String({ pattern: TENANT_ID_PATTERN, description: 'the identifier the bank sends in its tenant header' }),
    name: Type.Optional(DisplayName(1, 128)),
    config: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'the tenant configuration (see docs/operating.md, "Configuration")' })),
    admin: Type.Optional(
      Type.Object(
        { username: NewUsername, password: Password },
        {
          additionalProperties: false,
          description:
            "the tenant's first Admin, created with it or not at all; the password (at least 8 characters) a compact JWE to the onboarding key (`GET /v1/onboarding/keys`)",
        },
      ),
    ),
  },
  { additionalProperties: false },
);
export type TenantCreateBody = Static<typeof TenantCreateBody>;

/** PATCH /v1/tenants/{tenantId}: a JSON merge patch (RFC 7396) of `{ name, config }`. */
export const TenantPatchBody = Type.Object(
  {
    name: Type.Optional(DisplayName(1, 128)),
    config: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type TenantPatchBody = Static<typeof TenantPatchBody>;

export const TenantView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  status: Type.Union([Type.Literal('active'), Type.Literal('disabled')]),
  version: Type.Integer(),
  config: Type.Record(Type.String(), Type.Unknown(), { description: 'secrets are shown as "***"' }),
  createdAt: Type.String(),
  updatedAt: Type.String(),
});
export const TenantResponse = cardEnvelopeOf(TenantView);
/** GET /v1/tenants: by id, paged by key. */
export const TenantPageResponse = pageOf(TenantView);
/** GET /v1/tenants: the pages' `limit` and `cursor`, and `q`, the text to search the ids and names for. */
export const TenantListQuery = Type.Object(
  {
    ...PageQuery.properties,
    q: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 128,
        pattern: PLAIN_TEXT_PATTERN,
        description: "only the tenants whose id or name holds this text (any case); a cursor pages the same search",
      }),
    ),
  },
  { additionalProperties: false },
);
export type TenantListQuery = Static<typeof TenantListQuery>;

export const UserCreateBody = Type.Object({ username: NewUsername, role: Role, password: Password }, { additionalProperties: false });
export type UserCreateBody = Static<typeof UserCreateBody>;

export const UserPatchBody = Type.Object(
  { role: Type.Optional(Role), disabled: Type.Optional(Type.Boolean()) },
  { additionalProperties: false, minProperties: 1 },
);
export type UserPatchBody = Static<typeof UserPatchBody>;

export const PasswordBody = Type.Object({ password: Password }, { additionalProperties: false });
export type PasswordBody = Static<typeof PasswordBody>;

export const OwnPasswordBody = Type.Object({ currentPassword: Password, newPassword: Password }, { additionalProperties: false });
export type OwnPasswordBody = Static<typeof OwnPasswordBody>;

export const UserView = Type.Object({
  username: Type.String(),
  role: Role,
  disabled: Type.Boolean(),
  locked: Type.Boolean(),
  lastLoginAt: Type.Union([Type.String(), Type.Null()]),
});
export const UserResponse = cardEnvelopeOf(UserView);
export const TenantCreatedResponse = cardEnvelopeOf(
  Type.Object({
    tenant: TenantView,
    encryptionKeys: Type.Object({ keys: Type.Array(PublicJwk) }),
    admin: Type.Optional(UserView),
  }),
);
/** GET /v1/admin/users and GET /v1/tenants/{tenantId}/users: by username, paged by key. */
export const UserPageResponse = pageOf(UserView);
export const MessageResponse = cardEnvelopeOf(Type.Object({ message: Type.String() }));

export const OPERATOR_KEY_NAME_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$';
export const OperatorKeyParams = Type.Object({ name: Type.String({ pattern: OPERATOR_KEY_NAME_PATTERN }) }, { additionalProperties: false });
export const OperatorKeyCreateBody = Type.Object({ name: Type.String({ pattern: OPERATOR_KEY_NAME_PATTERN }) }, { additionalProperties: false });
export const OperatorKeyView = Type.Object({
  name: Type.String(),
  prefix: Type.String(),
  createdAt: Type.String(),
  lastUsedAt: Type.Union([Type.String(), Type.Null()]),
  revokedAt: Type.Union([Type.String(), Type.Null()]),
});
/** GET /v1/operator-keys: by name, paged by key. */
export const OperatorKeyPageResponse = pageOf(OperatorKeyView);
/** An operator key's name as the store keeps it. */
export const isOperatorKeyName = (value: string): boolean => new RegExp(OPERATOR_KEY_NAME_PATTERN).test(value);
export const OperatorKeyCreatedResponse = cardEnvelopeOf(Type.Object({ key: Type.String({ description: 'shown once' }), operatorKey: OperatorKeyView }));

const Nullable = <T extends import('@sinclair/typebox').TSchema>(t: T) => Type.Union([t, Type.Null()]);
const tenantProps = TenantConfig.properties;
const rateLimitProps = tenantProps.rateLimit.properties;

const decisionProps = DecisionEndpointConfig.properties;

/** The decision endpoint as a bank reads it back: everything but the signing secret, which is never shown. */
export const DecisionEndpointView = Type.Object(
  { url: decisionProps.url, deadlineMs: Type.Integer(), standIn: decisionProps.standIn },
  { additionalProperties: false },
);

/** What a bank may change itself (GET/PATCH /v1/admin/config): never its connector, sandbox flag or PIN keys. */
export const BankConfig = Type.Object({
  creditLimit: tenantProps.creditLimit,
  tokenLifetimeSeconds: tenantProps.tokenLifetimeSeconds,
  rateLimit: Type.Optional(tenantProps.rateLimit),
  encryption: tenantProps.encryption,
  approvals: Type.Optional(tenantProps.approvals),
  /** The real-time decision endpoint, when one is configured. */
  authorization: Type.Optional(Type.Object({ decision: Type.Optional(DecisionEndpointView) }, { additionalProperties: false })),
});
export type BankConfig = Static<typeof BankConfig>;
export const BankConfigResponse = cardEnvelopeOf(BankConfig);

/** A JSON merge patch of BankConfig: null removes an optional setting (a rate limit, the encrypted-body list). */
export const BankConfigPatch = Type.Object(
  {
    creditLimit: Type.Optional(
      Type.Object(
        { maximum: Type.Optional(tenantProps.creditLimit.properties.maximum), allowDecrease: Type.Optional(Type.Boolean()) },
        { additionalProperties: false },
      ),
    ),
    tokenLifetimeSeconds: Type.Optional(tenantProps.tokenLifetimeSeconds),
    rateLimit: Type.Optional(
      Nullable(
        Type.Object(
          { perTenantPerMinute: Type.Optional(Nullable(rateLimitProps.perTenantPerMinute)), perUserPerMinute: Type.Optional(Nullable(rateLimitProps.perUserPerMinute)) },
          { additionalProperties: false },
        ),
      ),
    ),
    encryption: Type.Optional(
      Type.Object(
        {
          allowPlaintextPassword: Type.Optional(Type.Boolean()),
          requireEncryptedBody: Type.Optional(Nullable(tenantProps.encryption.properties.requireEncryptedBody)),
        },
        { additionalProperties: false },
      ),
    ),
    /** The whole list of policies, replaced; null removes every policy. A change waits for approval where a policy says so. */
    approvals: Type.Optional(Nullable(tenantProps.approvals)),
    /** The real-time decision endpoint: fields merged into the current one (a new one needs url, secret, standIn); null removes it. */
    authorization: Type.Optional(
      Type.Object(
        {
          decision: Type.Optional(
            Nullable(
              Type.Object(
                {
                  url: Type.Optional(decisionProps.url),
                  secret: Type.Optional(decisionProps.secret),
                  deadlineMs: Type.Optional(decisionProps.deadlineMs),
                  standIn: Type.Optional(decisionProps.standIn),
                },
                { additionalProperties: false, minProperties: 1 },
              ),
            ),
          ),
        },
        { additionalProperties: false, minProperties: 1 },
      ),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type BankConfigPatch = Static<typeof BankConfigPatch>;
