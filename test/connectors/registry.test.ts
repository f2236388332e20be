// External connectors load at boot; a tenant whose connector cannot load or start is degraded (503,
// logged, listed by readiness) while the other tenants keep working.
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtInConnectors } from '../../connectors/index.js';
import { checkDefinition, loadConnectorModule } from '../../connectors/loader.js';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { encryptCompact } from '../../src/crypto/jwe.js';
import { MasterKey } from '../../src/crypto/master-key.js';
import { createTenant, seedDemo } from '../../src/services/tenancy/onboarding.js';
import { LIMIT_URL, PASSWORD, UPGRADE_URL, createTestDb, supportDetail, type TestDb } from '../helpers/app.js';
import sick, { probes } from './fixtures/sick-connector.js';

const ACME = './examples/acme-core/index.ts';

/** Tenants written to the store past onboarding's checks, as a hand-edited row or a removed plugin would be. */
const BROKEN = {
  'bad-opts': { id: 'mock', options: { latencyMs: -5 } },
  'no-module': { id: 'ghost', module: './no/such/plugin.js' },
  'wrong-id': { id: 'acme', module: ACME },
  clash: { id: 'mock', module: './connectors/mock/index.ts' },
};

const config = loadConfig({ LOG_LEVEL: 'silent', CARDLINE_TENANT_CACHE_TTL_MS: '0' });
const masterKey = MasterKey.generate();

interface LogLine {
  level: number;
  msg: string;
  tenant?: string;
  reason?: string;
}

async function login(app: FastifyInstance, tenant: string): Promise<Record<string, string>> {
  const keys = await app.inject({ method: 'GET', url: '/api/keys', headers: { TENANT: tenant } });
  const password = await encryptCompact(PASSWORD, keys.json().keys[0]);
  const res = await app.inject({ method: 'POST', url: '/api/authenticate', headers: { TENANT: tenant }, payload: { username: 'admin', password } });
  expect(res.statusCode, res.body).toBe(200);
  return { TENANT: tenant, authorization: `Bearer ${res.json().id_token}` };
}

const raiseLimit = async (app: FastifyInstance, tenant: string, amount = '75000.00') =>
  app.inject({ method: 'POST', url: LIMIT_URL, headers: await login(app, tenant), payload: { entityId: 'ENT-1001', amount } });

const upgradeCard = async (app: FastifyInstance, tenant: string, kitNo = 'KIT-2001') =>
  app.inject({
    method: 'PUT',
    url: UPGRADE_URL,
    headers: await login(app, tenant),
    payload: { kitNo, entityId: 'ENT-1001', communicationAddress: { usePrimaryAddress: true } },
  });

describe('a store with tenants whose connectors cannot start', () => {
  let testDb: TestDb;
  let app: FastifyInstance;
  const logs: LogLine[] = [];

  beforeAll(async () => {
    testDb = await createTestDb();
    const first = await buildApp({ config, db: testDb.db, masterKey, ownsDb: false });
    await seedDemo(first.cardline, PASSWORD);
    const { db, tenants, keys, users } = first.cardline;
    const unchecked = { db, tenants, keys, users };
    for (const [id, connector] of Object.entries({ ...BROKEN, acme: { id: 'acme-core', module: ACME } })) {
      await createTenant(unchecked, { id, config: { connector } });
      await users.add(id, 'admin', 'Admin', PASSWORD);
    }
    await first.close();

    // The boot under test, with its log captured.
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const line of chunk.toString().split('\n').filter(Boolean)) logs.push(JSON.parse(line) as LogLine);
        done();
      },
    });
    app = await buildApp({ config, db: testDb.db, masterKey, ownsDb: false, logger: pino({ level: 'info' }, sink) });
  });
  afterAll(async () => {
    await app?.close();
    await testDb?.drop();
  });

  it('boots, and logs each broken tenant with the reason', () => {
    const errors = logs.filter((l) => l.level === 50 && l.msg.includes('could not start'));
    expect(errors.map((l) => l.tenant).sort()).toEqual(Object.keys(BROKEN).sort());
    const reason = (tenant: string) => errors.find((l) => l.tenant === tenant)?.reason;
    expect(reason('bad-opts')).toMatch(/^connector 'mock' options are invalid: \/latencyMs: Expected integer to be greater or equal to 0/);
    expect(reason('no-module')).toMatch(/^connector 'ghost' cannot be loaded: connector module '.\/no\/such\/plugin.js' could not be loaded: Cannot find module/);
    expect(reason('wrong-id')).toBe(`connector 'acme' is not what module '${ACME}' exports: it exports 'acme-core'; set connector.id to 'acme-core'`);
    expect(reason('clash')).toMatch(/^connector 'mock' from module '.\/connectors\/mock\/index.ts' clashes with a built-in connector/);
  });

  it('answers 503 in the envelope dialect for a tenant with invalid options', async () => {
    const res = await raiseLimit(app, 'bad-opts');
    expect(res.statusCode).toBe(503);
    expect(res.json()).toEqual({
      result: null,
      exception: {
        errorCode: 'ERR_503',
        shortMessage: 'Service Unavailable',
        detailMessage: supportDetail(
          "The core-banking connector of tenant 'bad-opts' could not be started; this is a configuration problem on the gateway and retrying will not help until its operator fixes it.",
          res,
        ),
      },
      pagination: null,
    });
  });

  it('answers 503 in the problem dialect for a tenant whose module does not exist', async () => {
    const res = await upgradeCard(app, 'no-module');
    expect(res.statusCode).toBe(503);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json()).toMatchObject({
      status: 503,
      title: 'Service Unavailable',
      detail: expect.stringContaining("The core-banking connector of tenant 'no-module' could not be started"),
    });
    expect((await raiseLimit(app, 'no-module')).statusCode).toBe(503);
  });

  it('answers 503 to a dispute asked of a tenant whose connector cannot start: the capability is not asked of a broken connector', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/v1/transactions/auth_none/disputes',
      headers: await login(app, 'no-module'),
      payload: { reason: 'FRAUD', amount: '1.00', currency: 'EUR' },
    });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({
      status: 503,
      title: 'Service Unavailable',
      detail: supportDetail(
        "The core-banking connector of tenant 'no-module' could not be started; this is a configuration problem on the gateway and retrying will not help until its operator fixes it.",
        res,
      ),
    });
  });

  it('keeps serving the demo tenant', async () => {
    expect((await raiseLimit(app, 'demo')).json()).toEqual({ result: true, exception: null, pagination: null });
    expect((await upgradeCard(app, 'demo')).statusCode).toBe(200);
  });

  it('serves a tenant whose connector is an external module loaded by path, end to end', async () => {
    expect(logs.some((l) => l.msg === 'external connector loaded' && (l as unknown as { connector: string }).connector === 'acme-core')).toBe(true);
    expect((await raiseLimit(app, 'acme', '80000.00')).json()).toEqual({ result: true, exception: null, pagination: null });
    const lower = await raiseLimit(app, 'acme', '10.00');
    expect(lower.statusCode).toBe(400);
    expect(lower.json().exception.detailMessage).toBe('Acme core: lowering is not allowed for this product.');
    const upgraded = await upgradeCard(app, 'acme');
    expect(upgraded.statusCode).toBe(200);
    expect(upgraded.json().result.message).toBe('Card AC-1 upgraded to physical with kit KIT-2001');
    const again = await upgradeCard(app, 'acme');
    expect(again.statusCode).toBe(409);
    expect(again.json().businessCode).toBe('PPCUST_018');
  });

  it('stays ready and lists the degraded tenants with their reasons', async () => {
    const res = await app.inject({ method: 'GET', url: '/health/ready' });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.status).toBe('ready');
    expect(body.checks).toEqual({ store: 'ok', migrations: 'ok' });
    expect(body.degraded.map((d: { tenant: string }) => d.tenant)).toEqual(['bad-opts', 'clash', 'no-module', 'wrong-id']);
    expect(body.degraded[0].reason).toContain('/latencyMs');
  });

  it("counts each tenant's calls of its connector, by the connector's name; a refusal is not a failure", async () => {
    const before = app.cardline.core.health.window('acme', 'acme-core');
    expect((await upgradeCard(app, 'acme')).statusCode).toBe(409);
    expect(app.cardline.core.health.window('acme', 'acme-core')).toMatchObject({ calls: before.calls + 1, failures: before.failures });
    expect(app.cardline.core.health.window('bad-opts', 'mock').calls).toBe(0);
  });

  it('refuses at onboarding what boot would degrade, naming the field', async () => {
    await expect(createTenant(app.cardline, { id: 'late-bad', config: { connector: BROKEN['bad-opts'] } })).rejects.toThrow(
      "Tenant 'late-bad': connector 'mock' options are invalid: /latencyMs:",
    );
    await expect(createTenant(app.cardline, { id: 'late-missing', config: { connector: BROKEN['no-module'] } })).rejects.toThrow(
      "Tenant 'late-missing': connector 'ghost' cannot be loaded",
    );
    await expect(createTenant(app.cardline, { id: 'late-plain', config: { connector: { id: 'acme-core' } } })).rejects.toThrow(
      "connector 'acme-core' is not a built-in connector",
    );
    expect(await app.cardline.tenants.get('late-bad')).toBeNull();
    const ok = await createTenant(app.cardline, { id: 'late-acme', config: { connector: { id: 'acme-core', module: ACME, options: { latencyMs: 1 } } } });
    expect(ok.config.connector).toEqual({ id: 'acme-core', module: ACME, options: { latencyMs: 1 } });
  });
});

describe('connector modules', () => {
  it('loads a definition by relative path and checks its shape', async () => {
    const def = await loadConnectorModule(ACME);
    expect([def.id, def.version]).toEqual(['acme-core', '1.0.0']);
  });

  it('names every problem of a default export that is not a definition', async () => {
    await expect(loadConnectorModule('./test/connectors/fixtures/not-a-connector.ts')).rejects.toThrow(
      'not a connector definition: id must be a lower-case string such as "acme-core"; version must be a non-empty string such as "1.0.0"; optionsSchema must be a TypeBox schema (Type.Object({...})); create must be a function (options, deps) => Connector',
    );
    expect(() => checkDefinition(null, 'x')).toThrow('the default export must be a connector definition');
  });

  it('reports a package that is not installed', async () => {
    await expect(loadConnectorModule('@acme/no-such-cardline-connector')).rejects.toThrow(
      "connector module '@acme/no-such-cardline-connector' could not be loaded: Cannot find package",
    );
  });
});

describe("readiness calls a connector's health()", () => {
  let testDb: TestDb;
  let app: FastifyInstance;

  beforeAll(async () => {
    testDb = await createTestDb();
    app = await buildApp({ config, db: testDb.db, masterKey, ownsDb: false, connectors: [...builtInConnectors, sick] });
    await seedDemo(app.cardline, PASSWORD);
    await createTenant(app.cardline, { id: 'sick', config: { connector: { id: 'sick' } } });
    await app.cardline.users.add('sick', 'admin', 'Admin', PASSWORD);
  });
  afterAll(async () => {
    await app?.close();
    await testDb?.drop();
  });

  it('lists a tenant whose health check fails, and reuses the outcome for a few seconds', async () => {
    const before = probes.count;
    const res = await app.inject({ method: 'GET', url: '/health/ready' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      status: 'ready',
      checks: { store: 'ok', migrations: 'ok' },
      degraded: [{ tenant: 'sick', reason: 'health check failed: core answered 503 on /ping' }],
    });
    expect(probes.count).toBe(before + 1);
    await app.inject({ method: 'GET', url: '/health/ready' });
    expect(probes.count).toBe(before + 1);
  });

  it('a failing health check does not stop business calls', async () => {
    const res = await raiseLimit(app, 'sick');
    expect(res.statusCode).toBe(404);
    expect(res.json().exception.detailMessage).toBe('nothing here');
  });
});
