// The interface of record, section 7 (and the success rows of 4.1-4.3), one test per row, whole bodies,
// with the demo tenants on each built-in connector: in-process mock, REST to the mock core server, files.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMIT_URL, PROBLEM_BASE, TEST_CONNECTORS, UPGRADE_URL, createTestApp, supportDetail, type TestApp } from '../helpers/app.js';

describe.each(TEST_CONNECTORS)('on the %s connector', (connector) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ connector });
  });
  afterAll(() => t.close());

  const bearer = async (role: Parameters<TestApp['token']>[0] = 'Admin') => ({ authorization: `Bearer ${await t.token(role)}` });

  describe('4.1 obtain token', () => {
    it('answers 200 with an id_token for valid credentials', async () => {
      const res = await t.inject({
        method: 'POST',
        url: '/api/authenticate',
        headers: { TENANT: 'demo' },
        payload: { username: 'admin', password: await t.encrypt('correct-horse-battery') },
      });
      expect(res.statusCode).toBe(200);
      expect(Object.keys(res.json())).toEqual(['id_token']);
      expect(res.json().id_token.split('.')).toHaveLength(3);
    });
  });

  describe('4.2 upgrade credit limit', () => {
    it('answers the success envelope: result true, exception null, pagination null', async () => {
      const res = await t.inject({
        method: 'POST',
        url: LIMIT_URL,
        headers: { TENANT: 'demo', ...(await bearer()) },
        payload: { entityId: 'ENT-1001', amount: '75000.00' },
      });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ result: true, exception: null, pagination: null });
    });
  });

  describe('4.3 upgrade virtual card to physical', () => {
    it('answers result.message and pagination null', async () => {
      const res = await t.inject({
        method: 'PUT',
        url: UPGRADE_URL,
        headers: { 'X-TENANT-ID': 'demo', ...(await bearer()) },
        payload: { kitNo: 'KIT-2001', entityId: 'ENT-1001', communicationAddress: { usePrimaryAddress: true } },
      });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({
        result: { message: 'Card CARD-3001 upgraded to physical with kit KIT-2001' },
        pagination: null,
      });
    });
  });

  describe('7.1 tenant header', () => {
    it('missing TENANT header → 400 tenant.header.missing (general rule)', async () => {
      const res = await t.inject({ method: 'POST', url: '/api/authenticate', payload: { username: 'admin', password: 'x' } });
      expect(res.statusCode).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.json()).toEqual({
        type: `${PROBLEM_BASE}/problem-with-message`,
        title: 'Bad Request',
        status: 400,
        message: 'tenant.header.missing',
        detail: 'Send the TENANT or X-TENANT-ID header with the identifier assigned at onboarding.',
      });
    });

    it('invalid TENANT header → 400 tenant.header.missing (general rule); the detail says the tenant is unknown', async () => {
      const res = await t.inject({ method: 'GET', url: '/api/keys', headers: { TENANT: 'no-such-bank' } });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({
        type: `${PROBLEM_BASE}/problem-with-message`,
        title: 'Bad Request',
        status: 400,
        message: 'tenant.header.missing',
        detail: 'The tenant named by the TENANT or X-TENANT-ID header is unknown; send the identifier assigned at onboarding.',
      });
    });
  });

  describe('7.2 credit-limit operation errors (envelope)', () => {
    it('400 ERR_400 Bad Request: invalid or missing required fields', async () => {
      const res = await t.inject({
        method: 'POST',
        url: LIMIT_URL,
        headers: { TENANT: 'demo', ...(await bearer()) },
        payload: { entityId: 'ENT-1001' },
      });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({
        result: null,
        exception: { errorCode: 'ERR_400', shortMessage: 'Bad Request', detailMessage: 'amount is required' },
        pagination: null,
      });
    });

    it('401 ERR_401 Unauthorized: missing TENANT header', async () => {
      const res = await t.inject({ method: 'POST', url: LIMIT_URL, payload: { entityId: 'ENT-1001', amount: '1.00' } });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({
        result: null,
        exception: {
          errorCode: 'ERR_401',
          shortMessage: 'Unauthorized',
          detailMessage: 'Send the TENANT or X-TENANT-ID header with the identifier assigned at onboarding.',
        },
        pagination: null,
      });
    });

    it('401 ERR_401 Unauthorized: invalid TENANT header', async () => {
      const res = await t.inject({
        method: 'POST',
        url: LIMIT_URL,
        headers: { TENANT: 'unknown-bank', ...(await bearer()) },
        payload: { entityId: 'ENT-1001', amount: '1.00' },
      });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({
        result: null,
        exception: {
          errorCode: 'ERR_401',
          shortMessage: 'Unauthorized',
          detailMessage: 'The tenant named by the TENANT or X-TENANT-ID header is unknown; send the identifier assigned at onboarding.',
        },
        pagination: null,
      });
    });

    it('500 ERR_500 Internal Server Error: unexpected error, no internals', async () => {
      const connector = await t.app.cardline.connectors.forTenant((await t.app.cardline.tenants.get('demo'))!);
      const original = connector.upgradeLimit;
      connector.upgradeLimit = async () => {
        throw new Error('database password=hunter2 at /srv/core.js:12');
      };
      try {
        const res = await t.inject({
          method: 'POST',
          url: LIMIT_URL,
          headers: { TENANT: 'demo', ...(await bearer()) },
          payload: { entityId: 'ENT-1001', amount: '80000.00' },
        });
        expect(res.statusCode).toBe(500);
        expect(res.json()).toEqual({
          result: null,
          exception: { errorCode: 'ERR_500', shortMessage: 'Internal Server Error', detailMessage: supportDetail('An unexpected error occurred.', res) },
          pagination: null,
        });
      } finally {
        connector.upgradeLimit = original;
      }
    });
  });

  describe('7.3 card-upgrade operation errors (problem record)', () => {
    it('400 constraint-violation, Method argument not valid, error.validation, fieldErrors', async () => {
      const res = await t.inject({
        method: 'PUT',
        url: UPGRADE_URL,
        headers: { 'X-TENANT-ID': 'demo', ...(await bearer()) },
        payload: { kitNo: '' },
      });
      expect(res.statusCode).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.json()).toEqual({
        type: `${PROBLEM_BASE}/constraint-violation`,
        title: 'Method argument not valid',
        status: 400,
        message: 'error.validation',
        fieldErrors: [{ field: 'kitNo', message: 'NotBlank', objectName: 'physicalCardUpgradeRequest' }],
      });
    });

    it('400 when kitNo is missing (rule 1)', async () => {
      const res = await t.inject({
        method: 'PUT',
        url: UPGRADE_URL,
        headers: { 'X-TENANT-ID': 'demo', ...(await bearer()) },
        payload: { lockOnUpgrade: true },
      });
      expect(res.statusCode).toBe(400);
      expect(res.json().fieldErrors).toEqual([{ field: 'kitNo', message: 'NotNull', objectName: 'physicalCardUpgradeRequest' }]);
    });

    it('409 problem-with-message, Invalid Kit, error.business, PPCUST_018', async () => {
      const res = await t.inject({
        method: 'PUT',
        url: UPGRADE_URL,
        headers: { 'X-TENANT-ID': 'demo', ...(await bearer()) },
        payload: { kitNo: 'KIT-9999', entityId: 'ENT-1002' },
      });
      expect(res.statusCode).toBe(409);
      expect(res.json()).toEqual({
        type: `${PROBLEM_BASE}/problem-with-message`,
        title: 'Invalid Kit',
        status: 409,
        message: 'error.business',
        detail: 'Kit KIT-9999 is not known to the core.',
        businessCode: 'PPCUST_018',
      });
    });
  });
});
