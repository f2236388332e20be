// The management listener's view of a tenant's users (decision 0190): its first Admin, and recovery when no
// Admin of its own can act. Passwords arrive as JWEs to the tenant's key (the decrypt step opens them), plain
// text only where the tenant allows it. The audit actions are the tenant Admin's (`user.create`, …).
import {
  MessageResponse,
  PasswordBody,
  TenantIdParams,
  TenantUserParams,
  UserCreateBody,
  UserPageResponse,
  UserPatchBody,
  UserResponse,
  isUsername,
} from '../../schemas/management.js';
import { PAGE_MAX, PageQuery } from '../../schemas/page.js';
import { Errors } from '../errors.js';
import type { Tenant } from '../services/tenancy/tenants.js';
import { keyCursorOf, pageBounds, pageQueryErrors } from '../paging/key-cursor.js';
import { defineOperation, type EncryptedField } from './define.js';

const TAG = 'Tenant users';

/** Passwords are JWEs to the tenant's key, as at login; plain text only where the tenant allows it. */
const password: EncryptedField[] = [{ field: 'password', required: (t: Tenant) => !t.config.encryption.allowPlaintextPassword }];
const envelope = <T>(result: T) => ({ result, pagination: null });
const tenantNotFound = Errors.tenantNotFound('acme');
const userNotFound = Errors.userNotFound('alice');
/** Answered by the decrypt step when the tenant does not allow a password in plain text. */
const plaintext = Errors.plaintextPassword();
const JWE_EXAMPLE = 'eyJhbGciOiJFQ0RILUVTK0EyNTZLVyIs…';

export const managementUserOperations = [
  defineOperation({
    id: 'tenant-user.list',
    listener: 'management',
    method: 'GET',
    url: '/v1/tenants/:tenantId/users',
    summary: "A tenant's users: role, disabled, locked, last login",
    description: `In username order. Pages: \`limit\` (1..${PAGE_MAX}, default 50) and \`cursor\` (\`pagination.nextCursor\` of the previous page).`,
    tag: TAG,
    dialect: 'problem',
    access: 'operator',
    objectName: 'userListRequest',
    params: TenantIdParams,
    tenantParam: 'tenantId',
    query: PageQuery,
    response: UserPageResponse,
    errors: [tenantNotFound],
    check: ({ query }) => pageQueryErrors(query, 'userListRequest', keyCursorOf(isUsername)),
    execute: ({ tenant, query, services }) => services.users.page(tenant.id, pageBounds(query)),
    view: ({ items, nextCursor }) => ({ result: items, pagination: { nextCursor } }),
    // Not recorded: an operator's reads are, only for a customer's or a card's data (decision 0292).
    audit: false,
  }),

  defineOperation({
    id: 'tenant-user.create',
    listener: 'management',
    method: 'POST',
    url: '/v1/tenants/:tenantId/users',
    status: 201,
    summary: "Create a tenant's user (its first Admin)",
    description: "The password is a compact JWE to the tenant's key (`GET /v1/tenants/{tenantId}/keys`), plain text only where the tenant allows it.",
    tag: TAG,
    dialect: 'problem',
    access: 'operator',
    objectName: 'userRequest',
    params: TenantIdParams,
    tenantParam: 'tenantId',
    body: UserCreateBody,
    response: UserResponse,
    encryptedFields: password,
    idempotent: 'sealed',
    refusals: ['USER_EXISTS'],
    errors: [tenantNotFound, plaintext],
    execute: ({ tenant, body, services }) => services.users.create(tenant.id, body.username, body.role, body.password),
    view: envelope,
    audit: { action: 'user.create', target: { tenantId: 'params', username: 'body' } },
    event: { type: 'user.created', payload: (user) => ({ username: user.username, role: user.role }) },
    examples: { body: { username: 'root', role: 'Admin', password: JWE_EXAMPLE } },
  }),

  defineOperation({
    id: 'tenant-user.update',
    listener: 'management',
    method: 'PATCH',
    url: '/v1/tenants/:tenantId/users/:username',
    summary: "Change a tenant's user: its role, or disable or enable it",
    description: "The tenant's last enabled Admin cannot be demoted or disabled; disabling raises `user.disabled`, naming the operator.",
    tag: TAG,
    dialect: 'problem',
    access: 'operator',
    objectName: 'userPatch',
    params: TenantUserParams,
    tenantParam: 'tenantId',
    body: UserPatchBody,
    response: UserResponse,
    refusals: ['LAST_ADMIN'],
    errors: [tenantNotFound, userNotFound],
    execute: ({ tenant, params, body, services }) => services.users.update(tenant.id, params.username, body),
    view: envelope,
    audit: { action: 'user.update', target: { tenantId: 'params', username: 'params' } },
    event: {
      of: (user, { body, operator }) =>
        body.disabled === true ? { type: 'user.disabled', payload: { username: user.username, by: operator?.name ?? null } } : undefined,
    },
    examples: { body: { disabled: true } },
  }),

  defineOperation({
    id: 'tenant-user.unlock',
    listener: 'management',
    method: 'POST',
    url: '/v1/tenants/:tenantId/users/:username/unlock',
    summary: "Lift a tenant's user's lockout (ten failed logins)",
    tag: TAG,
    dialect: 'problem',
    access: 'operator',
    objectName: 'request',
    params: TenantUserParams,
    tenantParam: 'tenantId',
    response: UserResponse,
    errors: [tenantNotFound, userNotFound],
    execute: ({ tenant, params, services }) => services.users.unlock(tenant.id, params.username),
    view: envelope,
    audit: { action: 'user.unlock', target: { tenantId: 'params', username: 'params' } },
  }),

  defineOperation({
    id: 'tenant-user.set-password',
    listener: 'management',
    method: 'PUT',
    url: '/v1/tenants/:tenantId/users/:username/password',
    summary: "Set a tenant's user's password (its tokens are revoked)",
    description: "The password is a compact JWE to the tenant's key, plain text only where the tenant allows it.",
    tag: TAG,
    dialect: 'problem',
    access: 'operator',
    objectName: 'passwordRequest',
    params: TenantUserParams,
    tenantParam: 'tenantId',
    body: PasswordBody,
    response: MessageResponse,
    encryptedFields: password,
    idempotent: 'sealed',
    errors: [tenantNotFound, userNotFound, plaintext],
    execute: ({ tenant, params, body, services }) => services.users.setPassword(tenant.id, params.username, body.password),
    view: (_done, { params }) => envelope({ message: `Password of '${params.username}' set; its tokens are revoked` }),
    audit: { action: 'user.password-reset', target: { tenantId: 'params', username: 'params' } },
    examples: { body: { password: JWE_EXAMPLE } },
  }),

  defineOperation({
    id: 'tenant-user.remove',
    listener: 'management',
    method: 'DELETE',
    url: '/v1/tenants/:tenantId/users/:username',
    summary: "Remove a tenant's user",
    tag: TAG,
    dialect: 'problem',
    access: 'operator',
    objectName: 'request',
    params: TenantUserParams,
    tenantParam: 'tenantId',
    response: MessageResponse,
    refusals: ['LAST_ADMIN'],
    errors: [tenantNotFound, userNotFound],
    execute: ({ tenant, params, services }) => services.users.remove(tenant.id, params.username),
    view: (_done, { params }) => envelope({ message: `User '${params.username}' removed` }),
    audit: { action: 'user.remove', target: { tenantId: 'params', username: 'params' } },
  }),
];
