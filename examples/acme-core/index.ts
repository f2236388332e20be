// Example external connector 'acme-core': a worked plugin that lives outside connectors/index.ts.
import { Type } from '@sinclair/typebox';
import {
  defineConnector,
  rejected,
  succeeded,
  type BlockCardInput,
  type CardRef,
  type Connector,
  type ConnectorContext,
  type OperationResult,
  type PhysicalUpgradeInput,
  type PreferencesInput,
  type SetPinInput,
  type UpgradeLimitInput,
} from '../../connectors/contract.js';
import type { Preferences } from '../../schemas/cards.js';
import type { CardAction } from '../../schemas/card-lifecycle.js';
import { AcmeCoreClient, demoState, emptyState, type AcmeCommand, type AcmeCloseReason } from './core.js';
import {
  fromCard,
  fromCents,
  fromFailure,
  fromIssuePlastic,
  fromSetCreditLine,
  pickCard,
  refusal,
  toCardDetails,
  toCardQuery,
  toCardSummary,
  toCloseReason,
  toIssuePlastic,
  toSetCreditLine,
} from './transformers.js';

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

  activateCard(input: CardRef, ctx: ConnectorContext) {
    return this.cardCommand(input, 'activate', 'RELEASE', ctx);
  }

  lockCard(input: CardRef, ctx: ConnectorContext) {
    return this.cardCommand(input, 'lock', 'FREEZE', ctx);
  }

  unlockCard(input: CardRef, ctx: ConnectorContext) {
    return this.cardCommand(input, 'unlock', 'UNFREEZE', ctx);
  }

  blockCard(input: BlockCardInput, ctx: ConnectorContext) {
    return this.cardCommand(input, 'block', 'CLOSE', ctx, toCloseReason(input.reasonCode));
  }

  advanceFulfilment(input: { cardId: string }, ctx: ConnectorContext) {
    return this.cardCommand({ cardId: input.cardId }, 'advanceFulfilment', 'SHIP_STEP', ctx);
  }

  async updatePreferences(input: PreferencesInput, ctx: ConnectorContext): Promise<OperationResult<Preferences>> {
    return this.call(async () => {
      const reply = await this.client.setControls({ card: input.cardId, controls: input.preferences, requestKey: ctx.idempotencyKey }, ctx.signal);
      return reply.ok ? succeeded(reply.data.controls as Preferences) : refusal(reply);
    });
  }

  /** The block goes to Acme as is; nothing of it is logged, and the answer names the card only. */
  async setPin(input: SetPinInput, ctx: ConnectorContext): Promise<OperationResult<{ cardId: string }>> {
    return this.call(async () => {
      const reply = await this.client.issuePin(
        { card: input.cardId, block: input.pinBlock, format: input.format, keyId: input.keyId, requestKey: ctx.idempotencyKey },
        ctx.signal,
      );
      return reply.ok ? succeeded({ cardId: reply.data.card }) : refusal(reply);
    });
  }

  async listCards(input: { entityId: string }, ctx: ConnectorContext) {
    return this.call(async () => {
      const reply = await this.client.findCards({ customer: input.entityId }, ctx.signal);
      return reply.ok ? succeeded(reply.data.map(toCardSummary)) : refusal<never>(reply);
    });
  }

  async getCard(input: { cardId: string }, ctx: ConnectorContext) {
    return this.call(async () => {
      const reply = await this.client.card(input.cardId, ctx.signal);
      return reply.ok ? succeeded(toCardDetails(reply.data)) : refusal<never>(reply);
    });
  }

  async getPreferences(input: { cardId: string }, ctx: ConnectorContext) {
    return this.call(async () => {
      const reply = await this.client.card(input.cardId, ctx.signal);
      return reply.ok ? succeeded((reply.data.controls ?? {}) as Preferences) : refusal<never>(reply);
    });
  }

  async getCreditLimit(input: { entityId: string }, ctx: ConnectorContext) {
    return this.call(async () => {
      const reply = await this.client.creditLine(input.entityId, ctx.signal);
      return reply.ok ? succeeded({ entityId: input.entityId, creditLimit: fromCents(reply.data.cents) }) : refusal<never>(reply);
    });
  }

  /** A status command on the card `ref` names; a reference by entity or kit is looked up first. */
  private cardCommand(ref: CardRef, action: CardAction, command: AcmeCommand, ctx: ConnectorContext, reason?: AcmeCloseReason) {
    return this.call(async () => {
      let card = ref.cardId;
      if (card === undefined || ref.entityId !== undefined || ref.kitNo !== undefined) {
        const found = await this.client.findCards(toCardQuery(ref), ctx.signal);
        if (!found.ok) return refusal<never>(found);
        const picked = pickCard(ref, action, found.data);
        if (!('card' in picked)) return picked;
        card = picked.card;
      }
      return fromCard(await this.client.command({ card, command, reason, requestKey: ctx.idempotencyKey }, ctx.signal));
    });
  }

  /** Acme's failures as the contract's errors. */
  private async call<T>(fn: () => Promise<OperationResult<T>>): Promise<OperationResult<T>> {
    try {
      return await fn();
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
