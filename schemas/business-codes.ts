// The catalogue of business codes: one table, rendered in docs/api.md and returned by connectors.

export interface BusinessCode {
  /** Title of the 409 problem (card routes) or shortMessage context (credit-line routes). */
  title: string;
  /** HTTP status in the problem dialect. */
  status: number;
  /** HTTP status in the envelope dialect (credit-line routes). */
  envelopeStatus: number;
  description: string;
}

export const BUSINESS_CODES = {
  PPCUST_018: { title: 'Invalid Kit', status: 409, envelopeStatus: 400, description: 'The kit is unknown, already mapped to a card, or allocated to another entity (spec 7.3).' },
  CARD_NOT_FOUND: { title: 'Card Not Found', status: 409, envelopeStatus: 404, description: 'No card matches the given identifiers.' },
  CARD_NOT_VIRTUAL: { title: 'No Virtual Card', status: 409, envelopeStatus: 409, description: 'The entity has no virtual card that can be upgraded.' },
  CARD_AMBIGUOUS: { title: 'Card Ambiguous', status: 409, envelopeStatus: 409, description: 'The entity has several virtual cards; send cardId.' },
  CARD_STATE_INVALID: { title: 'Illegal Card Transition', status: 409, envelopeStatus: 409, description: 'The card state does not allow this operation.' },
  ENTITY_NOT_FOUND: { title: 'Entity Not Found', status: 409, envelopeStatus: 404, description: 'The business entity does not exist in the core.' },
  LIMIT_ABOVE_MAXIMUM: { title: 'Limit Above Maximum', status: 409, envelopeStatus: 400, description: "The amount exceeds the tenant product's maximum credit limit." },
  LIMIT_DECREASE_NOT_ALLOWED: { title: 'Limit Decrease Not Allowed', status: 409, envelopeStatus: 400, description: "The tenant product does not allow lowering a credit limit." },
  LIMIT_NOT_POSITIVE: { title: 'Illegal Amount', status: 409, envelopeStatus: 400, description: 'The amount must be greater than zero.' },
  LIMIT_BELOW_OUTSTANDING: { title: 'Limit Below Outstanding', status: 409, envelopeStatus: 400, description: 'The new credit limit is below what the entity owes; a limit never goes below the outstanding balance, even where decreases are allowed.' },
  ENTITY_EXISTS: { title: 'Entity Exists', status: 409, envelopeStatus: 409, description: 'An entity with this entityId already exists in the core; choose another id, or leave it out for the core to assign one.' },
  CARD_NOT_BLOCKED: { title: 'Card Not Blocked', status: 409, envelopeStatus: 409, description: 'Only a BLOCKED card can be replaced; block it first (with the reason it is replaced).' },
  CARD_ALREADY_REPLACED: { title: 'Card Already Replaced', status: 409, envelopeStatus: 409, description: 'The card was already replaced; a card is replaced once (its replacement can be blocked and replaced in turn).' },
  REPAYMENT_EXCEEDS_OUTSTANDING: { title: 'Repayment Exceeds Outstanding', status: 409, envelopeStatus: 409, description: 'The repayment is more than the entity owes.' },
  TRANSACTION_NOT_FOUND: { title: 'Transaction Not Found', status: 409, envelopeStatus: 404, description: 'No transaction of the entity has this id (a transaction list cursor the core does not know; the list route answers it as a cursor field error).' },
  PIN_NOT_CONFIGURED: { title: 'PIN Not Configured', status: 409, envelopeStatus: 409, description: "The tenant has no PIN keys configured (its configuration's pin section); the gateway operator must set them up before PINs can be set." },
  TENANT_EXISTS: { title: 'Tenant Exists', status: 409, envelopeStatus: 409, description: 'A tenant with that id exists already.' },
  OPERATOR_KEY_EXISTS: { title: 'Operator Key Exists', status: 409, envelopeStatus: 409, description: 'An operator key of that name exists; revoke it first or choose another name.' },
  USER_EXISTS: { title: 'User Exists', status: 409, envelopeStatus: 409, description: 'The tenant already has a user of that name.' },
  LAST_ADMIN: { title: 'Last Admin', status: 409, envelopeStatus: 409, description: "The change would leave the tenant without an enabled Admin; make another user Admin first." },
  WEBHOOK_URL_REFUSED: { title: 'Webhook URL Refused', status: 409, envelopeStatus: 409, description: 'The webhook URL may not be targeted: production tenants need https and an address on the public internet (a sandbox tenant may also use http to loopback; the operator can allow named hosts).' },
  NATS_NOT_CONFIGURED: { title: 'NATS Not Configured', status: 409, envelopeStatus: 409, description: 'The gateway has no NATS server (NATS_URL), so a nats channel cannot be created; ask the operator.' },
  CHANNEL_URL_REFUSED: { title: 'Channel URL Refused', status: 409, envelopeStatus: 409, description: "The channel's broker URL may not be targeted: production tenants need a TLS URL (amqps) and an address on the public internet (a sandbox tenant may also use amqp to loopback; the operator can allow named hosts)." },
  CHANNEL_NOT_WEBHOOK: { title: 'Channel Not Webhook', status: 409, envelopeStatus: 409, description: 'Only a webhook channel has a signing secret to rotate.' },
  CHANNEL_DISABLED: { title: 'Channel Disabled', status: 409, envelopeStatus: 409, description: 'The channel is disabled (by its Admin, or by the gateway after a 410 Gone); enable it before sending to it.' },
  OPERATION_NOT_SUPPORTED: { title: 'Not Implemented', status: 501, envelopeStatus: 501, description: "The core-banking connector this operation is routed to does not offer it; nothing was sent to the core. The tenant's operator routes it to a connector that does (decision 0110)." },
  DELIVERY_IN_PROGRESS: { title: 'Delivery In Progress', status: 409, envelopeStatus: 409, description: 'An attempt of this delivery is under way; look again in a few seconds.' },
  KEY_ACTIVE: { title: 'Key Active', status: 409, envelopeStatus: 409, description: "The key is the tenant's active key of its use; rotate that use first, then retire the key the rotation replaced." },
  AUTHORIZATION_EXISTS: { title: 'Authorization Exists', status: 409, envelopeStatus: 409, description: 'An authorization of this id already has a hold in the core; a network retry sends the same Idempotency-Key instead.' },
  AUTHORIZATION_NOT_FOUND: { title: 'Authorization Not Found', status: 409, envelopeStatus: 404, description: 'No authorization (or transaction) of the tenant has this id.' },
  CLEAR_EXCEEDS_HELD: { title: 'Clearing Exceeds Held', status: 409, envelopeStatus: 409, description: 'The clearing is more than the authorization still holds (after earlier clearings and reversals).' },
  REVERSAL_EXCEEDS_HELD: { title: 'Reversal Exceeds Held', status: 409, envelopeStatus: 409, description: 'The reversal is more than the authorization still holds; nothing held is left to release.' },
  REFUND_EXCEEDS_CLEARED: { title: 'Refund Exceeds Cleared', status: 409, envelopeStatus: 409, description: 'The refund is more than was cleared and not yet refunded or credited back.' },
  DISPUTE_EXCEEDS_CLEARED: { title: 'Dispute Exceeds Cleared', status: 409, envelopeStatus: 409, description: 'The disputed amount is more than was cleared and not yet refunded or credited back (a transaction not cleared cannot be disputed).' },
  AUTH_RULE_LIMIT: { title: 'Auth Rule Limit', status: 409, envelopeStatus: 409, description: 'The card, the entity or the tenant has 50 rules already, the most one target may have; remove one (or widen one) before adding another.' },
  AUTH_RULE_NO_SHADOW: { title: 'No Shadow Version', status: 409, envelopeStatus: 409, description: 'The rule has no shadow version to promote; PATCH it with a new definition first.' },
  AUTH_RULE_CHANGED: { title: 'Auth Rule Changed', status: 409, envelopeStatus: 409, description: 'The rule changed after this request was held for approval; nothing was enforced. Make the request again, so that a checker sees the version it enforces.' },
  AUTHORIZATION_DECLINED: { title: 'Authorization Declined', status: 409, envelopeStatus: 409, description: 'The authorization was declined: nothing was held, so nothing can be cleared, reversed, refunded or disputed.' },
  TRANSACTION_NOT_CLEARED: { title: 'Transaction Not Cleared', status: 409, envelopeStatus: 409, description: 'Nothing of the transaction was cleared yet: only a cleared amount can be disputed.' },
  DISPUTE_NOT_OPEN: { title: 'Dispute Not Open', status: 409, envelopeStatus: 409, description: 'The dispute was already resolved (or a resolution of it is under way): a dispute is resolved once.' },
  APPROVAL_NOT_PENDING: { title: 'Approval Not Pending', status: 409, envelopeStatus: 409, description: 'The approval was already executed, rejected or cancelled; nothing more can be decided on it.' },
  APPROVAL_EXPIRED: { title: 'Approval Expired', status: 409, envelopeStatus: 409, description: 'The approval waited longer than its policy allows and expired; nothing was executed. The maker sends the request again.' },
  APPROVAL_BY_MAKER: { title: 'Approval By Maker', status: 403, envelopeStatus: 403, description: 'The maker of a request cannot approve it, neither as the same user nor with the token the request was made with; a second person must.' },
  APPROVAL_ROLE: { title: 'Approval Role', status: 403, envelopeStatus: 403, description: "The caller's role is not among the policy's approvers for this operation." },
  APPROVAL_ALREADY_GIVEN: { title: 'Approval Already Given', status: 409, envelopeStatus: 409, description: 'This checker approved the request already; a second approval must come from another person.' },
  APPROVAL_NOT_MAKER: { title: 'Not The Maker', status: 403, envelopeStatus: 403, description: 'Only the maker of a request may cancel it; a checker rejects it instead.' },
} as const satisfies Record<string, BusinessCode>;

export type BusinessCodeId = keyof typeof BUSINESS_CODES;
