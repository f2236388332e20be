// The management listener's operator keys (decision 0190): listed without the key, created (the key shown
// once, stored as a hash), revoked at once. Audited in the platform's own trail.
import { MessageResponse, OperatorKeyCreateBody, OperatorKeyCreatedResponse, OperatorKeyPageResponse, OperatorKeyParams, isOperatorKeyName } from '../../schemas/management.js';
import { PAGE_MAX, PageQuery } from '../../schemas/page.js';
import { Errors } from '../errors.js';
import { OperatorKeyError } from '../services/operator-keys.js';
import { keyCursorOf, pageBounds, pageQueryErrors } from '../store/key-cursor.js';
import { defineOperation } from './define.js';

const TAG = 'Operator keys';
const envelope = <T>(result: T) => ({ result, pagination: null });

export const managementOperatorKeyOperations = [
  defineOperation({
    id: 'operator-key.list',
    listener: 'management',
    method: 'GET',
    url: '/v1/operator-keys',
    summary: 'The operator keys, by name (never the key itself)',
    description: `Pages: \`limit\` (1..${PAGE_MAX}, default 50) and \`cursor\` (\`pagination.nextCursor\` of the previous page).`,
    tag: TAG,
    dialect: 'problem',
    access: 'operator',
    objectName: 'operatorKeyListRequest',
    query: PageQuery,
    response: OperatorKeyPageResponse,
    check: ({ query }) => pageQueryErrors(query, 'operatorKeyListRequest', keyCursorOf(isOperatorKeyName)),
    execute: ({ query, services }) => services.operatorKeys.page(pageBounds(query)),
    view: ({ items, nextCursor }) => ({ result: items, pagination: { nextCursor } }),
    // Not recorded: names and dates only (decision 0292).
    audit: false,
  }),

  defineOperation({
    id: 'operator-key.create',
    listener: 'management',
    method: 'POST',
    url: '/v1/operator-keys',
    status: 201,
    summary: 'Create an operator key (shown once)',
    description: 'A retry with the same Idempotency-Key gets the key again: the answer is stored sealed.',
    tag: TAG,
    dialect: 'problem',
    access: 'operator',
    objectName: 'operatorKeyRequest',
    body: OperatorKeyCreateBody,
    response: OperatorKeyCreatedResponse,
    // The new key, shown once: a retry with the Idempotency-Key gets it again, stored sealed (decision 0175).
    idempotent: 'sealed',
    refusals: ['OPERATOR_KEY_EXISTS'],
    execute: async ({ body, services }) => {
      try {
        return await services.operatorKeys.create(body.name);
      } catch (err) {
        if (err instanceof OperatorKeyError) throw Errors.business('OPERATOR_KEY_EXISTS', err.message);
        throw err;
      }
    },
    view: ({ key, view }) => envelope({ key, operatorKey: view }),
    audit: { target: { name: 'body' } },
    examples: { body: { name: 'ops-alice' } },
  }),

  defineOperation({
    id: 'operator-key.revoke',
    listener: 'management',
    method: 'DELETE',
    url: '/v1/operator-keys/:name',
    summary: 'Revoke an operator key (refused from the next request on)',
    tag: TAG,
    dialect: 'problem',
    access: 'operator',
    objectName: 'request',
    params: OperatorKeyParams,
    response: MessageResponse,
    errors: [Errors.operatorKeyNotFound('ops-bob')],
    execute: async ({ params, services }) => {
      if (!(await services.operatorKeys.revoke(params.name))) throw Errors.operatorKeyNotFound(params.name);
    },
    view: (_done, { params }) => envelope({ message: `Operator key '${params.name}' revoked` }),
    audit: { target: { name: 'params' } },
  }),
];
