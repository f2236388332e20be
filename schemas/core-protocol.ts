// The Cardline core REST protocol v1: the bodies a core-banking system exchanges with the REST connector,
// the single source of the mock core's validation and of schemas/core-protocol.openapi.json.
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { BLOCK_REASONS, CARD_FORMS, CARD_STATES, FULFILMENT_STEPS } from './card-lifecycle.js';
import { CommunicationAddress, PlasticCode, Preferences } from './cards.js';
import { AMOUNT_PATTERN, Identifier } from './common.js';

export const CORE_PROTOCOL_VERSION = '1.0.0';

/** A bank's path segment; also a file name in the mock core's data dir, hence the narrow alphabet. */
export const BANK_ID_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$';
export const BankId = Type.String({ pattern: BANK_ID_PATTERN, description: 'the bank (core instance) addressed' });

const Decimal = Type.String({ pattern: AMOUNT_PATTERN, description: 'a decimal string with at most two decimals; never a float' });
const SignedDecimal = Type.String({ pattern: '^-?\\d{1,17}\\.\\d{2}$', description: 'a signed decimal string with two decimals' });

/** Business codes are identifiers such as PPCUST_018; anything else is not a recognisable refusal. */
export const BUSINESS_CODE_PATTERN = '^[A-Za-z0-9_.-]{1,64}$';

// ── Requests ────────────────────────────────────────────────────────────────────────────────────────

export const CoreCreditLimitRequest = Type.Object(
  {
    amount: Decimal,
    /** Product rule: when false, an amount below the current limit is refused (LIMIT_DECREASE_NOT_ALLOWED). */
    allowDecrease: Type.Boolean(),
  },
  { additionalProperties: false },
);
export type CoreCreditLimitRequest = Static<typeof CoreCreditLimitRequest>;

export const CorePhysicalUpgradeRequest = Type.Object(
  {
    kitNo: Type.String({ minLength: 1, maxLength: 64 }),
    entityId: Type.Optional(Identifier),
    cardId: Type.Optional(Identifier),
    communicationAddress: Type.Optional(CommunicationAddress),
    plasticCode: Type.Optional(PlasticCode),
    lockOnUpgrade: Type.Boolean(),
    preferences: Type.Optional(Preferences),
  },
  { additionalProperties: false },
);
export type CorePhysicalUpgradeRequest = Static<typeof CorePhysicalUpgradeRequest>;

const literals = <T extends string>(values: readonly T[]) => Type.Union(values.map((v) => Type.Literal(v)));
const BlockReason = literals(BLOCK_REASONS);

export const CoreBlockRequest = Type.Object({ reasonCode: BlockReason }, { additionalProperties: false });
export type CoreBlockRequest = Static<typeof CoreBlockRequest>;

/** Replaces the card's preferences as a whole. */
export const CorePreferencesRequest = Type.Object({ preferences: Preferences }, { additionalProperties: false });
export type CorePreferencesRequest = Static<typeof CorePreferencesRequest>;

/**
 * An ISO 9564-1 PIN block (format 0 or 3: 8 bytes; format 4: 16 bytes, in hex) under the core's PIN
 * key `keyId`, already translated by the gateway's HSM. Never logged, never stored by the core.
 */
export const CorePinRequest = Type.Object(
  {
    pinBlock: Type.String({ pattern: '^([0-9A-Fa-f]{16}|[0-9A-Fa-f]{32})$' }),
    format: Type.Union([Type.Literal(0), Type.Literal(3), Type.Literal(4)]),
    keyId: Identifier,
  },
  { additionalProperties: false },
);
export type CorePinRequest = Static<typeof CorePinRequest>;

/** The lifecycle actions a card can be looked up for by entity or kit. */
export const CARD_RESOLUTION_ACTIONS = ['activate', 'lock', 'unlock', 'block'] as const;

/** GET /v1/card-resolution: which card an action names, from any of cardId, entityId and kitNo. */
export const CardResolutionQuery = Type.Object(
  {
    action: literals(CARD_RESOLUTION_ACTIONS),
    cardId: Type.Optional(Identifier),
    entityId: Type.Optional(Identifier),
    kitNo: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  },
  { additionalProperties: false },
);
export type CardResolutionQuery = Static<typeof CardResolutionQuery>;

// ── Answers (open objects: a client ignores fields it does not know) ──────────────────────────────

export const CoreCreditLimitApplied = Type.Object({
  status: Type.Literal('APPLIED'),
  entityId: Identifier,
  previousLimit: Decimal,
  newLimit: Decimal,
});
export type CoreCreditLimitApplied = Static<typeof CoreCreditLimitApplied>;

export const CoreCardState = Type.Union([Type.Literal('ACTIVE'), Type.Literal('PENDING_ACTIVATION')]);

export const CorePhysicalUpgradeApplied = Type.Object({
  status: Type.Literal('APPLIED'),
  cardId: Identifier,
  entityId: Identifier,
  kitNo: Type.String({ minLength: 1, maxLength: 64 }),
  cardState: CoreCardState,
});
export type CorePhysicalUpgradeApplied = Static<typeof CorePhysicalUpgradeApplied>;

const MaskedPan = Type.String({ pattern: '^\\d{6}\\*+\\d{4}$', description: 'first six and last four digits only' });

/** A card without its secrets: what list and lifecycle answers carry. */
export const CoreCardSummary = Type.Object({
  cardId: Identifier,
  entityId: Identifier,
  form: literals(CARD_FORMS),
  state: literals(CARD_STATES),
  fulfilment: Type.Optional(literals(FULFILMENT_STEPS)),
  kitNo: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  maskedPan: MaskedPan,
  expiry: Type.String({ pattern: '^(0[1-9]|1[0-2])/\\d{2}$', description: 'MM/YY' }),
  blockReason: Type.Optional(BlockReason),
});
export type CoreCardSummary = Static<typeof CoreCardSummary>;

/** A lifecycle change applied: the card as it is now. */
export const CoreCardApplied = Type.Composite([Type.Object({ status: Type.Literal('APPLIED') }), CoreCardSummary]);
export type CoreCardApplied = Static<typeof CoreCardApplied>;

export const CoreCardList = Type.Object({ entityId: Identifier, cards: Type.Array(CoreCardSummary) });
export type CoreCardList = Static<typeof CoreCardList>;

/** One card in full. `sensitive` carries the full PAN and CVV: the gateway encrypts them to the client or drops them. */
export const CoreCardDetails = Type.Composite([
  CoreCardSummary,
  Type.Object({
    plasticCode: Type.Optional(PlasticCode),
    preferences: Type.Optional(Preferences),
    sensitive: Type.Object({
      pan: Type.String({ pattern: '^\\d{12,19}$' }),
      cvv: Type.Optional(Type.String({ pattern: '^\\d{3,4}$' })),
    }),
  }),
]);
export type CoreCardDetails = Static<typeof CoreCardDetails>;

export const CorePreferences = Type.Object({ cardId: Identifier, preferences: Preferences });
export type CorePreferences = Static<typeof CorePreferences>;

export const CorePreferencesApplied = Type.Object({ status: Type.Literal('APPLIED'), cardId: Identifier, preferences: Preferences });
export type CorePreferencesApplied = Static<typeof CorePreferencesApplied>;

export const CoreCreditLimit = Type.Object({ entityId: Identifier, creditLimit: Decimal });
export type CoreCreditLimit = Static<typeof CoreCreditLimit>;

/** A PIN change applied. The answer never carries the block. */
export const CorePinApplied = Type.Object({ status: Type.Literal('APPLIED'), cardId: Identifier });
export type CorePinApplied = Static<typeof CorePinApplied>;

export const CoreCardResolution = Type.Object({ cardId: Identifier });
export type CoreCardResolution = Static<typeof CoreCardResolution>;

/** The core took the request but has not applied it yet (HTTP 202, or 200 with this status). */
export const CoreAccepted = Type.Object({
  status: Type.Union([Type.Literal('ACCEPTED'), Type.Literal('PENDING')]),
  reference: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
});
export type CoreAccepted = Static<typeof CoreAccepted>;

export const CoreError = Type.Object({
  error: Type.Object({
    code: Type.String({ minLength: 1 }),
    message: Type.String(),
  }),
});
export type CoreError = Static<typeof CoreError>;

export const CoreCard = Type.Object({
  cardId: Identifier,
  form: Type.Union([Type.Literal('VIRTUAL'), Type.Literal('PHYSICAL')]),
  state: Type.Union([Type.Literal('ACTIVE'), Type.Literal('LOCKED'), Type.Literal('PENDING_ACTIVATION'), Type.Literal('BLOCKED')]),
  /** First six and last four digits only; the full number never leaves the core on this protocol. */
  maskedPan: Type.String({ pattern: '^\\d{6}\\*+\\d{4}$' }),
  kitNo: Type.Optional(Type.String()),
  fulfilment: Type.Optional(
    Type.Union([Type.Literal('ORDERED'), Type.Literal('EMBOSSED'), Type.Literal('DISPATCHED'), Type.Literal('DELIVERED')]),
  ),
  balance: SignedDecimal,
});

export const CoreEntity = Type.Object({
  entityId: Identifier,
  name: Type.String(),
  creditLimit: Decimal,
  cards: Type.Array(CoreCard),
});
export type CoreEntity = Static<typeof CoreEntity>;

export const CoreHealth = Type.Object({ status: Type.Literal('UP') });

// ── Mock core administration (not part of what a real core implements) ───────────────────────────

const Rate = Type.Number({ minimum: 0, maximum: 1 });

export const FaultConfig = Type.Object(
  {
    /** Added before every operation is applied. */
    latencyMs: Type.Integer({ minimum: 0, maximum: 60_000 }),
    /** Share of operations answered 503 CORE_UNAVAILABLE without being applied. */
    errorRate: Rate,
    /** Share of operations held without an answer (and not applied) until the client gives up. */
    timeoutRate: Rate,
    /** Share of operations whose connection is reset (not applied). */
    resetRate: Rate,
    /** Seed of the PRNG that draws the random faults; the same seed replays the same faults. */
    seed: Type.Integer({ minimum: 0, maximum: 4_294_967_295 }),
  },
  { additionalProperties: false },
);
export type FaultConfig = Static<typeof FaultConfig>;

/** PUT /__admin/faults: fields left out take their defaults (no latency, no faults, seed 1). */
export const FaultConfigUpdate = Type.Partial(FaultConfig, { additionalProperties: false });
export type FaultConfigUpdate = Static<typeof FaultConfigUpdate>;

export const ResetRequest = Type.Object({ bankId: Type.Optional(BankId) }, { additionalProperties: false });
export const ResetResult = Type.Object({ reset: Type.Array(Type.String()) });

// ── Headers ─────────────────────────────────────────────────────────────────────────────────────────

export const MOCK_FAULT_PATTERN = '^(error|timeout|reset|latency=\\d{1,5})$';

export const OperationHeaders = Type.Object({
  'idempotency-key': Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  'x-request-id': Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })),
  'x-mock-fault': Type.Optional(Type.String({ pattern: MOCK_FAULT_PATTERN })),
});

// ── OpenAPI 3.1 document ───────────────────────────────────────────────────────────────────────────

/** Schemas published under components.schemas, by name. */
export const coreProtocolComponents: Record<string, TSchema> = {
  CreditLimitRequest: CoreCreditLimitRequest,
  CreditLimitApplied: CoreCreditLimitApplied,
  PhysicalUpgradeRequest: CorePhysicalUpgradeRequest,
  PhysicalUpgradeApplied: CorePhysicalUpgradeApplied,
  BlockRequest: CoreBlockRequest,
  PreferencesRequest: CorePreferencesRequest,
  PinRequest: CorePinRequest,
  CardSummary: CoreCardSummary,
  CardApplied: CoreCardApplied,
  CardList: CoreCardList,
  CardDetails: CoreCardDetails,
  Preferences: CorePreferences,
  PreferencesApplied: CorePreferencesApplied,
  CreditLimit: CoreCreditLimit,
  PinApplied: CorePinApplied,
  CardResolution: CoreCardResolution,
  Accepted: CoreAccepted,
  Error: CoreError,
  Entity: CoreEntity,
  Health: CoreHealth,
  FaultConfig,
  FaultConfigUpdate,
  ResetRequest,
  ResetResult,
};

const ref = (name: keyof typeof coreProtocolComponents & string) => ({ $ref: `#/components/schemas/${name}` });
const json = (name: string, description: string) => ({ description, content: { 'application/json': { schema: ref(name) } } });
/** TypeBox marks schemas with symbol keys; JSON keeps only the standard keywords. */
const plain = (schema: TSchema): unknown => JSON.parse(JSON.stringify(schema));

const headerParams = [
  {
    name: 'Idempotency-Key',
    in: 'header',
    required: false,
    description: 'A retry with the same key returns the first outcome without applying the operation again.',
    schema: plain(OperationHeaders.properties['idempotency-key']),
  },
  {
    name: 'X-Request-Id',
    in: 'header',
    required: false,
    description: "The caller's request id; echoed in the answer so both sides' logs can be joined.",
    schema: plain(OperationHeaders.properties['x-request-id']),
  },
  {
    name: 'X-Mock-Fault',
    in: 'header',
    required: false,
    description: 'Mock core only: inject a fault into this request (error, timeout, reset, latency=<ms>).',
    schema: plain(OperationHeaders.properties['x-mock-fault']),
  },
];
const requestIdHeader = { 'X-Request-Id': { description: 'Echo of the request id.', schema: { type: 'string' } } };

const operationAnswers = (applied: string) => ({
  '200': { ...json(applied, 'Applied (or, with status ACCEPTED/PENDING, taken but not yet applied).'), headers: requestIdHeader },
  '202': { ...json('Accepted', 'Taken but not applied yet; the outcome is confirmed later.'), headers: requestIdHeader },
  '400': json('Error', 'The request does not follow the protocol; nothing was applied.'),
  '401': json('Error', 'Missing or wrong credentials; nothing was applied.'),
  '422': json('Error', 'Business refusal; nothing was applied. error.code is a business code (PPCUST_018, ENTITY_NOT_FOUND, ...).'),
  '503': json('Error', 'The core is unavailable (CORE_UNAVAILABLE); nothing was applied.'),
});

/** Reads answer 200 with the value or 422 with a business code; no 202: there is no pending read. */
const readAnswers = (value: string) => ({
  '200': { ...json(value, 'The value.'), headers: requestIdHeader },
  '400': json('Error', 'The request does not follow the protocol.'),
  '401': json('Error', 'Missing or wrong credentials.'),
  '422': json('Error', 'Business refusal: error.code is CARD_NOT_FOUND, ENTITY_NOT_FOUND, CARD_AMBIGUOUS, ...'),
  '503': json('Error', 'The core is unavailable (CORE_UNAVAILABLE).'),
});

const readHeaderParams = headerParams.filter((p) => p.name !== 'Idempotency-Key');
const cardIdParam = { name: 'cardId', in: 'path', required: true, schema: plain(Identifier) };
const entityIdParam = { name: 'entityId', in: 'path', required: true, schema: plain(Identifier) };
const LIFECYCLE_RULE =
  'The change obeys the card transition table (schemas/card-lifecycle.ts); an illegal one is refused with 422 ' +
  'CARD_STATE_INVALID, an unknown card with 422 CARD_NOT_FOUND.';

/** POST /v1/cards/{cardId}/<suffix>: a lifecycle change answered with the card as it is now. */
const cardChange = (operationId: string, summary: string, body?: string) => ({
  post: {
    operationId,
    summary,
    description: LIFECYCLE_RULE,
    parameters: [cardIdParam, ...headerParams],
    ...(body ? { requestBody: { required: true, content: { 'application/json': { schema: ref(body) } } } } : {}),
    responses: operationAnswers('CardApplied'),
  },
});

/** The protocol as an OpenAPI 3.1 document; the committed JSON file is this, pretty-printed. */
export function coreProtocolOpenApi(): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Cardline core REST protocol',
      version: CORE_PROTOCOL_VERSION,
      description:
        'What a core-banking system implements so that the Cardline REST connector (connector id `rest`) can drive it. ' +
        'Paths are relative to the connector\'s baseUrl; the mock core (`npm run mock-core`) serves several banks at ' +
        '`/banks/{bankId}`. Money is a decimal string. A retried request carries the same Idempotency-Key and must be ' +
        'applied once. A 200 is read as success only with status APPLIED and the fields below; any other answer the ' +
        'client does not recognise is treated as pending, never as success. 4xx other than 422 and every 5xx mean ' +
        'nothing was applied. Reads (GET) change nothing, so the client retries them freely; a read answer it does not ' +
        'recognise is a failure of the core, never pending. Card lifecycle changes name the card by cardId in the path; ' +
        'a caller that knows only the entity or the kit asks GET /v1/card-resolution first.',
    },
    servers: [{ url: 'http://127.0.0.1:9090/banks/{bankId}', variables: { bankId: { default: 'demo' } } }],
    security: [{}, { bearer: [] }, { basic: [] }, { mtls: [] }],
    paths: {
      '/v1/entities/{entityId}/credit-limit': {
        get: {
          operationId: 'getCreditLimit',
          summary: "Read an entity's credit limit",
          parameters: [entityIdParam, ...readHeaderParams],
          responses: readAnswers('CreditLimit'),
        },
        post: {
          operationId: 'setCreditLimit',
          summary: "Set an entity's credit limit",
          parameters: [{ name: 'entityId', in: 'path', required: true, schema: plain(Identifier) }, ...headerParams],
          requestBody: { required: true, content: { 'application/json': { schema: ref('CreditLimitRequest') } } },
          responses: operationAnswers('CreditLimitApplied'),
        },
      },
      '/v1/cards/physical-upgrades': {
        post: {
          operationId: 'upgradeToPhysical',
          summary: 'Map a virtual card to a physical kit',
          description:
            'Card identification: cardId names the card; else entityId names the entity whose single virtual card is ' +
            'upgraded; else the kit must already be allocated to an entity. An unknown, mapped or foreign kit is PPCUST_018.',
          parameters: headerParams,
          requestBody: { required: true, content: { 'application/json': { schema: ref('PhysicalUpgradeRequest') } } },
          responses: operationAnswers('PhysicalUpgradeApplied'),
        },
      },
      '/v1/card-resolution': {
        get: {
          operationId: 'resolveCard',
          summary: 'Which card a lifecycle action names, from an entity or a kit',
          description:
            'For callers that name a card by entityId or kitNo instead of cardId (the lifecycle paths take a cardId). ' +
            'Every identifier given must name the same card. cardId names it; else entityId names the entity\'s single ' +
            'card the action applies to (for activate the PENDING_ACTIVATION one; an entity with one card resolves to it ' +
            'whatever its state, so that the change itself explains a refusal); else kitNo names the card mapped to the kit. ' +
            'Refusals: ENTITY_NOT_FOUND, CARD_NOT_FOUND, CARD_AMBIGUOUS (several cards qualify: send cardId). With the ' +
            'Idempotency-Key of a change that already succeeded, it answers the card that change applied to, so that a ' +
            'retry resolves as the first attempt did.',
          parameters: [
            { name: 'action', in: 'query', required: true, schema: plain(CardResolutionQuery.properties.action) },
            { name: 'cardId', in: 'query', required: false, schema: plain(Identifier) },
            { name: 'entityId', in: 'query', required: false, schema: plain(Identifier) },
            { name: 'kitNo', in: 'query', required: false, schema: plain(CardResolutionQuery.properties.kitNo) },
            ...headerParams,
          ],
          responses: readAnswers('CardResolution'),
        },
      },
      '/v1/cards/{cardId}': {
        get: {
          operationId: 'getCard',
          summary: 'Read a card in full, with its PAN and CVV under sensitive',
          parameters: [cardIdParam, ...readHeaderParams],
          responses: readAnswers('CardDetails'),
        },
      },
      '/v1/cards/{cardId}/activation': cardChange('activateCard', 'Activate a card issued PENDING_ACTIVATION'),
      '/v1/cards/{cardId}/lock': cardChange('lockCard', 'Lock an ACTIVE card (temporary)'),
      '/v1/cards/{cardId}/unlock': cardChange('unlockCard', 'Unlock a LOCKED card'),
      '/v1/cards/{cardId}/block': cardChange('blockCard', 'Block a card permanently, recording the reason', 'BlockRequest'),
      '/v1/cards/{cardId}/fulfilment/advance': cardChange(
        'advanceFulfilment',
        'Sandbox: move a physical card to its next fulfilment step (ORDERED → EMBOSSED → DISPATCHED → DELIVERED)',
      ),
      '/v1/cards/{cardId}/preferences': {
        get: {
          operationId: 'getPreferences',
          summary: "Read a card's transaction preferences ({} when none were set)",
          parameters: [cardIdParam, ...readHeaderParams],
          responses: readAnswers('Preferences'),
        },
        put: {
          operationId: 'updatePreferences',
          summary: "Replace a card's transaction preferences; refused on a BLOCKED card",
          parameters: [cardIdParam, ...headerParams],
          requestBody: { required: true, content: { 'application/json': { schema: ref('PreferencesRequest') } } },
          responses: operationAnswers('PreferencesApplied'),
        },
      },
      '/v1/cards/{cardId}/pin': {
        put: {
          operationId: 'setPin',
          summary: 'Set the PIN of a physical card from a PIN block under the core\'s key',
          description: 'The block is never echoed, logged or kept by the core; the answer names the card only.',
          parameters: [cardIdParam, ...headerParams],
          requestBody: { required: true, content: { 'application/json': { schema: ref('PinRequest') } } },
          responses: operationAnswers('PinApplied'),
        },
      },
      '/v1/entities/{entityId}/cards': {
        get: {
          operationId: 'listCards',
          summary: "An entity's cards, with masked numbers only",
          parameters: [entityIdParam, ...readHeaderParams],
          responses: readAnswers('CardList'),
        },
      },
      '/v1/entities/{entityId}': {
        get: {
          operationId: 'getEntity',
          summary: 'Read an entity (credit limit, cards with masked numbers)',
          parameters: [{ name: 'entityId', in: 'path', required: true, schema: plain(Identifier) }],
          responses: { '200': json('Entity', 'The entity.'), '404': json('Error', 'No such entity (ENTITY_NOT_FOUND).') },
        },
      },
      '/v1/health': {
        get: { operationId: 'bankHealth', summary: 'The bank can take calls', responses: { '200': json('Health', 'Up.') } },
      },
    },
    'x-mock-core': {
      description: 'Paths of the mock core server itself, relative to its root (not part of what a real core implements).',
      paths: {
        'GET /health': 'liveness of the server: {"status":"UP"}',
        'GET /openapi.json': 'this document',
        'GET /__admin/faults': 'the fault configuration (FaultConfig)',
        'PUT /__admin/faults': 'replace the fault configuration (FaultConfigUpdate; missing fields take defaults)',
        'POST /__admin/reset': 'restore the fixtures of one bank (ResetRequest.bankId) or of every bank',
      },
    },
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer' },
        basic: { type: 'http', scheme: 'basic' },
        mtls: { type: 'mutualTLS' },
      },
      schemas: Object.fromEntries(Object.entries(coreProtocolComponents).map(([name, schema]) => [name, plain(schema)])),
    },
  };
}

/** The committed file's exact text. */
export const coreProtocolOpenApiText = (): string => `${JSON.stringify(coreProtocolOpenApi(), null, 2)}\n`;
