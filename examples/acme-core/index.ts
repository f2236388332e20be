// Example external connector 'acme-core': a worked plugin that lives outside connectors/index.ts.
import { Type } from '@sinclair/typebox';
import { defineConnector, rejected, type Connector, type ConnectorContext, type PhysicalUpgradeInput, type UpgradeLimitInput } from '../../connectors/contract.js';
import { AcmeCoreClient, demoState, emptyState } from './core.js';
import { fromFailure, fromIssuePlastic, fromSetCreditLine, toIssuePlastic, toSetCreditLine } from './transformers.js';

export const AcmeOptions = Type.Object(
  {
    /** What the simulated core starts with: the demo fixtures (what the conformance suite expects) or nothing. */
    seed: Type.Optional(Type.Union([Type.Literal('demo'), Type.Literal('empty')], { default: 'demo' })),
    /** Simulated time on the wire per call, in milliseconds. */
    latencyMs: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000, default: 0 })),
  },
  { additionalProperties: false },
);

class AcmeConnector implements Connector {
  constructor(private readonly client: AcmeCoreClient) {}

  async upgradeLimit(input: UpgradeLimitInput, ctx: ConnectorContext) {
    const request = toSetCreditLine(input, ctx.idempotencyKey);
    if (!request) return rejected<never>('LIMIT_NOT_POSITIVE', `The amount ${input.amount} is not a decimal amount.`);
    try {
      return fromSetCreditLine(input.entityId, await this.client.setCreditLine(request, ctx.signal));
    } catch (err) {
      throw fromFailure(err);
    }
  }

  async upgradeToPhysical(input: PhysicalUpgradeInput, ctx: ConnectorContext) {
    try {
      return fromIssuePlastic(await this.client.issuePlastic(toIssuePlastic(input, ctx.idempotencyKey), ctx.signal));
    } catch (err) {
      throw fromFailure(err);
    }
  }

  async health() {
    await this.client.ping();
  }
}

export default defineConnector({
  id: 'acme-core',
  version: '1.0.0',
  optionsSchema: AcmeOptions,
  create: (options) => new AcmeConnector(new AcmeCoreClient(options.seed === 'empty' ? emptyState() : demoState(), options.latencyMs ?? 0)),
});
