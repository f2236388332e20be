// After the authorization: clearings and reversals of its hold, refunds of what was cleared, and the card
// transaction's amounts as they stand. Each change is admitted by the gateway's ledger (a reservation under the
// authorization's row lock) before the core's capability applies it, so nothing goes below zero or beyond the
// amount, even when changes race (decisions 0343, 0344).
import type { FastifyBaseLogger } from 'fastify';
import type { HoldState } from '../../connectors/contract.js';
import { fromMinor, toMinor } from '../../connectors/shared/money.js';
import { AuthorizationIdParams } from '../../schemas/authorizations.js';
import {
  ClearRequest,
  RefundRequest,
  ReverseRequest,
  TransactionIdParams,
  TransactionStateResponse,
  type TransactionStateView,
} from '../../schemas/authorization-lifecycle.js';
import type { BusinessCodeId } from '../../schemas/business-codes.js';
import { type CardlineError, Errors } from '../errors.js';
import type { Services } from '../services/index.js';
import type { Tenant } from '../services/tenancy/tenants.js';
import type { CoreAmounts, Refusal, ReserveAsk, Standing } from '../services/transactions/ledger.js';
import { defineOperation } from './define.js';

export const amountsOf = (h: HoldState): CoreAmounts => ({
  authorized: toMinor(h.authorized),
  held: toMinor(h.held),
  cleared: toMinor(h.cleared),
  reversed: toMinor(h.reversed),
  refunded: toMinor(h.refunded),
  credited: toMinor(h.credited),
});

export function toTransactionStateView(s: Standing): TransactionStateView {
  const a = s.record;
  return {
    transactionId: a.id,
    cardId: a.cardId,
    entityId: a.entityId,
    status: a.status,
    currency: a.currency,
    authorized: fromMinor(a.approvedMinor),
    held: fromMinor(a.heldMinor),
    cleared: fromMinor(a.clearedMinor),
    reversed: fromMinor(a.reversedMinor),
    refunded: fromMinor(a.refundedMinor),
    credited: fromMinor(a.creditedMinor),
    disputed: fromMinor(s.disputed),
  };
}

/** What a refusal of the ledger says, per kind of change: the same words the core would use. */
export function refusalOf(reason: Refusal, kind: 'clearing' | 'reversal' | 'refund' | 'dispute', id: string, standing: Standing | null, amountMinor: bigint | null, objectName: string): CardlineError {
  const asked = amountMinor === null ? '' : fromMinor(amountMinor);
  const onTransaction = kind === 'refund' || kind === 'dispute';
  switch (reason) {
    case 'not-found':
      return onTransaction ? Errors.transactionNotFound(id) : Errors.authorizationNotFound(id);
    case 'declined':
      return Errors.business('AUTHORIZATION_DECLINED', `${onTransaction ? 'Transaction' : 'Authorization'} ${id} was declined: nothing was held.`);
    case 'currency':
      return Errors.validation([{ field: 'currency', message: 'Invalid', objectName }]);
    case 'not-cleared':
      return Errors.business('TRANSACTION_NOT_CLEARED', `Nothing of transaction ${id} was cleared yet; only a cleared amount can be disputed.`);
    case 'exceeds': {
      const s = standing!;
      if (!onTransaction) {
        const code: BusinessCodeId = kind === 'clearing' ? 'CLEAR_EXCEEDS_HELD' : 'REVERSAL_EXCEEDS_HELD';
        if (s.heldFree <= 0n) return Errors.business(code, `Authorization ${id} holds nothing; there is nothing to ${kind === 'clearing' ? 'clear' : 'reverse'}.`);
        return Errors.business(code, `Authorization ${id} holds ${fromMinor(s.heldFree)}; a ${kind} of ${asked} is more than that.`);
      }
      const free = s.clearedFree > 0n ? s.clearedFree : 0n;
      return Errors.business(
        kind === 'refund' ? 'REFUND_EXCEEDS_CLEARED' : 'DISPUTE_EXCEEDS_CLEARED',
        `Transaction ${id} has ${fromMinor(free)} cleared and not yet refunded, credited or disputed; a ${kind} of ${asked} is more than that.`,
      );
    }
  }
}

/** What a change's result carries: the amounts after it, and what it moved. */
export interface Change {
  standing: Standing;
  amountMinor: bigint;
  /** A final clearing's release of what stayed held. */
  releasedMinor: bigint;
}

/** One change of an authorization's amounts: its id, what kind it is (for the refusal's words), what it reserves, the core's capability. */
interface ChangeAsk {
  id: string;
  kind: 'clearing' | 'reversal' | 'refund';
  objectName: string;
  ask: ReserveAsk;
  operation: 'clearFunds' | 'reverseHold' | 'refund';
}

/** Who asks for a change: the tenant, the gateway's services and the request's log. */
interface ChangeContext {
  tenant: Tenant;
  services: Services;
  log: FastifyBaseLogger;
}

/**
 * Reserves, calls the core, merges its answer; a refusal, failure or unknown outcome (502, 504, 202) ends the
 * reservation without merging, so a retry under the same Idempotency-Key is admitted again and the core, which
 * received the same key, applies it once.
 */
async function change({ tenant, services, log }: ChangeContext, { id, kind, objectName, ask, operation }: ChangeAsk, apply: (amountMinor: bigint) => Promise<HoldState>): Promise<Change> {
  // A core that could never apply the change answers 501 whatever the amounts, as a dispute's opening does.
  await services.core.ensureOffered(tenant, operation, log);
  const tenantId = tenant.id;
  const admitted = await services.ledger.reserve(tenantId, id, ask);
  if (!admitted.ok) throw refusalOf(admitted.reason, kind, id, admitted.standing, ask.amountMinor, objectName);
  const amountMinor = ask.amountMinor ?? admitted.reservedMinor;
  let state: HoldState;
  try {
    state = await apply(amountMinor);
  } catch (err) {
    await services.ledger.settle(tenantId, id, admitted.reservationId, null);
    throw err;
  }
  const standing = await services.ledger.settle(tenantId, id, admitted.reservationId, amountsOf(state));
  return { standing, amountMinor, releasedMinor: admitted.reservedMinor - amountMinor };
}

const stateView = (s: Standing) => ({ result: toTransactionStateView(s), pagination: null });

/** What every change's event says after the transaction's id: whose money it is and how much moved. */
const moved = (c: Change) => ({
  cardId: c.standing.record.cardId,
  entityId: c.standing.record.entityId!,
  currency: c.standing.record.currency,
  amount: fromMinor(c.amountMinor),
});

const CLEAR = 'clearingRequest';
const REVERSE = 'reversalRequest';
const REFUND = 'refundRequest';

export const authorizationLifecycleOperations = [
  defineOperation({
    id: 'authorization.clear',
    method: 'POST',
    url: '/v1/authorizations/:authorizationId/clear',
    summary: 'Clear (capture) all or part of what an authorization holds; several clearings may follow one authorization',
    description:
      'The merchant\'s clearing moves `amount` from held to cleared, through the core\'s `clearFunds`; with `final: true` what stays ' +
      'held is released. More than is held is 409 CLEAR_EXCEEDS_HELD, a declined authorization 409 AUTHORIZATION_DECLINED, a ' +
      "`currency` other than the authorization's a field error; nothing changes. Clearings racing each other or a reversal never " +
      'go beyond the hold: the gateway admits each under the authorization\'s lock first.',
    tag: 'Authorizations',
    dialect: 'problem',
    access: 'authorization-write',
    objectName: CLEAR,
    params: AuthorizationIdParams,
    body: ClearRequest,
    response: TransactionStateResponse,
    callsCore: true,
    refusals: ['CLEAR_EXCEEDS_HELD', 'AUTHORIZATION_DECLINED', 'AUTHORIZATION_NOT_FOUND'],
    errors: [Errors.authorizationNotFound('auth_…')],
    execute: ({ params, body, tenant, core, services, log }) => {
      const id = params.authorizationId;
      const final = body.final ?? false;
      const ask: ReserveAsk = { pool: 'held', amountMinor: toMinor(body.amount), final, currency: body.currency };
      return change({ tenant, services, log }, { id, kind: 'clearing', objectName: CLEAR, ask, operation: 'clearFunds' }, (amount) =>
        core('clearFunds', { authorizationId: id, amount: fromMinor(amount), final, at: new Date().toISOString() }),
      );
    },
    view: (c) => stateView(c.standing),
    audit: { target: { authorizationId: 'params' } },
    event: {
      type: 'authorization.cleared',
      payload: (c, { body }) => ({
        authorizationId: c.standing.record.id,
        ...moved(c),
        final: body.final ?? false,
        released: fromMinor(c.releasedMinor),
        held: fromMinor(c.standing.record.heldMinor),
        cleared: fromMinor(c.standing.record.clearedMinor),
      }),
    },
    examples: { body: { amount: '40.00', currency: 'EUR', final: true } },
  }),

  defineOperation({
    id: 'authorization.reverse',
    method: 'POST',
    url: '/v1/authorizations/:authorizationId/reverse',
    summary: 'Reverse all (no amount) or part of what an authorization holds, releasing it on the credit line',
    description:
      'Through the core\'s `reverseHold`. More than is held, or a reversal when nothing is held (reversing twice), is 409 ' +
      'REVERSAL_EXCEEDS_HELD; nothing changes.',
    tag: 'Authorizations',
    dialect: 'problem',
    access: 'authorization-write',
    objectName: REVERSE,
    params: AuthorizationIdParams,
    body: ReverseRequest,
    response: TransactionStateResponse,
    callsCore: true,
    refusals: ['REVERSAL_EXCEEDS_HELD', 'AUTHORIZATION_DECLINED', 'AUTHORIZATION_NOT_FOUND'],
    errors: [Errors.authorizationNotFound('auth_…')],
    execute: ({ params, body, tenant, core, services, log }) => {
      const id = params.authorizationId;
      const amountMinor = body.amount === undefined ? null : toMinor(body.amount);
      // The amount is always named: what the gateway reserved, not what the core holds by then.
      return change({ tenant, services, log }, { id, kind: 'reversal', objectName: REVERSE, ask: { pool: 'held', amountMinor, currency: body.currency }, operation: 'reverseHold' }, (amount) =>
        core('reverseHold', { authorizationId: id, amount: fromMinor(amount), at: new Date().toISOString() }),
      );
    },
    view: (c) => stateView(c.standing),
    audit: { target: { authorizationId: 'params' } },
    event: {
      type: 'authorization.reversed',
      payload: (c) => ({
        authorizationId: c.standing.record.id,
        ...moved(c),
        held: fromMinor(c.standing.record.heldMinor),
        reversed: fromMinor(c.standing.record.reversedMinor),
      }),
    },
    examples: { body: { amount: '10.00', currency: 'EUR' } },
  }),

  defineOperation({
    id: 'transaction.refund',
    method: 'POST',
    url: '/v1/transactions/:transactionId/refund',
    summary: 'Refund part or all of what a card transaction cleared, giving it back to the credit line',
    description:
      "A card transaction's id is its authorization's. Through the core's `refund`. More than was cleared and not yet refunded, " +
      'credited or claimed by an open dispute is 409 REFUND_EXCEEDS_CLEARED; nothing changes.',
    tag: 'Authorizations',
    dialect: 'problem',
    access: 'authorization-write',
    objectName: REFUND,
    params: TransactionIdParams,
    body: RefundRequest,
    response: TransactionStateResponse,
    callsCore: true,
    refusals: ['REFUND_EXCEEDS_CLEARED', 'AUTHORIZATION_DECLINED', 'AUTHORIZATION_NOT_FOUND'],
    errors: [Errors.transactionNotFound('auth_…')],
    execute: ({ params, body, tenant, core, services, log }) => {
      const id = params.transactionId;
      const ask: ReserveAsk = { pool: 'cleared', amountMinor: toMinor(body.amount), currency: body.currency };
      return change({ tenant, services, log }, { id, kind: 'refund', objectName: REFUND, ask, operation: 'refund' }, (amount) =>
        core('refund', { authorizationId: id, amount: fromMinor(amount), at: new Date().toISOString() }),
      );
    },
    view: (c) => stateView(c.standing),
    audit: { target: { transactionId: 'params' } },
    event: {
      type: 'transaction.refunded',
      payload: (c) => ({
        transactionId: c.standing.record.id,
        ...moved(c),
        refunded: fromMinor(c.standing.record.refundedMinor),
      }),
    },
    examples: { body: { amount: '15.00', currency: 'EUR' } },
  }),

  defineOperation({
    id: 'transaction.read',
    method: 'GET',
    url: '/v1/transactions/:transactionId',
    summary: "A card transaction's amounts as they stand: authorized, held, cleared, reversed, refunded, credited, disputed",
    tag: 'Authorizations',
    dialect: 'problem',
    access: 'read',
    objectName: 'transactionRequest',
    params: TransactionIdParams,
    response: TransactionStateResponse,
    errors: [Errors.transactionNotFound('auth_…')],
    execute: async ({ params, tenant, services }) => {
      const found = await services.ledger.standing(tenant.id, params.transactionId);
      if (!found) throw Errors.transactionNotFound(params.transactionId);
      return found;
    },
    view: stateView,
    audit: { target: { transactionId: 'params' } },
  }),
];
