// Reports from the events of record: JSON and CSV bodies, formula cells neutralised, days of the tenant's
// time zone, the range rules, and who made each credit-limit change (from the audit record).
import { uuidv7 } from 'uuidv7';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { demoFixtures } from '../../connectors/mock/fixtures.js';
import type { MockCore } from '../../connectors/mock/index.js';
import type { Role } from '../../schemas/common.js';
import { LIMIT_URL, PASSWORD, createTestApp, type TestApp } from '../helpers/app.js';
import { validationProblem } from '../helpers/problems.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({
    tenants: [{ id: 'kolkata', config: { connector: { id: 'mock', options: { fixtures: 'demo' } }, timeZone: 'Asia/Kolkata' } }],
  });
  await t.app.cardline.users.add('kolkata', 'viewer', 'Read-Only', PASSWORD);
});
afterAll(() => t.close());

beforeEach(async () => {
  const core = (await t.app.cardline.connectors.forTenant((await t.app.cardline.tenants.get('demo'))!)) as unknown as MockCore;
  Object.assign(core.state, demoFixtures());
  await t.db.query('DELETE FROM outbox');
});

async function call(method: 'GET' | 'POST', url: string, { payload, role = 'Admin', tenant = 'demo', accept }: { payload?: unknown; role?: Role; tenant?: string; accept?: string } = {}) {
  return t.inject({
    method,
    url,
    headers: { TENANT: tenant, authorization: `Bearer ${await t.token(role, tenant)}`, ...(accept ? { accept } : {}) },
    ...(payload === undefined ? {} : { payload: payload as string }),
  });
}

const today = () => new Date().toISOString().slice(0, 10);
const ISO = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
const CAFE = { name: 'Cafe Central', mcc: '5814', country: 'PT' };
/** A day of host decisions only: no clearing, reversal or refund. */
const NO_CHANGES = { clearings: 0, clearedAmount: '0.00', reversals: 0, reversedAmount: '0.00', refunds: 0, refundedAmount: '0.00' };
const REGISTRATION = {
  name: 'Oficina Lda',
  type: 'BUSINESS',
  contact: { email: 'finance@oficina.example', mobile: '+351912345678' },
  primaryAddress: { address1: '5 Rua Augusta', city: 'Lisbon', state: 'Lisboa', country: 'PT', pin: '1100-048' },
  creditLimit: '25000.00',
};

/** A day of the gateway's life: a registration, a limit raised, two approvals and a decline. */
async function aDay() {
  expect((await call('POST', '/v1/entities', { payload: REGISTRATION, role: 'Operations' })).statusCode).toBe(201);
  expect((await call('POST', LIMIT_URL, { payload: { entityId: 'ENT-1001', amount: '75000.00' }, role: 'API Integration' })).statusCode).toBe(200);
  for (const amount of ['42.50', '7.25', '90000.00']) {
    expect((await call('POST', '/v1/sandbox/cards/CARD-3001/authorizations', { payload: { amount, merchant: CAFE, channel: 'POS' }, role: 'Operations' })).statusCode).toBe(201);
  }
}

describe('the three reports, JSON', () => {
  it('activity: events per day and type', async () => {
    await aDay();
    const res = await call('GET', `/v1/reports/activity?from=${today()}&to=${today()}`, { role: 'Read-Only' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.json()).toEqual({
      result: [
        { date: today(), eventType: 'credit-limit.upgraded', count: 1 },
        { date: today(), eventType: 'entity.registered', count: 1 },
        { date: today(), eventType: 'transaction.approved', count: 2 },
        { date: today(), eventType: 'transaction.declined', count: 1 },
      ],
      pagination: null,
    });
  });

  it('credit-limit changes: the registration and the raise, with who made them', async () => {
    await aDay();
    const res = await call('GET', `/v1/reports/credit-limit-changes?from=${today()}&to=${today()}`);
    expect(res.json()).toEqual({
      result: [
        { at: ISO, entityId: 'ENT-1004', previousLimit: null, newLimit: '25000.00', actor: 'ops' },
        { at: ISO, entityId: 'ENT-1001', previousLimit: '50000.00', newLimit: '75000.00', actor: 'integration' },
      ],
      pagination: null,
    });
  });

  it('transactions: approved, declined and the approved amount per day', async () => {
    await aDay();
    const res = await call('GET', `/v1/reports/transactions?from=${today()}&to=${today()}`, { role: 'API Integration' });
    expect(res.json()).toEqual({ result: [{ date: today(), approved: 2, declined: 1, approvedAmount: '49.75', ...NO_CHANGES }], pagination: null });
  });

  it('a range without events is empty', async () => {
    const res = await call('GET', '/v1/reports/transactions?from=2020-01-01&to=2020-12-31');
    expect(res.json()).toEqual({ result: [], pagination: null });
  });
});

describe('CSV with Accept: text/csv', () => {
  it('RFC 4180: a header row, CRLF, one row a record', async () => {
    await aDay();
    const res = await call('GET', `/v1/reports/transactions?from=${today()}&to=${today()}`, { accept: 'text/csv' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.body).toBe(`date,approved,declined,approvedAmount,clearings,clearedAmount,reversals,reversedAmount,refunds,refundedAmount\r\n${today()},2,1,49.75,0,0.00,0,0.00,0,0.00\r\n`);
    const activity = await call('GET', `/v1/reports/activity?from=${today()}&to=${today()}`, { accept: 'text/csv' });
    expect(activity.body.split('\r\n')).toEqual([
      'date,eventType,count',
      `${today()},credit-limit.upgraded,1`,
      `${today()},entity.registered,1`,
      `${today()},transaction.approved,2`,
      `${today()},transaction.declined,1`,
      '',
    ]);
  });

  it('a cell that a spreadsheet would run as a formula is neutralised with a quote, and quoted as RFC 4180 requires', async () => {
    const entityId = '=HYPERLINK("http://evil.example","x")';
    expect((await call('POST', '/v1/entities', { payload: { ...REGISTRATION, entityId }, role: 'Operations' })).statusCode).toBe(201);
    expect((await call('POST', '/v1/entities', { payload: { ...REGISTRATION, entityId: '@SUM(A1)' }, role: 'Operations' })).statusCode).toBe(201);
    const res = await call('GET', `/v1/reports/credit-limit-changes?from=${today()}&to=${today()}`, { accept: 'text/csv' });
    const lines = res.body.split('\r\n');
    expect(lines[0]).toBe('at,entityId,previousLimit,newLimit,actor');
    expect(lines[1]).toMatch(/^\d{4}-\d{2}-\d{2}T[\d:.]+Z,"'=HYPERLINK\(""http:\/\/evil\.example"",""x""\)",,25000\.00,ops$/);
    expect(lines[2]).toMatch(/^\d{4}-\d{2}-\d{2}T[\d:.]+Z,'@SUM\(A1\),,25000\.00,ops$/);
    // The JSON answer keeps the value as it is: neutralising is for spreadsheets.
    const json = await call('GET', `/v1/reports/credit-limit-changes?from=${today()}&to=${today()}`);
    expect(json.json().result[0].entityId).toBe(entityId);
  });

  it.each([
    ['application/json', false],
    ['*/*', false],
    ['text/csv;q=0.5, application/json', false],
    ['application/json;q=0.4, text/csv', true],
    ['text/*', true],
  ])('Accept: %s → CSV: %s', async (accept, csv) => {
    const res = await call('GET', '/v1/reports/activity?from=2020-01-01&to=2020-01-01', { accept });
    expect(res.headers['content-type']).toBe(csv ? 'text/csv; charset=utf-8' : 'application/json; charset=utf-8');
  });
});

describe("days are the tenant's time zone's", () => {
  /** An event of record at an exact instant, as the audit writer would have committed it. */
  async function eventAt(tenant: string, at: string, type = 'transaction.approved', amount = '10.00') {
    const payload = { transactionId: `TXN-${at}`, cardId: 'CARD-3001', entityId: 'ENT-1001', amount, channel: 'POS', mcc: '5814', merchantCountry: 'IN', international: false, status: 'APPROVED', declineReason: null };
    await t.db.query(
      `INSERT INTO outbox (tenant_id, id, audit_seq, type, aggregate_id, payload, request_id, created_at) VALUES ($1, $2, 0, $3, 'CARD-3001', $4::jsonb, 'r', $5::timestamptz)`,
      [tenant, uuidv7(), type, JSON.stringify(payload), at],
    );
  }

  it('Asia/Kolkata (UTC+05:30): 18:29:59Z is the 9th there, 18:30:00Z the 10th; UTC puts both on the 9th', async () => {
    for (const tenant of ['kolkata', 'demo']) {
      await eventAt(tenant, '2026-03-09T18:29:59.999Z', 'transaction.approved', '10.00');
      await eventAt(tenant, '2026-03-09T18:30:00.000Z', 'transaction.approved', '2.50');
    }
    const kolkata = await call('GET', '/v1/reports/transactions?from=2026-03-09&to=2026-03-10', { tenant: 'kolkata', role: 'Read-Only' });
    expect(kolkata.json().result).toEqual([
      { date: '2026-03-09', approved: 1, declined: 0, approvedAmount: '10.00', ...NO_CHANGES },
      { date: '2026-03-10', approved: 1, declined: 0, approvedAmount: '2.50', ...NO_CHANGES },
    ]);
    const only10th = await call('GET', '/v1/reports/activity?from=2026-03-10&to=2026-03-10', { tenant: 'kolkata', role: 'Read-Only' });
    expect(only10th.json().result).toEqual([{ date: '2026-03-10', eventType: 'transaction.approved', count: 1 }]);
    const utc = await call('GET', '/v1/reports/transactions?from=2026-03-09&to=2026-03-09');
    expect(utc.json().result).toEqual([{ date: '2026-03-09', approved: 2, declined: 0, approvedAmount: '12.50', ...NO_CHANGES }]);
  });
});

describe('the range', () => {
  it('one day too long: the field error names the maximum (issue 20, point 11), in the usual record', async () => {
    const res = await call('GET', '/v1/reports/activity?from=2025-01-01&to=2026-01-02');
    expect(res.statusCode).toBe(400);
    expect(res.body).toBe(
      '{"type":"https://www.jhipster.tech/problem/constraint-violation","title":"Method argument not valid","status":400,' +
        '"message":"error.validation","fieldErrors":[{"field":"to","message":"Size: at most 366 days","objectName":"reportQuery"}]}',
    );
  });

  it('366 days, both counted, is allowed (a leap year)', async () => {
    for (const report of ['activity', 'credit-limit-changes', 'transactions']) {
      expect((await call('GET', `/v1/reports/${report}?from=2024-01-01&to=2024-12-31`)).statusCode).toBe(200);
    }
  });

  it.each([
    ['367 days', '?from=2025-01-01&to=2026-01-02', [['to', 'Size: at most 366 days']]],
    ['from after to', '?from=2026-11-23&to=2026-11-22', [['to', 'Invalid']]],
    ['no from', '?to=2026-11-22', [['from', 'NotNull']]],
    ['a date-time', '?from=2026-11-22T00:00:00Z&to=2026-11-23', [['from', 'Pattern']]],
    ['a day that does not exist', '?from=2026-02-29&to=2026-03-01', [['from', 'Invalid']]],
    ['an unknown parameter', '?from=2026-11-22&to=2026-11-23&format=csv', [['format', 'UnknownProperty']]],
  ])('%s → 400 with field errors, on each report', async (_, query, fields) => {
    for (const report of ['activity', 'credit-limit-changes', 'transactions']) {
      const res = await call('GET', `/v1/reports/${report}${query}`, { accept: 'text/csv' });
      expect(res.statusCode).toBe(400);
      expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
      expect(res.json()).toEqual(validationProblem('reportQuery', ...(fields as [string, string][])));
    }
  });
});
