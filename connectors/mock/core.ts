// The simulated core's business rules over its state: shared by the in-process mock connector, the
// standalone mock core server and the file connector, so that all three behave alike.
import {
  rejected,
  succeeded,
  type OperationResult,
  type PhysicalUpgradeInput,
  type PhysicalUpgradeResult,
  type UpgradeLimitInput,
  type UpgradeLimitResult,
} from '../contract.js';
import { fromMinor, toMinor } from '../shared/money.js';
import type { MockCard, MockCoreState } from './fixtures.js';

export type CoreOperation = 'upgradeLimit' | 'upgradeToPhysical';

/** Operations the core applies; an idempotency key makes a retry return the first outcome unchanged. */
export class CoreBank {
  constructor(readonly state: MockCoreState) {}

  upgradeLimit(input: UpgradeLimitInput, idempotencyKey?: string): OperationResult<UpgradeLimitResult> {
    return this.once('upgradeLimit', idempotencyKey, () => this.applyLimit(input));
  }

  upgradeToPhysical(input: PhysicalUpgradeInput, idempotencyKey?: string): OperationResult<PhysicalUpgradeResult> {
    return this.once('upgradeToPhysical', idempotencyKey, () => this.applyPhysical(input));
  }

  private once<T>(op: CoreOperation, key: string | undefined, apply: () => OperationResult<T>): OperationResult<T> {
    if (!key) return apply();
    const id = `${op}:${key}`;
    const seen = this.state.idempotency.get(id);
    if (seen) return seen as OperationResult<T>;
    const result = apply();
    this.state.idempotency.set(id, result);
    return result;
  }

  private applyLimit(input: UpgradeLimitInput): OperationResult<UpgradeLimitResult> {
    const entity = this.state.entities.get(input.entityId);
    if (!entity) return rejected('ENTITY_NOT_FOUND', `Entity ${input.entityId} does not exist.`);
    let next: bigint;
    try {
      next = toMinor(input.amount);
    } catch {
      return rejected('LIMIT_NOT_POSITIVE', `The amount ${input.amount} is not a decimal amount.`);
    }
    if (next <= 0n) return rejected('LIMIT_NOT_POSITIVE', 'The credit limit must be greater than zero.');
    const previous = entity.creditLimitMinor;
    if (next < previous && !input.allowDecrease) {
      return rejected(
        'LIMIT_DECREASE_NOT_ALLOWED',
        `The product does not allow lowering the limit of ${input.entityId} from ${fromMinor(previous)} to ${fromMinor(next)}.`,
      );
    }
    entity.creditLimitMinor = next;
    return succeeded({ entityId: entity.entityId, previousLimit: fromMinor(previous), newLimit: fromMinor(next) });
  }

  private applyPhysical(input: PhysicalUpgradeInput): OperationResult<PhysicalUpgradeResult> {
    const kit = this.state.kits.get(input.kitNo);
    if (!kit) return rejected('PPCUST_018', `Kit ${input.kitNo} is not known to the core.`);
    if (kit.mappedTo) return rejected('PPCUST_018', `Kit ${input.kitNo} is already mapped to a card.`);
    if (input.entityId && !this.state.entities.has(input.entityId)) {
      return rejected('ENTITY_NOT_FOUND', `Entity ${input.entityId} does not exist.`);
    }
    const entityId = input.entityId ?? (input.cardId ? this.state.cards.get(input.cardId)?.entityId : kit.allocatedTo);
    if (!entityId) {
      return input.cardId
        ? rejected('CARD_NOT_FOUND', `Card ${input.cardId} does not exist.`)
        : rejected('PPCUST_018', `Kit ${input.kitNo} is not allocated to an entity; send entityId.`);
    }
    if (kit.allocatedTo && kit.allocatedTo !== entityId) {
      return rejected('PPCUST_018', `Kit ${input.kitNo} is allocated to another entity.`);
    }

    let card: MockCard | undefined;
    if (input.cardId) {
      card = this.state.cards.get(input.cardId);
      if (!card || card.entityId !== entityId) return rejected('CARD_NOT_FOUND', `Card ${input.cardId} does not exist for entity ${entityId}.`);
      if (card.form !== 'VIRTUAL') return rejected('CARD_NOT_VIRTUAL', `Card ${input.cardId} is already physical.`);
    } else {
      const virtual = [...this.state.cards.values()].filter((c) => c.entityId === entityId && c.form === 'VIRTUAL');
      if (virtual.length === 0) return rejected('CARD_NOT_VIRTUAL', `Entity ${entityId} has no virtual card to upgrade.`);
      if (virtual.length > 1) return rejected('CARD_AMBIGUOUS', `Entity ${entityId} has several virtual cards; send cardId.`);
      card = virtual[0]!;
    }
    if (card.state !== 'ACTIVE') {
      return rejected('CARD_STATE_INVALID', `Card ${card.cardId} is ${card.state} and cannot be upgraded.`);
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
        : {
            address1: address.address1!,
            address2: address.address2,
            city: address.city!,
            state: address.state!,
            country: address.country!,
            pin: address.pin!,
          };
    if (input.plasticCode) card.plasticCode = input.plasticCode;
    if (input.preferences) card.preferences = input.preferences;
    kit.mappedTo = card.cardId;
    kit.allocatedTo = entityId;
    return succeeded({ cardId: card.cardId, entityId, kitNo: kit.kitNo, state: card.state as PhysicalUpgradeResult['state'] });
  }
}
