// Example external connector 'acme-core': a worked plugin that lives outside connectors/index.ts.
import { Type } from '@sinclair/typebox';
import {
  CONTRACT,
  CONTRACT_OPERATIONS,
  OPERATION_GROUPS,
  defineConnector,
  rejected,
  succeeded,
  type AuthorizationInput,
  type BlockCardInput,
  type CardRef,
  type Connector,
  type ConnectorContext,
  type OperationResult,
  type PhysicalUpgradeInput,
  type PreferencesInput,
  type RegisterEntityInput,
  type ReplaceCardInput,
  type RepaymentInput,
  type SetPinInput,
  type TransactionQuery,
  type UpdateEntityInput,
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
  fromReply,
  fromSetCreditLine,
  pickCard,
  refusal,
  toCardDetails,
  toCardQuery,
  toCardSummary,
  toCents,
  toCloseReason,
  toEntity,
  toHome,
  toIssuePlastic,
  toOpenCustomer,
  toSetCreditLine,
  toSwipe,
  toTransaction,
} from './transformers.js';

export const AcmeOptions = Type.Object(
  {
    /** What the simulated core starts with: the demo fixtures (what the conformance suite expects) or nothing. */
    seed: Type.Optional(Type.Union([Type.Literal('demo'), Type.Literal('empty')], { default: 'demo' })),
    /** Simulated time on the wire per call, in milliseconds. */
    latencyMs: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000, default: 0 })),
    /**
     * Offer only these operation groups, as an Acme deployment that is only the bank's card processor
     * would (`["cards", "pin"]`): the other methods are left out, so the gateway answers them 501 and
     * conformance reports them "not offered". Default: everything.
     */
    groups: Type.Optional(Type.Array(Type.Union(OPERATION_GROUPS.map((g) => Type.Literal(g))), { minItems: 1, uniqueItems: true })),
  },
  { additionalProperties: false },
);

/** The connector with only the methods of `groups`: what it offers is what it has methods for. */
function offering(connector: AcmeConnector, groups: readonly string[]): Connector {
  const all: Connector = connector;
  const kept = CONTRACT_OPERATIONS.filter((o) => groups.includes(CONTRACT[o].group) && typeof all[o] === 'function');
  return {
    ...Object.fromEntries(kept.map((o) => [o, (all[o] as (...args: unknown[]) => unknown).bind(connector)])),
    health: () => connector.health(),
  };
}

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
      return fromReply(reply, ({ cents, owedCents }) => ({
        entityId: input.entityId,
        creditLimit: fromCents(cents),
        outstanding: fromCents(owedCents),
        availableCredit: fromCents(cents - owedCents),
      }));
    });
  }

  async registerEntity(input: RegisterEntityInput, ctx: ConnectorContext) {
    const request = toOpenCustomer(input, ctx.idempotencyKey);
    if (!request) return rejected<never>('LIMIT_NOT_POSITIVE', `The amount ${input.creditLimit} is not a decimal amount.`);
    return this.call(async () =>
      fromReply(await this.client.openCustomer(request, ctx.signal), ({ customer, card }) => ({ entity: toEntity(customer), ...(card ? { card: toCardSummary(card) } : {}) })),
    );
  }

  async getEntity(input: { entityId: string }, ctx: ConnectorContext) {
    return this.call(async () => fromReply(await this.client.customer(input.entityId, ctx.signal), toEntity));
  }

  async updateEntity(input: UpdateEntityInput, ctx: ConnectorContext) {
    const change = {
      id: input.entityId,
      ...(input.contact ? { email: input.contact.email, phone: input.contact.mobile } : {}),
      ...(input.primaryAddress ? { home: toHome(input.primaryAddress) } : {}),
      requestKey: ctx.idempotencyKey,
    };
    return this.call(async () => fromReply(await this.client.amendCustomer(change, ctx.signal), toEntity));
  }

  async issueCard(input: { entityId: string }, ctx: ConnectorContext) {
    return this.call(async () => fromReply(await this.client.newCard({ customer: input.entityId, requestKey: ctx.idempotencyKey }, ctx.signal), toCardSummary));
  }

  async replaceCard(input: ReplaceCardInput, ctx: ConnectorContext) {
    return this.call(async () =>
      fromReply(await this.client.reissue({ card: input.cardId, kit: input.kitNo, requestKey: ctx.idempotencyKey }, ctx.signal), (card) => ({
        replacedCardId: input.cardId,
        card: toCardSummary(card),
      })),
    );
  }

  async authorize(input: AuthorizationInput, ctx: ConnectorContext) {
    const swipe = toSwipe(input, ctx.idempotencyKey);
    if (!swipe) return rejected<never>('LIMIT_NOT_POSITIVE', `The amount ${input.amount} is not a decimal amount.`);
    return this.call(async () => fromReply(await this.client.swipe(swipe, ctx.signal), toTransaction));
  }

  async repay(input: RepaymentInput, ctx: ConnectorContext) {
    const amount = toCents(input.amount);
    if (amount === null) return rejected<never>('LIMIT_NOT_POSITIVE', `The amount ${input.amount} is not a decimal amount.`);
    return this.call(async () =>
      fromReply(await this.client.payment({ customer: input.entityId, cents: amount, at: input.at, requestKey: ctx.idempotencyKey }, ctx.signal), (paid) => ({
        repaymentId: paid.ref,
        entityId: input.entityId,
        amount: fromCents(amount),
        outstanding: fromCents(paid.owedCents),
        availableCredit: fromCents(paid.limitCents - paid.owedCents),
        at: input.at,
      })),
    );
  }

  async listTransactions(input: TransactionQuery, ctx: ConnectorContext) {
    const query = {
      customer: input.entityId,
      card: input.cardId,
      declined: input.status === undefined ? undefined : input.status === 'DECLINED',
      ...(input.from !== undefined ? { from: Date.parse(input.from) } : {}),
      ...(input.to !== undefined ? { to: Date.parse(input.to) } : {}),
      before: input.before,
      max: input.limit,
    };
    return this.call(async () => fromReply(await this.client.swipes(query, ctx.signal), ({ items, more }) => ({ transactions: items.map(toTransaction), next: more })));
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
  // Declared, so that a tenant routing an operation Acme does not offer is refused when it is saved.
  offers: (options) => CONTRACT_OPERATIONS.filter((o) => o in AcmeConnector.prototype && (!options.groups || options.groups.includes(CONTRACT[o].group))),
  create: (options) => {
    const connector = new AcmeConnector(new AcmeCoreClient(options.seed === 'empty' ? emptyState() : demoState(), options.latencyMs ?? 0));
    return options.groups ? offering(connector, options.groups) : connector;
  },
});
