// POST /credit-line-management/business-entity-manager/fetchLimit: the credit-limit read, in the
// envelope dialect of the credit-line routes (spec 2.6, 7.2). Whole bodies.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { demoFixtures } from '../../connectors/mock/fixtures.js';
import { ROLES, type Role } from '../../schemas/common.js';
import { mockCoreOf, LIMIT_URL, createTestApp, type TestApp } from '../helpers/app.js';

const FETCH_URL = '/credit-line-management/business-entity-manager/fetchLimit';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const mockCore = (tenant = 'demo') => mockCoreOf(t, tenant);

beforeEach(async () => {
  for (const tenant of ['demo', 'demo-b']) Object.assign((await mockCore(tenant)).state, demoFixtures());
});

interface Sent {
  payload?: unknown;
  role?: Role;
  tenant?: string;
  headers?: Record<string, string>;
}

async function fetchLimit({ payload, role = 'Admin', tenant = 'demo', headers }: Sent = {}) {
  return t.inject({
    method: 'POST',
    url: FETCH_URL,
    headers: headers ?? { TENANT: tenant, authorization: `Bearer ${await t.token(role, tenant)}` },
    ...(payload === undefined ? {} : { payload: payload as string }),
  });
}

const failure = (status: number, shortMessage: string, detailMessage: string) => ({
  result: null,
  exception: { errorCode: `ERR_${status}`, shortMessage, detailMessage },
  pagination: null,
});

describe('fetchLimit', () => {
  it.each(ROLES)('%s reads the demo limit of ENT-1001: 50000.00, as a string', async (role) => {
    const res = await fetchLimit({ role, payload: { entityId: 'ENT-1001' } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json()).toEqual({
      result: { entityId: 'ENT-1001', creditLimit: '50000.00', outstanding: '0.00', availableCredit: '50000.00' },
      exception: null,
      pagination: null,
    });
  });

  it('reads what upgradeLimit set, exactly, and only on that tenant', async () => {
    const up = await t.inject({
      method: 'POST',
      url: LIMIT_URL,
      headers: { TENANT: 'demo', authorization: `Bearer ${await t.token('API Integration')}` },
      payload: { entityId: 'ENT-1002', amount: '75000.5' },
    });
    expect(up.statusCode).toBe(200);
    expect((await fetchLimit({ payload: { entityId: 'ENT-1002' } })).json()).toEqual({
      result: { entityId: 'ENT-1002', creditLimit: '75000.50', outstanding: '0.00', availableCredit: '75000.50' },
      exception: null,
      pagination: null,
    });
    expect((await fetchLimit({ tenant: 'demo-b', payload: { entityId: 'ENT-1002' } })).json().result).toEqual({
      entityId: 'ENT-1002',
      creditLimit: '50000.00',
      outstanding: '0.00',
      availableCredit: '50000.00',
    });
  });

  it('an unknown entity → 404 ERR_404', async () => {
    const res = await fetchLimit({ payload: { entityId: 'ENT-9999' } });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual(failure(404, 'Not Found', 'Entity ENT-9999 does not exist.'));
  });

  it.each([
    ['no entityId', {}, 'entityId is required'],
    ['entityId as a number', { entityId: 1001 }, 'entityId has the wrong type'],
    ['an empty entityId', { entityId: '' }, 'entityId must not be empty'],
    ['an entityId of 65 characters', { entityId: 'E'.repeat(65) }, 'entityId has the wrong length'],
    ['an unknown field', { entityId: 'ENT-1001', amount: '1.00' }, 'amount is not a known field'],
  ])('%s → 400 ERR_400', async (_, payload, detailMessage) => {
    const res = await fetchLimit({ payload });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(failure(400, 'Bad Request', detailMessage));
  });

  it('no body → 400 ERR_400', async () => {
    const res = await fetchLimit();
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(failure(400, 'Bad Request', 'body has the wrong type'));
  });

  it('no tenant header → 401 ERR_401 (spec 7.2)', async () => {
    const res = await fetchLimit({ payload: { entityId: 'ENT-1001' }, headers: { authorization: `Bearer ${await t.token()}` } });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual(
      failure(401, 'Unauthorized', 'Send the TENANT or X-TENANT-ID header with the identifier assigned at onboarding.'),
    );
  });

  it('no token → 401 ERR_401', async () => {
    const res = await fetchLimit({ payload: { entityId: 'ENT-1001' }, headers: { TENANT: 'demo' } });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual(
      failure(401, 'Unauthorized', 'A valid bearer token for this tenant is required; obtain one from POST /api/authenticate.'),
    );
  });

  it('a token of another tenant → 401 ERR_401', async () => {
    const res = await fetchLimit({
      payload: { entityId: 'ENT-1001' },
      headers: { TENANT: 'demo', authorization: `Bearer ${await t.token('Admin', 'demo-b')}` },
    });
    expect(res.statusCode).toBe(401);
  });

  it('the read is in the audit trail', async () => {
    await fetchLimit({ role: 'Read-Only', payload: { entityId: 'ENT-1003' } });
    const r = await t.db.query<{ actor: string; action: string; target: unknown; outcome: string }>(
      `SELECT actor, action, target, outcome FROM audit_log WHERE tenant_id = 'demo' AND action = 'credit-limit.read' AND target->>'entityId' = 'ENT-1003'`,
    );
    expect(r.rows).toEqual([{ actor: 'viewer', action: 'credit-limit.read', target: { entityId: 'ENT-1003' }, outcome: 'succeeded' }]);
  });
});
