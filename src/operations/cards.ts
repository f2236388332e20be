// Card operations, problem dialect: the upgrade of record (spec 4.3) and the lifecycle around it (DESIGN §3):
// activate, lock, unlock, block, reads and preferences. The transitions themselves are the core's.
import type { CardSummary } from '../../connectors/contract.js';
import type { FieldError } from '../../schemas/common.js';
import { PhysicalUpgradeBody, PhysicalUpgradeResponse, Preferences, REQUIRED_ADDRESS_FIELDS } from '../../schemas/cards.js';
import {
  BlockCardBody,
  CARD_REF_FIELDS,
  CardActivationBody,
  CardIdParams,
  CardListResponse,
  CardOperationResponse,
  CardResponse,
  EntityIdParams,
  PreferencesResponse,
  PreferencesUpdateResponse,
} from '../../schemas/card-lifecycle-routes.js';
import { effectivePreferences, toCardDetailsView, toCardView } from '../views/cards.js';
import { defineOperation } from './define.js';

const UPGRADE_URL = '/v1/cards/upgrade/physical';

const UPGRADE_OBJECT = 'physicalCardUpgradeRequest';

/** Address lines are required unless the primary address on file is used (DESIGN §3). */
function checkAddress(body: PhysicalUpgradeBody): FieldError[] {
  const address = body.communicationAddress;
  if (!address || address.usePrimaryAddress === true) return [];
  return REQUIRED_ADDRESS_FIELDS.filter((f) => address[f] === undefined).map((f) => ({
    field: `communicationAddress.${f}`,
    message: 'NotNull',
    objectName: UPGRADE_OBJECT,
  }));
}

/** POST /card/activate names the card by at least one identifier. */
function checkCardRef(body: CardActivationBody, objectName: string): FieldError[] {
  if (CARD_REF_FIELDS.some((f) => body[f] !== undefined)) return [];
  return CARD_REF_FIELDS.map((field) => ({ field, message: 'NotNull', objectName }));
}

/** Operations wholly in the path take no body or `{}`: anything else is refused rather than ignored. */
export function checkNoBody(body: unknown, objectName: string): FieldError[] {
  if (body === undefined) return [];
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return [{ field: 'body', message: 'TypeMismatch', objectName }];
  return Object.keys(body).map((field) => ({ field, message: 'UnknownProperty', objectName }));
}

/** The event payload of a card that moved to a new state: ids and state, nothing sensitive. */
const cardState = (c: CardSummary) => ({ cardId: c.cardId, entityId: c.entityId, state: c.state });

const operationAnswer = (message: string, card: CardSummary) => ({ result: { message, card: toCardView(card) }, pagination: null });

const CARD_3001 = { cardId: 'CARD-3001', entityId: 'ENT-1001', form: 'VIRTUAL', state: 'ACTIVE', panMasked: '400000******0017' } as const;

const CARD_REFUSALS = ['CARD_NOT_FOUND', 'CARD_STATE_INVALID'] as const;

/** lock and unlock: the same shape, one verb apart. */
const cardChange = (verb: 'lock' | 'unlock', operation: 'lockCard' | 'unlockCard', done: string, summary: string) => {
  const objectName = `card${verb === 'lock' ? 'Lock' : 'Unlock'}Request`;
  return defineOperation({
    id: `card.${verb}`,
    method: 'POST',
    url: `/v1/cards/:cardId/${verb}`,
    summary,
    tag: 'Card lifecycle',
    dialect: 'problem',
    access: 'card-write',
    objectName,
    params: CardIdParams,
    response: CardOperationResponse,
    check: ({ body }) => checkNoBody(body, objectName),
    callsCore: true,
    refusals: CARD_REFUSALS,
    execute: ({ params, core }) => core(operation, { cardId: params.cardId }),
    view: (card) => operationAnswer(`Card ${card.cardId} ${done}`, card),
    audit: { target: { cardId: 'params' } },
    event: { type: verb === 'lock' ? 'card.locked' : 'card.unlocked', payload: cardState },
  });
};

export const cardOperations = [
  defineOperation({
    id: 'card.upgrade-physical',
    method: 'PUT',
    url: UPGRADE_URL,
    summary: 'Upgrade a virtual card to a physical one',
    description:
      'Spec 4.3. Maps the virtual card to the physical kit `kitNo`; the card account and balance are kept. Which card: `cardId` if ' +
      'given; else the single virtual card of `entityId`; else the kit must already be allocated to an entity. With ' +
      '`lockOnUpgrade` the card is issued PENDING_ACTIVATION until it is activated. Address lines may be sent as JWEs.',
    tag: 'Cards',
    dialect: 'problem',
    access: 'card-write',
    objectName: UPGRADE_OBJECT,
    body: PhysicalUpgradeBody,
    response: PhysicalUpgradeResponse,
    check: ({ body }) => checkAddress(body),
    callsCore: true,
    refusals: ['PPCUST_018', 'CARD_NOT_VIRTUAL', 'CARD_AMBIGUOUS', 'ENTITY_NOT_FOUND', 'CARD_NOT_FOUND'],
    execute: ({ body, core }) =>
      core('upgradeToPhysical', {
        kitNo: body.kitNo,
        entityId: body.entityId,
        cardId: body.cardId,
        communicationAddress: body.communicationAddress,
        plasticCode: body.plasticCodeDto,
        lockOnUpgrade: body.lockOnUpgrade ?? false,
        preferences: body.preferences,
      }),
    view: (r) => {
      const locked = r.state === 'PENDING_ACTIVATION' ? '; the card stays locked until it is activated' : '';
      return { result: { message: `Card ${r.cardId} upgraded to physical with kit ${r.kitNo}${locked}` }, pagination: null };
    },
    audit: { target: { kitNo: 'body', entityId: 'body', cardId: 'body' } },
    event: {
      type: 'card.upgraded-to-physical',
      payload: (r) => ({ cardId: r.cardId, entityId: r.entityId, kitNo: r.kitNo, state: r.state }),
    },
    examples: {
      body: { kitNo: 'KIT-2001', entityId: 'ENT-1001', communicationAddress: { usePrimaryAddress: true }, lockOnUpgrade: true },
      response: {
        result: { message: 'Card CARD-3001 upgraded to physical with kit KIT-2001; the card stays locked until it is activated' },
        pagination: null,
      },
    },
  }),

  defineOperation({
    id: 'card.activate',
    method: 'POST',
    url: '/card/activate',
    summary: 'Activate a card issued PENDING_ACTIVATION',
    description: 'The card is named by `cardId`, `entityId` (its single candidate card) or `kitNo`; at least one.',
    tag: 'Card lifecycle',
    dialect: 'problem',
    access: 'card-write',
    objectName: 'cardActivationRequest',
    body: CardActivationBody,
    response: CardOperationResponse,
    check: ({ body }) => checkCardRef(body, 'cardActivationRequest'),
    callsCore: true,
    refusals: [...CARD_REFUSALS, 'CARD_AMBIGUOUS', 'ENTITY_NOT_FOUND'],
    execute: ({ body, core }) => core('activateCard', { cardId: body.cardId, entityId: body.entityId, kitNo: body.kitNo }),
    view: (card) => operationAnswer(`Card ${card.cardId} activated`, card),
    audit: { target: { cardId: 'body', entityId: 'body', kitNo: 'body' } },
    event: { type: 'card.activated', payload: cardState },
    examples: { body: { kitNo: 'KIT-2001' } },
  }),

  cardChange('lock', 'lockCard', 'locked', 'Lock an ACTIVE card (temporary)'),
  cardChange('unlock', 'unlockCard', 'unlocked', 'Unlock a LOCKED card'),

  defineOperation({
    id: 'card.block',
    method: 'POST',
    url: '/v1/cards/:cardId/block',
    summary: 'Block a card permanently, with a reason',
    tag: 'Card lifecycle',
    dialect: 'problem',
    access: 'card-write',
    objectName: 'cardBlockRequest',
    params: CardIdParams,
    body: BlockCardBody,
    response: CardOperationResponse,
    callsCore: true,
    refusals: CARD_REFUSALS,
    execute: ({ params, body, core }) => core('blockCard', { cardId: params.cardId, reasonCode: body.reasonCode }),
    view: (card, { body }) => operationAnswer(`Card ${card.cardId} blocked permanently (${body.reasonCode})`, card),
    audit: { target: { cardId: 'params', reasonCode: 'body' } },
    event: {
      type: 'card.blocked',
      payload: (c, { body }) => ({ cardId: c.cardId, entityId: c.entityId, state: 'BLOCKED' as const, reason: c.blockReason ?? body.reasonCode }),
    },
    examples: { body: { reasonCode: 'LOST' } },
  }),

  // Reads are audited too: who looked at which card is part of the trail a card issuer keeps (decision 0011).
  defineOperation({
    id: 'card.list',
    method: 'GET',
    url: '/v1/entities/:entityId/cards',
    summary: "An entity's cards, with masked numbers",
    tag: 'Cards',
    dialect: 'problem',
    access: 'read',
    objectName: 'cardListRequest',
    params: EntityIdParams,
    response: CardListResponse,
    callsCore: true,
    refusals: ['ENTITY_NOT_FOUND'],
    execute: ({ params, core }) => core('listCards', { entityId: params.entityId }),
    view: (cards) => ({ result: cards.map(toCardView), pagination: null }),
    audit: { target: { entityId: 'params' } },
    examples: { response: { result: [CARD_3001], pagination: null } },
  }),

  defineOperation({
    id: 'card.read',
    method: 'GET',
    url: '/v1/cards/:cardId',
    summary: 'One card in full; PAN, CVV and expiry only as JWEs to the tenant\'s client key',
    description:
      'When the tenant registered a client key (PUT /v1/admin/client-key), `sensitive` holds the PAN, CVV and expiry, each a ' +
      'compact JWE to that key; otherwise they are left out (decision 0020).',
    tag: 'Cards',
    dialect: 'problem',
    access: 'read',
    objectName: 'cardRequest',
    params: CardIdParams,
    response: CardResponse,
    callsCore: true,
    refusals: ['CARD_NOT_FOUND'],
    execute: ({ params, core }) => core('getCard', { cardId: params.cardId }),
    sensitive: (card) => ({ pan: card.sensitive.pan, cvv: card.sensitive.cvv, expiry: card.expiry }),
    view: (card, _input, sealed) => ({ result: sealed ? { ...toCardDetailsView(card), sensitive: sealed } : toCardDetailsView(card), pagination: null }),
    audit: { target: { cardId: 'params' } },
    examples: { response: { result: CARD_3001, pagination: null } },
  }),

  defineOperation({
    id: 'card.preferences-read',
    method: 'GET',
    url: '/v1/cards/:cardId/preferences',
    summary: "A card's transaction preferences, as stored and as applied",
    tag: 'Card lifecycle',
    dialect: 'problem',
    access: 'read',
    objectName: 'cardPreferencesRequest',
    params: CardIdParams,
    response: PreferencesResponse,
    callsCore: true,
    refusals: ['CARD_NOT_FOUND'],
    execute: ({ params, core }) => core('getPreferences', { cardId: params.cardId }),
    view: (preferences, { params }) => ({
      result: { cardId: params.cardId, preferences, effective: effectivePreferences(preferences) },
      pagination: null,
    }),
    audit: { target: { cardId: 'params' } },
  }),

  defineOperation({
    id: 'card.preferences-update',
    method: 'PUT',
    url: '/v1/cards/:cardId/preferences',
    summary: "Replace a card's transaction preferences",
    description: 'A category whose `enabled` is false disables each of its channels (`effective`). Refused on a BLOCKED card.',
    tag: 'Card lifecycle',
    dialect: 'problem',
    access: 'card-write',
    objectName: 'cardPreferences',
    params: CardIdParams,
    body: Preferences,
    response: PreferencesUpdateResponse,
    callsCore: true,
    refusals: CARD_REFUSALS,
    execute: ({ params, body, core }) => core('updatePreferences', { cardId: params.cardId, preferences: body }),
    view: (preferences, { params }) => ({
      result: {
        message: `Preferences of card ${params.cardId} updated`,
        cardId: params.cardId,
        preferences,
        effective: effectivePreferences(preferences),
      },
      pagination: null,
    }),
    audit: { target: { cardId: 'params' } },
    event: { type: 'card.preferences-updated', payload: (preferences, { params }) => ({ cardId: params.cardId, preferences }) },
    examples: {
      body: { domestic: { enabled: true, pos: { enabled: true, dailyLimit: '2000.00', dailyCount: 20 } }, international: { enabled: false } },
    },
  }),
];
