// POST /credit-line-management/business-entity-manager/upgradeLimit (spec 4.2) and fetchLimit (the
// limit read), envelope dialect.
import type { FastifyPluginAsync } from 'fastify';
import { FetchLimitBody, FetchLimitResponse, UpgradeLimitBody, UpgradeLimitResponse } from '../../schemas/credit-line.js';
import type { UpgradeLimitResult } from '../../connectors/contract.js';
import { toMinor } from '../../connectors/shared/money.js';
import { Errors } from '../errors.js';

const creditLineRoutes: FastifyPluginAsync = async (app) => {

  app.post<{ Body: UpgradeLimitBody }>('/credit-line-management/business-entity-manager/upgradeLimit', {
    schema: { body: UpgradeLimitBody, response: { 200: UpgradeLimitResponse } },
    config: {
      dialect: 'envelope',
      roles: ['Admin', 'API Integration'],
      objectName: 'limitUpgradeRequest',
      audit: {
        action: 'credit-limit.upgrade',
        target: (req) => ({ entityId: (req.body as Partial<UpgradeLimitBody>)?.entityId }),
        event: {
          type: 'credit-limit.upgraded',
          payload: (_req, result) => {
            const r = result as UpgradeLimitResult;
            return { entityId: r.entityId, previousLimit: r.previousLimit, newLimit: r.newLimit };
          },
        },
      },
    },
    handler: async (request) => {
      const tenant = request.tenant!;
      const { entityId, amount } = request.body;
      const rules = tenant.config.creditLimit;
      if (toMinor(amount) > toMinor(rules.maximum)) {
        throw Errors.business('LIMIT_ABOVE_MAXIMUM', `The amount ${amount} exceeds the product maximum of ${rules.maximum}.`);
      }
      await request.callCore('upgradeLimit', { entityId, amount, allowDecrease: rules.allowDecrease });
      return { result: true, exception: null, pagination: null };
    },
  });

  app.post<{ Body: FetchLimitBody }>('/credit-line-management/business-entity-manager/fetchLimit', {
    schema: { body: FetchLimitBody, response: { 200: FetchLimitResponse } },
    config: {
      dialect: 'envelope',
      // DESIGN §3: limits are reads, open to every role.
      roles: ['Admin', 'Operations', 'API Integration', 'Read-Only'],
      objectName: 'fetchLimitRequest',
      // A read sent as POST: a key must not pin a 24-hour-old limit as the answer.
      idempotency: false,
      audit: { action: 'credit-limit.read', target: (req) => ({ entityId: (req.body as Partial<FetchLimitBody>)?.entityId }) },
    },
    handler: async (request) => {
      const { entityId, creditLimit } = await request.callCore('getCreditLimit', { entityId: request.body.entityId });
      return { result: { entityId, creditLimit }, exception: null, pagination: null };
    },
  });
};

export default creditLineRoutes;
