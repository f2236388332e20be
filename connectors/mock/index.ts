// The mock core: an in-process core-banking simulator holding the demo fixtures, for demos and CI.
import { Type } from '@sinclair/typebox';
import {
  defineConnector,
  rejected,
  succeeded,
  type Connector,
  type PhysicalUpgradeInput,
  type UpgradeLimitInput,
} from '../contract.js';
import { fromMinor, toMinor } from '../shared/money.js';
import { demoFixtures, emptyFixtures, type MockCard, type MockCoreState } from './fixtures.js';

const MockOptions = Type.Object(
  {
    fixtures: Type.Optional(Type.Union([Type.Literal('demo'), Type.Literal('empty')], { default: 'demo' })),
    /** Simulated core latency per call, in milliseconds. */
    latencyMs: Type.Optional(Type.Integer({ minimum: 0, maximum: 60_000 })),
  },
  { additionalProperties: false },
);

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(signal.reason);
    }, { once: true });
  });

export class MockCore implements Connector {
  constructor(
    readonly state: MockCoreState,
    private readonly latencyMs = 0,
  ) {}

  async upgradeLimit(input: UpgradeLimitInput, ctx: { signal: AbortSignal }) {
    if (this.latencyMs) await sleep(this.latencyMs, ctx.signal);
    const entity = this.state.entities.get(input.entityId);
    if (!entity) return rejected<never>('ENTITY_NOT_FOUND', `Entity ${input.entityId} does not exist.`);
    const next = toMinor(input.amount);
    if (next <= 0n) return rejected<never>('LIMIT_NOT_POSITIVE', 'The credit limit must be greater than zero.');
    const previous = entity.creditLimitMinor;
    if (next < previous && !input.allowDecrease) {
      return rejected<never>(
        'LIMIT_DECREASE_NOT_ALLOWED',
        `The product does not allow lowering the limit of ${input.entityId} from ${fromMinor(previous)} to ${input.amount}.`,
      );
    }
    entity.creditLimitMinor = next;
    return succeeded({ entityId: entity.entityId, previousLimit: fromMinor(previous), newLimit: fromMinor(next) });
  }

  async upgradeToPhysical(input: PhysicalUpgradeInput, ctx: { signal: AbortSignal }) {
    if (this.latencyMs) await sleep(this.latencyMs, ctx.signal);
    const kit = this.state.kits.get(input.kitNo);
    if (!kit) return rejected<never>('PPCUST_018', `Kit ${input.kitNo} is not known to the core.`);
    if (kit.mappedTo) return rejected<never>('PPCUST_018', `Kit ${input.kitNo} is already mapped to a card.`);

    const entityId = input.entityId ?? (input.cardId ? this.state.cards.get(input.cardId)?.entityId : kit.allocatedTo);
    if (input.entityId && !this.state.entities.has(input.entityId)) {
      return rejected<never>('ENTITY_NOT_FOUND', `Entity ${input.entityId} does not exist.`);
    }
    if (!entityId) {
      return input.cardId
        ? rejected<never>('CARD_NOT_FOUND', `Card ${input.cardId} does not exist.`)
        : rejected<never>('PPCUST_018', `Kit ${input.kitNo} is not allocated to an entity; send entityId.`);
    }
    if (kit.allocatedTo && kit.allocatedTo !== entityId) {
      return rejected<never>('PPCUST_018', `Kit ${input.kitNo} is allocated to another entity.`);
    }

    let card: MockCard | undefined;
    if (input.cardId) {
      card = this.state.cards.get(input.cardId);
      if (!card || card.entityId !== entityId) return rejected<never>('CARD_NOT_FOUND', `Card ${input.cardId} does not exist for entity ${entityId}.`);
      if (card.form !== 'VIRTUAL') return rejected<never>('CARD_NOT_VIRTUAL', `Card ${input.cardId} is already physical.`);
    } else {
      const virtual = [...this.state.cards.values()].filter((c) => c.entityId === entityId && c.form === 'VIRTUAL');
      if (virtual.length === 0) return rejected<never>('CARD_NOT_VIRTUAL', `Entity ${entityId} has no virtual card to upgrade.`);
      if (virtual.length > 1) return rejected<never>('CARD_AMBIGUOUS', `Entity ${entityId} has several virtual cards; send cardId.`);
      card = virtual[0]!;
    }
    if (card.state !== 'ACTIVE') {
      return rejected<never>('CARD_STATE_INVALID', `Card ${card.cardId} is ${card.state} and cannot be upgraded.`);
    }

    const entity = this.state.entities.get(entityId)!;
    const address = input.communicationAddress;
    card.form = 'PHYSICAL';
    card.kitNo = kit.kitNo;
    card.state = input.lockOnUpgrade ? 'PENDING_ACTIVATION' : 'ACTIVE';
    card.fulfilment = 'ORDERED';
    card.deliveryAddress =
      !address || address.usePrimaryAddress
        ? { ...entity.primaryAddress }
        : { address1: address.address1!, address2: address.address2, city: address.city!, state: address.state!, country: address.country!, pin: address.pin! };
    if (input.plasticCode) card.plasticCode = input.plasticCode;
    if (input.preferences) card.preferences = input.preferences;
    kit.mappedTo = card.cardId;
    kit.allocatedTo = entityId;
    return succeeded({ cardId: card.cardId, entityId, kitNo: kit.kitNo, state: card.state as 'ACTIVE' | 'PENDING_ACTIVATION' });
  }
}

export default defineConnector({
  id: 'mock',
  version: '1.0.0',
  optionsSchema: MockOptions,
  create: (options) => new MockCore(options.fixtures === 'empty' ? emptyFixtures() : demoFixtures(), options.latencyMs ?? 0),
});
