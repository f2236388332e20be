// @cardline/sdk: a typed client of the Cardline gateway (docs/sdk.md).
export { Cardline, type CardlineOptions, type Credentials, type RetryOptions } from './client.js';
export { CardlineAdmin, type CardlineAdminOptions, type ConsoleSession } from './admin.js';
export type { HttpOptions } from './http.js';
export { CardlineConnectionError, CardlineEnvelopeError, CardlineError, CardlineProblemError, CardlineTimeoutError, type FieldError, type ProblemBody } from './errors.js';
export { CardlinePendingError, Paged, isPending, type CallOptions, type OperationMeta, type PageOptions, type Pending } from './transport.js';
export { encryptTo, openSealed, type JWK } from './crypto.js';
export { buildPinBlock, type PinBlockRequest } from './pin-block.js';
export { webhooks, type WebhookHeaders } from './webhooks.js';
export { OPERATIONS, type OperationId, type Operations } from './generated/operations.js';
export { MANAGEMENT_OPERATIONS, type ManagementOperationId, type ManagementOperations } from './generated/management.js';
export type * from './generated/types.js';
export { EVENT_TYPES, type CardlineEvent, type EventPayloads, type EventType } from './generated/events.js';
