// Entities and transactions as the gateway shows them, built field by field. Contact details and address
// lines are personal data: masked here, in full only sealed to the tenant's client key (spec 2.5, 5.3).
import type { EntityDetails, Transaction } from '../../connectors/contract.js';
import type { EntityView } from '../../schemas/entities.js';
import type { TransactionListItem, TransactionView } from '../../schemas/transactions.js';
import type { Sealed } from '../crypto/response-fields.js';

/** Every letter and digit after the first of each word: `10 Demo Street` → `1* D*** S*****`. */
const maskLine = (line: string): string => line.replace(/(?<=[\p{L}\p{N}])[\p{L}\p{N}]/gu, '*');

/** The first character of the local part, the domain as it is: `a*******@demo-business-1.example`. */
function maskEmail(email: string): string {
  const at = email.lastIndexOf('@');
  if (at < 1) return maskLine(email);
  return `${email[0]}${'*'.repeat(at - 1)}${email.slice(at)}`;
}

/** The plus and the last four digits: `+********1001`. */
const maskMobile = (mobile: string): string => mobile.replace(/\d(?=\d{4})/g, '*');

/** What of an entity leaves only sealed to the client key (undefined values are left out). */
export const entitySecrets = (e: EntityDetails) => ({
  email: e.contact.email,
  mobile: e.contact.mobile,
  address1: e.primaryAddress.address1,
  address2: e.primaryAddress.address2,
});
export type EntitySecrets = ReturnType<typeof entitySecrets>;

export function toEntityView(e: EntityDetails, sealed: Sealed<EntitySecrets> | undefined): EntityView {
  const a = e.primaryAddress;
  const view: EntityView = {
    entityId: e.entityId,
    name: e.name,
    type: e.type,
    contact: { email: maskEmail(e.contact.email), mobile: maskMobile(e.contact.mobile) },
    primaryAddress: {
      address1: maskLine(a.address1),
      ...(a.address2 !== undefined ? { address2: maskLine(a.address2) } : {}),
      city: a.city,
      state: a.state,
      country: a.country,
      pin: a.pin,
    },
    creditLimit: e.creditLimit,
    outstanding: e.outstanding,
    availableCredit: e.availableCredit,
    cardCount: e.cardCount,
  };
  if (sealed) view.sensitive = sealed;
  return view;
}

export function toTransactionView(t: Transaction): TransactionView {
  return {
    transactionId: t.transactionId,
    cardId: t.cardId,
    entityId: t.entityId,
    amount: t.amount,
    channel: t.channel,
    merchant: { name: t.merchant.name, mcc: t.merchant.mcc, country: t.merchant.country },
    international: t.international,
    status: t.status,
    declineReason: t.declineReason,
    at: t.at,
  };
}

/** An entry of the transaction list: a core that lists no type lists host decisions (AUTHORIZATION). */
export const toTransactionListItem = (t: Transaction): TransactionListItem => ({
  ...toTransactionView(t),
  type: t.type ?? 'AUTHORIZATION',
  authorizationId: t.authorizationId ?? null,
});
