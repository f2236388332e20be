// The core REST protocol's OpenAPI 3.1 document, generated from its table (./protocol.ts): served by the mock
// core at GET /openapi.json and committed as schemas/core-protocol.openapi.json.
import type { TSchema } from '@sinclair/typebox';
import { hoister } from '../shared/openapi-hoist.js';
import {
  CORE_PROTOCOL_VERSION,
  FaultConfig,
  FaultConfigUpdate,
  OperationHeaders,
  ResetRequest,
  ResetResult,
  coreProtocolComponents,
} from '../../schemas/core-protocol.js';
import { CORE_PROTOCOL, type CoreEndpointSpec } from './protocol.js';
// ── OpenAPI 3.1 document, generated from the table ────────────────────────────────────────────────

/** Schemas of the mock core's own paths (not the protocol): shown under `x-mock-core`, not components. */
const mockCoreSchemas: Record<string, TSchema> = { FaultConfig, FaultConfigUpdate, ResetRequest, ResetResult };

const componentNames = new Map(Object.entries(coreProtocolComponents).map(([name, schema]) => [schema, name]));
function ref(schema: TSchema) {
  const name = componentNames.get(schema);
  if (!name) throw new Error('a schema of the core protocol table is not listed in coreProtocolComponents');
  return { $ref: `#/components/schemas/${name}` };
}
/** TypeBox marks schemas with symbol keys; JSON keeps only the standard keywords. */
const plain = (schema: TSchema): unknown => JSON.parse(JSON.stringify(schema));

/** Tags: the sections of the protocol, by the first segment of the path. */
const TAGS: Record<string, { name: string; description: string }> = {
  entities: { name: 'Entities', description: 'Business entities (customers): registration, credit limits, repayments, transactions.' },
  cards: { name: 'Cards', description: 'Cards: issue, lifecycle changes, preferences, PIN, authorizations.' },
  'card-resolution': { name: 'Cards', description: '' },
  holds: { name: 'Holds', description: "Authorizations' holds after the core's decision: clearings, reversals, refunds, dispute credits." },
  health: { name: 'Health', description: 'Whether the bank can take calls.' },
};
const tagOf = (path: string) => {
  const tag = TAGS[path.split('/')[2]!];
  if (!tag) throw new Error(`no tag for the core protocol path ${path}`);
  return tag.name;
};

/** What every path of the protocol may answer when the core requires credentials (security). */
const UNAUTHENTICATED = {
  description: 'Credentials missing or wrong, where the core requires them (bearer, basic or mutual TLS); nothing was applied.',
  headers: { 'WWW-Authenticate': { description: 'The scheme to use: Bearer or Basic.', schema: { type: 'string' } } },
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
};

const HEADER_PARAMS = [
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

function openApiOperation(entry: CoreEndpointSpec): Record<string, unknown> {
  const headers = entry.kind === 'probe' ? [] : HEADER_PARAMS.filter((h) => entry.keyed || h.name !== 'Idempotency-Key');
  const query = entry.query
    ? Object.entries(entry.query.properties).map(([name, schema]) => ({ name, in: 'query', required: entry.query!.required?.includes(name) ?? false, schema: plain(schema) }))
    : [];
  const parameters = [
    ...Object.entries(entry.params).map(([name, schema]) => ({ name, in: 'path', required: true, schema: plain(schema) })),
    ...query,
    ...headers,
  ];
  const responses: Record<string, unknown> = Object.fromEntries(
    Object.entries(entry.answers).map(([status, a]) => [
      status,
      { description: a.description, content: { 'application/json': { schema: ref(a.schema) } }, ...(a.echoesRequestId ? { headers: requestIdHeader } : {}) },
    ]),
  );
  responses['401'] ??= UNAUTHENTICATED;
  const kind = { write: 'A write: applied once per Idempotency-Key.', read: 'A read: changes nothing; retried freely.', probe: 'A probe: no fault drawn, no key.' }[entry.kind];
  return {
    operationId: entry.operationId,
    summary: entry.summary,
    description: entry.description ? `${entry.description}\n\n${kind}` : kind,
    tags: [tagOf(entry.path)],
    ...(parameters.length ? { parameters } : {}),
    ...(entry.body ? { requestBody: { required: true, content: { 'application/json': { schema: ref(entry.body) } } } } : {}),
    responses,
  };
}

/** The protocol as an OpenAPI 3.1 document; the committed JSON file is this, pretty-printed. */
export function coreProtocolOpenApi(): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const entry of Object.values(CORE_PROTOCOL) as CoreEndpointSpec[]) {
    (paths[entry.path] ??= {})[entry.method.toLowerCase()] = openApiOperation(entry);
  }
  const named = hoister(Object.fromEntries(Object.entries(coreProtocolComponents).map(([name, schema]) => [name, plain(schema)])));
  const schemas = Object.fromEntries(Object.keys(coreProtocolComponents).map((name) => [name, named.bodyOf(name)]));
  return {
    openapi: '3.1.0',
    info: {
      title: 'Cardline core REST protocol',
      version: CORE_PROTOCOL_VERSION,
      contact: { name: 'The Cardline gateway team' },
      // package.json: UNLICENSED. SPDX writes a licence of one's own as LicenseRef-<name>.
      license: { name: 'Proprietary: no licence is granted', identifier: 'LicenseRef-Cardline-Proprietary' },
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
    tags: [...new Map(Object.values(TAGS).filter((t) => t.description).map((t) => [t.name, t])).values()],
    servers: [{ url: 'http://127.0.0.1:9090/banks/{bankId}', variables: { bankId: { default: 'demo' } } }],
    security: [{}, { bearer: [] }, { basic: [] }, { mtls: [] }],
    paths,
    'x-mock-core': {
      description: 'Paths of the mock core server itself, relative to its root (not part of what a real core implements).',
      paths: {
        'GET /health': 'liveness of the server: {"status":"UP"}',
        'GET /openapi.json': 'this document',
        'GET /__admin/faults': 'the fault configuration (FaultConfig)',
        'PUT /__admin/faults': 'replace the fault configuration (FaultConfigUpdate; missing fields take defaults)',
        'POST /__admin/reset': 'restore the fixtures of one bank (ResetRequest.bankId) or of every bank',
      },
      schemas: Object.fromEntries(Object.entries(mockCoreSchemas).map(([name, schema]) => [name, plain(schema)])),
    },
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer' },
        basic: { type: 'http', scheme: 'basic' },
        mtls: { type: 'mutualTLS' },
      },
      schemas,
    },
  };
}

/** The committed file's exact text. */
export const coreProtocolOpenApiText = (): string => `${JSON.stringify(coreProtocolOpenApi(), null, 2)}\n`;
