// A tenant's keys as an operator manages them on the management listener: rotating and retiring its gateway
// keys and registering its client key are the tenant Admin's own entries (admin-keys.ts) served under
// `/v1/tenants/{tenantId}` (decision 0251), so the CLI's `keys rotate|retire|register-client` run them with the
// pipeline's audit record, event of record, idempotency and change feed, as an Admin's call would.
import { adminKeyOperations } from './admin-keys.js';
import { forTenant } from './for-tenant.js';
import { TENANTS_TAG } from './management-tenants.js';

export const managementKeyOperations = [
  forTenant('keys.rotate', 'tenant-keys.rotate', adminKeyOperations, { tag: TENANTS_TAG }),
  forTenant('keys.retire', 'tenant-keys.retire', adminKeyOperations, { tag: TENANTS_TAG }),
  forTenant('client-key.register', 'tenant-client-key.register', adminKeyOperations, { tag: TENANTS_TAG }),
];
