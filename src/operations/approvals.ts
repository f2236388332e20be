// Four eyes (decision 0320): the requests a tenant's approval policy held, and the decisions on them. Every
// role reads them; a checker approves or rejects when the policy names their role and they did not make the
// request; the maker cancels. The approval that completes the count executes the held request at once, through
// the pipeline's operation step. Problem dialect.
import {
  ApprovalIdParams,
  ApprovalListQuery,
  ApprovalPageResponse,
  ApprovalResponse,
  OPERATOR_APPROVER,
  RejectBody,
  type ApproverRole,
} from '../../schemas/approvals.js';
import { PAGE_MAX } from '../../schemas/page.js';
import { Errors } from '../errors.js';
import { pageBounds, pageQueryErrors } from '../paging/key-cursor.js';
import { approvalCursorValid, approvalView, type Checker } from '../services/tenancy/approvals.js';
import type { Principal } from '../services/identity/tokens.js';
import type { Operator } from '../services/identity/operator-keys.js';
import { defineOperation } from './define.js';

const TAG = 'Approvals';
const notFound = Errors.approvalNotFound('0190b3c4-5d6e-7f80-9a1b-2c3d4e5f6a7b');

/** The caller as a checker: a tenant user (with the token it came with), or the platform operator. */
function checkerOf(principal: Principal | null, operator: Operator | null): Checker {
  if (principal) return { by: principal.sub, role: principal.role, token: principal.jti };
  if (operator) return { by: `operator:${operator.name}`, role: OPERATOR_APPROVER as ApproverRole, token: null };
  throw Errors.unauthorized();
}

const view = (a: Parameters<typeof approvalView>[0]) => ({ result: approvalView(a), pagination: null });

export const approvalOperations = [
  defineOperation({
    id: 'approvals.list',
    method: 'GET',
    url: '/v1/approvals',
    summary: "The tenant's approvals: what waits for a second person, and what was decided",
    description:
      `Oldest first. Filters: \`status\`, \`operation\` (an operation id), \`maker\` (a username). Pages: \`limit\` (1..${PAGE_MAX}, default 50) ` +
      'and `cursor` (`pagination.nextCursor` of the previous page).',
    tag: TAG,
    dialect: 'problem',
    access: 'approvals',
    objectName: 'approvalListRequest',
    query: ApprovalListQuery,
    response: ApprovalPageResponse,
    check: ({ query }) => pageQueryErrors(query, 'approvalListRequest', approvalCursorValid),
    execute: ({ tenant, query, services }) =>
      services.approvals.page(tenant.id, { status: query.status, operation: query.operation, maker: query.maker }, pageBounds(query)),
    view: ({ items, nextCursor }) => ({ result: items.map(approvalView), pagination: { nextCursor } }),
    audit: {},
  }),

  defineOperation({
    id: 'approvals.read',
    method: 'GET',
    url: '/v1/approvals/:approvalId',
    summary: 'One approval: exactly the request it executes, who made it, who decided, and its outcome',
    tag: TAG,
    dialect: 'problem',
    access: 'approvals',
    objectName: 'approvalRequest',
    params: ApprovalIdParams,
    response: ApprovalResponse,
    errors: [notFound],
    execute: async ({ tenant, params, services }) => {
      const found = await services.approvals.get(tenant.id, params.approvalId);
      if (!found) throw Errors.approvalNotFound(params.approvalId);
      return found;
    },
    view,
    audit: { target: { approvalId: 'params' } },
  }),

  defineOperation({
    id: 'approvals.approve',
    method: 'POST',
    url: '/v1/approvals/:approvalId/approve',
    summary: 'Approve a held request; the last approval needed executes it',
    description:
      'The checker is never the maker (neither the same user nor the token the request was made with) and holds a role the policy names. ' +
      'The approval that completes the count executes the request once, as its maker sent it; its answer, success or refusal, is the ' +
      "approval's `outcome`. Two checkers approving at once: one executes it, the other is told it is no longer pending.",
    tag: TAG,
    dialect: 'problem',
    access: 'approvals',
    objectName: 'approvalDecision',
    params: ApprovalIdParams,
    response: ApprovalResponse,
    callsCore: true,
    refusals: ['APPROVAL_NOT_PENDING', 'APPROVAL_EXPIRED', 'APPROVAL_BY_MAKER', 'APPROVAL_ROLE', 'APPROVAL_ALREADY_GIVEN'],
    errors: [notFound],
    execute: async ({ tenant, params, principal, operator, services, executeApproved }) => {
      const approved = await services.approvals.approve(tenant.id, params.approvalId, checkerOf(principal, operator));
      return approved.status === 'executing' ? executeApproved(approved) : approved;
    },
    view,
    audit: { target: { approvalId: 'params' } },
    event: {
      type: 'approval.approved',
      payload: (a, { principal, operator }) => ({
        approvalId: a.id,
        operation: a.operation,
        by: checkerOf(principal, operator).by,
        approvals: a.approvals.length,
        approvalsNeeded: a.approvalsNeeded,
      }),
    },
  }),

  defineOperation({
    id: 'approvals.reject',
    method: 'POST',
    url: '/v1/approvals/:approvalId/reject',
    summary: 'Reject a held request, with a reason; nothing is executed',
    tag: TAG,
    dialect: 'problem',
    access: 'approvals',
    objectName: 'approvalRejection',
    params: ApprovalIdParams,
    body: RejectBody,
    response: ApprovalResponse,
    refusals: ['APPROVAL_NOT_PENDING', 'APPROVAL_EXPIRED', 'APPROVAL_BY_MAKER', 'APPROVAL_ROLE'],
    errors: [notFound],
    execute: ({ tenant, params, body, principal, operator, services }) =>
      services.approvals.reject(tenant.id, params.approvalId, checkerOf(principal, operator), body.reason),
    view,
    audit: { target: { approvalId: 'params' } },
    event: { type: 'approval.rejected', payload: (a) => ({ approvalId: a.id, operation: a.operation, by: a.rejection?.by ?? '' }) },
    examples: { body: { reason: 'No credit review on file for this entity' } },
  }),

  defineOperation({
    id: 'approvals.cancel',
    method: 'POST',
    url: '/v1/approvals/:approvalId/cancel',
    summary: 'Withdraw your own held request; nothing is executed',
    tag: TAG,
    dialect: 'problem',
    access: 'approvals',
    objectName: 'approvalCancellation',
    params: ApprovalIdParams,
    response: ApprovalResponse,
    refusals: ['APPROVAL_NOT_PENDING', 'APPROVAL_EXPIRED', 'APPROVAL_NOT_MAKER'],
    errors: [notFound],
    execute: async ({ tenant, params, principal, services }) => {
      if (!principal) throw Errors.unauthorized();
      return services.approvals.cancel(tenant.id, params.approvalId, principal.sub);
    },
    view,
    audit: { target: { approvalId: 'params' } },
  }),
];
