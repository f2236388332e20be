// Issue 22 point 4: the CLI working on the store (no --admin-url) makes its changes through the same admin
// actions as the management API, so each is audited (actor `cli:<os-user>`, the management route's action
// name) and raises the same security event. Read back as a bank would: GET /v1/audit on a gateway on the same
// store, the events delivered to the tenant's webhook channel, and `cardline audit verify` still verifying.
// On PGlite the CLI and the gateway take turns (single process); with DATABASE_URL the same runs on PostgreSQL.
import { rm } from 'node:fs/promises';
import os from 'node:os';
import type { FastifyInstance } from 'fastify';
import type { JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { verifyChain } from '../../src/audit/verify.js';
import { openStore } from '../../src/bootstrap.js';
import { loadConfig } from '../../src/config.js';
import { encryptCompact } from '../../src/crypto/jwe.js';
import { MasterKey } from '../../src/crypto/master-key.js';
import { PLATFORM_TENANT } from '../../src/services/tenancy/tenants.js';
import { createTestDataDir, createTestDb, type TestDb } from '../helpers/app.js';
import { cliInProcess } from '../helpers/cli.js';
import { startReceiver, verifyWebhook, type Receiver } from '../helpers/receiver.js';

const TENANT = 'cli-audited';
const PASSWORD = 'Cli-Audited-Passw0rd';
const ACTOR = `cli:${os.userInfo().username}`;
const masterKey = MasterKey.generate();

let dataDir: string | undefined;
let pg: TestDb | undefined;
let rx: Receiver;

/** Where the store is: a PostgreSQL database of this test's own, or an embedded one in a data dir. */
const storeEnv = (): NodeJS.ProcessEnv => (pg?.url ? { DATABASE_URL: pg.url } : { CARDLINE_DATA_DIR: dataDir! });

const cli = (args: string[], extra: NodeJS.ProcessEnv = {}) => {
  const env: NodeJS.ProcessEnv = { ...process.env, ...storeEnv(), CARDLINE_MASTER_KEY: masterKey, ...extra };
  if (!pg?.url) delete env.DATABASE_URL;
  delete env.CARDLINE_ADMIN_URL;
  delete env.CARDLINE_OPERATOR_KEY;
  return cliInProcess(args, env);
};

const ok = async (args: string[], extra: NodeJS.ProcessEnv = {}) => {
  const r = await cli(args, extra);
  expect(r.code, r.stderr).toBe(0);
  return r;
};

/** A gateway on the same store, with its delivery worker; closed (store and all) by `fn`'s end. */
async function withGateway<T>(fn: (app: FastifyInstance, token: string) => Promise<T>): Promise<T> {
  const config = loadConfig({ ...storeEnv(), LOG_LEVEL: 'silent', CARDLINE_DELIVERY_POLL_MS: '20' });
  const app = await buildApp({ config, db: await openStore(config), masterKey });
  try {
    const keys = await app.inject({ method: 'GET', url: '/api/keys', headers: { TENANT } });
    const password = await encryptCompact(PASSWORD, keys.json<{ keys: JWK[] }>().keys[0]!);
    const login = await app.inject({ method: 'POST', url: '/api/authenticate', headers: { TENANT }, payload: { username: 'first-admin', password } });
    expect(login.statusCode, login.body).toBe(200);
    return await fn(app, login.json<{ id_token: string }>().id_token);
  } finally {
    await app.close();
  }
}

beforeAll(async () => {
  rx = await startReceiver();
  if (process.env.DATABASE_URL) pg = await createTestDb();
  else dataDir = await createTestDataDir('cardline-cli-audited-');
});
afterAll(async () => {
  await rx?.close();
  await pg?.drop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

interface AuditRecord {
  seq: number;
  actor: string | null;
  role: string | null;
  action: string;
  method: string;
  route: string;
  target: Record<string, string>;
  outcome: string;
  status: number;
  origin: string | null;
}

describe('cardline on the store, audited', () => {
  it('records each change with actor cli:<os-user>, fires its security event on the tenant\'s channels, and the chain verifies', { timeout: 300_000 }, async () => {
    // A sandbox tenant: its webhooks may target this loopback receiver.
    await ok(['tenant', 'create', TENANT, '--sandbox']);
    await ok(['user', 'add', '--tenant', TENANT, '--username', 'first-admin', '--role', 'Admin'], { CARDLINE_USER_PASSWORD: PASSWORD });

    // The tenant's Admin subscribes a webhook to the security events.
    const secret = await withGateway(async (app, token) => {
      const res = await app.inject({
        method: 'POST',
        url: '/v1/admin/channels',
        headers: { 'X-TENANT-ID': TENANT, authorization: `Bearer ${token}` },
        payload: { type: 'webhook', url: `${rx.base}/security`, eventTypes: ['user.created', 'user.disabled', 'tenant.config-changed', 'keys.rotated', 'keys.retired'] },
      });
      expect(res.statusCode, res.body).toBe(201);
      return res.json<{ result: { secret: string } }>().result.secret;
    });

    // Changes made on the store while no gateway runs.
    await ok(['user', 'add', '--tenant', TENANT, '--username', 'svc', '--role', 'API Integration'], { CARDLINE_USER_PASSWORD: PASSWORD });
    await ok(['user', 'disable', '--tenant', TENANT, '--username', 'svc']);
    await ok(['user', 'enable', '--tenant', TENANT, '--username', 'svc']);
    await ok(['user', 'reset-password', '--tenant', TENANT, '--username', 'svc'], { CARDLINE_USER_PASSWORD: `${PASSWORD}-2` });
    await ok(['tenant', 'update', TENANT, '--max-limit', '90000.00', '--time-zone', 'Europe/Paris']);
    const rotated = JSON.parse((await ok(['keys', 'rotate', '--tenant', TENANT, '--use', 'sig'])).stdout) as { replaced: { kid: string }[] };
    const retired = rotated.replaced[0]!.kid;
    await ok(['keys', 'retire', '--tenant', TENANT, '--kid', retired]);
    // A refusal is recorded too, and reported as the CLI reports it.
    const last = await cli(['user', 'remove', '--tenant', TENANT, '--username', 'first-admin']);
    expect(last.code).toBe(1);
    expect(last.stderr).toBe("error: 'first-admin' is the tenant's last Admin; make another user Admin first.\n");

    await withGateway(async (app, token) => {
      // Delivered by the gateway's worker from the outbox rows the CLI committed with its records.
      const hooks = await rx.waitFor('/security', 5);
      const events = hooks.map((h) => verifyWebhook(secret, h));
      expect(events.map((e) => [e.type, e.data])).toEqual(
        expect.arrayContaining([
          ['user.created', { username: 'svc', role: 'API Integration' }],
          ['user.disabled', { username: 'svc', by: ACTOR }],
          ['tenant.config-changed', { tenantId: TENANT, changed: ['creditLimit', 'timeZone'] }],
          ['keys.rotated', expect.objectContaining({ use: 'sig' })],
          ['keys.retired', { use: 'sig', kid: retired }],
        ]),
      );
      expect(events).toHaveLength(5);

      const res = await app.inject({
        method: 'GET',
        url: `/v1/audit?actor=${encodeURIComponent(ACTOR)}&limit=100`,
        headers: { 'X-TENANT-ID': TENANT, authorization: `Bearer ${token}` },
      });
      expect(res.statusCode, res.body).toBe(200);
      const records = res.json<{ result: AuditRecord[] }>().result.sort((a, b) => a.seq - b.seq);
      // The CLI's reads (the tenant's keys to encrypt a password to, the user list) are not recorded, as the API's are not.
      expect(records.filter((r) => r.method === 'GET').map((r) => r.action)).toEqual([]);
      const summary = records.filter((r) => r.method !== 'GET').map((r) => [r.action, r.method, r.route, r.target, r.outcome, r.status]);
      expect(summary).toEqual([
        ['tenant.create', 'POST', '/v1/tenants', { tenantId: TENANT }, 'succeeded', 201],
        ['user.create', 'POST', '/v1/tenants/:tenantId/users', { tenantId: TENANT, username: 'first-admin' }, 'succeeded', 201],
        ['user.create', 'POST', '/v1/tenants/:tenantId/users', { tenantId: TENANT, username: 'svc' }, 'succeeded', 201],
        ['user.update', 'PATCH', '/v1/tenants/:tenantId/users/:username', { tenantId: TENANT, username: 'svc' }, 'succeeded', 200],
        ['user.update', 'PATCH', '/v1/tenants/:tenantId/users/:username', { tenantId: TENANT, username: 'svc' }, 'succeeded', 200],
        ['user.password-reset', 'PUT', '/v1/tenants/:tenantId/users/:username/password', { tenantId: TENANT, username: 'svc' }, 'succeeded', 200],
        ['tenant.update', 'PATCH', '/v1/tenants/:tenantId', { tenantId: TENANT }, 'succeeded', 200],
        ['keys.rotate', 'POST', '/v1/tenants/:tenantId/keys/rotate', { tenantId: TENANT, use: 'sig' }, 'succeeded', 200],
        ['keys.retire', 'POST', '/v1/tenants/:tenantId/keys/:kid/retire', { tenantId: TENANT, kid: retired }, 'succeeded', 200],
        ['user.remove', 'DELETE', '/v1/tenants/:tenantId/users/:username', { tenantId: TENANT, username: 'first-admin' }, 'refused', 409],
      ]);
      for (const r of records) expect(r).toMatchObject({ actor: ACTOR, role: 'Operator', origin: null });
    });

    const verified = await ok(['audit', 'verify', '--tenant', TENANT]);
    expect(verified.stdout).toMatch(/^OK: \d+ records in \d+ chains?, root [0-9a-f]{64}\n$/);
  });

  it('records operator-key changes in the platform trail; a refused one as refused', async () => {
    await ok(['operator-key', 'create', '--name', 'cli-audit-op']);
    const again = await cli(['operator-key', 'create', '--name', 'cli-audit-op']);
    expect(again.stderr).toBe("error: An operator key named 'cli-audit-op' exists; revoke it first or choose another name.\n");
    await ok(['operator-key', 'revoke', 'cli-audit-op']);
    const config = loadConfig({ ...storeEnv(), LOG_LEVEL: 'silent' });
    const db = await openStore(config);
    try {
      const r = await db.query<{ action: string; target: Record<string, string>; outcome: string; status: number; route: string }>(
        'SELECT action, target, outcome, status, route FROM audit_log WHERE tenant_id = $1 AND actor = $2 ORDER BY seq',
        [PLATFORM_TENANT, ACTOR],
      );
      expect(r.rows).toEqual([
        { action: 'operator-key.create', target: { name: 'cli-audit-op' }, outcome: 'succeeded', status: 201, route: '/v1/operator-keys' },
        { action: 'operator-key.create', target: { name: 'cli-audit-op' }, outcome: 'refused', status: 409, route: '/v1/operator-keys' },
        { action: 'operator-key.revoke', target: { name: 'cli-audit-op' }, outcome: 'succeeded', status: 200, route: '/v1/operator-keys/:name' },
      ]);
      expect(await verifyChain(db, PLATFORM_TENANT)).toMatchObject({ ok: true });
    } finally {
      await db.close();
    }
    // The platform's own trail verifies offline like a tenant's.
    const verified = await ok(['audit', 'verify', '--tenant', '_platform']);
    expect(verified.stdout).toMatch(/^OK: \d+ records in \d+ chains?, root [0-9a-f]{64}\n$/);
  });
});
