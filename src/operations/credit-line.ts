// The credit-line operations of spec 4.2, envelope dialect: set a business entity's limit, and read it.
import { FetchLimitBody, FetchLimitResponse, UpgradeLimitBody, UpgradeLimitResponse } from '../../schemas/credit-line.js';
import { needsCurrentLimit } from '../domain/approval-policy.js';
import { checkCreditLimit, creditLimitChange } from '../domain/product-rules.js';
import { defineOperation } from './define.js';

const LIMIT_URL = '/credit-line-management/business-entity-manager/upgradeLimit';
export const FETCH_LIMIT_URL = '/credit-line-management/business-entity-manager/fetchLimit';

export const creditLineOperations = [
  defineOperation({
    id: 'credit-limit.upgrade',
    method: 'POST',
    url: LIMIT_URL,
    summary: "Set a business entity's credit limit",
    description:
      'Spec 4.2. Sets the credit limit of the entity to `amount` (a positive decimal string). The tenant\'s product rules apply: ' +
      'a maximum, and whether a decrease is allowed.',
    tag: 'Credit line',
    dialect: 'envelope',
    access: 'credit-limit-write',
    objectName: 'limitUpgradeRequest',
    body: UpgradeLimitBody,
    response: UpgradeLimitResponse,
    callsCore: true,
    refusals: ['ENTITY_NOT_FOUND', 'LIMIT_ABOVE_MAXIMUM', 'LIMIT_DECREASE_NOT_ALLOWED', 'LIMIT_BELOW_OUTSTANDING'],
    // An increase is measured against the limit the core holds now, read only when the policy's condition needs it.
    approval: {
      facts: async ({ body, tenant, core }, when) => {
        // What the gateway refuses alone is refused now, not after a checker's approval.
        checkCreditLimit(tenant, body.amount);
        return {
        newLimit: body.amount,
          ...(needsCurrentLimit(when) ? { currentLimit: (await core('getCreditLimit', { entityId: body.entityId })).creditLimit } : {}),
        };
      },
    },
    execute: ({ body, tenant, core }) => core('upgradeLimit', creditLimitChange(tenant, body.entityId, body.amount)),
    view: () => ({ result: true, exception: null, pagination: null }),
    audit: { target: { entityId: 'body' } },
    event: {
      type: 'credit-limit.upgraded',
      payload: (r) => ({ entityId: r.entityId, previousLimit: r.previousLimit, newLimit: r.newLimit }),
    },
    examples: { body: { entityId: 'ENT-1001', amount: '75000.00' }, response: { result: true, exception: null, pagination: null } },
  }),

  defineOperation({
    id: 'credit-limit.read',
    method: 'POST',
    url: FETCH_LIMIT_URL,
    summary: "Read a business entity's credit limit",
    tag: 'Credit line',
    dialect: 'envelope',
    access: 'read',
    objectName: 'fetchLimitRequest',
    body: FetchLimitBody,
    response: FetchLimitResponse,
    // A read sent as POST: a key must not pin a 24-hour-old limit as the answer.
    idempotent: false,
    callsCore: true,
    refusals: ['ENTITY_NOT_FOUND'],
    execute: ({ body, core }) => core('getCreditLimit', { entityId: body.entityId }),
    view: (r) => ({
      result: { entityId: r.entityId, creditLimit: r.creditLimit, outstanding: r.outstanding, availableCredit: r.availableCredit },
      exception: null,
      pagination: null,
    }),
    audit: { target: { entityId: 'body' } },
    examples: {
      body: { entityId: 'ENT-1001' },
      response: { result: { entityId: 'ENT-1001', creditLimit: '50000.00', outstanding: '0.00', availableCredit: '50000.00' }, exception: null, pagination: null },
    },
  }),
];
