// Simulation operations for sandbox tenants (configuration `sandbox: true`), as card issuers' test helpers
// offer: they move what only the real world moves, such as a plastic card's journey to its holder.
import type { CardSummary, Transaction } from '../../connectors/contract.js';
import { fromMinor, toMinor } from '../../connectors/shared/money.js';
import { runPipeline } from './authorization-pipeline.js';
import type { Fulfilment } from '../../schemas/card-lifecycle.js';
import { EventPayloadError } from '../events/outbox.js';
import { CardIdParams, CardOperationResponse, EntityIdParams } from '../../schemas/card-lifecycle-routes.js';
import { DEFAULT_CURRENCY, DEFAULT_HOME_COUNTRY, DEFAULT_TIME_ZONE } from '../../schemas/tenant.js';
import { AuthorizationBody, RepaymentBody, RepaymentResponse, TransactionResponse } from '../../schemas/transactions.js';
import { toTransactionView } from '../views/entities.js';
import { toCardView } from '../views/cards.js';
import { defineOperation } from './define.js';

const OBJECT_NAME = 'fulfilmentAdvanceRequest';

/** A card whose fulfilment advanced is physical and has a step; a connector answering otherwise is a bug (500). */
function fulfilmentOf(card: CardSummary): Fulfilment {
  if (card.fulfilment === undefined) throw new EventPayloadError(`card ${card.cardId} advanced without a fulfilment step`);
  return card.fulfilment;
}

export const sandboxOperations = [
  defineOperation({
    id: 'card.fulfilment-advance',
    method: 'POST',
    url: '/v1/sandbox/cards/:cardId/fulfilment/advance',
    summary: "Sandbox: move a physical card to its next fulfilment step",
    description: 'ORDERED → EMBOSSED → DISPATCHED → DELIVERED. Sandbox tenants only; any other tenant gets 404.',
    tag: 'Sandbox',
    dialect: 'problem',
    access: 'sandbox',
    objectName: OBJECT_NAME,
    sandbox: true,
    params: CardIdParams,
    response: CardOperationResponse,
    callsCore: true,
    refusals: ['CARD_NOT_FOUND', 'CARD_STATE_INVALID'],
    execute: ({ params, core }) => core('advanceFulfilment', { cardId: params.cardId }),
    view: (card) => ({ result: { message: `Card ${card.cardId} fulfilment advanced to ${card.fulfilment}`, card: toCardView(card) }, pagination: null }),
    audit: { target: { cardId: 'params' } },
    event: {
      type: 'card.fulfilment-advanced',
      payload: (c) => ({ cardId: c.cardId, entityId: c.entityId, fulfilment: fulfilmentOf(c) }),
    },
  }),

  // What a card network and a bank transfer would bring: on the `sandbox` row (Admin, Operations), like the
  // fulfilment helper, since they simulate the world outside the bank rather than operate a card (decision 0051).
  defineOperation({
    id: 'transaction.authorize',
    method: 'POST',
    url: '/v1/sandbox/cards/:cardId/authorizations',
    summary: 'Sandbox: an authorization as a card network would send it, decided by the core',
    description:
      'The core decides as an issuer\'s authorization host: CARD_NOT_ACTIVE, INTERNATIONAL_DISABLED (a merchant outside the tenant\'s ' +
      '`homeCountry` while international use is off), CHANNEL_DISABLED, DAILY_LIMIT_EXCEEDED / DAILY_COUNT_EXCEEDED (the card\'s ' +
      'preferences, days of the tenant\'s `timeZone`), INSUFFICIENT_CREDIT. A decline is a transaction too (201, status DECLINED); ' +
      'an approval raises the outstanding balance. Sandbox tenants only.',
    tag: 'Sandbox',
    dialect: 'problem',
    access: 'sandbox',
    objectName: 'authorizationRequest',
    sandbox: true,
    params: CardIdParams,
    body: AuthorizationBody,
    response: TransactionResponse,
    status: 201,
    callsCore: true,
    refusals: ['CARD_NOT_FOUND'],
    execute: async ({ params, body, tenant, core, services }) => {
      const homeCountry = tenant.config.homeCountry ?? DEFAULT_HOME_COUNTRY;
      let decided: Transaction | undefined;
      // The same pipeline as POST /v1/authorizations; the sandbox core's host decision is its last step and checks
      // the card's state first itself, recording a decline as a transaction.
      const record = await runPipeline(
        { cardId: params.cardId, amount: body.amount, currency: tenant.config.currency ?? DEFAULT_CURRENCY, merchant: body.merchant, channel: body.channel, networkReference: null, at: new Date() },
        { tenant, core, services },
        {
          cardStateInGateway: false,
          decide: async (ask) => {
            decided = await core('authorize', {
              cardId: ask.cardId,
              amount: ask.amount,
              merchant: body.merchant,
              channel: ask.channel,
              at: ask.at.toISOString(),
              homeCountry,
              timeZone: tenant.config.timeZone ?? DEFAULT_TIME_ZONE,
            });
            return { entityId: decided.entityId, approvedMinor: decided.status === 'APPROVED' ? toMinor(decided.amount) : 0n, declineReason: decided.declineReason };
          },
        },
      );
      if (decided) return decided;
      // Declined by a gateway step before the core: answered in the same shape, under the pipeline's id.
      const card = await core('getCard', { cardId: params.cardId });
      return {
        transactionId: record.id,
        cardId: record.cardId,
        entityId: card.entityId,
        amount: fromMinor(record.amountMinor),
        channel: record.channel,
        merchant: body.merchant,
        international: body.merchant.country !== homeCountry,
        status: 'DECLINED',
        declineReason: record.declineReason,
        at: record.at.toISOString(),
      } satisfies Transaction;
    },
    view: (t) => ({ result: toTransactionView(t), pagination: null }),
    audit: { target: { cardId: 'params' } },
    event: {
      of: (t) => {
        const common = {
          transactionId: t.transactionId,
          cardId: t.cardId,
          entityId: t.entityId,
          amount: t.amount,
          channel: t.channel,
          mcc: t.merchant.mcc,
          merchantCountry: t.merchant.country,
          international: t.international,
        };
        if (t.status === 'APPROVED') return { type: 'transaction.approved', payload: { ...common, status: 'APPROVED', declineReason: null } };
        if (t.declineReason === null) throw new EventPayloadError(`transaction ${t.transactionId} declined without a reason`);
        return { type: 'transaction.declined', payload: { ...common, status: 'DECLINED', declineReason: t.declineReason } };
      },
    },
    examples: { body: { amount: '42.50', merchant: { name: 'Cafe Central', mcc: '5814', country: 'PT' }, channel: 'POS' } },
  }),

  defineOperation({
    id: 'repayment.receive',
    method: 'POST',
    url: '/v1/sandbox/entities/:entityId/repayments',
    summary: "Sandbox: a repayment, as a bank transfer would bring it; lowers the entity's outstanding balance",
    description: 'More than the entity owes is refused (REPAYMENT_EXCEEDS_OUTSTANDING). Sandbox tenants only.',
    tag: 'Sandbox',
    dialect: 'problem',
    access: 'sandbox',
    objectName: 'repaymentRequest',
    sandbox: true,
    params: EntityIdParams,
    body: RepaymentBody,
    response: RepaymentResponse,
    status: 201,
    callsCore: true,
    refusals: ['ENTITY_NOT_FOUND', 'REPAYMENT_EXCEEDS_OUTSTANDING'],
    execute: ({ params, body, core }) => core('repay', { entityId: params.entityId, amount: body.amount, at: new Date().toISOString() }),
    view: (r) => ({
      result: { repaymentId: r.repaymentId, entityId: r.entityId, amount: r.amount, outstanding: r.outstanding, availableCredit: r.availableCredit, at: r.at },
      pagination: null,
    }),
    audit: { target: { entityId: 'params' } },
    event: {
      type: 'repayment.received',
      payload: (r) => ({ repaymentId: r.repaymentId, entityId: r.entityId, amount: r.amount, outstanding: r.outstanding }),
    },
    examples: { body: { amount: '100.00' } },
  }),
];
