// The management listener's view of a tenant's users (decision 0190): its first Admin, and recovery when no
// Admin of its own can act. Each entry is the tenant Admin's own (admin-users.ts) served under
// `/v1/tenants/{tenantId}` (decision 0252): the same schemas, checks, password fields, idempotency, refusals,
// audit action and event. Only what the management document says of them is the operator's.
import { Errors } from '../errors.js';
import { adminUserOperations } from './admin-users.js';
import { forTenant } from './for-tenant.js';

const TAG = 'Tenant users';
const JWE_EXAMPLE = 'eyJhbGciOiJFQ0RILUVTK0EyNTZLVyIs…';
const PASSWORD_JWE = "The password is a compact JWE to the tenant's key";
const userNotFound = Errors.userNotFound('alice');
/** Answered by the decrypt step when the tenant does not allow a password in plain text. */
const plaintext = Errors.plaintextPassword();

export const managementUserOperations = [
  forTenant('user.list', 'tenant-user.list', adminUserOperations, { tag: TAG, summary: "A tenant's users: role, disabled, locked, last login" }),
  forTenant('user.create', 'tenant-user.create', adminUserOperations, {
    tag: TAG,
    summary: "Create a tenant's user (its first Admin)",
    description: `${PASSWORD_JWE} (\`GET /v1/tenants/{tenantId}/keys\`), plain text only where the tenant allows it.`,
    errors: [plaintext],
    examples: { body: { username: 'root', role: 'Admin', password: JWE_EXAMPLE } },
  }),
  forTenant('user.update', 'tenant-user.update', adminUserOperations, {
    tag: TAG,
    summary: "Change a tenant's user: its role, or disable or enable it",
    description: "The tenant's last enabled Admin cannot be demoted or disabled; disabling raises `user.disabled`, naming the operator.",
    examples: { body: { disabled: true } },
  }),
  forTenant('user.unlock', 'tenant-user.unlock', adminUserOperations, { tag: TAG, summary: "Lift a tenant's user's lockout (ten failed logins)", objectName: 'request' }),
  forTenant('user.password-reset', 'tenant-user.set-password', adminUserOperations, {
    tag: TAG,
    summary: "Set a tenant's user's password (its tokens are revoked)",
    description: `${PASSWORD_JWE}, plain text only where the tenant allows it.`,
    errors: [userNotFound, plaintext],
    examples: { body: { password: JWE_EXAMPLE } },
  }),
  forTenant('user.remove', 'tenant-user.remove', adminUserOperations, { tag: TAG, summary: "Remove a tenant's user", description: undefined, objectName: 'request' }),
];
