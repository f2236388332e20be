// The layer rules that docs/architecture.md draws: `npm run lint` fails on an import that points up a layer.
// Bottom up: schemas → connectors → foundation → store → crypto → trail → services → operations → pipeline →
// listener apps → process. Each rule forbids one boundary and says why; a module may import its own layer
// and any layer below it.

/** @param {string[]} alternatives */
const anyOf = (...alternatives) => alternatives.join('|');

const SCHEMAS = '^schemas/';
const CONNECTORS = '^connectors/';
const FOUNDATION = '^src/(config|errors|logging)[.]ts$|^src/(paging|domain|telemetry)/';
const STORE = '^src/store/';
const CRYPTO = '^src/crypto/';
const TRAIL = '^src/(audit|events)/';
const SERVICES = '^src/(services|notify|reports)/';
const OPERATIONS = '^src/(operations|views)/';
const PIPELINE = '^src/(plugins|routes|console|openapi)/|^src/(request-context|route-config|step-errors|schema-compilers)[.]ts$';
const APPS = '^src/app[.]ts$|^src/management/';
const PROCESS = '^src/(server|cluster|bootstrap|listen|shutdown)[.]ts$|^src/(cli|mock-core)/|^scripts/';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'schemas-wire-only',
      comment:
        'schemas/ holds wire shapes only (the frozen public contract and every OpenAPI component): it imports ' +
        'neither the gateway (src/) nor the connectors, which are built on it.',
      severity: 'error',
      from: { path: SCHEMAS },
      to: { path: '^(src|connectors)/' },
    },
    {
      name: 'connectors-portable',
      comment:
        'connectors/ is the contract, the built-in connectors, the conformance kit and the mock core that connector ' +
        'authors build and test against without the gateway: it imports nothing from src/.',
      severity: 'error',
      from: { path: CONNECTORS },
      to: { path: '^src/' },
    },
    {
      name: 'foundation-at-the-bottom',
      comment:
        'Configuration, the error catalogue, logging, tracing, paging cursors and the domain rules are used by every layer of ' +
        'src/, so they import nothing of it but each other.',
      severity: 'error',
      from: { path: FOUNDATION },
      to: { path: '^src/', pathNot: FOUNDATION },
    },
    {
      name: 'store-below-crypto',
      comment: 'The store (connection, migrations) knows no gateway module above the foundation: it holds data, not meaning.',
      severity: 'error',
      from: { path: STORE },
      to: { path: '^src/', pathNot: anyOf(STORE, FOUNDATION) },
    },
    {
      name: 'crypto-primitives-only',
      comment:
        'src/crypto/ holds primitives (JWE, the master key, PIN blocks, HSMs): it imports neither services nor ' +
        'operations, so a primitive never depends on what is built from it; caches of keys are services.',
      severity: 'error',
      from: { path: CRYPTO },
      to: { path: '^src/', pathNot: anyOf(CRYPTO, STORE, FOUNDATION) },
    },
    {
      name: 'trail-below-services',
      comment:
        'The audit trail and the events of record are written by every operation and read by services: they ' +
        'import only crypto, the store and the foundation, so what is recorded never depends on who reads it.',
      severity: 'error',
      from: { path: TRAIL },
      to: { path: '^src/', pathNot: anyOf(TRAIL, CRYPTO, STORE, FOUNDATION) },
    },
    {
      name: 'audit-not-to-delivery',
      comment:
        'The audit trail records events of record; delivery (src/notify) reads them afterwards. The trail never ' +
        'imports delivery, so a change to channels cannot change what is recorded or how it is chained.',
      severity: 'error',
      from: { path: '^src/audit/' },
      to: { path: '^src/notify/' },
    },
    {
      name: 'services-below-operations',
      comment:
        'Services (built by the composition root, src/services/index.ts) are framework-free: they import no ' +
        'operation, step, route or listener, so the CLI and tests build them without Fastify.',
      severity: 'error',
      from: { path: SERVICES },
      to: { path: anyOf(OPERATIONS, PIPELINE) },
    },
    {
      name: 'operations-not-to-store',
      comment:
        'An operation (a row of the table) reaches data through services, never the store: SQL stays in the ' +
        'services, beside the caches and the change feed that depend on it.',
      severity: 'error',
      from: { path: OPERATIONS },
      to: { path: STORE },
    },
    {
      name: 'operations-below-pipeline',
      comment:
        'The table declares what each operation is; the pipeline (plugins, the registrar, routes) runs it. An ' +
        'entry never imports a step, so steps can change without touching the table.',
      severity: 'error',
      from: { path: OPERATIONS },
      to: { path: PIPELINE },
    },
    {
      name: 'listener-apps-on-top',
      comment:
        "The listeners' apps (app.ts, management/app.ts) assemble the pipeline; only the process imports them, so " +
        'the pipeline, operations and services never depend on how a listener is put together.',
      severity: 'error',
      from: { pathNot: anyOf(APPS, PROCESS) },
      to: { path: APPS },
    },
    {
      name: 'process-on-top',
      comment:
        'The process entries (server, cluster, bootstrap, the CLI, the mock core, the generator in scripts/) wire everything; nothing ' +
        'below imports them, so any module can be used without starting a process.',
      severity: 'error',
      from: { pathNot: PROCESS },
      to: { path: PROCESS },
    },
    {
      name: 'no-circular',
      comment: 'A cycle has no bottom: neither module can be understood, tested or moved without the other.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    includeOnly: '^(src|connectors|schemas|scripts)/',
    doNotFollow: { path: 'node_modules' },
    // Type-only imports count: a type is a dependency on a module's meaning even where it compiles away.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
