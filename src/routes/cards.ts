// PUT /v1/cards/upgrade/physical (spec 4.3), problem dialect.
import type { FastifyPluginAsync } from 'fastify';
import type { PhysicalUpgradeResult } from '../../connectors/contract.js';
import type { FieldError } from '../../schemas/common.js';
import { PhysicalUpgradeBody, PhysicalUpgradeResponse, REQUIRED_ADDRESS_FIELDS } from '../../schemas/cards.js';

const OBJECT_NAME = 'physicalCardUpgradeRequest';

/** Address lines are required unless the primary address on file is used (DESIGN §3). */
function checkAddress(body: PhysicalUpgradeBody): FieldError[] {
  const address = body.communicationAddress;
  if (!address || address.usePrimaryAddress === true) return [];
  return REQUIRED_ADDRESS_FIELDS.filter((f) => address[f] === undefined).map((f) => ({
    field: `communicationAddress.${f}`,
    message: 'NotNull',
    objectName: OBJECT_NAME,
  }));
}

const cardRoutes: FastifyPluginAsync = async (app) => {

  app.put<{ Body: PhysicalUpgradeBody }>('/v1/cards/upgrade/physical', {
    schema: { body: PhysicalUpgradeBody, response: { 200: PhysicalUpgradeResponse } },
    config: {
      dialect: 'problem',
      roles: ['Admin', 'Operations', 'API Integration'],
      objectName: OBJECT_NAME,
      check: (req) => checkAddress(req.body as PhysicalUpgradeBody),
      audit: {
        action: 'card.upgrade-physical',
        target: (req) => {
          const b = req.body as Partial<PhysicalUpgradeBody>;
          return { kitNo: b?.kitNo, entityId: b?.entityId, cardId: b?.cardId };
        },
        event: {
          type: 'card.upgraded-to-physical',
          payload: (_req, result) => {
            const r = result as PhysicalUpgradeResult;
            return { cardId: r.cardId, entityId: r.entityId, kitNo: r.kitNo, state: r.state };
          },
        },
      },
    },
    handler: async (request) => {
      const body = request.body;
      const lockOnUpgrade = body.lockOnUpgrade ?? false;
      const result = await request.callCore('upgradeToPhysical', {
        kitNo: body.kitNo,
        entityId: body.entityId,
        cardId: body.cardId,
        communicationAddress: body.communicationAddress,
        plasticCode: body.plasticCodeDto,
        lockOnUpgrade,
        preferences: body.preferences,
      });
      const locked = result.state === 'PENDING_ACTIVATION' ? '; the card stays locked until it is activated' : '';
      return {
        result: { message: `Card ${result.cardId} upgraded to physical with kit ${result.kitNo}${locked}` },
        pagination: null,
      };
    },
  });
};

export default cardRoutes;
