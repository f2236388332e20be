// Builds a gateway for a test: its own store (in-memory PGlite, or a fresh PostgreSQL database when
// DATABASE_URL is set), started from the run's migrated template, the demo tenants seeded with a known
// password, and helpers to call it.
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyServerOptions, InjectOptions, LightMyRequestResponse } from 'fastify';
import { inject } from 'vitest';
import { buildApp } from '../../src/app.js';
import { buildManagementApp } from '../../src/management/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { encryptCompact } from '../../src/crypto/jwe.js';
import { MasterKey } from '../../src/crypto/master-key.js';
import { createTenant, seedDemo, type ConnectorChoice } from '../../src/services/tenancy/onboarding.js';
import { buildMockCore } from '../../connectors/mock-core/server.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDb, type Db } from '../../src/store/db.js';
import { copyTemplate } from '../../src/store/template.js';
import { checkAgainstDocument, checkAgainstManagementDocument } from './openapi.js';
import type { Operation } from '../../src/operations/define.js';
import type { MockCore } from '../../connectors/mock/index.js';
import type { Role } from '../../schemas/common.js';
import { adminQuery, databaseUrl } from './global-setup.js';
import { returnPglite, takeMigratedPglite } from './pglite-pool.js';

export const PASSWORD = 'correct-horse-battery';
export const USERS: Record<Role, string> = {
  Admin: 'admin',
  Operations: 'ops',
  'API Integration': 'integration',
  'Read-Only': 'viewer',
};

export const LIMIT_URL = '/credit-line-management/business-entity-manager/upgradeLimit';
export const UPGRADE_URL = '/v1/cards/upgrade/physical';
export const PROBLEM_BASE = 'https://www.jhipster.tech/problem';

/** A 5xx's detail: its message, then the request id to quote to support, which the answer's X-Request-Id names. */
export function supportDetail(detail: string, res: LightMyRequestResponse): string {
  const id = res.headers['x-request-id'];
  if (typeof id !== 'string' || id === '') throw new Error(`the ${res.statusCode} answer has no X-Request-Id header`);
  return `${detail} Quote request id ${id} to support.`;
}

export interface TestDb {
  db: Db;
  /** The database's URL on a PostgreSQL server (null on PGlite): for a gateway process of the test's own. */
  url: string | null;
  drop(): Promise<void>;
}

export interface TestDbOptions {
  /**
   * Defaults to true: the store starts from the run's migrated template (test/helpers/global-setup.ts).
   * False gives an empty store, for tests of the migrations themselves.
   */
  migrated?: boolean;
}

/**
 * A new data directory (CARDLINE_DATA_DIR) whose embedded store is a copy of the run's migrated template
 * directory (test/helpers/global-setup.ts), copied as a new store is from the install's template, for tests of the CLI, of file-backed stores and of gateway processes (PGlite's initdb would cost a
 * child process about 5.7 s of CPU). The demo process of test/process/server.test.ts and the docs'
 * walk-throughs start from an empty directory, as a first start does.
 */
export async function createTestDataDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  copyTemplate(inject('pgliteTemplateDir'), join(dir, 'pglite'));
  return dir;
}

/** A store of the test's own: PGlite in memory, or a database created (and later dropped) on the server. */
export async function createTestDb(opts: TestDbOptions = {}): Promise<TestDb> {
  const migrated = opts.migrated ?? true;
  const url = process.env.DATABASE_URL;
  if (!url) {
    if (!migrated) {
      const db = await openDb({ dataDir: 'memory://' });
      return { db, url: null, drop: () => db.close() };
    }
    // Reused within the worker (test/helpers/pglite-pool.ts): drop() hands it back, emptied before reuse.
    const db = await takeMigratedPglite();
    return { db, url: null, drop: () => returnPglite(db) };
  }
  const name = `cardline_test_${randomBytes(6).toString('hex')}`;
  const template = migrated ? inject('pgTemplate') : null;
  await adminQuery(url, `CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ''}`);
  const db = await openDb({ databaseUrl: databaseUrl(url, name) });
  return {
    db,
    url: databaseUrl(url, name),
    drop: async () => {
      await db.close();
      await adminQuery(url, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

export interface TestApp {
  app: FastifyInstance;
  config: Config;
  db: Db;
  /** The master key the store's keys are sealed under (another app on this store needs the same). */
  masterKey: string;
  /** A token for the demo user of that role on that tenant. */
  token(role?: Role, tenant?: string): Promise<string>;
  /** Encrypts a value to the tenant's gateway key, as a client would. */
  encrypt(value: string, tenant?: string, opts?: Parameters<typeof encryptCompact>[2]): Promise<string>;
  inject(opts: InjectOptions): Promise<LightMyRequestResponse>;
  /** The management listener over this gateway's services, built on first use. */
  management(): Promise<FastifyInstance>;
  /** A fresh operator key (named `name`, or a unique one) for the management listener. */
  operatorKey(name?: string): Promise<string>;
  close(): Promise<void>;
}

/** Which core serves the demo tenants: the in-process mock, the mock core server over REST, or files. */
export type TestConnector = 'mock' | 'rest' | 'file';
export const TEST_CONNECTORS: TestConnector[] = ['mock', 'rest', 'file'];

/** The mock core serving a tenant of the test app (its state can be set or read directly). */
export async function mockCoreOf(t: TestApp, tenant = 'demo'): Promise<MockCore> {
  return (await t.app.cardline.connectors.forTenant((await t.app.cardline.tenants.get(tenant))!)) as unknown as MockCore;
}

export interface TestAppOptions {
  /** Defaults to mock. */
  connector?: TestConnector;
  env?: NodeJS.ProcessEnv;
  logger?: FastifyServerOptions['loggerInstance'];
  /** Extra tenants created besides demo and demo-b. */
  tenants?: { id: string; config?: unknown }[];
  /** Another operation table than the gateway's. */
  operations?: readonly Operation[];
}

/** Starts what the chosen connector talks to: a mock core server on loopback, or a directory. */
async function startCore(kind: TestConnector): Promise<{ choice: ConnectorChoice; stop(): Promise<void> }> {
  if (kind === 'rest') {
    const server = buildMockCore({ fixtures: 'demo' });
    const base = await server.listen({ host: '127.0.0.1', port: 0 });
    return {
      choice: (tenantId) => ({ id: 'rest', options: { baseUrl: `${base}/banks/${tenantId}` } }),
      stop: () => server.close(),
    };
  }
  if (kind === 'file') {
    const dir = await mkdtemp(join(tmpdir(), 'cardline-test-core-'));
    return {
      choice: (tenantId) => ({ id: 'file', options: { dir: join(dir, tenantId), fixtures: 'demo' } }),
      stop: () => rm(dir, { recursive: true, force: true }),
    };
  }
  return { choice: () => ({ id: 'mock', options: { fixtures: 'demo' } }), stop: async () => undefined };
}

/** The management listener with every answer of `inject(options)` checked against its committed document. */
function checkedInjections(app: FastifyInstance): FastifyInstance {
  const inject = app.inject.bind(app);
  app.inject = (async (o: InjectOptions) => {
    const res = await inject(o);
    checkAgainstManagementDocument(String(o.method ?? 'GET'), String(o.url ?? (o as { path?: string }).path ?? '/'), res);
    return res;
  }) as FastifyInstance['inject'];
  return app;
}

export async function createTestApp(opts: TestAppOptions = {}): Promise<TestApp> {
  const testDb = await createTestDb();
  // The delivery worker drains the outbox only in the tests of notification channels (they switch it on).
  const config = loadConfig({ LOG_LEVEL: 'silent', CARDLINE_TENANT_CACHE_TTL_MS: '0', CARDLINE_DELIVERY_WORKER: '0', ...opts.env });
  const masterKey = MasterKey.generate();
  const app = await buildApp({
    config,
    db: testDb.db,
    masterKey,
    ownsDb: false,
    ...(opts.logger ? { logger: opts.logger } : {}),
    ...(opts.operations ? { operations: opts.operations } : {}),
  });
  const core = await startCore(opts.connector ?? 'mock');
  await seedDemo(app.cardline, PASSWORD, core.choice);
  for (const t of opts.tenants ?? []) await createTenant(app.cardline, t);

  // One login per tenant and role, shared by concurrent callers (as a real channel reuses its token).
  const tokens = new Map<string, Promise<string>>();
  const encrypt = async (value: string, tenant = 'demo', encOpts = {}) => {
    const res = await app.inject({ method: 'GET', url: '/api/keys', headers: { TENANT: tenant } });
    const key = res.json().keys[0];
    return encryptCompact(value, key, encOpts);
  };
  const login = async (role: Role, tenant: string) => {
    const res = await app.inject({
      method: 'POST',
      url: '/api/authenticate',
      headers: { TENANT: tenant },
      payload: { username: USERS[role], password: await encrypt(PASSWORD, tenant) },
    });
    if (res.statusCode !== 200) throw new Error(`login failed: ${res.statusCode} ${res.body}`);
    return res.json().id_token as string;
  };
  const token = (role: Role = 'Admin', tenant = 'demo') => {
    const cacheKey = `${tenant}/${role}`;
    let pending = tokens.get(cacheKey);
    if (!pending) {
      pending = login(role, tenant);
      tokens.set(cacheKey, pending);
      pending.catch(() => tokens.delete(cacheKey));
    }
    return pending;
  };
  let management: Promise<FastifyInstance> | undefined;
  let operators = 0;
  return {
    app,
    config,
    db: testDb.db,
    masterKey,
    token,
    encrypt,
    management: () => (management ??= buildManagementApp({ services: app.cardline, config, ...(opts.logger ? { logger: opts.logger } : {}) }).then(checkedInjections)),
    operatorKey: async (name = `operator-${++operators}`) => (await app.cardline.operatorKeys.create(name)).key,
    // Every answer is checked against the committed OpenAPI document (its route's schema for the status).
    inject: async (o) => {
      const res = await app.inject(o);
      checkAgainstDocument(String(o.method ?? 'GET'), String(o.url ?? (o as { path?: string }).path ?? '/'), res);
      return res;
    },
    close: async () => {
      if (management) await (await management).close();
      await app.close();
      await core.stop();
      await testDb.drop();
    },
  };
}
