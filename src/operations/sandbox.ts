// Simulation operations for sandbox tenants (configuration `sandbox: true`), as card issuers' test helpers
// offer: they move what only the real world moves, such as a plastic card's journey to its holder.
import type { CardSummary } from '../../connectors/contract.js';
import type { Fulfilment } from '../../schemas/card-lifecycle.js';
import { EventPayloadError } from '../events/outbox.js';
import { CardIdParams, CardOperationResponse } from '../../schemas/card-lifecycle-routes.js';
import { toCardView } from '../views/cards.js';
import { checkNoBody } from './cards.js';
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
    check: ({ body }) => checkNoBody(body, OBJECT_NAME),
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
];
