// A tenant's approvals as an operator sees and decides them on the management listener (decision 0321): the
// tenant's own entries (approvals.ts) served under `/v1/tenants/{tenantId}/approvals` by forTenant, so the same
// checks decide, the same step executes the held request, and the decision is recorded in the tenant's trail
// with the operator as actor. An operator decides only where the policy names `Operator` among its approvers.
import { Errors } from '../errors.js';
import { approvalOperations } from './approvals.js';
import { forTenant } from './for-tenant.js';

const TAG = "A tenant's approvals";
const BASE = '/v1/tenants/:tenantId/approvals';
const AS_OPERATOR =
  'An operator is a checker where the policy names `Operator` among its approvers (`403 APPROVAL_ROLE` otherwise), as `operator:<key name>`; ' +
  "an operator's own request is never held, so an operator is never the maker.";
const approvalNotFound = Errors.approvalNotFound('0190b3c4-5d6e-7f80-9a1b-2c3d4e5f6a7b');

export const managementApprovalOperations = [
  forTenant('approvals.list', 'tenant-approval.list', approvalOperations, {
    tag: TAG,
    url: BASE,
    summary: "A tenant's approvals: what waits for a second person, and what was decided",
  }),
  forTenant('approvals.read', 'tenant-approval.read', approvalOperations, {
    tag: TAG,
    url: `${BASE}/:approvalId`,
    summary: "One of a tenant's approvals: exactly the request it executes, who made it, who decided, and its outcome",
    errors: [approvalNotFound],
  }),
  forTenant('approvals.approve', 'tenant-approval.approve', approvalOperations, {
    tag: TAG,
    url: `${BASE}/:approvalId/approve`,
    summary: "Approve a tenant's held request as the operator; the last approval needed executes it",
    description:
      `${AS_OPERATOR} The approval that completes the count executes the request once, as its maker sent it, through the tenant's pipeline; ` +
      "its answer, success or refusal, is the approval's `outcome`.",
    errors: [approvalNotFound],
  }),
  forTenant('approvals.reject', 'tenant-approval.reject', approvalOperations, {
    tag: TAG,
    url: `${BASE}/:approvalId/reject`,
    summary: "Reject a tenant's held request as the operator, with a reason; nothing is executed",
    description: AS_OPERATOR,
    errors: [approvalNotFound],
  }),
];
