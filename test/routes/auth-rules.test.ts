// Spend controls as data through a real gateway (PGlite, or PostgreSQL with DATABASE_URL): the rules' routes and
// versions, bad input refused whole with nothing changed, the pipeline's spend-control step (first decline wins,
// the declining rule on the trail, shadow versions recorded and never enforced), velocity limits counted without
// the history and never passed by parallel authorizations, and backtests that change nothing.
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConnectorUnavailableError } from '../../connectors/contract.js';
import { demoFixtures, virtualCard } from '../../connectors/mock/fixtures.js';
import type { MockCore } from '../../connectors/mock/index.js';
import type { Role } from '../../schemas/common.js';
import { mockCoreOf, PASSWORD, PROBLEM_BASE, createTestApp, type TestApp } from '../helpers/app.js';
import { businessProblem, validationProblem } from '../helpers/problems.js';
import { SpendControls } from '../../src/services/transactions/spend-controls.js';

const ZONE = 'Asia/Kolkata';
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({
    tenants: [{ id: 'partial', config: { connector: { id: 'mock', options: { fixtures: 'demo' } }, currency: 'GBP', timeZone: ZONE, authorization: { partialApproval: true } } }],
  });
  for (const [u, role] of [['admin', 'Admin'], ['integration', 'API Integration']] as const) await t.app.cardline.users.add('partial', u, role, PASSWORD);
});
afterAll(() => t.close());

const mockCore = (tenant = 'demo') => mockCoreOf(t, tenant);

beforeEach(async () => {
  for (const tenant of ['demo', 'partial']) Object.assign((await mockCore(tenant)).state, demoFixtures());
  await t.db.query(`DELETE FROM authorizations`);
  await t.db.query(`DELETE FROM auth_rules`);
});

async function call(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown, role: Role = 'Admin', tenant = 'demo') {
  return t.inject({
    method,
    url,
    headers: { 'X-TENANT-ID': tenant, authorization: `Bearer ${await t.token(role, tenant)}` },
    ...(payload === undefined ? {} : { payload: payload as string }),
  });
}

const CAFE = { name: 'Cafe Central', id: 'M-1001', mcc: '5814', country: 'PT' };
const CASINO = { name: 'Lucky Star', id: 'M-7995', mcc: '7995', country: 'MT' };
const ask = (amount: string, extra: Record<string, unknown> = {}) => ({ cardId: 'CARD-3001', amount, currency: 'EUR', merchant: CAFE, channel: 'POS', ...extra });
const authorize = (body: unknown, tenant = 'demo') => call('POST', '/v1/authorizations', body, 'API Integration', tenant);

async function rule(body: Record<string, unknown>, tenant = 'demo'): Promise<string> {
  const res = await call('POST', '/v1/admin/auth-rules', body, 'Admin', tenant);
  expect(res.statusCode, res.body).toBe(201);
  return res.json().result.ruleId as string;
}

const count = async (table: string) => (await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)).rows[0]!.n;
const ISO = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
const RULE_ID = expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/);
const NO_GAMBLING = { attribute: 'mcc' as const, operation: 'is-one-of' as const, values: ['7995', '7801'] };

describe('the rules: create, read, list, versions, promote, remove', () => {
  it('creates a card rule (shadow by default) and reads it back with its versions', async () => {
    const res = await call('POST', '/v1/admin/auth-rules', { name: 'No gambling', cardId: 'CARD-3001', conditions: [NO_GAMBLING] });
    expect(res.statusCode).toBe(201);
    const view = {
      ruleId: RULE_ID,
      name: 'No gambling',
      level: 'card',
      cardId: 'CARD-3001',
      entityId: null,
      kind: 'conditions',
      activeVersion: null,
      shadowVersion: 1,
      active: null,
      shadow: { conditions: [NO_GAMBLING] },
      createdAt: ISO,
      updatedAt: ISO,
    };
    expect(res.json()).toEqual({ result: view, pagination: null });
    const id = res.json().result.ruleId as string;
    const read = await call('GET', `/v1/admin/auth-rules/${id}`);
    expect(read.json()).toEqual({
      result: { ...view, versions: [{ version: 1, mode: 'shadow', definition: { conditions: [NO_GAMBLING] }, createdBy: 'admin', createdAt: ISO }] },
      pagination: null,
    });
    const list = await call('GET', '/v1/admin/auth-rules?cardId=CARD-3001');
    expect(list.json()).toEqual({ result: [view], pagination: { nextCursor: null } });
    expect((await call('GET', '/v1/admin/auth-rules?cardId=CARD-3002')).json().result).toEqual([]);
  });

  it('a new definition is a shadow version beside the active one; promote enforces it and retires the old one', async () => {
    const id = await rule({ name: 'Cap', mode: 'active', conditions: [{ attribute: 'amount', operation: 'above', value: '500.00' }] });
    const patched = await call('PATCH', `/v1/admin/auth-rules/${id}`, { conditions: [{ attribute: 'amount', operation: 'above', value: '200.00' }] });
    expect(patched.statusCode).toBe(200);
    expect(patched.json().result).toMatchObject({ activeVersion: 1, shadowVersion: 2, shadow: { conditions: [{ attribute: 'amount', operation: 'above', value: '200.00' }] } });
    // Version 1 enforced, version 2 only recorded: 300.00 passes, the trail says version 2 would have declined it.
    const passed = await authorize(ask('300.00'));
    expect(passed.json().result.status).toBe('APPROVED');
    expect(passed.json().result.trail[1]).toEqual({
      step: 'spend-controls',
      outcome: 'approved',
      evaluated: 2,
      rules: [{ ruleId: id, version: 2, mode: 'shadow', outcome: 'declined', declineReason: 'SPEND_CONTROL_DECLINED' }],
    });
    const promoted = await call('POST', `/v1/admin/auth-rules/${id}/promote`);
    expect(promoted.json().result).toMatchObject({ activeVersion: 2, shadowVersion: null, shadow: null });
    expect((await authorize(ask('300.00'))).json().result).toMatchObject({ status: 'DECLINED', declineReason: 'SPEND_CONTROL_DECLINED', decidedBy: 'spend-controls' });
    const versions = (await call('GET', `/v1/admin/auth-rules/${id}`)).json().result.versions as { version: number; mode: string }[];
    expect(versions.map((v) => [v.version, v.mode])).toEqual([[1, 'retired'], [2, 'active']]);
    // Nothing left to promote: 409, nothing changed.
    const again = await call('POST', `/v1/admin/auth-rules/${id}/promote`);
    expect(again.statusCode).toBe(409);
    expect(again.json()).toEqual(businessProblem('No Shadow Version', 'AUTH_RULE_NO_SHADOW', `Rule ${id} has no shadow version to promote.`));
    // `mode: shadow` alone stops enforcing it; `mode: active` alone enforces it again.
    expect((await call('PATCH', `/v1/admin/auth-rules/${id}`, { mode: 'shadow' })).json().result).toMatchObject({ activeVersion: null, shadowVersion: 2 });
    expect((await authorize(ask('300.00'))).json().result.status).toBe('APPROVED');
    expect((await call('PATCH', `/v1/admin/auth-rules/${id}`, { mode: 'active', name: 'Cap 200' })).json().result).toMatchObject({ name: 'Cap 200', activeVersion: 2, shadowVersion: null });
  });

  it('removes a rule with its versions and counters; an unknown rule is a 404', async () => {
    const id = await rule({ name: 'Velocity', mode: 'active', velocity: { scope: 'card', window: '24h', limitCount: 5 } });
    await authorize(ask('1.00'));
    expect(await count('auth_rule_counters')).toBe(1);
    const res = await call('DELETE', `/v1/admin/auth-rules/${id}`);
    expect(res.json()).toEqual({ result: { message: `Auth rule ${id} removed` }, pagination: null });
    expect([await count('auth_rules'), await count('auth_rule_versions'), await count('auth_rule_counters')]).toEqual([0, 0, 0]);
    const gone = await call('GET', `/v1/admin/auth-rules/${id}`);
    expect(gone.statusCode).toBe(404);
    expect(gone.json()).toEqual({
      type: `${PROBLEM_BASE}/problem-with-message`,
      title: 'Not Found',
      status: 404,
      message: 'error.http.404',
      detail: `This tenant has no auth rule '${id}'.`,
    });
    expect((await call('DELETE', `/v1/admin/auth-rules/${id}`)).statusCode).toBe(404);
  });

  it("is the tenant Admin's: other roles are refused, another tenant does not see the rule", async () => {
    const id = await rule({ name: 'Mine', conditions: [NO_GAMBLING] });
    for (const role of ['Operations', 'API Integration', 'Read-Only'] as const) expect((await call('GET', '/v1/admin/auth-rules', undefined, role)).statusCode).toBe(403);
    expect((await call('GET', `/v1/admin/auth-rules/${id}`, undefined, 'Admin', 'partial')).statusCode).toBe(404);
    expect((await call('GET', '/v1/admin/auth-rules', undefined, 'Admin', 'partial')).json().result).toEqual([]);
  });
});

describe('bad input: a 400 naming the field (409 past the bound), nothing changed', () => {
  const cond = (c: Record<string, unknown>) => ({ name: 'Bad', conditions: [c] });
  it.each([
    ['an unknown attribute', cond({ attribute: 'cardholderAge', operation: 'above', value: '18' }), ['conditions.0.attribute', 'Invalid']],
    ['an unknown operation', cond({ attribute: 'mcc', operation: 'equals', values: ['5814'] }), ['conditions.0.operation', 'Invalid']],
    ['an operation the attribute does not take', cond({ attribute: 'merchantCountry', operation: 'above', value: 'PT' }), ['conditions.0.operation', 'Invalid']],
    ['a malformed MCC', cond({ attribute: 'mcc', operation: 'is-one-of', values: ['5814', '58A4'] }), ['conditions.0.values.1', 'Pattern']],
    ['an MCC of five digits to compare with', cond({ attribute: 'mcc', operation: 'above', value: '58140' }), ['conditions.0.value', 'Pattern']],
    ['a float amount', cond({ attribute: 'amount', operation: 'above', value: 10.5 }), ['conditions.0.value', 'TypeMismatch']],
    ['an amount with three decimals', cond({ attribute: 'amount', operation: 'above', value: '10.505' }), ['conditions.0.value', 'DecimalAmount']],
    ['a list where one value is asked for', cond({ attribute: 'amount', operation: 'below', values: ['10.00'] }), ['conditions.0.values', 'UnknownProperty']],
    ['no value', cond({ attribute: 'channel', operation: 'is-one-of' }), ['conditions.0.values', 'NotNull']],
    ['an unknown channel', cond({ attribute: 'channel', operation: 'is-one-of', values: ['MAIL'] }), ['conditions.0.values.0', 'Invalid']],
    ['a time of day out of range', cond({ attribute: 'localTime', operation: 'above', value: '24:00' }), ['conditions.0.value', 'Pattern']],
    ['a malformed time range', cond({ attribute: 'localTime', operation: 'is-one-of', values: ['22:00'] }), ['conditions.0.values.0', 'Pattern']],
    ['an unknown window', { name: 'Bad', velocity: { scope: 'card', window: '2h', limitCount: 1 } }, ['velocity.window', 'Invalid']],
    ['an unknown velocity scope', { name: 'Bad', velocity: { scope: 'merchant', window: '1h', limitCount: 1 } }, ['velocity.scope', 'Invalid']],
    ['a float limit amount', { name: 'Bad', velocity: { scope: 'card', window: '1h', limitAmount: 100.5 } }, ['velocity.limitAmount', 'TypeMismatch']],
    ['a velocity limit with no limit', { name: 'Bad', velocity: { scope: 'card', window: '1h' } }, ['velocity.limitAmount', 'NotNull']],
    ['a malformed MCC in a filter', { name: 'Bad', velocity: { scope: 'card', window: '1h', limitCount: 1, filters: [{ attribute: 'mcc', operation: 'is-one-of', values: ['1'] }] } }, ['velocity.filters.0.values.0', 'Pattern']],
    ['both conditions and velocity', { name: 'Bad', conditions: [NO_GAMBLING], velocity: { scope: 'card', window: '1h', limitCount: 1 } }, ['velocity', 'Invalid']],
    ['neither conditions nor velocity', { name: 'Bad' }, ['conditions', 'NotNull']],
    ['a card and an entity', { name: 'Bad', cardId: 'CARD-3001', entityId: 'ENT-1001', conditions: [NO_GAMBLING] }, ['entityId', 'Invalid']],
    ['an unknown field', { name: 'Bad', conditions: [NO_GAMBLING], priority: 1 }, ['priority', 'UnknownProperty']],
    ['an unknown decline reason', { name: 'Bad', conditions: [NO_GAMBLING], declineReason: 'NOPE' }, ['declineReason', 'Invalid']],
  ])('refuses %s', async (_what, body, [field, message]) => {
    const res = await call('POST', '/v1/admin/auth-rules', body);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(validationProblem('authRuleRequest', [field!, message!]));
    expect(await count('auth_rules')).toBe(0);
  });

  it('a PATCH that changes the kind or breaks the grammar is refused, the rule unchanged', async () => {
    const id = await rule({ name: 'Kind', conditions: [NO_GAMBLING] });
    const kind = await call('PATCH', `/v1/admin/auth-rules/${id}`, { velocity: { scope: 'card', window: '1h', limitCount: 1 } });
    expect(kind.statusCode).toBe(400);
    expect(kind.json()).toEqual(validationProblem('authRulePatch', ['velocity', 'Invalid']));
    const bad = await call('PATCH', `/v1/admin/auth-rules/${id}`, { conditions: [{ attribute: 'mcc', operation: 'is-one-of', values: ['99999'] }] });
    expect(bad.json()).toEqual(validationProblem('authRulePatch', ['conditions.0.values.0', 'Pattern']));
    expect(await count('auth_rule_versions')).toBe(1);
  });

  it(`refuses a card's 51st rule (a thousand are never reached): 409 AUTH_RULE_LIMIT, nothing added`, async () => {
    for (let i = 0; i < 50; i++) {
      await t.app.cardline.authRules.create('demo', { name: `r${i}`, cardId: 'CARD-3001', conditions: [NO_GAMBLING] }, 'admin');
    }
    const res = await call('POST', '/v1/admin/auth-rules', { name: 'one too many', cardId: 'CARD-3001', conditions: [NO_GAMBLING] });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual(
      businessProblem('Auth Rule Limit', 'AUTH_RULE_LIMIT', 'Card CARD-3001 has 50 rules already, the most one target may have; remove one first.'),
    );
    expect(await count('auth_rules')).toBe(50);
    // Another card is another target.
    expect((await call('POST', '/v1/admin/auth-rules', { name: 'other card', cardId: 'CARD-3002', conditions: [NO_GAMBLING] })).statusCode).toBe(201);
  });
});

describe('the spend-control step of the pipeline', () => {
  it('with no rule it is skipped, as before', async () => {
    const res = await authorize(ask('10.00'));
    expect(res.json().result.trail[1]).toEqual({ step: 'spend-controls', outcome: 'skipped', detail: 'no rules' });
  });

  it('an active rule declines: named on the trail, the reason from the catalogue, the later steps not called', async () => {
    const id = await rule({ name: 'No gambling', cardId: 'CARD-3001', mode: 'active', declineReason: 'CHANNEL_DISABLED', conditions: [NO_GAMBLING] });
    const res = await authorize(ask('25.00', { merchant: CASINO }));
    expect(res.statusCode).toBe(201);
    expect(res.json().result).toMatchObject({
      status: 'DECLINED',
      declineReason: 'CHANNEL_DISABLED',
      decidedBy: 'spend-controls',
      approvedAmount: '0.00',
      trail: [
        { step: 'card-state', outcome: 'approved' },
        {
          step: 'spend-controls',
          outcome: 'declined',
          declineReason: 'CHANNEL_DISABLED',
          ruleId: id,
          detail: "declined by rule 'No gambling' (version 1)",
          evaluated: 1,
          rules: [{ ruleId: id, version: 1, mode: 'active', outcome: 'declined', declineReason: 'CHANNEL_DISABLED' }],
        },
      ],
    });
    expect((await mockCore()).state.holds.size).toBe(0);
    // The other merchant passes, and the rule of another card does not apply.
    expect((await authorize(ask('25.00'))).json().result.status).toBe('APPROVED');
    expect((await authorize(ask('25.00', { cardId: 'CARD-3002', merchant: CASINO }))).json().result.status).toBe('APPROVED');
  });

  it('the first decline wins: the older of two declining rules is named; shadow versions are recorded, never enforced', async () => {
    const shadow = await rule({ name: 'Shadow: not in MT', conditions: [{ attribute: 'merchantCountry', operation: 'is-not-one-of', values: ['PT', 'ES'] }] });
    const first = await rule({ name: 'ECOM gambling', mode: 'active', conditions: [NO_GAMBLING, { attribute: 'channel', operation: 'is-one-of', values: ['ECOM'] }] });
    const second = await rule({ name: 'Big', mode: 'active', conditions: [{ attribute: 'amount', operation: 'above', value: '100.00' }] });
    const res = await authorize(ask('150.00', { merchant: CASINO, channel: 'ECOM' }));
    const step = res.json().result.trail[1];
    expect(step).toMatchObject({ outcome: 'declined', ruleId: first, declineReason: 'SPEND_CONTROL_DECLINED', evaluated: 3 });
    expect(step.rules).toEqual([
      { ruleId: shadow, version: 1, mode: 'shadow', outcome: 'declined', declineReason: 'SPEND_CONTROL_DECLINED' },
      { ruleId: first, version: 1, mode: 'active', outcome: 'declined', declineReason: 'SPEND_CONTROL_DECLINED' },
      { ruleId: second, version: 1, mode: 'active', outcome: 'declined', declineReason: 'SPEND_CONTROL_DECLINED' },
    ]);
    // POS at the casino: only the shadow rule would decline, and it is not enforced.
    const pos = await authorize(ask('50.00', { merchant: CASINO }));
    expect(pos.json().result).toMatchObject({ status: 'APPROVED', decidedBy: 'core' });
    expect(pos.json().result.trail[1]).toEqual({
      step: 'spend-controls',
      outcome: 'approved',
      evaluated: 3,
      rules: [{ ruleId: shadow, version: 1, mode: 'shadow', outcome: 'declined', declineReason: 'SPEND_CONTROL_DECLINED' }],
    });
  });

  it("an entity's rule applies to its cards; merchant id and currency conditions", async () => {
    await rule({ name: 'Not this shop', entityId: 'ENT-1002', mode: 'active', conditions: [{ attribute: 'merchantId', operation: 'is-one-of', values: ['M-1001'] }] });
    await rule({ name: 'EUR only', mode: 'active', conditions: [{ attribute: 'currency', operation: 'is-not-one-of', values: ['EUR'] }] });
    expect((await authorize(ask('5.00', { cardId: 'CARD-3002' }))).json().result).toMatchObject({ status: 'DECLINED', decidedBy: 'spend-controls' });
    expect((await authorize(ask('5.00', { cardId: 'CARD-3001' }))).json().result.status).toBe('APPROVED');
    // A merchant without an id is in no list.
    expect((await authorize(ask('5.00', { cardId: 'CARD-3002', merchant: { name: 'Kiosk', mcc: '5814', country: 'PT' } }))).json().result.status).toBe('APPROVED');
  });

  it("a time-of-day range is the tenant's wall clock", async () => {
    const minutes = (d: Date) => {
      const p = new Intl.DateTimeFormat('en-GB', { timeZone: ZONE, hourCycle: 'h23', hour: '2-digit', minute: '2-digit' }).formatToParts(d);
      return Number(p.find((x) => x.type === 'hour')!.value) * 60 + Number(p.find((x) => x.type === 'minute')!.value);
    };
    const hhmm = (m: number) => `${String(Math.floor(((m + 1440) % 1440) / 60)).padStart(2, '0')}:${String(((m + 1440) % 1440) % 60).padStart(2, '0')}`;
    const now = minutes(new Date());
    // A range of the next twenty minutes around now in Kolkata, and one twelve hours away: only the first declines.
    await rule({ name: 'Now', mode: 'active', conditions: [{ attribute: 'localTime', operation: 'is-one-of', values: [`${hhmm(now - 10)}-${hhmm(now + 10)}`] }] }, 'partial');
    const ask2 = ask('5.00', { currency: 'GBP' });
    expect((await authorize(ask2, 'partial')).json().result).toMatchObject({ status: 'DECLINED', decidedBy: 'spend-controls' });
    await t.db.query(`DELETE FROM auth_rules`);
    await rule({ name: 'Night', mode: 'active', conditions: [{ attribute: 'localTime', operation: 'is-one-of', values: [`${hhmm(now + 710)}-${hhmm(now + 730)}`] }] }, 'partial');
    expect((await authorize(ask2, 'partial')).json().result.status).toBe('APPROVED');
  });

  it('the sandbox route runs the same step', async () => {
    await rule({ name: 'No ATM', mode: 'active', conditions: [{ attribute: 'channel', operation: 'is-one-of', values: ['ATM'] }] });
    const res = await call('POST', '/v1/sandbox/cards/CARD-3001/authorizations', { amount: '20.00', merchant: { name: 'ATM', mcc: '6011', country: 'PT' }, channel: 'ATM' }, 'Operations');
    expect(res.statusCode).toBe(201);
    expect(res.json().result).toMatchObject({ status: 'DECLINED', declineReason: 'SPEND_CONTROL_DECLINED' });
  });

  it('the approvals are counted and stored compact, the declines listed; rows stored before in full read the same (decisions 0404, 0443)', async () => {
    const shadow = await rule({ name: 'Shadow: not in MT', conditions: [{ attribute: 'merchantCountry', operation: 'is-not-one-of', values: ['PT', 'ES'] }] });
    const big = await rule({ name: 'Big', mode: 'active', conditions: [{ attribute: 'amount', operation: 'above', value: '100.00' }] });
    const daily = await rule({ name: 'Daily', mode: 'active', velocity: { scope: 'card', window: '24h', limitCount: 100 } });
    const approved = (await authorize(ask('50.00', { merchant: CASINO }))).json().result;
    const declined = (await authorize(ask('150.00'))).json().result;
    const plain = (await authorize(ask('20.00'))).json().result;
    const shadowDeclined = { ruleId: shadow, version: 1, mode: 'shadow', outcome: 'declined', declineReason: 'SPEND_CONTROL_DECLINED' };
    expect(approved.trail[1]).toEqual({ step: 'spend-controls', outcome: 'approved', evaluated: 3, rules: [shadowDeclined] });
    expect(declined.trail[1]).toEqual({
      step: 'spend-controls',
      outcome: 'declined',
      declineReason: 'SPEND_CONTROL_DECLINED',
      detail: "declined by rule 'Big' (version 1)",
      ruleId: big,
      evaluated: 2,
      rules: [{ ruleId: big, version: 1, mode: 'active', outcome: 'declined', declineReason: 'SPEND_CONTROL_DECLINED' }],
    });
    expect(plain.trail[1]).toEqual({ step: 'spend-controls', outcome: 'approved', evaluated: 3 });
    type Stored = { approved?: string; rules?: unknown[] };
    const stored = async (id: string) => (await t.db.query<{ trail: Stored[] }>(`SELECT trail FROM authorizations WHERE id = $1`, [id])).rows[0]!.trail[1]!;
    expect(await stored(approved.authorizationId)).toMatchObject({ approved: `${big}:1 ${daily}:1`, rules: [`${shadow}:1:shadow:declined:SPEND_CONTROL_DECLINED`] });
    expect(await stored(declined.authorizationId)).toMatchObject({ approved: `${shadow}:1:shadow`, rules: [`${big}:1:active:declined:SPEND_CONTROL_DECLINED`] });
    expect(await stored(plain.authorizationId)).toEqual({ step: 'spend-controls', outcome: 'approved', approved: `${shadow}:1:shadow ${big}:1 ${daily}:1` });
    const read = async (id: string) => (await call('GET', `/v1/authorizations/${id}`, undefined, 'API Integration')).json().result;
    for (const a of [approved, declined, plain]) expect(await read(a.authorizationId)).toEqual(a);
    // Rows stored before decision 0443 keep every evaluation: as strings (decision 0404), or as objects before that.
    const setTrail = (id: string, step: unknown) =>
      t.db.query(`UPDATE authorizations SET trail = jsonb_set(trail, '{1}', $2::jsonb) WHERE id = $1`, [id, JSON.stringify(step)]);
    const { evaluated: _n, rules: _r, ...head } = declined.trail[1];
    await setTrail(declined.authorizationId, { ...head, rules: [`${shadow}:1:shadow:approved`, `${big}:1:active:declined:SPEND_CONTROL_DECLINED`] });
    expect(await read(declined.authorizationId)).toEqual(declined);
    await setTrail(declined.authorizationId, { ...head, rules: [{ ruleId: shadow, version: 1, mode: 'shadow', outcome: 'approved' }, declined.trail[1].rules[0]] });
    expect(await read(declined.authorizationId)).toEqual(declined);
  });

  it('each authorization has its own verdicts though full approvals share one step per rule list (decisions 0417, 0443)', async () => {
    const big = await rule({ name: 'Big', mode: 'active', conditions: [{ attribute: 'amount', operation: 'above', value: '100.00' }] });
    const shadow = await rule({ name: 'Shadow: not in PT', conditions: [{ attribute: 'merchantCountry', operation: 'is-not-one-of', values: ['PT'] }] });
    const results = [];
    for (const amount of ['10.00', '150.00', '20.00', '150.00', '30.00']) results.push((await authorize(ask(amount))).json().result);
    const bigDeclined = { ruleId: big, version: 1, mode: 'active', outcome: 'declined', declineReason: 'SPEND_CONTROL_DECLINED' };
    const approvedStep = { step: 'spend-controls', outcome: 'approved', evaluated: 2 };
    const declinedStep = { step: 'spend-controls', outcome: 'declined', declineReason: 'SPEND_CONTROL_DECLINED', detail: "declined by rule 'Big' (version 1)", ruleId: big, evaluated: 2, rules: [bigDeclined] };
    expect(results.map((r) => [r.status, r.trail[1]])).toEqual([
      ['APPROVED', approvedStep],
      ['DECLINED', declinedStep],
      ['APPROVED', approvedStep],
      ['DECLINED', declinedStep],
      ['APPROVED', approvedStep],
    ]);
    const read = async (id: string) => (await call('GET', `/v1/authorizations/${id}`, undefined, 'API Integration')).json().result;
    for (const r of results) expect(await read(r.authorizationId)).toEqual(r);
    // The same version made shadow: the next approval says it would have declined, and those before keep their verdicts.
    expect((await call('PATCH', `/v1/admin/auth-rules/${big}`, { mode: 'shadow' })).statusCode).toBe(200);
    const after = (await authorize(ask('150.00'))).json().result;
    expect([after.status, after.trail[1]]).toEqual(['APPROVED', { ...approvedStep, rules: [{ ...bigDeclined, mode: 'shadow' }] }]);
    const small = (await authorize(ask('10.00'))).json().result;
    expect(small.trail[1]).toEqual(approvedStep);
    const storedOf = async (id: string) => (await t.db.query<{ trail: { approved?: string }[] }>(`SELECT trail FROM authorizations WHERE id = $1`, [id])).rows[0]!.trail[1]!.approved;
    expect([await storedOf(results[0].authorizationId), await storedOf(small.authorizationId)]).toEqual([`${big}:1 ${shadow}:1:shadow`, `${big}:1:shadow ${shadow}:1:shadow`]);
    for (const r of results) expect(await read(r.authorizationId)).toEqual(r);
  });
});

describe('velocity limits', () => {
  const counters = async () =>
    (await t.db.query<{ amount: string; n: number }>(`SELECT COALESCE(sum(amount_minor), 0)::text AS amount, COALESCE(sum(count), 0)::int AS n FROM auth_rule_counters`)).rows[0]!;

  it('a count limit per card: the fourth in 24 h is declined; a decline by the core is not counted', async () => {
    const id = await rule({ name: 'Three a day', mode: 'active', velocity: { scope: 'card', window: '24h', limitCount: 3 } });
    // Above the credit available: the core declines, and the count is taken back.
    expect((await authorize(ask('60000.00'))).json().result).toMatchObject({ status: 'DECLINED', decidedBy: 'core' });
    for (let i = 0; i < 3; i++) expect((await authorize(ask('1.00'))).json().result.status).toBe('APPROVED');
    const fourth = await authorize(ask('1.00'));
    expect(fourth.json().result).toMatchObject({ status: 'DECLINED', declineReason: 'VELOCITY_COUNT_EXCEEDED', decidedBy: 'spend-controls' });
    expect(fourth.json().result.trail[1]).toMatchObject({ ruleId: id, evaluated: 1, rules: [{ ruleId: id, version: 1, mode: 'active', outcome: 'declined', declineReason: 'VELOCITY_COUNT_EXCEEDED' }] });
    expect(await counters()).toEqual({ amount: '300', n: 3 });
    // Another card has its own count.
    expect((await authorize(ask('1.00', { cardId: 'CARD-3002' }))).json().result.status).toBe('APPROVED');
  });

  it('an amount limit per entity, filtered by a condition: only the matching spending counts; a partial approval counts what was held', async () => {
    const core = await mockCore('partial');
    core.state.cards.set('CARD-3901', virtualCard(3901, 'ENT-1001'));
    await rule(
      { name: 'Online 100 a week', mode: 'active', velocity: { scope: 'entity', window: '7d', limitAmount: '100.00', filters: [{ attribute: 'channel', operation: 'is-one-of', values: ['ECOM'] }] } },
      'partial',
    );
    const gbp = (amount: string, extra: Record<string, unknown> = {}) => ask(amount, { currency: 'GBP', channel: 'ECOM', ...extra });
    expect((await authorize(gbp('60.00'), 'partial')).json().result.status).toBe('APPROVED');
    // POS is not counted nor limited.
    expect((await authorize(gbp('500.00', { channel: 'POS' }), 'partial')).json().result.status).toBe('APPROVED');
    // The entity's other card shares the limit: 60 + 50 > 100.
    expect((await authorize(gbp('50.00', { cardId: 'CARD-3901' }), 'partial')).json().result).toMatchObject({ status: 'DECLINED', declineReason: 'VELOCITY_AMOUNT_EXCEEDED' });
    expect((await authorize(gbp('40.00', { cardId: 'CARD-3901' }), 'partial')).json().result.status).toBe('APPROVED');
    expect(await counters()).toEqual({ amount: '10000', n: 2 });
  });

  it('a partial approval counts only what the core held', async () => {
    await rule({ name: 'Weekly 1000', mode: 'active', velocity: { scope: 'card', window: '7d', limitAmount: '1000000.00' } }, 'partial');
    // The entity can take 50 000.00: 60 000.00 is approved for 50 000.00.
    const res = await authorize(ask('60000.00', { currency: 'GBP' }), 'partial');
    expect(res.json().result).toMatchObject({ status: 'APPROVED', approvedAmount: '50000.00' });
    expect(await counters()).toEqual({ amount: '5000000', n: 1 });
  });

  it('a core that cannot be reached (502): nothing recorded, and the count taken back', async () => {
    await rule({ name: 'One a day', mode: 'active', velocity: { scope: 'card', window: '24h', limitCount: 1 } });
    const core = await mockCore();
    core.holdFunds = async () => {
      throw new ConnectorUnavailableError('the core is down');
    };
    try {
      expect((await authorize(ask('1.00'))).statusCode).toBe(502);
    } finally {
      delete (core as Partial<MockCore>).holdFunds;
    }
    expect(await counters()).toEqual({ amount: '0', n: 0 });
    expect(await count('authorizations')).toBe(0);
    // The one a day is still there to take.
    expect((await authorize(ask('1.00'))).json().result.status).toBe('APPROVED');
  });

  it('a shadow velocity limit is recorded, never enforced, and counts what was approved', async () => {
    const id = await rule({ name: 'Shadow: one a day', velocity: { scope: 'card', window: '24h', limitCount: 1 } });
    expect((await authorize(ask('1.00'))).json().result.status).toBe('APPROVED');
    const second = await authorize(ask('1.00'));
    expect(second.json().result.status).toBe('APPROVED');
    expect(second.json().result.trail[1]).toEqual({
      step: 'spend-controls',
      outcome: 'approved',
      evaluated: 1,
      rules: [{ ruleId: id, version: 1, mode: 'shadow', outcome: 'declined', declineReason: 'VELOCITY_COUNT_EXCEEDED' }],
    });
    expect(await counters()).toEqual({ amount: '200', n: 2 });
    // Promoted, its counters are warm: the third is declined.
    await call('POST', `/v1/admin/auth-rules/${id}/promote`);
    expect((await authorize(ask('1.00'))).json().result).toMatchObject({ status: 'DECLINED', declineReason: 'VELOCITY_COUNT_EXCEEDED' });
  });

  it('fifty parallel authorizations against one card never pass its limit', async () => {
    await rule({ name: '100 a day', cardId: 'CARD-3001', mode: 'active', velocity: { scope: 'card', window: '24h', limitAmount: '100.00' } });
    await rule({ name: 'Eight an hour', cardId: 'CARD-3001', mode: 'active', velocity: { scope: 'card', window: '1h', limitCount: 8 } });
    const answers = await Promise.all(Array.from({ length: 50 }, () => authorize(ask('10.00'))));
    const results = answers.map((r) => r.json().result as { status: string; declineReason: string | null });
    // Eight fit the count limit (and 80.00 the amount limit); every other one is declined by the count.
    expect(results.filter((r) => r.status === 'APPROVED')).toHaveLength(8);
    expect(results.filter((r) => r.declineReason === 'VELOCITY_COUNT_EXCEEDED')).toHaveLength(42);
    expect(await outstandingMinor()).toBe(8000n);
    const byRule = await t.db.query<{ amount: string; n: number }>(`SELECT sum(amount_minor)::text AS amount, sum(count)::int AS n FROM auth_rule_counters GROUP BY rule_id ORDER BY 1`);
    expect(byRule.rows).toEqual([
      { amount: '8000', n: 8 },
      { amount: '8000', n: 8 },
    ]);

    // An amount limit alone: 25.00 each, at most four fit 100.00.
    await t.db.query(`DELETE FROM auth_rules`);
    Object.assign((await mockCore()).state, demoFixtures());
    await rule({ name: '100 a day', cardId: 'CARD-3001', mode: 'active', velocity: { scope: 'card', window: '24h', limitAmount: '100.00' } });
    const more = await Promise.all(Array.from({ length: 50 }, () => authorize(ask('25.00'))));
    expect(more.filter((r) => r.json().result.status === 'APPROVED')).toHaveLength(4);
    expect(await outstandingMinor()).toBe(10000n);
  });

  it('a reversal gives back to the counters (decision 0354): its amount, and the count once nothing is held; a final clearing its release; a refund nothing', async () => {
    await rule({ name: '100 and two a day', mode: 'active', velocity: { scope: 'card', window: '24h', limitAmount: '100.00', limitCount: 2 } });
    const first = (await authorize(ask('60.00'))).json().result.authorizationId as string;
    expect((await authorize(ask('50.00'))).json().result).toMatchObject({ status: 'DECLINED', declineReason: 'VELOCITY_AMOUNT_EXCEEDED' });
    // A partial reversal gives back its amount: 40.00 + 50.00 fits now.
    expect((await call('POST', `/v1/authorizations/${first}/reverse`, { amount: '20.00', currency: 'EUR' }, 'API Integration')).statusCode).toBe(200);
    expect(await counters()).toEqual({ amount: '4000', n: 1 });
    const second = (await authorize(ask('50.00'))).json().result.authorizationId as string;
    expect(await counters()).toEqual({ amount: '9000', n: 2 });
    expect((await authorize(ask('1.00'))).json().result).toMatchObject({ status: 'DECLINED', declineReason: 'VELOCITY_COUNT_EXCEEDED' });
    // A full reversal gives back the amount and the count; reversing again is refused and gives back nothing more.
    expect((await call('POST', `/v1/authorizations/${second}/reverse`, {}, 'API Integration')).statusCode).toBe(200);
    expect(await counters()).toEqual({ amount: '4000', n: 1 });
    expect((await call('POST', `/v1/authorizations/${second}/reverse`, {}, 'API Integration')).statusCode).toBe(409);
    expect(await counters()).toEqual({ amount: '4000', n: 1 });
    // A final clearing of 30.00 releases 10.00: given back; the purchase still counts once.
    expect((await call('POST', `/v1/authorizations/${first}/clear`, { amount: '30.00', currency: 'EUR', final: true }, 'API Integration')).json().result).toMatchObject({ held: '0.00', cleared: '30.00', reversed: '30.00' });
    expect(await counters()).toEqual({ amount: '3000', n: 1 });
    // A refund gives nothing back: the purchase was made.
    expect((await call('POST', `/v1/transactions/${first}/refund`, { amount: '30.00', currency: 'EUR' }, 'API Integration')).statusCode).toBe(200);
    expect(await counters()).toEqual({ amount: '3000', n: 1 });
    // 30.00 + 70.00 is the limit, and the count's second place is free again.
    expect((await authorize(ask('70.00'))).json().result.status).toBe('APPROVED');
    expect((await authorize(ask('0.01'))).json().result).toMatchObject({ status: 'DECLINED' });
  });

  it('grants (decision 0398): a counter with room is spent without a round trip; two processes on one store never pass the limit; the rest is given back', async () => {
    await rule({ name: '300 a day', mode: 'active', velocity: { scope: 'card', window: '24h', limitCount: 300 } });
    // Through the gateway: approved, and the store counts more than this one (the grant this process took).
    expect((await authorize(ask('0.01'))).json().result.status).toBe('APPROVED');
    expect((await counters()).n).toBeGreaterThan(1);
    const other = new SpendControls(t.db, t.app.cardline.authRules);
    const spend = async (p: SpendControls) => {
      const d = await p.decide('demo', 'UTC', { cardId: 'CARD-3001', amountMinor: 1n, currency: 'EUR', merchant: { mcc: '5814', country: 'PT' }, channel: 'POS', at: new Date() }, async () => 'ENT-1001');
      await d.settle(d.record.outcome === 'approved' ? 1n : 0n);
      return d.record.outcome === 'approved';
    };
    let approved = 1;
    try {
      // 400 more from two processes, 20 at a time: exactly the 300 fit, whoever holds what is left.
      for (let i = 0; i < 20; i++) approved += (await Promise.all(Array.from({ length: 20 }, (_, j) => spend(j % 2 ? t.app.cardline.spendControls : other)))).filter(Boolean).length;
    } finally {
      await other.close();
    }
    expect(approved).toBe(300);
    // Once this process's idle grant is given back, the store holds exactly what was approved.
    await vi.waitFor(async () => expect(await counters()).toEqual({ amount: '300', n: 300 }), { timeout: 5_000, interval: 100 });
  });

  it('grants: a core that cannot be reached gives what it spent back to the grant; the store ends with what was approved', async () => {
    await rule({ name: 'A thousand a day', mode: 'active', velocity: { scope: 'card', window: '24h', limitCount: 1000 } });
    expect((await authorize(ask('0.01'))).json().result.status).toBe('APPROVED');
    const core = await mockCore();
    core.holdFunds = async () => {
      throw new ConnectorUnavailableError('the core is down');
    };
    try {
      expect((await authorize(ask('0.01'))).statusCode).toBe(502);
    } finally {
      delete (core as Partial<MockCore>).holdFunds;
    }
    expect((await authorize(ask('0.01'))).json().result.status).toBe('APPROVED');
    await vi.waitFor(async () => expect(await counters()).toEqual({ amount: '2', n: 2 }), { timeout: 5_000, interval: 100 });
  });

  describe('grouped counts (decision 0440)', () => {
    const CARDS = [
      ['CARD-3001', 'ENT-1001'],
      ['CARD-3002', 'ENT-1002'],
      ['CARD-3003', 'ENT-1003'],
    ] as const;
    /** The store as two processes' spend controls see it: each statement's name noted, those `refuse` names refused. */
    const store = (names: string[], refuse: (name: string) => boolean = () => false, takes = { now: 0, most: 0 }) =>
      new Proxy(t.db, {
        get(target, prop, receiver) {
          if (prop !== 'query') return Reflect.get(target, prop, receiver) as unknown;
          return (sql: string, params?: unknown[], options?: { name?: string }) => {
            names.push(options?.name ?? '');
            if (refuse(options?.name ?? '')) return Promise.reject(new Error('refused by the test'));
            if (options?.name !== 'auth-rule-counters-take') return target.query(sql, params, options);
            takes.most = Math.max(takes.most, ++takes.now);
            return target.query(sql, params, options).finally(() => takes.now--);
          };
        },
      });
    /** One authorization through a process's spend-control step, settled as the pipeline would: `declineLater` as the core declining it. */
    const spend = async (p: SpendControls, [cardId, entityId]: readonly [string, string], amountMinor: bigint, declineLater = false) => {
      const d = await p.decide('demo', 'UTC', { cardId, amountMinor, currency: 'EUR', merchant: { mcc: '5814', country: 'PT' }, channel: 'POS', at: new Date() }, async () => entityId);
      const approved = d.record.outcome === 'approved' && !declineLater;
      await d.settle(approved ? amountMinor : 0n);
      return { approved, rules: d.record.rules ?? [] };
    };
    const byRule = async (id: string) =>
      (await t.db.query<{ amount: string; n: number }>(`SELECT COALESCE(sum(amount_minor), 0)::text AS amount, COALESCE(sum(count), 0)::int AS n FROM auth_rule_counters WHERE rule_id = $1`, [id])).rows[0]!;

    it('parallel authorizations on one card and across cards, from two processes: fewer calls than authorizations, every limit exact, shadow versions never enforced', async () => {
      const perCard = await rule({ name: 'Eight a day', mode: 'active', velocity: { scope: 'card', window: '24h', limitCount: 8 } });
      const perEntity = await rule({ name: '70 a week', mode: 'active', velocity: { scope: 'entity', window: '7d', limitAmount: '0.70' } });
      const shadow = await rule({ name: 'Two an hour', velocity: { scope: 'card', window: '1h', limitCount: 2 } });
      const names: string[] = [];
      const [one, two] = [new SpendControls(store(names), t.app.cardline.authRules), new SpendControls(store(names), t.app.cardline.authRules)];
      try {
        // 30 per card at 0.10, in parallel: the card's count would let 8 through, the entity's amount lets 7.
        const results = await Promise.all(Array.from({ length: 90 }, (_, i) => spend(i % 2 ? one : two, CARDS[i % 3]!, 10n)));
        expect(results.filter((r) => r.approved)).toHaveLength(21);
        // Counted only what every active limit approved (not the eighth of each card); the shadow counts those same ones.
        for (const id of [perEntity, perCard, shadow]) expect(await byRule(id)).toEqual({ amount: '210', n: 21 });
        // The shadow version declined the third and later of each card, and no authorization for it.
        const shadowDeclines = results.filter((r) => r.rules.some((e) => e.ruleId === shadow && e.outcome === 'declined'));
        expect(shadowDeclines.filter((r) => r.approved)).toHaveLength(3 * 5);
        // Declined later (by the core, or the decision endpoint): given back, so others fit in their place.
        await t.db.query(`DELETE FROM auth_rule_counters`);
        const later = await Promise.all(Array.from({ length: 30 }, (_, i) => spend(i % 2 ? one : two, CARDS[0], 10n, i % 3 === 0)));
        const kept = later.filter((r) => r.approved).length;
        expect(kept).toBeGreaterThan(0);
        expect(kept).toBeLessThanOrEqual(7);
        for (const id of [perEntity, perCard]) expect(await byRule(id)).toEqual({ amount: String(kept * 10), n: kept });
        const groups = names.filter((n) => n === 'auth-rule-counters-take-many').length;
        const alone = names.filter((n) => n === 'auth-rule-counters-take').length;
        expect(groups).toBeGreaterThan(0);
        expect(groups + alone).toBeLessThan(120);
      } finally {
        await Promise.all([one.close(), two.close()]);
      }
    });

    it('a group call answers and counts as the same authorizations one call each would, in turn (random groups, near and far from the limits)', async () => {
      const [a, b] = [await rule({ name: 'A', velocity: { scope: 'card', window: '24h', limitCount: 5 } }), await rule({ name: 'B', velocity: { scope: 'card', window: '24h', limitCount: 5 } })];
      let seed = 29;
      const random = (n: number) => (seed = (seed * 48_271) % 2_147_483_647) % n;
      const ONE = `SELECT total_amount::text AS a, total_count::text AS n, counted FROM cardline_velocity_take('demo', $1::uuid[], $2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::bigint, $7::bigint[], $8::integer[], 60, $9::boolean[], 128, 16, $10::bigint[], $10::bigint[], $11::integer[])`;
      const MANY = `SELECT total_amount::text AS a, total_count::text AS n, counted FROM cardline_velocity_take_many('demo', $1::uuid[], $2::text[], $3::text[], $4::integer[], $5::uuid[], $6::text[], $7::text[], $8::bigint[], $9::bigint[], $10::bigint[], $11::bigint[], $12::integer[], 60, $13::boolean[], 128, 16, $14::bigint[], $14::bigint[], $15::integer[])`;
      const rows = async (id: string) =>
        (await t.db.query(`SELECT counter, scope_value, bucket::text, amount_minor::text, count FROM auth_rule_counters WHERE rule_id = $1 ORDER BY 1, 2, 3`, [id])).rows;
      for (let trial = 0; trial < 60; trial++) {
        await t.db.query(`DELETE FROM auth_rule_counters`);
        // Counters (card, entity), some already spent; each authorization in bucket 100 or 101 (the window of 101 starts at 42).
        const counters = ['c|CARD-1', 'c|CARD-2', 'e|ENT-1'];
        for (const k of counters) {
          const spent = [random(300), random(4)];
          for (const id of [a, b]) await t.db.query(`INSERT INTO auth_rule_counters VALUES ('demo', $1, $2, $3, 100, $4, $5)`, [id, ...k.split('|'), ...spent]);
        }
        type Limits = { la: number | null; lc: number | null };
        const limits: Record<'c' | 'e', Limits> = {
          c: { la: random(2) ? null : 200 + random(400), lc: 3 + random(6) },
          e: { la: random(2) ? null : 300 + random(300), lc: random(2) ? 8 + random(8) : null },
        };
        const group = Array.from({ length: 1 + random(12) }, () => ({ card: `CARD-${1 + random(2)}`, amount: 1 + random(30), bucket: 100 + (random(8) === 0 ? 1 : 0) }));
        const each = (g: (typeof group)[number], id: string) =>
          ([['c', g.card], ['e', 'ENT-1']] as const).map(([counter, scope]) => ({ id, counter, scope, bucket: g.bucket, oldest: g.bucket - 59, ...limits[counter], g }));
        const alone: unknown[] = [];
        for (const g of group) {
          const cs = each(g, a);
          const r = await t.db.query(ONE, [cs.map((c) => c.id), cs.map((c) => c.counter), cs.map((c) => c.scope), cs.map((c) => c.bucket), cs.map((c) => c.oldest), g.amount, cs.map((c) => c.la), cs.map((c) => c.lc), cs.map(() => false), cs.map(() => null), cs.map(() => null)]);
          alone.push(...r.rows);
        }
        const cs = group.flatMap((g) => each(g, b));
        const auth = group.flatMap((_, i) => [i + 1, i + 1]);
        const grouped = await t.db.query(MANY, [
          [b, b, b], ['c', 'c', 'e'], ['CARD-1', 'CARD-2', 'ENT-1'], auth, cs.map((c) => c.id), cs.map((c) => c.counter), cs.map((c) => c.scope), cs.map((c) => c.bucket),
          cs.map((c) => c.oldest), cs.map((c) => c.g.amount), cs.map((c) => c.la), cs.map((c) => c.lc), cs.map(() => false), cs.map(() => null), cs.map(() => null),
        ]);
        expect(grouped.rows, `trial ${trial}`).toEqual(alone);
        expect(await rows(b), `trial ${trial}`).toEqual(await rows(a));
      }
    });

    it('a group the store refuses: each of its authorizations counted alone, the limits exact; a store refusing all counts nothing', async () => {
      await rule({ name: 'Five a day', mode: 'active', velocity: { scope: 'card', window: '24h', limitCount: 5 } });
      const names: string[] = [];
      const takes = { now: 0, most: 0 };
      const p = new SpendControls(store(names, (n) => n === 'auth-rule-counters-take-many', takes), t.app.cardline.authRules);
      try {
        const results = await Promise.all(Array.from({ length: 24 }, (_, i) => spend(p, CARDS[i % 3]!, 100n)));
        expect(results.filter((r) => r.approved)).toHaveLength(15);
        expect(names.filter((n) => n === 'auth-rule-counters-take-many').length).toBeGreaterThan(0);
        // A refused group's authorizations are counted alone side by side, not one after another behind a slow store.
        expect(takes.most).toBeGreaterThan(1);
        expect(await counters()).toEqual({ amount: '1500', n: 15 });
      } finally {
        await p.close();
      }
      const down = new SpendControls(store([], (n) => n.startsWith('auth-rule-counters-take')), t.app.cardline.authRules);
      try {
        const settled = await Promise.allSettled(Array.from({ length: 12 }, (_, i) => spend(down, CARDS[i % 3]!, 100n)));
        expect(settled.map((s) => s.status)).toEqual(Array.from({ length: 12 }, () => 'rejected'));
        expect(await counters()).toEqual({ amount: '1500', n: 15 });
      } finally {
        await down.close();
      }
    });
  });

  it('parallel authorizations and reversals: the counters hold exactly what is approved net of reversals, never above the limit', async () => {
    await rule({ name: '100 a day', cardId: 'CARD-3001', mode: 'active', velocity: { scope: 'card', window: '24h', limitAmount: '100.00' } });
    const held = [];
    for (let i = 0; i < 5; i++) held.push((await authorize(ask('20.00'))).json().result.authorizationId as string);
    expect(await counters()).toEqual({ amount: '10000', n: 5 });
    // Each held authorization reversed twice at once (one wins, the other finds nothing held), among fifty authorizations.
    const reversals = held.flatMap((id) => [0, 1].map(() => call('POST', `/v1/authorizations/${id}/reverse`, {}, 'API Integration')));
    const answers = await Promise.all([...reversals, ...Array.from({ length: 50 }, () => authorize(ask('10.00')))]);
    expect(answers.slice(0, 10).map((r) => r.statusCode).sort()).toEqual([200, 200, 200, 200, 200, 409, 409, 409, 409, 409]);
    const net = await t.db.query<{ amount: string; n: number }>(
      `SELECT COALESCE(sum(approved_minor - reversed_minor), 0)::text AS amount, count(*) FILTER (WHERE held_minor + cleared_minor > 0)::int AS n FROM authorizations WHERE status = 'APPROVED'`,
    );
    expect(await counters()).toEqual(net.rows[0]);
    expect(BigInt(net.rows[0]!.amount)).toBeLessThanOrEqual(10000n);
    expect(await outstandingMinor()).toBe(BigInt(net.rows[0]!.amount));
  });

  async function outstandingMinor(): Promise<bigint> {
    return (await mockCore()).state.entities.get('ENT-1001')!.outstandingMinor;
  }
});

describe('backtests', () => {
  const DAY = Date.UTC(2026, 9, 10);
  async function seed(): Promise<string[]> {
    const ids: string[] = [];
    const history = [
      // [minutes after the day's start, card, amount, status, mcc]
      [60, 'CARD-3001', 2000n, 'APPROVED', '5814'],
      [120, 'CARD-3001', 5000n, 'APPROVED', '7995'],
      [180, 'CARD-3001', 7000n, 'APPROVED', '5814'],
      [240, 'CARD-3001', 9000n, 'DECLINED', '7995'],
      [300, 'CARD-3002', 8000n, 'APPROVED', '7995'],
      [60 * 30, 'CARD-3001', 1000n, 'APPROVED', '7995'],
    ] as const;
    for (const [i, [m, card, amount, status, mcc]] of history.entries()) {
      const id = `auth_seed${i}`;
      ids.push(id);
      await t.app.cardline.authorizations.insert('demo', {
        id,
        cardId: card,
        entityId: card === 'CARD-3001' ? 'ENT-1001' : 'ENT-1002',
        status,
        declineReason: status === 'DECLINED' ? 'INSUFFICIENT_CREDIT' : null,
        decidedBy: 'core',
        amountMinor: amount,
        approvedMinor: status === 'APPROVED' ? amount : 0n,
        currency: 'EUR',
        merchant: { ...CAFE, mcc },
        channel: 'POS',
        networkReference: null,
        trail: [],
        at: new Date(DAY + m * 60_000),
      });
    }
    return ids;
  }
  const snapshot = async () =>
    JSON.stringify([
      (await t.db.query(`SELECT * FROM authorizations ORDER BY id`)).rows,
      (await t.db.query(`SELECT * FROM auth_rules ORDER BY id`)).rows,
      (await t.db.query(`SELECT * FROM auth_rule_versions ORDER BY rule_id, version`)).rows,
      (await t.db.query(`SELECT * FROM auth_rule_counters ORDER BY rule_id`)).rows,
    ]);

  it("replays a card's history through conditions: counts and amounts by reason, samples, nothing changed", async () => {
    const ids = await seed();
    const id = await rule({ name: 'No gambling', cardId: 'CARD-3001', conditions: [NO_GAMBLING] });
    const before = await snapshot();
    const res = await call('POST', `/v1/admin/auth-rules/${id}/backtest`, { from: '2026-10-10', to: '2026-10-10' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      result: {
        ruleId: id,
        version: 1,
        from: '2026-10-10T00:00:00.000Z',
        to: '2026-10-11T00:00:00.000Z',
        evaluated: 4,
        declined: { count: 2, amount: '140.00' },
        approvedThenDeclined: { count: 1, amount: '50.00' },
        byReason: [{ declineReason: 'SPEND_CONTROL_DECLINED', count: 2, amount: '140.00' }],
        sampleAuthorizationIds: [ids[1], ids[3]],
      },
      pagination: null,
    });
    expect(await snapshot()).toBe(before);
  });

  it('replays a velocity limit in time order, counting only what it would have let through', async () => {
    const ids = await seed();
    const id = await rule({ name: '100 a day', velocity: { scope: 'card', window: '24h', limitAmount: '100.00' } });
    const before = await snapshot();
    const res = await call('POST', `/v1/admin/auth-rules/${id}/backtest`, { from: '2026-10-10T00:00:00Z', to: '2026-10-12T00:00:00Z' });
    // CARD-3001: 20 + 50 = 70; 70 more would be 140 (declined); 90 too (declined); next day 10 (20 + 50 + 10 = 80: passes).
    expect(res.json().result).toMatchObject({
      evaluated: 6,
      declined: { count: 2, amount: '160.00' },
      approvedThenDeclined: { count: 1, amount: '70.00' },
      byReason: [{ declineReason: 'VELOCITY_AMOUNT_EXCEEDED', count: 2, amount: '160.00' }],
      sampleAuthorizationIds: [ids[2], ids[3]],
    });
    expect(await snapshot()).toBe(before);
  });

  it('refuses a range backwards or too long, and a version the rule does not have', async () => {
    const id = await rule({ name: 'x', conditions: [NO_GAMBLING] });
    const backwards = await call('POST', `/v1/admin/auth-rules/${id}/backtest`, { from: '2026-10-10', to: '2026-10-01' });
    expect(backwards.json()).toEqual(validationProblem('backtestRequest', ['to', 'Invalid']));
    const long = await call('POST', `/v1/admin/auth-rules/${id}/backtest`, { from: '2026-01-01', to: '2026-10-01' });
    expect(long.json()).toEqual(validationProblem('backtestRequest', ['to', 'Invalid']));
    const version = await call('POST', `/v1/admin/auth-rules/${id}/backtest`, { from: '2026-10-01', to: '2026-10-02', version: 7 });
    expect(version.json()).toEqual(validationProblem('backtestRequest', ['version', 'Invalid']));
  });
});
