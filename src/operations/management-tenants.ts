// The management listener's tenants (decision 0190): create with the whole configuration, list, read, change by
// JSON merge patch, disable and enable, and read each tenant's encryption keys and cores. Operator keys only;
// problem dialect; an operator's change raises the security event its own Admin's would.
import { Jwks } from '../../schemas/auth.js';
import { ConnectorsResponse } from '../../schemas/core-routing.js';
import { TenantCreateBody, TenantCreatedResponse, TenantIdParams, TenantListQuery, TenantPageResponse, TenantPatchBody, TenantResponse } from '../../schemas/management.js';
import { PAGE_MAX } from '../../schemas/page.js';
import { TenantConfig } from '../../schemas/tenant.js';
import { Errors } from '../errors.js';
import { connectorsView } from '../services/connectors/connectors-view.js';
import { createNewTenant, encryptionKeys, setTenantStatus, tenantView, updateTenant, type TenantAdminDeps } from '../services/tenancy/tenant-admin.js';
import { isTenantId } from '../services/tenancy/tenants.js';
import { keyCursorOf, pageBounds, pageQueryErrors } from '../paging/key-cursor.js';
import { PASSWORD_MIN } from '../services/identity/users.js';
import { defineOperation } from './define.js';

export const TENANTS_TAG = 'Tenants';

/** The configuration's fields, as a change names them (a patch may only remove fields the schema knows). */
const CONFIG_FIELDS = new Set(Object.keys(TenantConfig.properties));

/** A tenant as stored (whatever its status or configuration), as an operator sees it: secrets as "***". */
async function viewOf(services: TenantAdminDeps, tenantId: string) {
  const stored = await services.tenants.stored(tenantId);
  if (!stored) throw Errors.tenantNotFound(tenantId);
  return tenantView(stored);
}

const envelope = <T>(result: T) => ({ result, pagination: null });
const notFound = Errors.tenantNotFound('acme');
const tooShort = Errors.badRequest(`A password needs at least ${PASSWORD_MIN} characters.`);

const statusChange = (verb: 'disable' | 'enable', status: 'disabled' | 'active') =>
  defineOperation({
    id: `tenant.${verb}`,
    listener: 'management',
    method: 'POST',
    url: `/v1/tenants/:tenantId/${verb}`,
    summary: verb === 'disable' ? 'Disable a tenant: it answers as an unknown one, its tokens too' : 'Enable a disabled tenant again',
    tag: TENANTS_TAG,
    dialect: 'problem',
    access: 'operator',
    objectName: 'request',
    params: TenantIdParams,
    response: TenantResponse,
    errors: [notFound],
    execute: async ({ params, services }) => {
      if (!(await setTenantStatus(services, params.tenantId, status))) throw Errors.tenantNotFound(params.tenantId);
      return viewOf(services, params.tenantId);
    },
    view: envelope,
    audit: { target: { tenantId: 'params' } },
  });

export const managementTenantOperations = [
  defineOperation({
    id: 'tenant.list',
    listener: 'management',
    method: 'GET',
    url: '/v1/tenants',
    summary: 'The tenants, by id (secrets shown as "***"), or those whose id or name holds a text',
    description:
      `Pages: \`limit\` (1..${PAGE_MAX}, default 50) and \`cursor\` (\`pagination.nextCursor\` of the previous page). ` +
      '`q`: only the tenants whose id or name holds this text, in any case (1..128 characters, no control character); ' +
      'a search pages like the whole list, the same `q` sent with each page\'s cursor.',
    tag: TENANTS_TAG,
    dialect: 'problem',
    access: 'operator',
    objectName: 'tenantListRequest',
    query: TenantListQuery,
    response: TenantPageResponse,
    check: ({ query }) => pageQueryErrors(query, 'tenantListRequest', keyCursorOf(isTenantId)),
    execute: ({ query, services }) => services.tenants.pageStored({ ...pageBounds(query), search: query.q ?? null }),
    view: ({ items, nextCursor }) => ({ result: items.map(tenantView), pagination: { nextCursor } }),
    // An operator's reads are not recorded, but for a customer's or a card's data (the lookups, decision 0292).
    audit: false,
  }),

  defineOperation({
    id: 'tenant.create',
    listener: 'management',
    method: 'POST',
    url: '/v1/tenants',
    status: 201,
    summary: 'Create a tenant with its whole configuration',
    description:
      'Answers the tenant (secrets as "***") and the public encryption keys its users\' passwords are encrypted to. ' +
      'The configuration may hold connector secrets: the body is fingerprinted under the gateway\'s key for Idempotency-Key. ' +
      'With `admin` the tenant\'s first Admin is created in the same transaction, or neither is: its password (at least ' +
      `${PASSWORD_MIN} characters) is a compact JWE to the onboarding key (\`GET /v1/onboarding/keys\`), the tenant having no key yet; ` +
      'every check is made before anything is written.',
    tag: TENANTS_TAG,
    dialect: 'problem',
    access: 'operator',
    objectName: 'tenantRequest',
    body: TenantCreateBody,
    response: TenantCreatedResponse,
    // The first Admin's password never arrives in clear: the tenant's own key does not exist yet.
    encryptedFields: [{ field: 'admin.password' }],
    // The configuration may hold connector secrets: fingerprinted under the gateway's key (decision 0175).
    idempotent: 'sealed',
    refusals: ['TENANT_EXISTS'],
    errors: [tooShort, Errors.plaintextOnboardingPassword()],
    execute: async ({ body, services }) => {
      const { id, name, config, admin } = body;
      await createNewTenant(services, { id, ...(name !== undefined ? { name } : {}), config, ...(admin ? { admin } : {}) });
      return {
        tenant: await viewOf(services, id),
        encryptionKeys: { keys: await encryptionKeys(services, id) },
        ...(admin ? { admin: (await services.users.view(id, admin.username))! } : {}),
      };
    },
    view: envelope,
    audit: { target: { tenantId: 'body.id', username: 'body.admin.username' } },
    examples: {
      body: {
        id: 'acme',
        name: 'Acme Bank',
        config: { connector: { id: 'rest', options: { baseUrl: 'https://core.acme.example/api', auth: { type: 'bearer', token: 'core-token' } } } },
      },
    },
  }),

  defineOperation({
    id: 'tenant.onboarding-keys',
    listener: 'management',
    method: 'GET',
    url: '/v1/onboarding/keys',
    summary: "The onboarding key (JWKS): what a new tenant's first Admin password is encrypted to",
    description:
      'The tenant created with its first Admin (`POST /v1/tenants` with `admin`) has no key of its own before it exists: ' +
      "the password is encrypted to this key, the same on every gateway process sharing the master key.",
    tag: TENANTS_TAG,
    dialect: 'problem',
    access: 'operator',
    objectName: 'request',
    response: Jwks,
    execute: async ({ services }) => [services.onboardingKey.publicJwk],
    view: (keys) => ({ keys }),
    audit: false,
  }),

  defineOperation({
    id: 'tenant.read',
    listener: 'management',
    method: 'GET',
    url: '/v1/tenants/:tenantId',
    summary: 'A tenant, whatever its status (secrets shown as "***")',
    tag: TENANTS_TAG,
    dialect: 'problem',
    access: 'operator',
    objectName: 'request',
    params: TenantIdParams,
    response: TenantResponse,
    errors: [notFound],
    execute: ({ params, services }) => viewOf(services, params.tenantId),
    view: envelope,
    audit: false,
  }),

  defineOperation({
    id: 'tenant.update',
    listener: 'management',
    method: 'PATCH',
    url: '/v1/tenants/:tenantId',
    summary: "Change a tenant's name or configuration by JSON merge patch (RFC 7396)",
    description:
      'Validated as at creation. `"***"` where a secret is stored keeps it, a value replaces it, `null` removes a setting. ' +
      'A key named `constructor`, `prototype` or `__proto__` at any depth is refused (400, naming it) and nothing changes. ' +
      "The tenant's channels hear of the change (`tenant.config-changed`), as of one its own Admin makes.",
    tag: TENANTS_TAG,
    dialect: 'problem',
    access: 'operator',
    objectName: 'tenantPatch',
    params: TenantIdParams,
    body: TenantPatchBody,
    response: TenantResponse,
    idempotent: 'sealed',
    errors: [notFound],
    execute: async ({ params, body, services }) => {
      if (!(await updateTenant(services, params.tenantId, body))) throw Errors.tenantNotFound(params.tenantId);
      return viewOf(services, params.tenantId);
    },
    view: envelope,
    audit: { target: { tenantId: 'params' } },
    event: {
      of: (_tenant, { params, body }) => {
        const changed = [...(body.name !== undefined ? ['name'] : []), ...Object.keys(body.config ?? {}).filter((k) => CONFIG_FIELDS.has(k))].sort();
        return changed.length ? { type: 'tenant.config-changed', payload: { tenantId: params.tenantId, changed } } : undefined;
      },
    },
    examples: { body: { name: 'Acme Bank plc', config: { rateLimit: { perUserPerMinute: 600 } } } },
  }),

  defineOperation({
    id: 'tenant.keys',
    listener: 'management',
    method: 'GET',
    url: '/v1/tenants/:tenantId/keys',
    summary: "The tenant's public encryption keys (JWKS)",
    description: "What passwords for the tenant's users are encrypted to: the same set as its `GET /api/keys`.",
    tag: TENANTS_TAG,
    dialect: 'problem',
    access: 'operator',
    objectName: 'request',
    params: TenantIdParams,
    tenantParam: 'tenantId',
    response: Jwks,
    errors: [notFound],
    execute: ({ tenant, services }) => encryptionKeys(services, tenant.id),
    view: (keys) => ({ keys }),
    audit: false,
  }),

  // Each of the tenant's cores as its Admin sees them on GET /v1/admin/connectors (decisions 0113, 0115).
  defineOperation({
    id: 'tenant.connectors',
    listener: 'management',
    method: 'GET',
    url: '/v1/tenants/:tenantId/connectors',
    summary: "The tenant's cores: offer, routes, shadow, breaker and recent calls",
    description: 'As its Admin sees them on `GET /v1/admin/connectors`; calls over the last five minutes of this gateway process.',
    tag: TENANTS_TAG,
    dialect: 'problem',
    access: 'operator',
    objectName: 'request',
    params: TenantIdParams,
    tenantParam: 'tenantId',
    response: ConnectorsResponse,
    errors: [notFound],
    execute: ({ tenant, services }) => connectorsView(services, tenant),
    view: envelope,
    audit: false,
  }),

  statusChange('disable', 'disabled'),
  statusChange('enable', 'active'),
];
