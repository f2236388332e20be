// The mock core: an in-process core-banking simulator holding the demo fixtures, for demos and CI.
import { Type } from '@sinclair/typebox';
import {
  ConnectorTimeoutError,
  defineConnector,
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
} from '../contract.js';
import { CoreBank } from './core.js';
import { demoFixtures, emptyFixtures, type MockCoreState } from './fixtures.js';

const MockOptions = Type.Object(
  {
    fixtures: Type.Optional(Type.Union([Type.Literal('demo'), Type.Literal('empty')], { default: 'demo' })),
    /** Simulated core latency per call, in milliseconds. */
    latencyMs: Type.Optional(Type.Integer({ minimum: 0, maximum: 60_000 })),
  },
  { additionalProperties: false },
);

/** Waits out the simulated latency; a deadline that passes first is a timeout, and nothing is applied. */
async function simulateLatency(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) throw new ConnectorTimeoutError('deadline passed before the core was called');
  if (!ms) return;
  await new Promise<void>((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(new ConnectorTimeoutError('deadline passed while waiting for the core'));
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

type Ctx = Pick<ConnectorContext, 'signal' | 'idempotencyKey'>;

export class MockCore implements Connector {
  readonly bank: CoreBank;

  constructor(
    readonly state: MockCoreState,
    private readonly latencyMs = 0,
  ) {
    this.bank = new CoreBank(state);
  }

  upgradeLimit(input: UpgradeLimitInput, ctx: Ctx) {
    return this.call(ctx, (key) => this.bank.upgradeLimit(input, key));
  }

  upgradeToPhysical(input: PhysicalUpgradeInput, ctx: Ctx) {
    return this.call(ctx, (key) => this.bank.upgradeToPhysical(input, key));
  }

  activateCard(input: CardRef, ctx: Ctx) {
    return this.call(ctx, (key) => this.bank.activateCard(input, key));
  }

  lockCard(input: CardRef, ctx: Ctx) {
    return this.call(ctx, (key) => this.bank.lockCard(input, key));
  }

  unlockCard(input: CardRef, ctx: Ctx) {
    return this.call(ctx, (key) => this.bank.unlockCard(input, key));
  }

  blockCard(input: BlockCardInput, ctx: Ctx) {
    return this.call(ctx, (key) => this.bank.blockCard(input, key));
  }

  listCards(input: { entityId: string }, ctx: Ctx) {
    return this.call(ctx, () => this.bank.listCards(input));
  }

  getCard(input: { cardId: string }, ctx: Ctx) {
    return this.call(ctx, () => this.bank.getCard(input));
  }

  getPreferences(input: { cardId: string }, ctx: Ctx) {
    return this.call(ctx, () => this.bank.getPreferences(input));
  }

  updatePreferences(input: PreferencesInput, ctx: Ctx) {
    return this.call(ctx, (key) => this.bank.updatePreferences(input, key));
  }

  getCreditLimit(input: { entityId: string }, ctx: Ctx) {
    return this.call(ctx, () => this.bank.getCreditLimit(input));
  }

  advanceFulfilment(input: { cardId: string }, ctx: Ctx) {
    return this.call(ctx, (key) => this.bank.advanceFulfilment(input, key));
  }

  setPin(input: SetPinInput, ctx: Ctx) {
    // Only the record of the change reaches the core's state; the block is not kept.
    return this.call(ctx, (key) => this.bank.setPin({ cardId: input.cardId, format: input.format, keyId: input.keyId }, key));
  }

  registerEntity(input: RegisterEntityInput, ctx: Ctx) {
    return this.call(ctx, (key) => this.bank.registerEntity(input, key));
  }

  getEntity(input: { entityId: string }, ctx: Ctx) {
    return this.call(ctx, () => this.bank.getEntity(input));
  }

  updateEntity(input: UpdateEntityInput, ctx: Ctx) {
    return this.call(ctx, (key) => this.bank.updateEntity(input, key));
  }

  issueCard(input: { entityId: string }, ctx: Ctx) {
    return this.call(ctx, (key) => this.bank.issueCard(input, key));
  }

  replaceCard(input: ReplaceCardInput, ctx: Ctx) {
    return this.call(ctx, (key) => this.bank.replaceCard(input, key));
  }

  authorize(input: AuthorizationInput, ctx: Ctx) {
    return this.call(ctx, (key) => this.bank.authorize(input, key));
  }

  repay(input: RepaymentInput, ctx: Ctx) {
    return this.call(ctx, (key) => this.bank.repay(input, key));
  }

  listTransactions(input: TransactionQuery, ctx: Ctx) {
    return this.call(ctx, () => this.bank.listTransactions(input));
  }

  /** Every call, read or write, waits out the latency first; a deadline that passes first applies nothing. */
  private async call<T>(ctx: Ctx, apply: (idempotencyKey: string | undefined) => OperationResult<T>): Promise<OperationResult<T>> {
    await simulateLatency(this.latencyMs, ctx.signal);
    return apply(ctx.idempotencyKey);
  }
}

export default defineConnector({
  id: 'mock',
  version: '1.0.0',
  optionsSchema: MockOptions,
  create: (options) => new MockCore(options.fixtures === 'empty' ? emptyFixtures() : demoFixtures(), options.latencyMs ?? 0),
});
