// POST /credit-line-management/business-entity-manager/upgradeLimit (spec 4.2), envelope dialect.
import type { FastifyPluginAsync } from 'fastify';
import { UpgradeLimitBody, UpgradeLimitResponse } from '../../schemas/credit-line.js';
import { toMinor } from '../../connectors/shared/money.js';
import { Errors } from '../errors.js';

const creditLineRoutes: FastifyPluginAsync = async (app) => {
  const { connectors } = app.cardline;

  app.post<{ Body: UpgradeLimitBody }>('/credit-line-management/business-entity-manager/upgradeLimit', {
    schema: { body: UpgradeLimitBody, response: { 200: UpgradeLimitResponse } },
    config: {
      dialect: 'envelope',
      roles: ['Admin', 'API Integration'],
      objectName: 'limitUpgradeRequest',
      audit: { action: 'credit-limit.upgrade', target: (req) => ({ entityId: (req.body as Partial<UpgradeLimitBody>)?.entityId }) },
    },
    handler: async (request) => {
      const tenant = request.tenant!;
      const { entityId, amount } = request.body;
      const rules = tenant.config.creditLimit;
      if (toMinor(amount) > toMinor(rules.maximum)) {
        throw Errors.business('LIMIT_ABOVE_MAXIMUM', `The amount ${amount} exceeds the product maximum of ${rules.maximum}.`);
      }
      await connectors.invoke(
        tenant,
        'upgradeLimit',
        { entityId, amount, allowDecrease: rules.allowDecrease },
        { requestId: request.id, logger: request.log, idempotencyKey: idempotencyKeyOf(request.headers) },
      );
      return { result: true, exception: null, pagination: null };
    },
  });
};

export function idempotencyKeyOf(headers: Record<string, string | string[] | undefined>): string | undefined {
  const v = headers['idempotency-key'];
  return typeof v === 'string' && v.length > 0 ? v : undefined;
}

export default creditLineRoutes;
