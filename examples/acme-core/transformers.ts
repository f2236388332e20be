// Pure mappings between Cardline's canonical operations and Acme's vocabulary; unit-tested on their own.
import {
  ConnectorTimeoutError,
  ConnectorUnavailableError,
  rejected,
  succeeded,
  type OperationResult,
  type PhysicalUpgradeInput,
  type PhysicalUpgradeResult,
  type UpgradeLimitInput,
  type UpgradeLimitResult,
} from '../../connectors/contract.js';
import type { AcmeReason, AcmeReply, IssuePlastic, Plastic, SetCreditLine } from './core.js';

const DECIMAL = /^(\d{1,15})(?:\.(\d{1,2}))?$/;

/** '75000.5' → 7500050n; null when the string is not a decimal amount. Never through a float. */
export function toCents(amount: string): bigint | null {
  const m = DECIMAL.exec(amount);
  if (!m) return null;
  return BigInt(m[1]!) * 100n + BigInt((m[2] ?? '').padEnd(2, '0'));
}

export function fromCents(cents: bigint): string {
  const sign = cents < 0n ? '-' : '';
  const abs = cents < 0n ? -cents : cents;
  return `${sign}${abs / 100n}.${String(abs % 100n).padStart(2, '0')}`;
}

/** Acme's reasons as Cardline business codes (schemas/business-codes.ts). */
const CODES: Record<AcmeReason, string> = {
  NO_CUSTOMER: 'ENTITY_NOT_FOUND',
  LOWERING_DENIED: 'LIMIT_DECREASE_NOT_ALLOWED',
  BAD_AMOUNT: 'LIMIT_NOT_POSITIVE',
  KIT_UNKNOWN: 'PPCUST_018',
  KIT_USED: 'PPCUST_018',
  KIT_RESERVED: 'PPCUST_018',
  KIT_UNASSIGNED: 'PPCUST_018',
  NO_CARD: 'CARD_NOT_FOUND',
  NO_VIRTUAL_CARD: 'CARD_NOT_VIRTUAL',
  MANY_CARDS: 'CARD_AMBIGUOUS',
  CARD_NOT_OPEN: 'CARD_STATE_INVALID',
};

/** A refusal Acme explained. A reason this mapping does not know keeps Acme's name, prefixed. */
function refusal<T>(reply: { reason: AcmeReason; text: string }): OperationResult<T> {
  return rejected(CODES[reply.reason] ?? `ACME_${reply.reason}`, `Acme core: ${reply.text}.`);
}

export function toSetCreditLine(input: UpgradeLimitInput, requestKey: string | undefined): SetCreditLine | null {
  const cents = toCents(input.amount);
  return cents === null ? null : { customer: input.entityId, cents, mayLower: input.allowDecrease, requestKey };
}

export function fromSetCreditLine(entityId: string, reply: AcmeReply<{ oldCents: bigint; newCents: bigint }>): OperationResult<UpgradeLimitResult> {
  if (!reply.ok) return refusal(reply);
  return succeeded({ entityId, previousLimit: fromCents(reply.data.oldCents), newLimit: fromCents(reply.data.newCents) });
}

export function toIssuePlastic(input: PhysicalUpgradeInput, requestKey: string | undefined): IssuePlastic {
  const a = input.communicationAddress;
  return {
    kit: input.kitNo,
    customer: input.entityId,
    card: input.cardId,
    hold: input.lockOnUpgrade,
    deliverTo:
      !a || a.usePrimaryAddress
        ? 'HOME'
        : { lines: [a.address1, a.address2, a.city, a.state].filter((l): l is string => !!l), country: a.country ?? '', postcode: a.pin ?? '' },
    requestKey,
  };
}

export function fromIssuePlastic(reply: AcmeReply<Plastic>): OperationResult<PhysicalUpgradeResult> {
  if (!reply.ok) return refusal(reply);
  const { card, customer, kit, status } = reply.data;
  return succeeded({ cardId: card, entityId: customer, kitNo: kit, state: status === 'HOLD' ? 'PENDING_ACTIVATION' : 'ACTIVE' });
}

/** What the client threw, as the contract's errors: an abort is a timeout (outcome unknown), the rest unavailability. */
export function fromFailure(err: unknown): Error {
  if (err instanceof Error && (err.name === 'AbortError' || err.name === 'TimeoutError')) {
    return new ConnectorTimeoutError('Acme did not answer before the deadline', { cause: err });
  }
  return new ConnectorUnavailableError('Acme core call failed', { cause: err });
}
