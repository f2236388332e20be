// The tenant's real-time decision endpoint in POST /v1/authorizations, through a real gateway (PGlite, or PostgreSQL
// with DATABASE_URL) and a loopback endpoint that approves, declines, answers partially, late, garbage, or hangs:
// the configuration and its 400s, the signed request, the stand-in on timeout and error, the late answer's event,
// and one tenant's hanging endpoint leaving another tenant's authorizations to its own endpoint.
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { demoFixtures } from '../../connectors/mock/fixtures.js';
import type { MockCore } from '../../connectors/mock/index.js';
import type { Role } from '../../schemas/common.js';
import { loggerOptions } from '../../src/logging.js';
import { TenantService } from '../../src/services/tenancy/tenants.js';
import { PASSWORD, PROBLEM_BASE, createTestApp, type TestApp } from '../helpers/app.js';
import { startDecisionEndpoint, type DecisionEndpoint } from '../helpers/decision-endpoint.js';
import { validationProblem } from '../helpers/problems.js';

const SECRET = `whsec_${randomBytes(32).toString('base64')}`;
const OTHER_SECRET = `whsec_${randomBytes(24).toString('base64')}`;
const lines: string[] = [];
let t: TestApp;
let ep: DecisionEndpoint;

beforeAll(async () => {
  ep = await startDecisionEndpoint();
  t = await createTestApp({
    env: { LOG_LEVEL: 'trace', CARDLINE_DECISION_CONCURRENCY: '2', CARDLINE_DECISION_LATE_WINDOW_MS: '60000' },
    logger: pino(loggerOptions('trace'), { write: (chunk: string) => void lines.push(chunk) }),
    tenants: [
      { id: 'partial', config: { connector: { id: 'mock', options: { fixtures: 'demo' } }, sandbox: true, authorization: { partialApproval: true } } },
      { id: 'prod', config: { connector: { id: 'mock', options: { fixtures: 'demo' } } } },
    ],
  });
  for (const tenant of ['partial', 'prod']) {
    await t.app.cardline.users.add(tenant, 'admin', 'Admin', PASSWORD);
    await t.app.cardline.users.add(tenant, 'integration', 'API Integration', PASSWORD);
  }
});
afterAll(async () => {
  // The endpoint first: its hanging requests end, and the late answers awaited with them.
  await ep?.close();
  await t?.close();
});

const TENANTS = ['demo', 'demo-b', 'partial', 'prod'];
async function mockCore(tenant: string): Promise<MockCore> {
  return (await t.app.cardline.connectors.forTenant((await t.app.cardline.tenants.get(tenant))!)) as unknown as MockCore;
}

beforeEach(async () => {
  for (const tenant of TENANTS) Object.assign((await mockCore(tenant)).state, demoFixtures());
  await t.db.query(`DELETE FROM authorizations`);
  await t.db.query(`DELETE FROM outbox`);
});

async function call(method: 'GET' | 'PATCH' | 'POST' | 'DELETE', url: string, payload: unknown, role: Role, tenant: string) {
  return t.inject({
    method,
    url,
    headers: { 'X-TENANT-ID': tenant, authorization: `Bearer ${await t.token(role, tenant)}` },
    ...(payload === undefined ? {} : { payload: payload as string }),
  });
}

const patchConfig = (body: unknown, tenant = 'demo') => call('PATCH', '/v1/admin/config', body, 'Admin', tenant);

/** Points the tenant's decision endpoint at `path` of the loopback endpoint. */
async function configure(path: string, extra: Record<string, unknown> = {}, tenant = 'demo'): Promise<string> {
  const url = `${ep.base}${path}`;
  const res = await patchConfig({ authorization: { decision: { url, secret: SECRET, standIn: 'approve', deadlineMs: 3000, ...extra } } }, tenant);
  expect(res.statusCode, res.body).toBe(200);
  return url;
}

const CAFE = { name: 'Cafe Central', id: 'M-1001', mcc: '5814', country: 'PT' };
const ask = (amount: string) => ({ cardId: 'CARD-3001', amount, currency: 'EUR', merchant: CAFE, channel: 'POS', networkReference: 'NET-000123' });
const authorize = (amount: string, tenant = 'demo') => call('POST', '/v1/authorizations', ask(amount), 'API Integration', tenant);

const outstanding = async (tenant = 'demo') => (await mockCore(tenant)).state.entities.get('ENT-1001')!.outstandingMinor;

const events = async (type: string) =>
  (await t.db.query<{ tenant_id: string; aggregate_id: string; payload: Record<string, unknown> }>(`SELECT tenant_id, aggregate_id, payload FROM outbox WHERE type = $1`, [type])).rows;

const CARD_STATE = { step: 'card-state', outcome: 'approved' };
const SPEND = { step: 'spend-controls', outcome: 'skipped', detail: 'no rules' };

const invalidConfiguration = (detail: string) => ({
  type: `${PROBLEM_BASE}/problem-with-message`,
  title: 'Bad Request',
  status: 400,
  message: 'error.http.400',
  detail,
});

describe('authorization.decision in the configuration', () => {
  it('is set by the Admin, read back without its secret, and stored sealed', async () => {
    const url = await configure('/demo/config', { deadlineMs: undefined });
    const read = await call('GET', '/v1/admin/config', undefined, 'Admin', 'demo');
    expect(read.json().result.authorization).toEqual({ decision: { url, deadlineMs: 1000, standIn: 'approve' } });
    expect(read.body).not.toContain(SECRET);
    const stored = await t.db.query<{ config: unknown }>(`SELECT config FROM tenants WHERE tenant_id = 'demo'`);
    const text = JSON.stringify(stored.rows[0]!.config);
    expect(text).not.toContain(SECRET);
    expect((stored.rows[0]!.config as { authorization: { decision: { secret: unknown } } }).authorization.decision.secret).toEqual({ $sealed: expect.any(String) });
    // The operator's view shows it as "***".
    const management = await t.management();
    const tenant = await management.inject({ method: 'GET', url: '/v1/tenants/demo', headers: { authorization: `Bearer ${await t.operatorKey()}` } });
    expect(tenant.json().result.config.authorization.decision.secret).toBe('***');
    // A tool without the master key (the CLI's store commands) loads the tenant without the endpoint it cannot sign for.
    expect((await new TenantService(t.db, 0).get('demo'))!.config.authorization?.decision).toBeUndefined();
    // A patch of the deadline alone keeps url, secret and stand-in; null removes the endpoint.
    expect((await patchConfig({ authorization: { decision: { deadlineMs: 2500 } } })).json().result.authorization).toEqual({ decision: { url, deadlineMs: 2500, standIn: 'approve' } });
    const removed = await patchConfig({ authorization: { decision: null } });
    expect(removed.statusCode).toBe(200);
    expect(removed.json().result.authorization).toBeUndefined();
  });

  it('refuses with a 400 naming the field, changing nothing', async () => {
    const url = await configure('/demo/kept');
    // The field and the rule it broke first; a merge patch's `null` alternative adds its own two lines.
    const patchProblem = (field: string, message: string) =>
      validationProblem('configPatch', [`authorization.decision.${field}`, message], ['authorization.decision', 'TypeMismatch'], ['authorization.decision', 'Invalid']);
    const refusals: [unknown, unknown][] = [
      [{ authorization: { decision: { deadlineMs: 3001 } } }, patchProblem('deadlineMs', 'Max')],
      [{ authorization: { decision: { deadlineMs: 50 } } }, patchProblem('deadlineMs', 'Min')],
      [{ authorization: { decision: { standIn: 'maybe' } } }, patchProblem('standIn', 'Invalid')],
      [{ authorization: { decision: { secret: 'not-a-secret' } } }, patchProblem('secret', 'Pattern')],
      [{ authorization: { decision: { url: 'https://10.1.2.3/decide' } } }, null],
    ];
    for (const [body, problem] of refusals) {
      const res = await patchConfig(body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      if (problem) expect(res.json()).toEqual(problem);
    }
    expect((await patchConfig({ authorization: { decision: { url: 'https://10.1.2.3/decide' } } })).json()).toEqual(
      invalidConfiguration(
        "Tenant 'demo' has an invalid configuration: /authorization/decision/url: 10.1.2.3 resolves to 10.1.2.3, a private address; decision endpoints may only target public addresses",
      ),
    );
    // A production tenant may not use http, loopback or not.
    expect((await patchConfig({ authorization: { decision: { url: `${ep.base}/prod`, secret: SECRET, standIn: 'decline' } } }, 'prod')).json()).toEqual(
      invalidConfiguration(
        "Tenant 'prod' has an invalid configuration: /authorization/decision/url: url must be an https URL (only a sandbox tenant may target loopback over http)",
      ),
    );
    // A new endpoint needs its secret and stand-in.
    await patchConfig({ authorization: { decision: null } });
    expect((await patchConfig({ authorization: { decision: { url } } })).json()).toEqual(
      invalidConfiguration(
        "Tenant 'demo' has an invalid configuration: /authorization/decision/secret: Expected required property; /authorization/decision/standIn: must be one of approve, decline; " +
          '/authorization/decision/secret: Expected string; /authorization/decision/standIn: must be one of approve, decline',
      ),
    );
    // The operator's patch is held to the same policy, in the management listener's dialect.
    const management = await t.management();
    const operatorPatch = await management.inject({
      method: 'PATCH',
      url: '/v1/tenants/prod',
      headers: { authorization: `Bearer ${await t.operatorKey()}` },
      payload: { config: { authorization: { decision: { url: 'https://169.254.169.254/latest', secret: SECRET, standIn: 'approve' } } } },
    });
    expect(operatorPatch.statusCode).toBe(400);
    expect(operatorPatch.json().detail).toBe(
      "Tenant 'prod' has an invalid configuration: /authorization/decision/url: 169.254.169.254 resolves to 169.254.169.254, a linkLocal address; decision endpoints may only target public addresses",
    );
    await configure('/demo/kept');
    const read = await call('GET', '/v1/admin/config', undefined, 'Admin', 'demo');
    expect(read.json().result.authorization).toEqual({ decision: { url, deadlineMs: 3000, standIn: 'approve' } });
  });
});

describe('POST /v1/authorizations with a decision endpoint', () => {
  it('sends a request signed per Standard Webhooks; an approval goes on to the core', async () => {
    await configure('/demo/approve');
    ep.reply('/demo/approve', { json: { approved: true } });
    const res = await authorize('42.50');
    expect(res.statusCode).toBe(201);
    const result = res.json().result;
    expect(result).toMatchObject({ status: 'APPROVED', decidedBy: 'core', approvedAmount: '42.50' });
    expect(result.trail).toEqual([CARD_STATE, SPEND, { step: 'decision-endpoint', outcome: 'approved' }, { step: 'core', outcome: 'approved' }]);
    expect(await outstanding()).toBe(4250n);
    const [seen] = ep.seen('/demo/approve').slice(-1);
    const headers = seen!.headers as Record<string, string>;
    expect(headers['webhook-id']).toBe(result.authorizationId);
    // A real Standard Webhooks client verifies the signature; the body is what the document declares.
    expect(new Webhook(SECRET).verify(seen!.body, headers)).toEqual({
      type: 'authorization.decision',
      authorizationId: result.authorizationId,
      cardId: 'CARD-3001',
      amount: '42.50',
      currency: 'EUR',
      merchant: CAFE,
      channel: 'POS',
      networkReference: 'NET-000123',
      partialApproval: false,
      at: result.at,
      deadline: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
    });
    expect(() => new Webhook(OTHER_SECRET).verify(seen!.body, headers)).toThrow();
  });

  it('a decline stands: the core is not called, the reason is the answer’s or DO_NOT_HONOUR', async () => {
    await configure('/demo/decline');
    ep.reply('/demo/decline', { json: { approved: false, declineReason: 'INSUFFICIENT_CREDIT' } });
    const first = (await authorize('42.50')).json().result;
    expect(first).toMatchObject({ status: 'DECLINED', declineReason: 'INSUFFICIENT_CREDIT', decidedBy: 'decision-endpoint', approvedAmount: '0.00', entityId: null });
    expect(first.trail).toEqual([CARD_STATE, SPEND, { step: 'decision-endpoint', outcome: 'declined', declineReason: 'INSUFFICIENT_CREDIT' }]);
    ep.reply('/demo/decline', { json: { approved: false } });
    const second = (await authorize('42.50')).json().result;
    expect(second).toMatchObject({ status: 'DECLINED', declineReason: 'DO_NOT_HONOUR', decidedBy: 'decision-endpoint' });
    expect(await outstanding()).toBe(0n);
    expect((await mockCore('demo')).state.holds.size).toBe(0);
    expect((await events('authorization.declined')).map((e) => e.payload.declineReason)).toEqual(['INSUFFICIENT_CREDIT', 'DO_NOT_HONOUR']);
  });

  it('the sandbox route asks the endpoint too, answering its decline in the transaction shape', async () => {
    await configure('/demo/sandbox');
    ep.reply('/demo/sandbox', { json: { approved: false } });
    const res = await call('POST', '/v1/sandbox/cards/CARD-3001/authorizations', { amount: '42.50', merchant: { name: 'Cafe Central', mcc: '5814', country: 'PT' }, channel: 'POS' }, 'API Integration', 'demo');
    expect(res.statusCode).toBe(201);
    expect(res.json().result).toMatchObject({ cardId: 'CARD-3001', status: 'DECLINED', declineReason: 'DO_NOT_HONOUR' });
    expect((await events('transaction.declined')).map((e) => e.payload.declineReason)).toEqual(['DO_NOT_HONOUR']);
    expect(await outstanding()).toBe(0n);
  });

  it('a spend control that declines comes first: the endpoint is not asked', async () => {
    await configure('/demo/after-rules');
    ep.reply('/demo/after-rules', { json: { approved: true } });
    const rule = await call('POST', '/v1/admin/auth-rules', { name: 'Cap', mode: 'active', cardId: 'CARD-3001', conditions: [{ attribute: 'amount', operation: 'above', value: '500.00' }] }, 'Admin', 'demo');
    expect(rule.statusCode).toBe(201);
    try {
      const declined = (await authorize('600.00')).json().result;
      expect(declined).toMatchObject({ status: 'DECLINED', declineReason: 'SPEND_CONTROL_DECLINED', decidedBy: 'spend-controls' });
      expect(declined.trail.map((s: { step: string }) => s.step)).toEqual(['card-state', 'spend-controls']);
      expect(ep.seen('/demo/after-rules')).toHaveLength(0);
      const approved = (await authorize('10.00')).json().result;
      expect(approved.trail[2]).toEqual({ step: 'decision-endpoint', outcome: 'approved' });
      expect(ep.seen('/demo/after-rules')).toHaveLength(1);
    } finally {
      await call('DELETE', `/v1/admin/auth-rules/${rule.json().result.ruleId}`, undefined, 'Admin', 'demo');
    }
  });

  it('a partial approval is held where the tenant allows partials, and is an error (the stand-in) where it does not', async () => {
    await configure('/partial', {}, 'partial');
    ep.reply('/partial', { json: { approved: true, approvedAmount: '20.00' } });
    const partial = (await authorize('42.50', 'partial')).json().result;
    expect(partial).toMatchObject({ status: 'APPROVED', amount: '42.50', approvedAmount: '20.00' });
    expect(partial.trail.slice(2)).toEqual([
      { step: 'decision-endpoint', outcome: 'approved', detail: 'partial: 20.00 approved' },
      { step: 'core', outcome: 'approved', detail: 'partial: 20.00 held' },
    ]);
    expect(await outstanding('partial')).toBe(2000n);
    expect(JSON.parse(ep.seen('/partial')[0]!.body).partialApproval).toBe(true);

    await configure('/demo/partial', { standIn: 'decline' });
    ep.reply('/demo/partial', { json: { approved: true, approvedAmount: '20.00' } });
    const refused = (await authorize('42.50')).json().result;
    expect(refused).toMatchObject({ status: 'DECLINED', declineReason: 'ISSUER_UNAVAILABLE', decidedBy: 'decision-endpoint' });
    expect(refused.trail[2]).toEqual({
      step: 'decision-endpoint',
      outcome: 'declined',
      declineReason: 'ISSUER_UNAVAILABLE',
      standIn: 'error',
      detail: 'invalid answer: a partial approval, and the tenant allows none: stand-in decline',
    });
  });

  it('an answer that is not one is an error: the stand-in stands, recorded with why', async () => {
    await configure('/demo/garbage');
    const cases: [Parameters<DecisionEndpoint['reply']>[1], string][] = [
      [{ raw: 'yes please', contentType: 'application/json' }, 'the answer is not JSON'],
      [{ raw: '{"approved":true}', contentType: 'text/plain' }, 'the answer is not application/json'],
      [{ json: { approved: 'yes' } }, 'invalid answer: /approved Expected boolean'],
      [{ json: { approved: true, extra: 1 } }, 'invalid answer: /extra Unexpected property'],
      [{ json: { approved: false, declineReason: 'NO_REASON_WE_KNOW' } }, 'invalid answer: /declineReason Expected union value'],
      [{ json: { approved: true, approvedAmount: '42.51' } }, 'invalid answer: approvedAmount 42.51 is not above 0 and at most 42.50'],
      [{ json: { approved: true, approvedAmount: 42.5 } }, 'invalid answer: /approvedAmount Expected string'],
      [{ json: { approved: true, padding: 'x'.repeat(5000) } }, 'the answer is longer than 4096 bytes'],
      [{ json: { approved: false }, status: 500 }, 'HTTP 500'],
    ];
    for (const [reply, why] of cases) {
      ep.reply('/demo/garbage', reply);
      const result = (await authorize('42.50')).json().result;
      expect(result.status, why).toBe('APPROVED');
      expect(result.trail[2], why).toEqual({ step: 'decision-endpoint', outcome: 'approved', standIn: 'error', detail: `${why}: stand-in approve` });
    }
    // An error is the endpoint's own answer: no timeout event (decision 0353).
    expect(await events('authorization.decision-timed-out')).toEqual([]);
  });

  it('an endpoint that does not answer within the deadline: the stand-in, recorded as a timeout', async () => {
    await configure('/demo/hang', { deadlineMs: 200, standIn: 'decline' });
    ep.reply('/demo/hang', 'hang');
    const result = (await authorize('42.50')).json().result;
    expect(result).toMatchObject({ status: 'DECLINED', declineReason: 'ISSUER_UNAVAILABLE', decidedBy: 'decision-endpoint' });
    expect(result.trail[2]).toEqual({ step: 'decision-endpoint', outcome: 'declined', declineReason: 'ISSUER_UNAVAILABLE', standIn: 'timeout', detail: 'no answer within 200 ms: stand-in decline' });
    const read = await call('GET', `/v1/authorizations/${result.authorizationId}`, undefined, 'Read-Only', 'demo');
    expect(read.json().result.trail[2].standIn).toBe('timeout');
    // An event of record, recorded before the answer: the authorization, the stand-in and the deadline it passed.
    const timedOut = await events('authorization.decision-timed-out');
    expect(timedOut).toEqual([
      {
        tenant_id: 'demo',
        aggregate_id: 'CARD-3001',
        payload: { authorizationId: result.authorizationId, cardId: 'CARD-3001', amount: '42.50', currency: 'EUR', status: 'DECLINED', standIn: 'decline', deadlineMs: 200 },
      },
    ]);
    // Never the endpoint's secret nor its URL, in the event or in its audit record, which comes before the authorization's own.
    const audit = await t.db.query<{ action: string; target: unknown }>(
      `SELECT action, target FROM audit_log WHERE tenant_id = 'demo' AND action IN ('authorization.decision-timed-out', 'authorization.create') ORDER BY seq DESC LIMIT 2`,
    );
    expect(audit.rows.reverse()).toEqual([
      { action: 'authorization.decision-timed-out', target: { authorizationId: result.authorizationId, cardId: 'CARD-3001' } },
      { action: 'authorization.create', target: expect.objectContaining({ cardId: 'CARD-3001' }) },
    ]);
    const outbox = await t.db.query<{ type: string; payload: unknown }>(`SELECT type, payload FROM outbox WHERE tenant_id = 'demo' AND type LIKE 'authorization.%' ORDER BY audit_seq`);
    expect(outbox.rows.map((r) => r.type)).toEqual(['authorization.decision-timed-out', 'authorization.declined']);
    for (const text of [JSON.stringify(outbox.rows), JSON.stringify(audit.rows)]) {
      expect(text).not.toContain(SECRET.slice('whsec_'.length));
      expect(text).not.toContain('/demo/hang');
    }
    // The call still waits for a late answer; the endpoint giving up ends it, with nothing to reconcile.
    ep.drop('/demo/hang');
    await t.app.cardline.decisions.idle();
    expect(await events('authorization.decision-late')).toEqual([]);
  });

  it('a late answer that differs from the stand-in raises authorization.decision-late; one that agrees raises nothing', async () => {
    await configure('/demo/late', { deadlineMs: 200, standIn: 'approve' });
    ep.reply('/demo/late', 'held');
    const agreed = (await authorize('10.00')).json().result;
    expect(agreed.trail[2]).toMatchObject({ outcome: 'approved', standIn: 'timeout' });
    ep.release('/demo/late', { json: { approved: true } });
    await t.app.cardline.decisions.idle();
    expect(await events('authorization.decision-late')).toEqual([]);

    const differed = (await authorize('42.50')).json().result;
    expect(differed).toMatchObject({ status: 'APPROVED', approvedAmount: '42.50' });
    ep.release('/demo/late', { json: { approved: false, declineReason: 'DAILY_LIMIT_EXCEEDED' } });
    await t.app.cardline.decisions.idle();
    expect(await events('authorization.decision-late')).toEqual([
      {
        tenant_id: 'demo',
        aggregate_id: 'CARD-3001',
        payload: {
          authorizationId: differed.authorizationId,
          cardId: 'CARD-3001',
          status: 'APPROVED',
          standIn: 'approve',
          approved: false,
          declineReason: 'DAILY_LIMIT_EXCEEDED',
          approvedAmount: null,
          lateByMs: expect.any(Number),
        },
      },
    ]);
    // On the tenant's trail, as every event of record is.
    const audit = await t.db.query<{ action: string }>(`SELECT action FROM audit_log WHERE tenant_id = 'demo' AND action = 'authorization.decision-late'`);
    expect(audit.rows).toHaveLength(1);
  });

  it("one tenant's hanging endpoint never holds another tenant's authorizations", async () => {
    // Both endpoints on one server (one origin): demo's hangs, demo-b's approves at once.
    await configure('/demo/hangs', { deadlineMs: 3000, standIn: 'decline' });
    await configure('/demo-b/answers', { deadlineMs: 3000, standIn: 'decline' }, 'demo-b');
    ep.reply('/demo/hangs', 'hang');
    ep.reply('/demo-b/answers', { json: { approved: true } });
    const before = ep.seen('/demo/hangs').length;
    // demo's first two authorizations take its two slots (CARDLINE_DECISION_CONCURRENCY=2) and wait on its endpoint.
    const hanging = [authorize('1.00'), authorize('2.00')];
    await ep.waitFor('/demo/hangs', before + 2);
    // While they wait: demo's next one gets its stand-in at once, and demo-b's are decided by demo-b's endpoint.
    const busy = (await authorize('3.00')).json().result;
    expect(busy.trail[2]).toEqual({ step: 'decision-endpoint', outcome: 'declined', declineReason: 'ISSUER_UNAVAILABLE', standIn: 'busy', detail: 'busy: 2 calls in flight: stand-in decline' });
    const others = [];
    // One after the other: demo-b has its own bound of two calls in flight.
    for (const n of [1, 2, 3, 4, 5]) others.push(await authorize(`${n}.00`, 'demo-b'));
    for (const res of others) {
      expect(res.json().result).toMatchObject({ status: 'APPROVED', decidedBy: 'core' });
      expect(res.json().result.trail[2]).toEqual({ step: 'decision-endpoint', outcome: 'approved' });
    }
    expect(ep.seen('/demo-b/answers').length).toBeGreaterThanOrEqual(5);
    // demo's two waited for their deadline and got the stand-in, recorded as timeouts.
    for (const res of await Promise.all(hanging)) {
      expect(res.json().result.trail[2]).toMatchObject({ outcome: 'declined', standIn: 'timeout', detail: 'no answer within 3000 ms: stand-in decline' });
    }
    expect((await events('authorization.approved')).filter((e) => e.tenant_id === 'demo-b')).toHaveLength(5);
    // The two timeouts are events of record; the busy stand-in, which never reached the endpoint, is not (decision 0353).
    const timedOut = await events('authorization.decision-timed-out');
    expect(timedOut.map((e) => [e.tenant_id, e.payload.amount, e.payload.deadlineMs]).sort()).toEqual([
      ['demo', '1.00', 3000],
      ['demo', '2.00', 3000],
    ]);
    // What an operator watches: demo's stand-ins by cause, demo-b's answers.
    const metrics = await t.app.cardline.metrics.text();
    expect(metrics).toMatch(/cardline_decision_calls_total\{outcome="busy",tenant="demo"\} 1\n/);
    expect(metrics).toMatch(/cardline_decision_calls_total\{outcome="approved",tenant="demo-b"\} 5\n/);
    ep.drop('/demo/hangs');
    await t.app.cardline.decisions.idle();
  });

  it('never logs the signing secret', () => {
    const text = lines.join('');
    expect(text.length).toBeGreaterThan(0);
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain(SECRET.slice('whsec_'.length));
  });
});
