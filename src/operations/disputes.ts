// Disputes of card transactions: opened by the bank's people on a cardholder's claim, for at most what was cleared
// and not given back; resolved once, a dispute won credited back to the credit line through the core's
// `creditDispute`, a lost one not (decision 0345).
import { fromMinor, toMinor } from '../../connectors/shared/money.js';
import {
  DisputeIdParams,
  DisputeResponse,
  OpenDisputeRequest,
  ResolveDisputeRequest,
  TransactionIdParams,
  type DisputeView,
} from '../../schemas/authorization-lifecycle.js';
import { Errors } from '../errors.js';
import type { DisputeRecord } from '../services/transactions/ledger.js';
import { amountsOf, refusalOf } from './authorization-lifecycle.js';
import { defineOperation, type EventOf } from './define.js';

export function toDisputeView(d: DisputeRecord): DisputeView {
  return {
    disputeId: d.id,
    transactionId: d.authorizationId,
    cardId: d.cardId,
    entityId: d.entityId,
    amount: fromMinor(d.amountMinor),
    currency: d.currency,
    reason: d.reason,
    note: d.note,
    status: d.status,
    credited: fromMinor(d.status === 'WON' ? d.amountMinor : 0n),
    openedBy: d.openedBy,
    resolvedBy: d.resolvedBy,
    openedAt: d.openedAt.toISOString(),
    resolvedAt: d.resolvedAt === null ? null : d.resolvedAt.toISOString(),
  };
}

const common = (d: DisputeRecord) => ({
  disputeId: d.id,
  transactionId: d.authorizationId,
  cardId: d.cardId,
  entityId: d.entityId,
  currency: d.currency,
  amount: fromMinor(d.amountMinor),
});

const OPEN = 'disputeRequest';

export const disputeOperations = [
  defineOperation({
    id: 'dispute.open',
    method: 'POST',
    url: '/v1/transactions/:transactionId/disputes',
    summary: "Open a dispute of a card transaction on the cardholder's claim: a reason and an amount up to what was cleared",
    description:
      'The amount is claimed from what was cleared and not yet refunded, credited or claimed by another open dispute (409 ' +
      'DISPUTE_EXCEEDS_CLEARED beyond it; 409 TRANSACTION_NOT_CLEARED when nothing was cleared); a refund cannot take it meanwhile. ' +
      "A core without `creditDispute` answers 501: a dispute it could never credit is not opened.",
    tag: 'Disputes',
    dialect: 'problem',
    access: 'dispute-write',
    objectName: OPEN,
    params: TransactionIdParams,
    body: OpenDisputeRequest,
    response: DisputeResponse,
    status: 201,
    callsCore: true,
    refusals: ['DISPUTE_EXCEEDS_CLEARED', 'TRANSACTION_NOT_CLEARED', 'AUTHORIZATION_DECLINED'],
    errors: [Errors.transactionNotFound('auth_…')],
    execute: async ({ params, body, tenant, principal, services, log }) => {
      const id = params.transactionId;
      // A dispute the core could never credit is not opened.
      await services.core.ensureOffered(tenant, 'creditDispute', log);
      const amountMinor = toMinor(body.amount);
      const opened = await services.ledger.openDispute(tenant.id, id, {
        amountMinor,
        currency: body.currency,
        reason: body.reason,
        note: body.note ?? null,
        openedBy: principal?.sub ?? null,
        at: new Date(),
      });
      if (!opened.ok) throw refusalOf(opened.reason, 'dispute', id, opened.standing, amountMinor, OPEN);
      return opened.dispute;
    },
    view: (d) => ({ result: toDisputeView(d), pagination: null }),
    audit: { target: { transactionId: 'params' } },
    event: { type: 'dispute.opened', payload: (d) => ({ ...common(d), reason: d.reason }) },
    examples: { body: { reason: 'NOT_AS_DESCRIBED', amount: '25.00', currency: 'EUR', note: 'Cardholder says the order arrived damaged' } },
  }),

  defineOperation({
    id: 'dispute.read',
    method: 'GET',
    url: '/v1/disputes/:disputeId',
    summary: 'One dispute: its transaction, amount, reason, status and who opened and resolved it',
    tag: 'Disputes',
    dialect: 'problem',
    access: 'read',
    objectName: 'disputeQuery',
    params: DisputeIdParams,
    response: DisputeResponse,
    errors: [Errors.disputeNotFound('dsp_…')],
    execute: async ({ params, tenant, services }) => {
      const found = await services.ledger.dispute(tenant.id, params.disputeId);
      if (!found) throw Errors.disputeNotFound(params.disputeId);
      return found;
    },
    view: (d) => ({ result: toDisputeView(d), pagination: null }),
    audit: { target: { disputeId: 'params' } },
  }),

  defineOperation({
    id: 'dispute.resolve',
    method: 'POST',
    url: '/v1/disputes/:disputeId/resolve',
    summary: 'Resolve a dispute, once: WON credits its amount back to the credit line (the core\'s `creditDispute`), LOST does not',
    description:
      'A dispute already resolved, or being resolved by a request still running, is 409 DISPUTE_NOT_OPEN. When the core refuses the ' +
      'credit, cannot be reached or does not answer in time, the dispute stays OPEN and the request can be sent again.',
    tag: 'Disputes',
    dialect: 'problem',
    access: 'dispute-write',
    objectName: 'disputeResolution',
    params: DisputeIdParams,
    body: ResolveDisputeRequest,
    response: DisputeResponse,
    callsCore: true,
    refusals: ['DISPUTE_NOT_OPEN', 'DISPUTE_EXCEEDS_CLEARED'],
    errors: [Errors.disputeNotFound('dsp_…')],
    execute: async ({ params, body, tenant, principal, core, services }) => {
      const started = await services.ledger.beginResolve(tenant.id, params.disputeId);
      if (!started.ok) {
        if (!started.dispute) throw Errors.disputeNotFound(params.disputeId);
        const d = started.dispute;
        const state = d.status === 'RESOLVING' ? 'is being resolved by another request' : `was already resolved: ${d.status}`;
        throw Errors.business('DISPUTE_NOT_OPEN', `Dispute ${d.id} ${state}; a dispute is resolved once.`);
      }
      const dispute = started.dispute;
      let credited = null;
      if (body.outcome === 'WON') {
        try {
          const state = await core('creditDispute', {
            authorizationId: dispute.authorizationId,
            disputeId: dispute.id,
            amount: fromMinor(dispute.amountMinor),
            at: new Date().toISOString(),
          });
          credited = amountsOf(state);
        } catch (err) {
          await services.ledger.abortResolve(tenant.id, dispute.id);
          throw err;
        }
      }
      return (await services.ledger.finishResolve(tenant.id, dispute, body.outcome, principal?.sub ?? null, credited)).dispute;
    },
    view: (d) => ({ result: toDisputeView(d), pagination: null }),
    audit: { target: { disputeId: 'params' } },
    event: {
      of: (d): EventOf => ({
        type: 'dispute.resolved',
        payload: { ...common(d), outcome: d.status === 'WON' ? 'WON' : 'LOST', credited: fromMinor(d.status === 'WON' ? d.amountMinor : 0n) },
      }),
    },
    examples: { body: { outcome: 'WON' } },
  }),
];
