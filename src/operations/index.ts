// The gateway's APIs at a glance: every business operation, one declaration each (decision 0031), for each
// listener (decision 0190). The registrar (register.ts) turns each table into its listener's routes; each
// listener's OpenAPI document and its access rules come from it.
import { adminKeyOperations } from './admin-keys.js';
import { adminUserOperations } from './admin-users.js';
import { approvalOperations } from './approvals.js';
import { auditOperations } from './audit.js';
import { authorizationOperations } from './authorizations.js';
import { authRuleOperations } from './auth-rules.js';
import { channelOperations } from './channels.js';
import { authOperations } from './auth.js';
import { cardOperations } from './cards.js';
import { creditLineOperations } from './credit-line.js';
import { coreRoutingOperations } from './core-routing.js';
import type { HttpMethod, Operation } from './define.js';
import { entityOperations } from './entities.js';
import { managementApprovalOperations } from './management-approvals.js';
import { managementConsoleOperations } from './management-console.js';
import { managementKeyOperations } from './management-keys.js';
import { managementOperatorKeyOperations } from './management-operator-keys.js';
import { managementTenantOperations } from './management-tenants.js';
import { managementUserOperations } from './management-users.js';
import { pinOperations } from './pin.js';
import { reportOperations } from './reports.js';
import { transactionOperations } from './transactions.js';
import { sandboxOperations } from './sandbox.js';

/** The public listener's table: the tenants' API (a tenant header and a bearer token). */
const publicEntries = [
  ...authOperations,
  ...creditLineOperations,
  ...cardOperations,
  ...entityOperations,
  ...transactionOperations,
  ...authorizationOperations,
  ...reportOperations,
  ...pinOperations,
  ...sandboxOperations,
  ...auditOperations,
  ...adminKeyOperations,
  ...adminUserOperations,
  ...channelOperations,
  ...coreRoutingOperations,
  ...approvalOperations,
  ...authRuleOperations,
];

/** The management listener's table: the platform operator's API (an operator key). */
const managementEntries = [
  ...managementTenantOperations,
  ...managementKeyOperations,
  ...managementUserOperations,
  ...managementOperatorKeyOperations,
  ...managementConsoleOperations,
  ...managementApprovalOperations,
];

export const operations: readonly Operation[] = publicEntries;
export const managementOperations: readonly Operation[] = managementEntries;

/** The public table's ids: a table keyed by them (`satisfies Record<OperationId, …>`) must list every entry. */
export type OperationId = (typeof publicEntries)[number]['id'];
/** The operations of either listener that change something (every method but GET). */
export type WriteOperationId = Extract<(typeof publicEntries)[number] | (typeof managementEntries)[number], { method: Exclude<HttpMethod, 'GET'> }>['id'];
