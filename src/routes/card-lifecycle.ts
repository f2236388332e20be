// Card lifecycle routes (DESIGN §3), problem dialect: activate, lock, unlock, block, card reads and
// preferences. Each hands its operation to the tenant's connector; the transitions are the core's.
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { CardDetails, CardSummary } from '../../connectors/contract.js';
import { maskPan } from '../../connectors/shared/pan.js';
import type { FieldError, Role } from '../../schemas/common.js';
import { Preferences } from '../../schemas/cards.js';
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
  type CardDetailsView,
  type CardView,
} from '../../schemas/card-lifecycle-routes.js';
import { encryptSensitive } from '../crypto/response-fields.js';

/** DESIGN §3: card lifecycle writes, and reads (Read-Only may read, never write). */
export const CARD_WRITE_ROLES: readonly Role[] = ['Admin', 'Operations', 'API Integration'];
export const CARD_READ_ROLES: readonly Role[] = ['Admin', 'Operations', 'API Integration', 'Read-Only'];

const CHANNELS = ['atm', 'pos', 'ecom', 'contactless'] as const;

/**
 * The card as the gateway shows it, built field by field so that nothing else the connector returns
 * (the `sensitive` block, the expiry) can reach a response: those only leave encrypted (DESIGN §4).
 */
export function toCardView(card: CardSummary): CardView {
  const view: CardView = {
    cardId: card.cardId,
    entityId: card.entityId,
    form: card.form,
    state: card.state,
    // The connector already masks; masking again means one that got it wrong cannot leak a number.
    panMasked: maskPan(card.panMasked),
  };
  if (card.fulfilment !== undefined) view.fulfilment = card.fulfilment;
  if (card.kitNo !== undefined) view.kitNo = card.kitNo;
  if (card.blockReason !== undefined) view.blockReason = card.blockReason;
  return view;
}

function toCardDetailsView(card: CardDetails): CardDetailsView {
  const view: CardDetailsView = toCardView(card);
  if (card.plasticCode !== undefined) view.plasticCode = card.plasticCode;
  if (card.preferences !== undefined) view.preferences = card.preferences;
  return view;
}

/** Preferences as applied: a category switched off disables each of its channels (decision 0010). */
export function effectivePreferences(preferences: Preferences): Preferences {
  const effective = structuredClone(preferences);
  for (const category of [effective.domestic, effective.international]) {
    if (category?.enabled !== false) continue;
    for (const channel of CHANNELS) {
      const c = category[channel];
      if (c) c.enabled = false;
    }
  }
  return effective;
}

/** POST /card/activate names the card by at least one identifier. */
function checkCardRef(body: CardActivationBody, objectName: string): FieldError[] {
  if (CARD_REF_FIELDS.some((f) => body[f] !== undefined)) return [];
  return CARD_REF_FIELDS.map((field) => ({ field, message: 'NotNull', objectName }));
}

/**
 * Routes whose operation is wholly in the path take no body: none, or `{}`. Anything else is refused
 * rather than ignored, as on every other route.
 */
export function checkNoBody(body: unknown, objectName: string): FieldError[] {
  if (body === undefined) return [];
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return [{ field: 'body', message: 'TypeMismatch', objectName }];
  return Object.keys(body).map((field) => ({ field, message: 'UnknownProperty', objectName }));
}

const paramsOf = (request: FastifyRequest) => (request.params ?? {}) as Record<string, unknown>;
const bodyOf = (request: FastifyRequest) => (request.body ?? {}) as Record<string, unknown>;

/** The event payload of a card that moved to a new state: ids and state, nothing sensitive. */
const cardStateOf = (result: unknown) => {
  const c = result as CardSummary;
  return { cardId: c.cardId, entityId: c.entityId, state: c.state };
};

const cardLifecycleRoutes: FastifyPluginAsync = async (app) => {
  const envelope = <T>(result: T) => ({ result, pagination: null });

  app.post<{ Body: CardActivationBody }>('/card/activate', {
    schema: { body: CardActivationBody, response: { 200: CardOperationResponse } },
    config: {
      dialect: 'problem',
      roles: CARD_WRITE_ROLES,
      objectName: 'cardActivationRequest',
      check: (req) => checkCardRef(req.body as CardActivationBody, 'cardActivationRequest'),
      audit: {
        action: 'card.activate',
        target: (req) => {
          const b = bodyOf(req);
          return { cardId: b.cardId, entityId: b.entityId, kitNo: b.kitNo };
        },
        event: { type: 'card.activated', payload: (_req, result) => cardStateOf(result) },
      },
    },
    handler: async (request) => {
      const { cardId, entityId, kitNo } = request.body;
      const card = await request.callCore('activateCard', { cardId, entityId, kitNo });
      return envelope({ message: `Card ${card.cardId} activated`, card: toCardView(card) });
    },
  });

  for (const [verb, operation, done, eventType] of [
    ['lock', 'lockCard', 'locked', 'card.locked'],
    ['unlock', 'unlockCard', 'unlocked', 'card.unlocked'],
  ] as const) {
    const objectName = `card${verb === 'lock' ? 'Lock' : 'Unlock'}Request`;
    app.post<{ Params: CardIdParams }>(`/v1/cards/:cardId/${verb}`, {
      schema: { params: CardIdParams, response: { 200: CardOperationResponse } },
      config: {
        dialect: 'problem',
        roles: CARD_WRITE_ROLES,
        objectName,
        check: (req) => checkNoBody(req.body, objectName),
        audit: {
          action: `card.${verb}`,
          target: (req) => ({ cardId: paramsOf(req).cardId }),
          event: { type: eventType, payload: (_req, result) => cardStateOf(result) },
        },
      },
      handler: async (request) => {
        const card = await request.callCore(operation, { cardId: request.params.cardId });
        return envelope({ message: `Card ${card.cardId} ${done}`, card: toCardView(card) });
      },
    });
  }

  app.post<{ Params: CardIdParams; Body: BlockCardBody }>('/v1/cards/:cardId/block', {
    schema: { params: CardIdParams, body: BlockCardBody, response: { 200: CardOperationResponse } },
    config: {
      dialect: 'problem',
      roles: CARD_WRITE_ROLES,
      objectName: 'cardBlockRequest',
      audit: {
        action: 'card.block',
        target: (req) => ({ cardId: paramsOf(req).cardId, reasonCode: bodyOf(req).reasonCode }),
        event: {
          type: 'card.blocked',
          payload: (req, result) => {
            const c = result as CardSummary;
            return { cardId: c.cardId, entityId: c.entityId, state: 'BLOCKED' as const, reason: c.blockReason ?? (req.body as BlockCardBody).reasonCode };
          },
        },
      },
    },
    handler: async (request) => {
      const { reasonCode } = request.body;
      const card = await request.callCore('blockCard', { cardId: request.params.cardId, reasonCode });
      return envelope({ message: `Card ${card.cardId} blocked permanently (${reasonCode})`, card: toCardView(card) });
    },
  });

  // Reads are audited too: who looked at which card is part of the trail a card issuer keeps (decision 0011).
  app.get<{ Params: EntityIdParams }>('/v1/entities/:entityId/cards', {
    schema: { params: EntityIdParams, response: { 200: CardListResponse } },
    config: {
      dialect: 'problem',
      roles: CARD_READ_ROLES,
      objectName: 'cardListRequest',
      audit: { action: 'card.list', target: (req) => ({ entityId: paramsOf(req).entityId }) },
    },
    handler: async (request) => {
      const cards = await request.callCore('listCards', { entityId: request.params.entityId });
      return envelope(cards.map(toCardView));
    },
  });

  app.get<{ Params: CardIdParams }>('/v1/cards/:cardId', {
    schema: { params: CardIdParams, response: { 200: CardResponse } },
    config: {
      dialect: 'problem',
      roles: CARD_READ_ROLES,
      objectName: 'cardRequest',
      audit: { action: 'card.read', target: (req) => ({ cardId: paramsOf(req).cardId }) },
    },
    handler: async (request) => {
      const card = await request.callCore('getCard', { cardId: request.params.cardId });
      // PAN, CVV and expiry leave only encrypted to the tenant's client key, or not at all (decision 0020).
      const sensitive = await encryptSensitive(app.cardline.clientKeys, request.tenant!.id, card);
      return envelope(sensitive ? { ...toCardDetailsView(card), sensitive } : toCardDetailsView(card));
    },
  });

  app.get<{ Params: CardIdParams }>('/v1/cards/:cardId/preferences', {
    schema: { params: CardIdParams, response: { 200: PreferencesResponse } },
    config: {
      dialect: 'problem',
      roles: CARD_READ_ROLES,
      objectName: 'cardPreferencesRequest',
      audit: { action: 'card.preferences-read', target: (req) => ({ cardId: paramsOf(req).cardId }) },
    },
    handler: async (request) => {
      const { cardId } = request.params;
      const preferences = await request.callCore('getPreferences', { cardId });
      return envelope({ cardId, preferences, effective: effectivePreferences(preferences) });
    },
  });

  app.put<{ Params: CardIdParams; Body: Preferences }>('/v1/cards/:cardId/preferences', {
    schema: { params: CardIdParams, body: Preferences, response: { 200: PreferencesUpdateResponse } },
    config: {
      dialect: 'problem',
      roles: CARD_WRITE_ROLES,
      objectName: 'cardPreferences',
      audit: {
        action: 'card.preferences-update',
        target: (req) => ({ cardId: paramsOf(req).cardId }),
        event: {
          type: 'card.preferences-updated',
          payload: (req, result) => ({ cardId: (req.params as CardIdParams).cardId, preferences: result as Preferences }),
        },
      },
    },
    handler: async (request) => {
      const { cardId } = request.params;
      const preferences = await request.callCore('updatePreferences', { cardId, preferences: request.body });
      return envelope({
        message: `Preferences of card ${cardId} updated`,
        cardId,
        preferences,
        effective: effectivePreferences(preferences),
      });
    },
  });
};

export default cardLifecycleRoutes;
