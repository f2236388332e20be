// The simulated core's business rules over its state: shared by the in-process mock connector, the
// standalone mock core server and the file connector, so that all three behave alike.
import {
  rejected,
  succeeded,
  type AuthorizationInput,
  type BlockCardInput,
  type CardDetails,
  type CardReplacement,
  type EntityDetails,
  type EntityRegistration,
  type RegisterEntityInput,
  type ReplaceCardInput,
  type Repayment,
  type RepaymentInput,
  type Transaction,
  type TransactionPage,
  type TransactionQuery,
  type UpdateEntityInput,
  type CardRef,
  type CardSummary,
  type ClearInput,
  type DisputeCreditInput,
  type HoldInput,
  type HoldState,
  type RefundInput,
  type ReverseInput,
  type CreditLimitResult,
  type OperationResult,
  type PhysicalUpgradeInput,
  type PhysicalUpgradeResult,
  type PreferencesInput,
  type SetPinInput,
  type UpgradeLimitInput,
  type UpgradeLimitResult,
  type ContractOperation,
  type OperationInput,
  type OperationValue,
  type WriteOperation,
} from '../contract.js';
import type { Preferences } from '../../schemas/cards.js';
import { channelIsOn } from '../shared/preferences.js';
import { transition, type CardAction, type CardStatus } from '../../schemas/card-lifecycle.js';
import { fromMinor, toMinor } from '../shared/money.js';
import { maskPan } from '../shared/pan.js';
import type { DeclineReason } from '../../schemas/transactions.js';
import { virtualCard, type MockCard, type MockCoreState, type MockEntity, type MockHold, type MockTransaction } from './fixtures.js';

/** The writes CoreBank applies (the contract's writes); each name prefixes its idempotency keys and names its journal entries. */
export type CoreOperation = WriteOperation;

/** CoreBank has every operation of the contract, by its name: a write takes the idempotency key, a read only the input. */
type BankOperations = { [O in ContractOperation]: (input: OperationInput<O>, idempotencyKey?: string) => OperationResult<OperationValue<O>> };

/** The lifecycle actions a CardRef (cardId, entityId or kitNo) may name a card for. */
export type RefAction = 'activate' | 'lock' | 'unlock' | 'block';

const OPERATION_OF: Record<RefAction, CoreOperation> = { activate: 'activateCard', lock: 'lockCard', unlock: 'unlockCard', block: 'blockCard' };

/** What a PIN change leaves in the core's records: never the block itself. */
export type PinChange = Pick<SetPinInput, 'cardId' | 'format' | 'keyId'>;

const statusOf = (card: MockCard): CardStatus => ({ form: card.form, state: card.state, fulfilment: card.fulfilment });

/** A card as CoreBank shows it: a fresh object, without the PAN or CVV. */
function summaryOf(card: MockCard): CardSummary {
  return {
    cardId: card.cardId,
    entityId: card.entityId,
    form: card.form,
    state: card.state,
    ...(card.fulfilment ? { fulfilment: card.fulfilment } : {}),
    ...(card.kitNo ? { kitNo: card.kitNo } : {}),
    panMasked: maskPan(card.pan),
    expiry: card.expiry,
    ...(card.blockReason ? { blockReason: card.blockReason } : {}),
  };
}

/** An entity as CoreBank shows it: a fresh object. */
function entityOf(entity: MockEntity, cardCount: number): EntityDetails {
  return {
    entityId: entity.entityId,
    name: entity.name,
    type: entity.type,
    contact: { ...entity.contact },
    primaryAddress: { ...entity.primaryAddress },
    creditLimit: fromMinor(entity.creditLimitMinor),
    outstanding: fromMinor(entity.outstandingMinor),
    availableCredit: fromMinor(entity.creditLimitMinor - entity.outstandingMinor),
    cardCount,
  };
}

function transactionOf(t: MockTransaction): Transaction {
  return {
    transactionId: t.transactionId,
    cardId: t.cardId,
    entityId: t.entityId,
    amount: fromMinor(t.amountMinor),
    channel: t.channel,
    merchant: { ...t.merchant },
    international: t.international,
    status: t.status,
    declineReason: t.declineReason,
    at: t.at,
    ...(t.type !== undefined ? { type: t.type } : {}),
    ...(t.authorizationId !== undefined ? { authorizationId: t.authorizationId } : {}),
  };
}

function holdStateOf(h: MockHold, entity: MockEntity): HoldState {
  return {
    authorizationId: h.authorizationId,
    cardId: h.cardId,
    entityId: h.entityId,
    approved: h.approved,
    declineReason: h.declineReason,
    authorized: fromMinor(h.authorizedMinor),
    held: fromMinor(h.heldMinor),
    cleared: fromMinor(h.clearedMinor),
    reversed: fromMinor(h.reversedMinor),
    refunded: fromMinor(h.refundedMinor),
    credited: fromMinor(h.creditedMinor),
    availableCredit: fromMinor(entity.creditLimitMinor - entity.outstandingMinor),
  };
}

/** The calendar day of an instant in a time zone: `2026-11-23`. */
function dayIn(instant: string, timeZone: string): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date(instant));
}

/** The next number after the highest `<prefix><digits>` id in use, so that generated ids never collide. */
function nextNumber(ids: Iterable<string>, prefix: string, floor: number): number {
  let max = floor;
  for (const id of ids) {
    const m = new RegExp(`^${prefix}(\\d{1,9})$`).exec(id);
    if (m) max = Math.max(max, Number(m[1]));
  }
  return max + 1;
}

type Resolved = { card: MockCard } | { refusal: OperationResult<never> };

/** Operations the core applies; a retried key returns the first outcome; every answer is a copy. */
export class CoreBank implements BankOperations {
  constructor(readonly state: MockCoreState) {}

  upgradeLimit(input: UpgradeLimitInput, idempotencyKey?: string): OperationResult<UpgradeLimitResult> {
    return this.once('upgradeLimit', idempotencyKey, () => this.applyLimit(input));
  }

  upgradeToPhysical(input: PhysicalUpgradeInput, idempotencyKey?: string): OperationResult<PhysicalUpgradeResult> {
    return this.once('upgradeToPhysical', idempotencyKey, () => this.applyPhysical(input));
  }

  activateCard(input: CardRef, idempotencyKey?: string): OperationResult<CardSummary> {
    return this.once('activateCard', idempotencyKey, () => this.applyAction(input, 'activate'));
  }

  lockCard(input: CardRef, idempotencyKey?: string): OperationResult<CardSummary> {
    return this.once('lockCard', idempotencyKey, () => this.applyAction(input, 'lock'));
  }

  unlockCard(input: CardRef, idempotencyKey?: string): OperationResult<CardSummary> {
    return this.once('unlockCard', idempotencyKey, () => this.applyAction(input, 'unlock'));
  }

  blockCard(input: BlockCardInput, idempotencyKey?: string): OperationResult<CardSummary> {
    return this.once('blockCard', idempotencyKey, () =>
      this.applyAction(input, 'block', (card) => {
        card.blockReason = input.reasonCode;
      }),
    );
  }

  advanceFulfilment(input: { cardId: string }, idempotencyKey?: string): OperationResult<CardSummary> {
    return this.once('advanceFulfilment', idempotencyKey, () => this.applyAction({ cardId: input.cardId }, 'advanceFulfilment'));
  }

  updatePreferences(input: PreferencesInput, idempotencyKey?: string): OperationResult<Preferences> {
    return this.once('updatePreferences', idempotencyKey, () => {
      const found = this.cardById(input.cardId);
      if ('refusal' in found) return found.refusal;
      const t = transition(statusOf(found.card), 'updatePreferences');
      if (!t.allowed) return rejected(t.code, `Card ${input.cardId}: ${t.reason}.`);
      found.card.preferences = structuredClone(input.preferences);
      return succeeded(structuredClone(input.preferences));
    });
  }

  /** Records that a PIN was set. The block goes to the card system's HSM; the core keeps no copy. */
  setPin(input: PinChange, idempotencyKey?: string): OperationResult<{ cardId: string }> {
    return this.once('setPin', idempotencyKey, () => {
      const found = this.cardById(input.cardId);
      if ('refusal' in found) return found.refusal;
      const t = transition(statusOf(found.card), 'setPin');
      if (!t.allowed) return rejected(t.code, `Card ${input.cardId}: ${t.reason}.`);
      found.card.pinSet = true;
      return succeeded({ cardId: input.cardId });
    });
  }

  registerEntity(input: RegisterEntityInput, idempotencyKey?: string): OperationResult<EntityRegistration> {
    return this.once('registerEntity', idempotencyKey, () => {
      if (input.entityId !== undefined && this.state.entities.has(input.entityId)) {
        return rejected('ENTITY_EXISTS', `Entity ${input.entityId} already exists.`);
      }
      const limit = this.positive(input.creditLimit);
      if (typeof limit !== 'bigint') return limit;
      const entityId = input.entityId ?? `ENT-${nextNumber(this.state.entities.keys(), 'ENT-', 1000)}`;
      const entity: MockEntity = {
        entityId,
        name: input.name,
        type: input.type,
        contact: { ...input.contact },
        creditLimitMinor: limit,
        outstandingMinor: 0n,
        primaryAddress: { ...input.primaryAddress },
      };
      this.state.entities.set(entityId, entity);
      const card = input.issueVirtualCard ? summaryOf(this.newCard(entityId)) : undefined;
      return succeeded({ entity: entityOf(entity, card ? 1 : 0), ...(card ? { card } : {}) });
    });
  }

  updateEntity(input: UpdateEntityInput, idempotencyKey?: string): OperationResult<EntityDetails> {
    return this.once('updateEntity', idempotencyKey, () => {
      const entity = this.state.entities.get(input.entityId);
      if (!entity) return rejected('ENTITY_NOT_FOUND', `Entity ${input.entityId} does not exist.`);
      if (input.contact) entity.contact = { ...input.contact };
      if (input.primaryAddress) entity.primaryAddress = { ...input.primaryAddress };
      return succeeded(entityOf(entity, this.cardsOf(entity.entityId).length));
    });
  }

  issueCard(input: { entityId: string }, idempotencyKey?: string): OperationResult<CardSummary> {
    return this.once('issueCard', idempotencyKey, () => {
      if (!this.state.entities.has(input.entityId)) return rejected('ENTITY_NOT_FOUND', `Entity ${input.entityId} does not exist.`);
      return succeeded(summaryOf(this.newCard(input.entityId)));
    });
  }

  replaceCard(input: ReplaceCardInput, idempotencyKey?: string): OperationResult<CardReplacement> {
    return this.once('replaceCard', idempotencyKey, () => {
      const found = this.cardById(input.cardId);
      if ('refusal' in found) return found.refusal;
      const old = found.card;
      if (old.state !== 'BLOCKED') {
        return rejected('CARD_NOT_BLOCKED', `Card ${old.cardId} is ${old.state}: only a BLOCKED card can be replaced; block it first.`);
      }
      if (old.replacedBy) return rejected('CARD_ALREADY_REPLACED', `Card ${old.cardId} was already replaced by ${old.replacedBy}.`);
      const kit = input.kitNo === undefined ? undefined : this.state.kits.get(input.kitNo);
      if (input.kitNo !== undefined) {
        if (!kit) return rejected('PPCUST_018', `Kit ${input.kitNo} is not known to the core.`);
        if (kit.mappedTo) return rejected('PPCUST_018', `Kit ${input.kitNo} is already mapped to a card.`);
        if (kit.allocatedTo && kit.allocatedTo !== old.entityId) return rejected('PPCUST_018', `Kit ${input.kitNo} is allocated to another entity.`);
      }
      const card = this.newCard(old.entityId);
      if (old.preferences) card.preferences = structuredClone(old.preferences);
      if (kit) {
        card.form = 'PHYSICAL';
        card.fulfilment = 'ORDERED';
        card.kitNo = kit.kitNo;
        card.deliveryAddress = { ...this.state.entities.get(old.entityId)!.primaryAddress };
        if (old.plasticCode) card.plasticCode = structuredClone(old.plasticCode);
        kit.mappedTo = card.cardId;
        kit.allocatedTo = old.entityId;
      }
      old.replacedBy = card.cardId;
      return succeeded({ replacedCardId: old.cardId, card: summaryOf(card) });
    });
  }

  /**
   * Decides an authorization as an issuer's host would, in order (decision 0052): card ACTIVE, international
   * use if the merchant is abroad, the channel enabled and within its daily limits, credit available.
   */
  authorize(input: AuthorizationInput, idempotencyKey?: string): OperationResult<Transaction> {
    return this.once('authorize', idempotencyKey, () => {
      const found = this.cardById(input.cardId);
      if ('refusal' in found) return found.refusal;
      const card = found.card;
      const amount = this.positive(input.amount);
      if (typeof amount !== 'bigint') return amount;
      const entity = this.state.entities.get(card.entityId)!;
      const international = input.merchant.country !== input.homeCountry;
      const reason = this.declineReason(card, entity, input, amount, international);
      const t: MockTransaction = {
        transactionId: this.nextTransactionId(),
        seq: this.state.transactions.length + 1,
        cardId: card.cardId,
        entityId: card.entityId,
        amountMinor: amount,
        channel: input.channel,
        merchant: { ...input.merchant },
        international,
        status: reason ? 'DECLINED' : 'APPROVED',
        declineReason: reason,
        at: input.at,
      };
      this.state.transactions.push(t);
      if (!reason) entity.outstandingMinor += amount;
      return succeeded(transactionOf(t));
    });
  }

  /**
   * The core's own decision on an authorization (contract.ts, HoldInput): the card is ACTIVE and the
   * credit is there, else declined; with `partialAllowed` what is available is held instead.
   */
  holdFunds(input: HoldInput, idempotencyKey?: string): OperationResult<HoldState> {
    return this.once('holdFunds', idempotencyKey, () => {
      if (this.state.holds.has(input.authorizationId)) return rejected('AUTHORIZATION_EXISTS', `Authorization ${input.authorizationId} already has a hold.`);
      const found = this.cardById(input.cardId);
      if ('refusal' in found) return found.refusal;
      const amount = this.positive(input.amount);
      if (typeof amount !== 'bigint') return amount;
      const card = found.card;
      const entity = this.state.entities.get(card.entityId)!;
      const available = entity.creditLimitMinor - entity.outstandingMinor;
      let held = amount;
      let reason: MockHold['declineReason'] = null;
      if (card.state !== 'ACTIVE') reason = 'CARD_NOT_ACTIVE';
      else if (amount > available) {
        if (input.partialAllowed && available > 0n) held = available;
        else reason = 'INSUFFICIENT_CREDIT';
      }
      if (reason) held = 0n;
      const hold: MockHold = {
        authorizationId: input.authorizationId,
        cardId: card.cardId,
        entityId: card.entityId,
        approved: reason === null,
        declineReason: reason,
        authorizedMinor: held,
        heldMinor: held,
        clearedMinor: 0n,
        reversedMinor: 0n,
        refundedMinor: 0n,
        creditedMinor: 0n,
        at: input.at,
        merchant: { name: input.merchant.name, mcc: input.merchant.mcc, country: input.merchant.country },
        channel: input.channel,
        international: input.homeCountry !== undefined && input.merchant.country !== input.homeCountry,
      };
      this.state.holds.set(hold.authorizationId, hold);
      entity.outstandingMinor += held;
      this.list(hold, 'HOLD', reason ? amount : held, input.at, reason);
      return succeeded(holdStateOf(hold, entity));
    });
  }

  clearFunds(input: ClearInput, idempotencyKey?: string): OperationResult<HoldState> {
    return this.once('clearFunds', idempotencyKey, () =>
      this.onHold(input.authorizationId, input.amount, (hold, entity, amount) => {
        if (amount > hold.heldMinor) {
          return rejected('CLEAR_EXCEEDS_HELD', `Authorization ${hold.authorizationId} holds ${fromMinor(hold.heldMinor)}; a clearing of ${fromMinor(amount)} is more than that.`);
        }
        hold.heldMinor -= amount;
        hold.clearedMinor += amount;
        this.list(hold, 'CLEARING', amount, input.at);
        if (input.final && hold.heldMinor > 0n) {
          this.list(hold, 'REVERSAL', hold.heldMinor, input.at);
          this.release(hold, entity, hold.heldMinor);
        }
        return succeeded(holdStateOf(hold, entity));
      }),
    );
  }

  reverseHold(input: ReverseInput, idempotencyKey?: string): OperationResult<HoldState> {
    return this.once('reverseHold', idempotencyKey, () => {
      const hold = this.state.holds.get(input.authorizationId);
      if (hold && hold.heldMinor === 0n) return rejected('REVERSAL_EXCEEDS_HELD', `Authorization ${hold.authorizationId} holds nothing; there is nothing to reverse.`);
      return this.onHold(input.authorizationId, input.amount ?? fromMinor(hold?.heldMinor ?? 0n), (h, entity, minor) => {
        if (minor > h.heldMinor) {
          return rejected('REVERSAL_EXCEEDS_HELD', `Authorization ${h.authorizationId} holds ${fromMinor(h.heldMinor)}; a reversal of ${fromMinor(minor)} is more than that.`);
        }
        this.release(h, entity, minor);
        this.list(h, 'REVERSAL', minor, input.at);
        return succeeded(holdStateOf(h, entity));
      });
    });
  }

  refund(input: RefundInput, idempotencyKey?: string): OperationResult<HoldState> {
    return this.once('refund', idempotencyKey, () =>
      this.onHold(input.authorizationId, input.amount, (hold, entity, amount) => {
        if (amount > this.refundable(hold)) {
          return rejected('REFUND_EXCEEDS_CLEARED', `Authorization ${hold.authorizationId} has ${fromMinor(this.refundable(hold))} cleared and not yet given back; a refund of ${fromMinor(amount)} is more than that.`);
        }
        hold.refundedMinor += amount;
        this.giveBack(entity, amount);
        this.list(hold, 'REFUND', amount, input.at);
        return succeeded(holdStateOf(hold, entity));
      }),
    );
  }

  creditDispute(input: DisputeCreditInput, idempotencyKey?: string): OperationResult<HoldState> {
    return this.once('creditDispute', idempotencyKey, () =>
      this.onHold(input.authorizationId, input.amount, (hold, entity, amount) => {
        if (amount > this.refundable(hold)) {
          return rejected('DISPUTE_EXCEEDS_CLEARED', `Authorization ${hold.authorizationId} has ${fromMinor(this.refundable(hold))} cleared and not yet given back; a credit of ${fromMinor(amount)} is more than that.`);
        }
        hold.creditedMinor += amount;
        this.giveBack(entity, amount);
        this.list(hold, 'DISPUTE_CREDIT', amount, input.at);
        return succeeded(holdStateOf(hold, entity));
      }),
    );
  }

  repay(input: RepaymentInput, idempotencyKey?: string): OperationResult<Repayment> {
    return this.once('repay', idempotencyKey, () => {
      const entity = this.state.entities.get(input.entityId);
      if (!entity) return rejected('ENTITY_NOT_FOUND', `Entity ${input.entityId} does not exist.`);
      const amount = this.positive(input.amount);
      if (typeof amount !== 'bigint') return amount;
      if (amount > entity.outstandingMinor) {
        return rejected(
          'REPAYMENT_EXCEEDS_OUTSTANDING',
          `Entity ${input.entityId} owes ${fromMinor(entity.outstandingMinor)}; a repayment of ${fromMinor(amount)} is more than that.`,
        );
      }
      entity.outstandingMinor -= amount;
      const repaymentId = `RPY-${String(this.state.repayments.length + 1).padStart(8, '0')}`;
      this.state.repayments.push({ repaymentId, entityId: entity.entityId, amountMinor: amount, at: input.at });
      return succeeded({
        repaymentId,
        entityId: entity.entityId,
        amount: fromMinor(amount),
        outstanding: fromMinor(entity.outstandingMinor),
        availableCredit: fromMinor(entity.creditLimitMinor - entity.outstandingMinor),
        at: input.at,
      });
    });
  }

  // ── Reads: never journaled, never idempotency-keyed, always copies ──────────────────────────────

  getEntity(input: { entityId: string }): OperationResult<EntityDetails> {
    const entity = this.state.entities.get(input.entityId);
    if (!entity) return rejected('ENTITY_NOT_FOUND', `Entity ${input.entityId} does not exist.`);
    return succeeded(entityOf(entity, this.cardsOf(entity.entityId).length));
  }

  listTransactions(input: TransactionQuery): OperationResult<TransactionPage> {
    if (!this.state.entities.has(input.entityId)) return rejected('ENTITY_NOT_FOUND', `Entity ${input.entityId} does not exist.`);
    if (input.cardId !== undefined && this.state.cards.get(input.cardId)?.entityId !== input.entityId) {
      return rejected('CARD_NOT_FOUND', `Card ${input.cardId} does not exist for entity ${input.entityId}.`);
    }
    const own = this.state.transactions.filter((t) => t.entityId === input.entityId);
    let below = Infinity;
    if (input.before !== undefined) {
      const cursor = own.find((t) => t.transactionId === input.before);
      if (!cursor) return rejected('TRANSACTION_NOT_FOUND', `Transaction ${input.before} does not exist for entity ${input.entityId}.`);
      below = cursor.seq;
    }
    const from = input.from === undefined ? -Infinity : Date.parse(input.from);
    const to = input.to === undefined ? Infinity : Date.parse(input.to);
    const matching = own
      .filter((t) => t.seq < below && (input.cardId === undefined || t.cardId === input.cardId) && (input.status === undefined || t.status === input.status))
      .filter((t) => Date.parse(t.at) >= from && Date.parse(t.at) < to)
      .reverse();
    const page = matching.slice(0, Math.max(1, input.limit));
    return succeeded({
      transactions: page.map(transactionOf),
      next: matching.length > page.length ? page[page.length - 1]!.transactionId : null,
    });
  }


  listCards(input: { entityId: string }): OperationResult<CardSummary[]> {
    if (!this.state.entities.has(input.entityId)) return rejected('ENTITY_NOT_FOUND', `Entity ${input.entityId} does not exist.`);
    return succeeded(this.cardsOf(input.entityId).map(summaryOf));
  }

  getCard(input: { cardId: string }): OperationResult<CardDetails> {
    const found = this.cardById(input.cardId);
    if ('refusal' in found) return found.refusal;
    const card = found.card;
    return succeeded({
      ...summaryOf(card),
      ...(card.plasticCode ? { plasticCode: structuredClone(card.plasticCode) } : {}),
      ...(card.preferences ? { preferences: structuredClone(card.preferences) } : {}),
      sensitive: { pan: card.pan, cvv: card.cvv },
    });
  }

  /** The card's preferences; `{}` when none were ever set. */
  getPreferences(input: { cardId: string }): OperationResult<Preferences> {
    const found = this.cardById(input.cardId);
    if ('refusal' in found) return found.refusal;
    return succeeded(structuredClone(found.card.preferences ?? {}));
  }

  getCreditLimit(input: { entityId: string }): OperationResult<CreditLimitResult> {
    const entity = this.state.entities.get(input.entityId);
    if (!entity) return rejected('ENTITY_NOT_FOUND', `Entity ${input.entityId} does not exist.`);
    return succeeded({
      entityId: entity.entityId,
      creditLimit: fromMinor(entity.creditLimitMinor),
      outstanding: fromMinor(entity.outstandingMinor),
      availableCredit: fromMinor(entity.creditLimitMinor - entity.outstandingMinor),
    });
  }

  /** The card `ref` names for `action`; a retried key resolves to the card its first success applied to. */
  resolveCardId(ref: CardRef, action: RefAction, idempotencyKey?: string): OperationResult<{ cardId: string }> {
    if (idempotencyKey) {
      const seen = this.state.idempotency.get(`${OPERATION_OF[action]}:${idempotencyKey}`) as OperationResult<{ cardId?: unknown }> | undefined;
      if (seen?.status === 'succeeded' && typeof seen.value.cardId === 'string') return succeeded({ cardId: seen.value.cardId });
    }
    const found = this.resolve(ref, action);
    return 'refusal' in found ? found.refusal : succeeded({ cardId: found.card.cardId });
  }

  /** `resolveCardId` as GET /v1/card-resolution asks it: the action among the identifiers. */
  resolveCard(query: CardRef & { action: RefAction }, idempotencyKey?: string): OperationResult<{ cardId: string }> {
    const { action, ...ref } = query;
    return this.resolveCardId(ref, action, idempotencyKey);
  }

  // ── Internals ───────────────────────────────────────────────────────────────────────────────────

  private once<T>(op: CoreOperation, key: string | undefined, apply: () => OperationResult<T>): OperationResult<T> {
    if (!key) return apply();
    const id = `${op}:${key}`;
    const seen = this.state.idempotency.get(id);
    if (seen) return structuredClone(seen) as OperationResult<T>;
    const result = apply();
    this.state.idempotency.set(id, structuredClone(result));
    return result;
  }

  /** Runs `change` on a known hold with a positive amount; the refusals otherwise. */
  private onHold(
    authorizationId: string,
    amount: string,
    change: (hold: MockHold, entity: MockEntity, amount: bigint) => OperationResult<HoldState>,
  ): OperationResult<HoldState> {
    const hold = this.state.holds.get(authorizationId);
    if (!hold) return rejected('AUTHORIZATION_NOT_FOUND', `Authorization ${authorizationId} has no hold in the core.`);
    const minor = this.positive(amount);
    if (typeof minor !== 'bigint') return minor;
    return change(hold, this.state.entities.get(hold.entityId)!, minor);
  }

  /** `TXN-` and the next number of the core's own transactions (a hold is listed under its authorization's id). */
  private nextTransactionId(): string {
    return `TXN-${String(this.state.transactions.filter((t) => t.transactionId.startsWith('TXN-')).length + 1).padStart(8, '0')}`;
  }

  /** Lists what happened to a hold: the hold itself under the authorization's id, every later change under its own. */
  private list(hold: MockHold, type: NonNullable<MockTransaction['type']>, amount: bigint, at: string, declineReason: MockHold['declineReason'] = null): void {
    this.state.transactions.push({
      transactionId: type === 'HOLD' ? hold.authorizationId : this.nextTransactionId(),
      seq: this.state.transactions.length + 1,
      cardId: hold.cardId,
      entityId: hold.entityId,
      amountMinor: amount,
      channel: hold.channel ?? 'POS',
      merchant: hold.merchant ? { ...hold.merchant } : { name: 'unknown', mcc: '0000', country: 'ZZ' },
      international: hold.international ?? false,
      status: declineReason ? 'DECLINED' : 'APPROVED',
      declineReason,
      at,
      type,
      authorizationId: hold.authorizationId,
    });
  }

  /** Releases part of a hold: no longer held, no longer owed. */
  private release(hold: MockHold, entity: MockEntity, amount: bigint): void {
    hold.heldMinor -= amount;
    hold.reversedMinor += amount;
    entity.outstandingMinor -= amount;
  }

  /** What was cleared and not yet refunded or credited back. */
  private refundable(hold: MockHold): bigint {
    return hold.clearedMinor - hold.refundedMinor - hold.creditedMinor;
  }

  /**
   * Lowers what the entity owes. A repayment may already have settled what is given back: the simulated core
   * keeps no credit balance, so the outstanding balance stops at zero.
   */
  private giveBack(entity: MockEntity, amount: bigint): void {
    entity.outstandingMinor = entity.outstandingMinor > amount ? entity.outstandingMinor - amount : 0n;
  }

  /** A decimal amount above zero in minor units, or the refusal. */
  private positive(amount: string): bigint | OperationResult<never> {
    let minor: bigint;
    try {
      minor = toMinor(amount);
    } catch {
      return rejected('LIMIT_NOT_POSITIVE', `The amount ${amount} is not a decimal amount.`);
    }
    return minor > 0n ? minor : rejected('LIMIT_NOT_POSITIVE', 'The amount must be greater than zero.');
  }

  /** A new VIRTUAL, ACTIVE card of the entity, numbered after the highest card id in use. */
  private newCard(entityId: string): MockCard {
    const card = virtualCard(nextNumber(this.state.cards.keys(), 'CARD-', 3000), entityId);
    this.state.cards.set(card.cardId, card);
    return card;
  }

  private declineReason(card: MockCard, entity: MockEntity, input: AuthorizationInput, amount: bigint, international: boolean): DeclineReason | null {
    if (card.state !== 'ACTIVE') return 'CARD_NOT_ACTIVE';
    const category = international ? card.preferences?.international : card.preferences?.domestic;
    if (international && category?.enabled !== true) return 'INTERNATIONAL_DISABLED';
    const name = input.channel.toLowerCase() as 'atm' | 'pos' | 'ecom' | 'contactless';
    const channel = category?.[name];
    // Switched off, or not among the channels the category names (decision 0176).
    if (!channelIsOn(category, name)) return 'CHANNEL_DISABLED';
    if (channel?.dailyLimit !== undefined || channel?.dailyCount !== undefined) {
      const day = dayIn(input.at, input.timeZone);
      const today = this.state.transactions.filter(
        (t) =>
          t.cardId === card.cardId &&
          t.type === undefined &&
          t.status === 'APPROVED' &&
          t.channel === input.channel &&
          t.international === international &&
          dayIn(t.at, input.timeZone) === day,
      );
      const spent = today.reduce((sum, t) => sum + t.amountMinor, 0n);
      if (channel.dailyLimit !== undefined && spent + amount > toMinor(channel.dailyLimit)) return 'DAILY_LIMIT_EXCEEDED';
      if (channel.dailyCount !== undefined && today.length + 1 > channel.dailyCount) return 'DAILY_COUNT_EXCEEDED';
    }
    if (amount > entity.creditLimitMinor - entity.outstandingMinor) return 'INSUFFICIENT_CREDIT';
    return null;
  }

  private cardsOf(entityId: string): MockCard[] {
    return [...this.state.cards.values()].filter((c) => c.entityId === entityId);
  }

  private cardById(cardId: string): Resolved {
    const card = this.state.cards.get(cardId);
    return card ? { card } : { refusal: rejected('CARD_NOT_FOUND', `Card ${cardId} does not exist.`) };
  }

  /**
   * CardRef resolution (contract.ts): every identifier given must name the same card. An entity whose only card
   * cannot take the action resolves to it, so the refusal says why (CARD_STATE_INVALID), not "not found".
   */
  private resolve(ref: CardRef, action: CardAction): Resolved {
    const { cardId, entityId, kitNo } = ref;
    if (entityId !== undefined && !this.state.entities.has(entityId)) {
      return { refusal: rejected('ENTITY_NOT_FOUND', `Entity ${entityId} does not exist.`) };
    }
    if (cardId !== undefined) {
      const found = this.cardById(cardId);
      if ('refusal' in found) return found;
      if (entityId !== undefined && found.card.entityId !== entityId) {
        return { refusal: rejected('CARD_NOT_FOUND', `Card ${cardId} does not exist for entity ${entityId}.`) };
      }
      if (kitNo !== undefined && found.card.kitNo !== kitNo) {
        return { refusal: rejected('CARD_NOT_FOUND', `Card ${cardId} is not mapped to kit ${kitNo}.`) };
      }
      return found;
    }
    if (kitNo !== undefined) {
      const mapped = this.state.kits.get(kitNo)?.mappedTo;
      const card = mapped ? this.state.cards.get(mapped) : undefined;
      if (!card) return { refusal: rejected('CARD_NOT_FOUND', `No card is mapped to kit ${kitNo}.`) };
      if (entityId !== undefined && card.entityId !== entityId) {
        return { refusal: rejected('CARD_NOT_FOUND', `Kit ${kitNo} is not mapped to a card of entity ${entityId}.`) };
      }
      return { card };
    }
    if (entityId === undefined) return { refusal: rejected('CARD_NOT_FOUND', 'Name the card: cardId, entityId or kitNo.') };
    const cards = this.cardsOf(entityId);
    const candidates = cards.filter((c) => transition(statusOf(c), action).allowed);
    if (candidates.length === 1) return { card: candidates[0]! };
    if (candidates.length > 1) {
      return { refusal: rejected('CARD_AMBIGUOUS', `Entity ${entityId} has ${candidates.length} cards this applies to; send cardId.`) };
    }
    if (cards.length === 1) return { card: cards[0]! };
    if (cards.length === 0) return { refusal: rejected('CARD_NOT_FOUND', `Entity ${entityId} has no card.`) };
    return { refusal: rejected('CARD_STATE_INVALID', `None of the ${cards.length} cards of entity ${entityId} is in a state that allows this; send cardId.`) };
  }

  /** Resolves the card, asks the transition table, and applies the next status (plus `also`). */
  private applyAction(ref: CardRef, action: CardAction, also?: (card: MockCard) => void): OperationResult<CardSummary> {
    const found = this.resolve(ref, action);
    if ('refusal' in found) return found.refusal;
    const card = found.card;
    const t = transition(statusOf(card), action);
    if (!t.allowed) return rejected(t.code, `Card ${card.cardId}: ${t.reason}.`);
    card.form = t.next.form;
    card.state = t.next.state;
    card.fulfilment = t.next.fulfilment;
    also?.(card);
    return succeeded(summaryOf(card));
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
    if (next < entity.outstandingMinor) {
      return rejected(
        'LIMIT_BELOW_OUTSTANDING',
        `Entity ${input.entityId} owes ${fromMinor(entity.outstandingMinor)}; its limit cannot go below that (asked: ${fromMinor(next)}).`,
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
    } else {
      const virtual = this.cardsOf(entityId).filter((c) => c.form === 'VIRTUAL');
      if (virtual.length === 0) return rejected('CARD_NOT_VIRTUAL', `Entity ${entityId} has no virtual card to upgrade.`);
      if (virtual.length > 1) return rejected('CARD_AMBIGUOUS', `Entity ${entityId} has several virtual cards; send cardId.`);
      card = virtual[0]!;
    }
    const t = transition(statusOf(card), 'upgradeToPhysical', { lockOnUpgrade: input.lockOnUpgrade });
    if (!t.allowed) return rejected(t.code, `Card ${card.cardId} cannot be upgraded: ${t.reason}.`);

    const entity = this.state.entities.get(entityId)!;
    const address = input.communicationAddress;
    card.form = t.next.form;
    card.state = t.next.state;
    card.fulfilment = t.next.fulfilment;
    card.kitNo = kit.kitNo;
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
    if (input.plasticCode) card.plasticCode = structuredClone(input.plasticCode);
    if (input.preferences) card.preferences = structuredClone(input.preferences);
    kit.mappedTo = card.cardId;
    kit.allocatedTo = entityId;
    return succeeded({ cardId: card.cardId, entityId, kitNo: kit.kitNo, state: card.state as PhysicalUpgradeResult['state'] });
  }
}
