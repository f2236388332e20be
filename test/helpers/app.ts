// Builds a gateway for a test: its own store (in-memory PGlite, or a fresh PostgreSQL database when
// DATABASE_URL is set), the demo tenants seeded with a known password, and helpers to call it.
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyServerOptions, InjectOptions, LightMyRequestResponse } from 'fastify';
import pg from 'pg';
import { buildApp } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { encryptCompact } from '../../src/crypto/jwe.js';
import { MasterKey } from '../../src/crypto/master-key.js';
import { createTenant, seedDemo, type ConnectorChoice } from '../../src/services/onboarding.js';
import { buildMockCore } from '../../src/mock-core/server.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDb, type Db } from '../../src/store/db.js';
import { checkAgainstDocument } from './openapi.js';
import type { Operation } from '../../src/operations/define.js';
import type { Role } from '../../schemas/common.js';

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
  drop(): Promise<void>;
}

/** A store of the test's own: PGlite in memory, or a database created (and later dropped) on the server. */
export async function createTestDb(): Promise<TestDb> {
  const url = process.env.DATABASE_URL;
  if (!url) {
    const db = await openDb({ dataDir: 'memory://' });
    return { db, drop: () => db.close() };
  }
  const name = `cardline_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const u = new URL(url);
  u.pathname = `/${name}`;
  const db = await openDb({ databaseUrl: u.toString() });
  return {
    db,
    drop: async () => {
      await db.close();
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

export interface TestApp {
  app: FastifyInstance;
  config: Config;
  db: Db;
  /** A token for the demo user of that role on that tenant. */
  token(role?: Role, tenant?: string): Promise<string>;
  /** Encrypts a value to the tenant's gateway key, as a client would. */
  encrypt(value: string, tenant?: string, opts?: Parameters<typeof encryptCompact>[2]): Promise<string>;
  inject(opts: InjectOptions): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

/** Which core serves the demo tenants: the in-process mock, the mock core server over REST, or files. */
export type TestConnector = 'mock' | 'rest' | 'file';
export const TEST_CONNECTORS: TestConnector[] = ['mock', 'rest', 'file'];

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

export async function createTestApp(opts: TestAppOptions = {}): Promise<TestApp> {
  const testDb = await createTestDb();
  const config = loadConfig({ LOG_LEVEL: 'silent', CARDLINE_TENANT_CACHE_TTL_MS: '0', ...opts.env });
  const app = await buildApp({
    config,
    db: testDb.db,
    masterKey: MasterKey.generate(),
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
  return {
    app,
    config,
    db: testDb.db,
    token,
    encrypt,
    // Every answer is checked against the committed OpenAPI document (its route's schema for the status).
    inject: async (o) => {
      const res = await app.inject(o);
      checkAgainstDocument(String(o.method ?? 'GET'), String(o.url ?? (o as { path?: string }).path ?? '/'), res);
      return res;
    },
    close: async () => {
      await app.close();
      await core.stop();
      await testDb.drop();
    },
  };
}
