// Card authorizations from a processor: POST /v1/authorizations runs the decision pipeline (card state → spend
// controls → the tenant's decision endpoint → the core's hold) and GET reads one back with its trail.
import type { FieldError } from '../../schemas/common.js';
import { AuthorizationIdParams, AuthorizationRequest, AuthorizationResponse, type AuthorizationView, type StepRecord } from '../../schemas/authorizations.js';
import { DEFAULT_CURRENCY } from '../../schemas/tenant.js';
import { fromMinor, toMinor } from '../../connectors/shared/money.js';
import { Errors } from '../errors.js';
import type { AuthorizationRecord } from '../services/transactions/authorizations.js';
import type { Tenant } from '../services/tenancy/tenants.js';
import { authorizationEvent, runPipeline } from './authorization-pipeline.js';
import { defineOperation } from './define.js';

const OBJECT_NAME = 'authorizationRequest';
const currencyOf = (tenant: Tenant) => tenant.config.currency ?? DEFAULT_CURRENCY;

/** A step as answered: its fields that are set, in the schema's order. */
function stepView(s: StepRecord): StepRecord {
  const v: StepRecord = { step: s.step, outcome: s.outcome };
  if (s.declineReason) v.declineReason = s.declineReason;
  if (s.detail) v.detail = s.detail;
  if (s.ruleId) v.ruleId = s.ruleId;
  if (s.evaluated) v.evaluated = s.evaluated;
  if (s.rules) v.rules = s.rules;
  if (s.standIn) v.standIn = s.standIn;
  return v;
}

export function toAuthorizationView(a: AuthorizationRecord): AuthorizationView {
  return {
    authorizationId: a.id,
    cardId: a.cardId,
    entityId: a.entityId,
    status: a.status,
    declineReason: a.declineReason,
    decidedBy: a.decidedBy,
    amount: fromMinor(a.amountMinor),
    approvedAmount: fromMinor(a.approvedMinor),
    currency: a.currency,
    merchant: { name: a.merchant.name, ...(a.merchant.id !== undefined ? { id: a.merchant.id } : {}), mcc: a.merchant.mcc, country: a.merchant.country },
    channel: a.channel,
    networkReference: a.networkReference,
    trail: a.trail.map(stepView),
    at: a.at.toISOString(),
  };
}

export const authorizationOperations = [
  defineOperation({
    id: 'authorization.create',
    method: 'POST',
    url: '/v1/authorizations',
    summary: "An authorization from the card processor, decided by the pipeline: card state, spend controls, the tenant's decision endpoint, the core",
    description:
      'Each step is recorded on the authorization (`trail`); the first decline wins and the steps after it are not called. The core holds ' +
      "the approved amount on the credit line; where the tenant's `authorization.partialApproval` allows it, an amount above the available " +
      "credit is approved for what is available (`approvedAmount`). A decline is an authorization too (201, status DECLINED). `currency` " +
      "must be the card's (the tenant's `currency`, default EUR).",
    tag: 'Authorizations',
    dialect: 'problem',
    access: 'authorization-write',
    objectName: OBJECT_NAME,
    body: AuthorizationRequest,
    response: AuthorizationResponse,
    status: 201,
    check: ({ body, tenant }): FieldError[] => (body.currency === currencyOf(tenant) ? [] : [{ field: 'currency', message: 'Invalid', objectName: OBJECT_NAME }]),
    callsCore: true,
    refusals: ['CARD_NOT_FOUND'],
    execute: ({ body, tenant, core, services, recordAuthorization }) =>
      runPipeline(
        {
          cardId: body.cardId,
          amount: body.amount,
          currency: body.currency,
          merchant: body.merchant,
          channel: body.channel,
          networkReference: body.networkReference ?? null,
          at: new Date(),
        },
        { tenant, core, services, recordAuthorization },
        {
          cardStateInGateway: true,
          decide: async (ask, authorizationId) => {
            const hold = await core('holdFunds', {
              authorizationId,
              cardId: ask.cardId,
              amount: ask.amount,
              merchant: { name: ask.merchant.name, mcc: ask.merchant.mcc, country: ask.merchant.country },
              channel: ask.channel,
              partialAllowed: tenant.config.authorization?.partialApproval ?? false,
              at: ask.at.toISOString(),
            });
            return { entityId: hold.entityId, approvedMinor: hold.approved ? toMinor(hold.authorized) : 0n, declineReason: hold.declineReason };
          },
        },
      ),
    view: (a) => ({ result: toAuthorizationView(a), pagination: null }),
    audit: { target: { cardId: 'body' } },
    event: { of: (a) => authorizationEvent(a) },
    examples: {
      body: { cardId: 'CARD-3001', amount: '42.50', currency: 'EUR', merchant: { name: 'Cafe Central', id: 'M-1001', mcc: '5814', country: 'PT' }, channel: 'POS', networkReference: 'NET-000123' },
    },
  }),

  defineOperation({
    id: 'authorization.read',
    method: 'GET',
    url: '/v1/authorizations/:authorizationId',
    summary: 'One authorization with the trail of its decision: which step decided, and why',
    tag: 'Authorizations',
    dialect: 'problem',
    access: 'read',
    objectName: 'authorizationQuery',
    params: AuthorizationIdParams,
    response: AuthorizationResponse,
    errors: [Errors.authorizationNotFound('auth_…')],
    execute: async ({ params, tenant, services }) => {
      const found = await services.authorizations.get(tenant.id, params.authorizationId);
      if (!found) throw Errors.authorizationNotFound(params.authorizationId);
      return found;
    },
    view: (a) => ({ result: toAuthorizationView(a), pagination: null }),
    audit: { target: { authorizationId: 'params' } },
  }),
];
