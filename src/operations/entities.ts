// Customer management (spec §1): business entities, their cards' issue and replacement. Problem dialect;
// writes for Admin, Operations and API Integration, reads for every role. Contact and address lines leave
// masked, and in full only sealed to the tenant's client key.
import type { CardSummary, EntityDetails } from '../../connectors/contract.js';
import { CardIdParams, EntityIdParams } from '../../schemas/card-lifecycle-routes.js';
import {
  CardIssuedResponse,
  CardReplacedResponse,
  ENTITY_PARTS,
  EntityRegisteredResponse,
  EntityResponse,
  EntityUpdatedResponse,
  RegisterEntityBody,
  ReplaceCardBody,
  UpdateEntityBody,
} from '../../schemas/entities.js';
import { checkCreditLimit } from '../domain/product-rules.js';
import { toCardView } from '../views/cards.js';
import { entitySecrets, toEntityView } from '../views/entities.js';
import { defineOperation } from './define.js';

const ADDRESS = { address1: '10 Demo Street', city: 'Lisbon', state: 'Demo', country: 'PT', pin: '1000-001' };
const ENTITY_EXAMPLE = {
  entityId: 'ENT-1001',
  name: 'Demo Business 1',
  type: 'BUSINESS' as const,
  contact: { email: 'a*******@demo-business-1.example', mobile: '+********1001' },
  primaryAddress: { ...ADDRESS, address1: '1* D*** S*****' },
  creditLimit: '50000.00',
  outstanding: '0.00',
  availableCredit: '50000.00',
  cardCount: 1,
};

const UPDATE_OBJECT = 'entityUpdateRequest';

export const entityOperations = [
  defineOperation({
    id: 'entity.register',
    method: 'POST',
    url: '/v1/entities',
    summary: 'Register a customer (business entity), with its first virtual card',
    description:
      'The core assigns `entityId` when it is left out. `creditLimit` obeys the tenant\'s product rules (maximum). Unless ' +
      '`issueVirtualCard` is false the entity gets its first card, VIRTUAL and ACTIVE. Contact and address lines may be sent as JWEs; ' +
      'the answer masks them, and carries them in full under `sensitive`, sealed to the tenant\'s client key, when one is registered.',
    tag: 'Customers',
    dialect: 'problem',
    access: 'card-write',
    objectName: 'entityRegistrationRequest',
    body: RegisterEntityBody,
    response: EntityRegisteredResponse,
    status: 201,
    callsCore: true,
    refusals: ['ENTITY_EXISTS', 'LIMIT_ABOVE_MAXIMUM', 'LIMIT_NOT_POSITIVE'],
    execute: ({ body, tenant, core }) => {
      checkCreditLimit(tenant, body.creditLimit);
      return core('registerEntity', {
        entityId: body.entityId,
        name: body.name,
        type: body.type,
        contact: body.contact,
        primaryAddress: body.primaryAddress,
        creditLimit: body.creditLimit,
        issueVirtualCard: body.issueVirtualCard ?? true,
      });
    },
    sensitive: (r) => entitySecrets(r.entity),
    view: (r, _input, sealed) => ({
      result: {
        message: `Entity ${r.entity.entityId} registered${r.card ? ` with virtual card ${r.card.cardId}` : ''}`,
        entity: toEntityView(r.entity, sealed),
        ...(r.card ? { card: toCardView(r.card) } : {}),
      },
      pagination: null,
    }),
    audit: { target: { entityId: 'body' } },
    event: {
      type: 'entity.registered',
      payload: (r) => ({ entityId: r.entity.entityId, type: r.entity.type, creditLimit: r.entity.creditLimit, ...(r.card ? { cardId: r.card.cardId } : {}) }),
    },
    examples: {
      body: {
        name: 'Oficina Lda',
        type: 'BUSINESS',
        contact: { email: 'finance@oficina.example', mobile: '+351912345678' },
        primaryAddress: { address1: '5 Rua Augusta', city: 'Lisbon', state: 'Lisboa', country: 'PT', pin: '1100-048' },
        creditLimit: '25000.00',
      },
    },
  }),

  defineOperation({
    id: 'entity.read',
    method: 'GET',
    url: '/v1/entities/:entityId',
    summary: "A customer's profile, contact, primary address and credit line",
    description:
      'Credit limit, outstanding balance, available credit (limit − outstanding) and card count. Contact and address lines are masked; ' +
      "in full only under `sensitive`, each a JWE to the tenant's client key (decision 0020).",
    tag: 'Customers',
    dialect: 'problem',
    access: 'read',
    objectName: 'entityRequest',
    params: EntityIdParams,
    response: EntityResponse,
    callsCore: true,
    refusals: ['ENTITY_NOT_FOUND'],
    execute: ({ params, core }) => core('getEntity', { entityId: params.entityId }),
    sensitive: entitySecrets,
    view: (entity, _input, sealed) => ({ result: toEntityView(entity, sealed), pagination: null }),
    audit: { target: { entityId: 'params' } },
    examples: { response: { result: ENTITY_EXAMPLE, pagination: null } },
  }),

  defineOperation({
    id: 'entity.update',
    method: 'PATCH',
    url: '/v1/entities/:entityId',
    summary: "Replace a customer's contact or primary address",
    description:
      'Each part sent (`contact`, `primaryAddress`) replaces that part whole; at least one. The primary address is what ' +
      '`communicationAddress.usePrimaryAddress: true` sends a physical card to from then on.',
    tag: 'Customers',
    dialect: 'problem',
    access: 'card-write',
    objectName: UPDATE_OBJECT,
    params: EntityIdParams,
    body: UpdateEntityBody,
    response: EntityUpdatedResponse,
    check: ({ body }) => (ENTITY_PARTS.some((p) => body[p] !== undefined) ? [] : ENTITY_PARTS.map((field) => ({ field, message: 'NotNull', objectName: UPDATE_OBJECT }))),
    callsCore: true,
    refusals: ['ENTITY_NOT_FOUND'],
    execute: ({ params, body, core }) => core('updateEntity', { entityId: params.entityId, contact: body.contact, primaryAddress: body.primaryAddress }),
    sensitive: entitySecrets,
    view: (entity: EntityDetails, _input, sealed) => ({ result: { message: `Entity ${entity.entityId} updated`, entity: toEntityView(entity, sealed) }, pagination: null }),
    audit: { target: { entityId: 'params' } },
    event: { type: 'entity.updated', payload: (e, { body }) => ({ entityId: e.entityId, changed: ENTITY_PARTS.filter((p) => body[p] !== undefined) }) },
  }),

  defineOperation({
    id: 'card.issue',
    method: 'POST',
    url: '/v1/entities/:entityId/cards',
    summary: 'Issue another virtual card to a customer',
    tag: 'Customers',
    dialect: 'problem',
    access: 'card-write',
    objectName: 'cardIssueRequest',
    params: EntityIdParams,
    response: CardIssuedResponse,
    status: 201,
    callsCore: true,
    refusals: ['ENTITY_NOT_FOUND'],
    execute: ({ params, core }) => core('issueCard', { entityId: params.entityId }),
    view: (card: CardSummary) => ({ result: { message: `Virtual card ${card.cardId} issued to ${card.entityId}`, card: toCardView(card) }, pagination: null }),
    audit: { target: { entityId: 'params' } },
    event: { type: 'card.issued', payload: (c) => ({ cardId: c.cardId, entityId: c.entityId, form: 'VIRTUAL' as const, state: 'ACTIVE' as const }) },
  }),

  defineOperation({
    id: 'card.replace',
    method: 'POST',
    url: '/v1/cards/:cardId/replace',
    summary: 'Replace a blocked card (lost, stolen, damaged or expired)',
    description:
      'Only a BLOCKED card can be replaced, and once. The new card keeps the entity and the old card\'s preferences: VIRTUAL and ' +
      'ACTIVE, or with `kitNo` PHYSICAL, ACTIVE, fulfilment ORDERED, sent to the primary address.',
    tag: 'Card lifecycle',
    dialect: 'problem',
    access: 'card-write',
    objectName: 'cardReplacementRequest',
    params: CardIdParams,
    body: ReplaceCardBody,
    response: CardReplacedResponse,
    status: 201,
    callsCore: true,
    refusals: ['CARD_NOT_FOUND', 'CARD_NOT_BLOCKED', 'CARD_ALREADY_REPLACED', 'PPCUST_018'],
    execute: ({ params, body, core }) => core('replaceCard', { cardId: params.cardId, reason: body.reason, kitNo: body.kitNo }),
    view: (r, { body }) => ({
      result: {
        message: `Card ${r.replacedCardId} replaced (${body.reason}) by ${r.card.form === 'PHYSICAL' ? 'physical' : 'virtual'} card ${r.card.cardId}`,
        replacedCardId: r.replacedCardId,
        card: toCardView(r.card),
      },
      pagination: null,
    }),
    audit: { target: { cardId: 'params', kitNo: 'body', reason: 'body' } },
    event: {
      type: 'card.replaced',
      payload: (r, { body }) => ({
        cardId: r.card.cardId,
        replacedCardId: r.replacedCardId,
        entityId: r.card.entityId,
        reason: body.reason,
        form: r.card.form,
        ...(r.card.kitNo !== undefined ? { kitNo: r.card.kitNo } : {}),
      }),
    },
    examples: { body: { reason: 'LOST' } },
  }),
];
