// Simulation routes for sandbox tenants (configuration `sandbox: true`), as card issuers' test helpers
// offer: they move what only the real world moves, such as a plastic card's journey to its holder.
import type { FastifyPluginAsync } from 'fastify';
import type { CardSummary } from '../../connectors/contract.js';
import type { Role } from '../../schemas/common.js';
import { CardIdParams, CardOperationResponse } from '../../schemas/card-lifecycle-routes.js';
import { Errors } from '../errors.js';
import { checkNoBody, toCardView } from './card-lifecycle.js';

const SANDBOX_ROLES: readonly Role[] = ['Admin', 'Operations'];
const OBJECT_NAME = 'fulfilmentAdvanceRequest';

const sandboxRoutes: FastifyPluginAsync = async (app) => {

  app.post<{ Params: CardIdParams }>('/v1/sandbox/cards/:cardId/fulfilment/advance', {
    schema: { params: CardIdParams, response: { 200: CardOperationResponse } },
    config: {
      dialect: 'problem',
      roles: SANDBOX_ROLES,
      objectName: OBJECT_NAME,
      check: (req) => checkNoBody(req.body, OBJECT_NAME),
      audit: {
        action: 'card.fulfilment-advance',
        target: (req) => ({ cardId: (req.params as Partial<CardIdParams>)?.cardId }),
        event: {
          type: 'card.fulfilment-advanced',
          payload: (_req, result) => {
            const c = result as CardSummary;
            return { cardId: c.cardId, entityId: c.entityId, fulfilment: c.fulfilment! };
          },
        },
      },
    },
    // Runs after the tenant and auth hooks and before anything reads the body: for a tenant that is not
    // a sandbox the route answers exactly as a route that does not exist (decision 0012).
    onRequest: async (request) => {
      if (request.tenant?.config.sandbox !== true) throw Errors.notFound(request.method, request.url);
    },
    handler: async (request) => {
      const card = await request.callCore('advanceFulfilment', { cardId: request.params.cardId });
      return { result: { message: `Card ${card.cardId} fulfilment advanced to ${card.fulfilment}`, card: toCardView(card) }, pagination: null };
    },
  });
};

export default sandboxRoutes;
