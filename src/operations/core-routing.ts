// The tenant's cores, for its Admin: each connector's offer, routes, breaker and recent calls, and the
// shadow core's divergences and summary (decisions 0111-0113). Routing itself is the operator's
// (PATCH /v1/tenants/{tenantId} on the management listener), never the Admin's.
import { ConnectorsResponse, DivergencePageResponse, DivergenceQuery, SHADOW_PAGE_MAX, ShadowSummaryResponse } from '../../schemas/core-routing.js';
import { connectorsView } from '../services/connectors/connectors-view.js';
import { pageQueryErrors } from '../paging/key-cursor.js';
import { decodeSeqCursor } from '../paging/seq-cursor.js';
import { defineOperation } from './define.js';

const TAG = 'Cores';

export const coreRoutingOperations = [
  defineOperation({
    id: 'connectors.list',
    method: 'GET',
    url: '/v1/admin/connectors',
    summary: "The tenant's core connectors: what each offers, what is routed to it, its breaker and recent calls",
    description: 'Calls, failures, error rate and latency cover the last five minutes of this gateway process.',
    tag: TAG,
    dialect: 'problem',
    access: 'admin',
    objectName: 'connectorsRequest',
    response: ConnectorsResponse,
    execute: ({ tenant, services }) => connectorsView(services, tenant),
    view: (connectors) => ({ result: connectors, pagination: null }),
    audit: {},
  }),

  defineOperation({
    id: 'shadow.divergences',
    method: 'GET',
    url: '/v1/admin/shadow/divergences',
    summary: 'Where the shadow core answered differently from the primary, newest first',
    description: `Each entry names the operation, the request, and the fields that differ with both values (sensitive ones as "***"). Pages: \`limit\` (1..${SHADOW_PAGE_MAX}, default 50) and \`cursor\`.`,
    tag: TAG,
    dialect: 'problem',
    access: 'admin',
    objectName: 'divergenceListRequest',
    query: DivergenceQuery,
    response: DivergencePageResponse,
    check: ({ query }) => pageQueryErrors(query, 'divergenceListRequest', (cursor) => decodeSeqCursor(cursor) !== null, SHADOW_PAGE_MAX),
    execute: ({ tenant, query, services }) => services.shadow.divergences(tenant.id, query),
    view: ({ divergences, nextCursor }) => ({ result: divergences, pagination: { nextCursor } }),
    audit: {},
  }),

  defineOperation({
    id: 'shadow.summary',
    method: 'GET',
    url: '/v1/admin/shadow/summary',
    summary: 'Per shadowed operation: calls by outcome (match, diverged, error, dropped) and the match rate',
    tag: TAG,
    dialect: 'problem',
    access: 'admin',
    objectName: 'shadowSummaryRequest',
    response: ShadowSummaryResponse,
    execute: ({ tenant, services }) => services.shadow.summary(tenant.id),
    view: (summary) => ({ result: summary, pagination: null }),
    audit: {},
  }),
];
