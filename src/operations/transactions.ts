// GET /v1/entities/{entityId}/transactions: an entity's transactions (the core's), newest first, paged by an
// opaque cursor that names the last transaction shown, so that transactions made while a client pages land
// above the pages it has seen.
import { EntityIdParams } from '../../schemas/card-lifecycle-routes.js';
import type { FieldError } from '../../schemas/common.js';
import { DEFAULT_TIME_ZONE } from '../../schemas/tenant.js';
import { TRANSACTION_PAGE_DEFAULT, TRANSACTION_PAGE_MAX, TransactionPageResponse, TransactionQuery } from '../../schemas/transactions.js';
import { boundOf } from '../domain/days.js';
import { CardlineError, Errors } from '../errors.js';
import type { Tenant } from '../services/tenancy/tenants.js';
import { toTransactionListItem } from '../views/entities.js';
import { defineOperation } from './define.js';

const OBJECT_NAME = 'transactionQuery';
const fieldError = (field: string, message: string): FieldError => ({ field, message, objectName: OBJECT_NAME });

/** The cursor: base64url of `{"before":"<transactionId>"}`, the last transaction of the page shown. */
export const encodeTransactionCursor = (before: string): string => Buffer.from(JSON.stringify({ before }), 'utf8').toString('base64url');

/** The transaction a cursor names, or null when it is not a cursor this service issued. */
function decodeTransactionCursor(cursor: string): string | null {
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    const before = (parsed as { before?: unknown } | null)?.before;
    // Canonical form only: one spelling per cursor.
    if (typeof before !== 'string' || !/^[\w.-]{1,64}$/.test(before) || encodeTransactionCursor(before) !== cursor) return null;
    return before;
  } catch {
    return null;
  }
}

const zoneOf = (tenant: Tenant) => tenant.config.timeZone ?? DEFAULT_TIME_ZONE;

function checkQuery(q: TransactionQuery, tenant: Tenant): FieldError[] {
  const errors: FieldError[] = [];
  if (q.limit !== undefined) {
    const n = Number(q.limit);
    if (n < 1) errors.push(fieldError('limit', 'Min'));
    else if (n > TRANSACTION_PAGE_MAX) errors.push(fieldError('limit', 'Max'));
  }
  if (q.cursor !== undefined && decodeTransactionCursor(q.cursor) === null) errors.push(fieldError('cursor', 'Invalid'));
  const from = q.from === undefined ? undefined : boundOf(q.from, zoneOf(tenant), false);
  const to = q.to === undefined ? undefined : boundOf(q.to, zoneOf(tenant), true);
  if (from === null) errors.push(fieldError('from', 'Invalid'));
  if (to === null) errors.push(fieldError('to', 'Invalid'));
  if (from && to && to <= from) errors.push(fieldError('to', 'Invalid'));
  return errors;
}

export const transactionOperations = [
  defineOperation({
    id: 'transaction.list',
    method: 'GET',
    url: '/v1/entities/:entityId/transactions',
    summary: "A customer's transactions, approved and declined, newest first: host decisions, holds and what followed them",
    description:
      'Each entry has a `type`: AUTHORIZATION (the sandbox host\'s decision), HOLD (listed under the authorization\'s id), CLEARING, ' +
      'REVERSAL, REFUND or DISPUTE_CREDIT, the last five naming their `authorizationId`. Filters: `from`, `to` (a day YYYY-MM-DD of the tenant\'s time zone, both inclusive, or a date-time with an offset, `to` ' +
      'exclusive), `cardId`, `status`. Pages: `limit` (1..200, default 50) and `cursor` (`pagination.nextCursor` of the previous ' +
      'page). Money is a decimal string; the card number never appears.',
    tag: 'Customers',
    dialect: 'problem',
    access: 'read',
    objectName: OBJECT_NAME,
    params: EntityIdParams,
    query: TransactionQuery,
    response: TransactionPageResponse,
    check: ({ query, tenant }) => checkQuery(query, tenant),
    callsCore: true,
    refusals: ['ENTITY_NOT_FOUND', 'CARD_NOT_FOUND'],
    execute: async ({ params, query, tenant, core }) => {
      const zone = zoneOf(tenant);
      try {
        return await core('listTransactions', {
          entityId: params.entityId,
          from: query.from === undefined ? undefined : boundOf(query.from, zone, false)!.toISOString(),
          to: query.to === undefined ? undefined : boundOf(query.to, zone, true)!.toISOString(),
          cardId: query.cardId,
          status: query.status,
          limit: query.limit === undefined ? TRANSACTION_PAGE_DEFAULT : Number(query.limit),
          before: query.cursor === undefined ? undefined : decodeTransactionCursor(query.cursor)!,
        });
      } catch (err) {
        // A well-formed cursor naming a transaction the core does not know (of this entity) is still a bad cursor.
        if (err instanceof CardlineError && err.init.businessCode === 'TRANSACTION_NOT_FOUND') throw Errors.validation([fieldError('cursor', 'Invalid')]);
        throw err;
      }
    },
    view: (page) => ({
      result: page.transactions.map(toTransactionListItem),
      pagination: { nextCursor: page.next === null ? null : encodeTransactionCursor(page.next) },
    }),
    audit: { target: { entityId: 'params', cardId: 'query' } },
  }),
];
