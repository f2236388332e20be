// A tenant's Admin manages its users and what the bank may configure itself (spec §5.4: "all APIs, including
// configuration and user management"); every user changes its own password. Problem dialect.
import {
  BankConfigPatch,
  BankConfigResponse,
  MessageResponse,
  OwnPasswordBody,
  PasswordBody,
  UserCreateBody,
  UserPatchBody,
  UserResponse,
  UsernameParams,
  UserPageResponse,
  isUsername,
  type BankConfig,
} from '../../schemas/management.js';
import { PAGE_MAX, PageQuery } from '../../schemas/page.js';
import { DECISION_DEADLINE_DEFAULT_MS } from '../../schemas/tenant.js';
import { Errors } from '../errors.js';
import { updateTenant } from '../services/tenancy/tenant-admin.js';
import { keyCursorOf, pageBounds, pageQueryErrors } from '../paging/key-cursor.js';
import type { Tenant } from '../services/tenancy/tenants.js';
import { PASSWORD_MIN } from '../services/identity/users.js';
import { defineOperation, type EncryptedField } from './define.js';

/** Passwords arrive as JWEs to the tenant's key, as at login; plain text only where the tenant allows it. */
const passwordFields = (...fields: string[]): EncryptedField[] =>
  fields.map((field) => ({ field, required: (t: Tenant) => !t.config.encryption.allowPlaintextPassword }));

const tooShort = Errors.badRequest(`A password needs at least ${PASSWORD_MIN} characters.`);

/** The part of a tenant's configuration its bank may see and change. */
const bankConfigOf = (tenant: Tenant): BankConfig => ({
  creditLimit: tenant.config.creditLimit,
  tokenLifetimeSeconds: tenant.config.tokenLifetimeSeconds,
  ...(tenant.config.rateLimit ? { rateLimit: tenant.config.rateLimit } : {}),
  encryption: tenant.config.encryption,
  ...(tenant.config.approvals ? { approvals: tenant.config.approvals } : {}),
  ...decisionOf(tenant),
});

/** The decision endpoint without its secret, which is never shown back. */
function decisionOf(tenant: Tenant): Pick<BankConfig, 'authorization'> {
  const d = tenant.config.authorization?.decision;
  return d ? { authorization: { decision: { url: d.url, deadlineMs: d.deadlineMs ?? DECISION_DEADLINE_DEFAULT_MS, standIn: d.standIn } } } : {};
}

const USER_OPS = 'Users';

export const adminUserOperations = [
  defineOperation({
    id: 'user.list',
    method: 'GET',
    url: '/v1/admin/users',
    summary: "The tenant's users: role, disabled, locked, last login (never a password hash)",
    description: `In username order. Pages: \`limit\` (1..${PAGE_MAX}, default 50) and \`cursor\` (\`pagination.nextCursor\` of the previous page).`,
    tag: USER_OPS,
    dialect: 'problem',
    access: 'admin',
    objectName: 'userListRequest',
    query: PageQuery,
    response: UserPageResponse,
    check: ({ query }) => pageQueryErrors(query, 'userListRequest', keyCursorOf(isUsername)),
    execute: ({ tenant, query, services }) => services.users.page(tenant.id, pageBounds(query)),
    view: ({ items, nextCursor }) => ({ result: items, pagination: { nextCursor } }),
    audit: {},
  }),

  defineOperation({
    id: 'user.create',
    method: 'POST',
    url: '/v1/admin/users',
    status: 201,
    summary: 'Create a user',
    description: 'The password is a compact JWE to the tenant\'s key, like at login (plain text only where the tenant allows it); at least 8 characters.',
    tag: USER_OPS,
    dialect: 'problem',
    access: 'admin',
    objectName: 'userRequest',
    body: UserCreateBody,
    response: UserResponse,
    encryptedFields: passwordFields('password'),
    // The body holds a password: fingerprinted under the gateway's key (decision 0175).
    idempotent: 'sealed',
    refusals: ['USER_EXISTS'],
    errors: [tooShort],
    // The role it gives (a policy may hold new Admins only); the password waits sealed.
    approval: { facts: ({ body }) => ({ role: body.role }) },
    execute: ({ tenant, body, services }) => services.users.create(tenant.id, body.username, body.role, body.password),
    view: (user) => ({ result: user, pagination: null }),
    audit: { target: { username: 'body' } },
    event: { type: 'user.created', payload: (user) => ({ username: user.username, role: user.role }) },
    examples: { body: { username: 'alice', role: 'API Integration', password: 'eyJhbGciOiJFQ0RILUVTK0EyNTZLVyIs…' } },
  }),

  defineOperation({
    id: 'user.update',
    method: 'PATCH',
    url: '/v1/admin/users/:username',
    summary: "Change a user's role, or disable or enable it",
    description: "A role change or disabling revokes the user's tokens within seconds on every gateway process. The tenant's last enabled Admin cannot be demoted or disabled.",
    tag: USER_OPS,
    dialect: 'problem',
    access: 'admin',
    objectName: 'userPatch',
    params: UsernameParams,
    body: UserPatchBody,
    response: UserResponse,
    refusals: ['LAST_ADMIN'],
    errors: [Errors.userNotFound('alice')],
    // The role it gives, if it changes one (a policy may hold promotions to Admin only).
    approval: { facts: ({ body }) => (body.role !== undefined ? { role: body.role } : {}) },
    execute: ({ tenant, params, body, services }) => services.users.update(tenant.id, params.username, body),
    view: (user) => ({ result: user, pagination: null }),
    audit: { target: { username: 'params', role: 'body' } },
    event: {
      // Who disabled it: the Admin's username, or the operator's name on the management listener.
      of: (user, { body, principal, operator }) =>
        body.disabled === true ? { type: 'user.disabled', payload: { username: user.username, by: principal?.sub ?? operator?.name ?? null } } : undefined,
    },
    examples: { body: { role: 'Read-Only' } },
  }),

  defineOperation({
    id: 'user.unlock',
    method: 'POST',
    url: '/v1/admin/users/:username/unlock',
    summary: 'Lift a lockout (ten failed logins)',
    tag: USER_OPS,
    dialect: 'problem',
    access: 'admin',
    objectName: 'userUnlockRequest',
    params: UsernameParams,
    response: UserResponse,
    errors: [Errors.userNotFound('alice')],
    execute: ({ tenant, params, services }) => services.users.unlock(tenant.id, params.username),
    view: (user) => ({ result: user, pagination: null }),
    audit: { target: { username: 'params' } },
  }),

  defineOperation({
    id: 'user.password-reset',
    method: 'PUT',
    url: '/v1/admin/users/:username/password',
    summary: "Set a user's password",
    description: "The user's tokens are revoked and any lockout lifted. The password is a compact JWE, like at login.",
    tag: USER_OPS,
    dialect: 'problem',
    access: 'admin',
    objectName: 'passwordRequest',
    params: UsernameParams,
    body: PasswordBody,
    response: MessageResponse,
    encryptedFields: passwordFields('password'),
    // The body holds a password: fingerprinted under the gateway's key (decision 0175).
    idempotent: 'sealed',
    errors: [Errors.userNotFound('alice'), tooShort],
    execute: ({ tenant, params, body, services }) => services.users.setPassword(tenant.id, params.username, body.password),
    view: (_done, { params }) => ({ result: { message: `Password of '${params.username}' set; its tokens are revoked` }, pagination: null }),
    audit: { target: { username: 'params' } },
  }),

  defineOperation({
    id: 'user.remove',
    method: 'DELETE',
    url: '/v1/admin/users/:username',
    summary: 'Remove a user',
    description: "Its tokens stop working within seconds on every gateway process. The tenant's last enabled Admin cannot be removed.",
    tag: USER_OPS,
    dialect: 'problem',
    access: 'admin',
    objectName: 'userRemoveRequest',
    params: UsernameParams,
    response: MessageResponse,
    refusals: ['LAST_ADMIN'],
    errors: [Errors.userNotFound('alice')],
    execute: ({ tenant, params, services }) => services.users.remove(tenant.id, params.username),
    view: (_done, { params }) => ({ result: { message: `User '${params.username}' removed` }, pagination: null }),
    audit: { target: { username: 'params' } },
  }),

  defineOperation({
    id: 'tenant.config-read',
    method: 'GET',
    url: '/v1/admin/config',
    summary: 'What the bank may configure itself: credit-limit rules, token lifetime, rate limits, encryption policy, the decision endpoint',
    tag: 'Configuration',
    dialect: 'problem',
    access: 'admin',
    objectName: 'configRequest',
    response: BankConfigResponse,
    execute: async ({ tenant }) => bankConfigOf(tenant),
    view: (config) => ({ result: config, pagination: null }),
    audit: {},
  }),

  defineOperation({
    id: 'tenant.config-update',
    method: 'PATCH',
    url: '/v1/admin/config',
    summary: 'Change what the bank may configure itself (JSON merge patch)',
    description:
      'A JSON merge patch (RFC 7396) of the configuration GET /v1/admin/config shows; `null` removes a rate limit or the ' +
      'encrypted-body list. The connector, the sandbox flag and the PIN keys are the operator\'s. Applies within seconds on every gateway process. ' +
      '`authorization.decision` is the real-time decision endpoint: its `url` is held to the webhooks\' address policy, its `secret` ' +
      '(`whsec_`, Standard Webhooks) is sealed and never shown back; `null` removes it.',
    tag: 'Configuration',
    dialect: 'problem',
    access: 'admin',
    objectName: 'configPatch',
    body: BankConfigPatch,
    response: BankConfigResponse,
    errors: [Errors.invalidConfiguration("Tenant 'demo' has an invalid configuration: /creditLimit/maximum: Expected string to match pattern")],
    // A policy here holds every change, its own removal included: the policies cannot be loosened by one person.
    approval: {},
    execute: async ({ tenant, body, services }) => {
      const updated = await updateTenant(services, tenant.id, { config: body });
      if (!updated) throw Errors.tenantUnknown();
      return bankConfigOf(updated);
    },
    view: (config) => ({ result: config, pagination: null }),
    audit: {},
    event: {
      of: (_config, { tenant, body }) => {
        const changed = Object.keys(body).sort();
        return changed.length ? { type: 'tenant.config-changed', payload: { tenantId: tenant.id, changed } } : undefined;
      },
    },
    examples: { body: { creditLimit: { maximum: '2000000.00' }, rateLimit: { perUserPerMinute: 600 } } },
  }),

  defineOperation({
    id: 'user.password-change',
    method: 'PUT',
    url: '/v1/me/password',
    summary: 'Change your own password',
    description:
      'Both passwords are compact JWEs, like at login. A wrong current password counts towards the lockout. Every token of the ' +
      'user, the one used here included, is revoked: log in again with the new password.',
    tag: USER_OPS,
    dialect: 'problem',
    access: 'self',
    objectName: 'passwordChangeRequest',
    body: OwnPasswordBody,
    response: MessageResponse,
    encryptedFields: passwordFields('currentPassword', 'newPassword'),
    // No Idempotency-Key: the change revokes the token a retry would carry (decision 0175).
    idempotent: false,
    errors: [tooShort, Errors.badRequest('currentPassword is not the current password of this user.')],
    execute: async ({ tenant, principal, body, services }) => {
      if (!principal) throw Errors.unauthorized();
      await services.users.changeOwnPassword(tenant.id, principal.sub, body.currentPassword, body.newPassword);
    },
    view: () => ({ result: { message: 'Password changed; log in again with the new password' }, pagination: null }),
    audit: {},
  }),
];
