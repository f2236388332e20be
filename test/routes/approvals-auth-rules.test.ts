// Four eyes on spend controls: with a policy on `auth-rules.promote`, every write that makes a rule version
// enforced (the promotion, a rule created or PATCHed with `mode: active`) is held (202, problem dialect, its
// Location) and executed once by the last approval; what enforces nothing runs as today, and what the gateway
// refuses alone is refused at once. Runs on PGlite, and on PostgreSQL when DATABASE_URL is set.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import type { ApprovalPolicy } from '../../schemas/approvals.js';
import { updateTenant } from '../../src/services/tenancy/tenant-admin.js';
import { PASSWORD, PROBLEM_BASE, createTestApp, type TestApp } from '../helpers/app.js';
import { problem } from '../helpers/problems.js';

let t: TestApp;
const tokens = new Map<string, string>();

async function tokenOf(username: string): Promise<string> {
  const cached = tokens.get(username);
  if (cached) return cached;
  const res = await t.inject({ method: 'POST', url: '/api/authenticate', headers: { TENANT: 'demo' }, payload: { username, password: await t.encrypt(PASSWORD) } });
  expect(res.statusCode, res.body).toBe(200);
  tokens.set(username, res.json().id_token as string);
  return tokens.get(username)!;
}

beforeAll(async () => {
  t = await createTestApp();
  await t.app.cardline.users.add('demo', 'admin2', 'Admin', PASSWORD);
});
afterAll(() => t.close());

const policy = (...policies: Partial<ApprovalPolicy>[]) => updateTenant(t.app.cardline, 'demo', { config: { approvals: policies.length ? policies : null } });

beforeEach(async () => {
  await t.db.query('DELETE FROM approvals');
  await t.db.query('DELETE FROM auth_rules');
  await policy({ operation: 'auth-rules.promote', approvers: ['Admin'] });
});

const call = async (user: string, method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object, key?: string): Promise<LightMyRequestResponse> =>
  t.inject({
    method,
    url,
    headers: { 'X-TENANT-ID': 'demo', authorization: `Bearer ${await tokenOf(user)}`, ...(key ? { 'idempotency-key': key } : {}) },
    ...(payload ? { payload } : {}),
  });
const approve = (user: string, id: string) => call(user, 'POST', `/v1/approvals/${id}/approve`);
const NO_GAMBLING = { attribute: 'mcc', operation: 'is-one-of', values: ['7995', '7801'] };
const ATM = { attribute: 'channel', operation: 'is-one-of', values: ['ATM'] };

/** A shadow rule on CARD-3001 (a shadow rule declines nobody: not held). */
async function shadowRule(): Promise<string> {
  const res = await call('admin', 'POST', '/v1/admin/auth-rules', { name: 'No gambling', cardId: 'CARD-3001', conditions: [NO_GAMBLING] });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().result.ruleId as string;
}
const ruleOf = async (ruleId: string) => (await call('admin', 'GET', `/v1/admin/auth-rules/${ruleId}`)).json().result;
const modes = async (ruleId: string) => {
  const r = await ruleOf(ruleId);
  return { activeVersion: r.activeVersion, shadowVersion: r.shadowVersion };
};

/** The approval a 202 names: the problem record, its Location. */
function held(res: LightMyRequestResponse, operation: string): string {
  expect(res.statusCode, res.body).toBe(202);
  const location = String(res.headers.location);
  expect(location).toMatch(/^\/v1\/approvals\/[0-9a-f-]{36}$/);
  const id = location.slice('/v1/approvals/'.length);
  expect(res.json()).toEqual({
    type: `${PROBLEM_BASE}/problem-with-message`,
    title: 'Accepted',
    status: 202,
    message: 'error.http.202',
    detail: `The request needs approval (${operation}): it waits as approval ${id} and is executed once approved; see GET /v1/approvals/${id}.`,
  });
  return id;
}

const approvals = async () => (await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM approvals')).rows[0]!.n;
const executions = async (id: string, action: string) =>
  (await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM audit_log WHERE action = $1 AND target->>'approvalId' = $2 AND outcome <> 'pending'`, [action, id])).rows[0]!
    .n;

describe('a promotion waits for a second person', () => {
  it('held as validated, the same Idempotency-Key answers the same 202; the maker and a role the policy does not name are refused; the checker executes it once', async () => {
    const ruleId = await shadowRule();
    const url = `/v1/admin/auth-rules/${ruleId}/promote`;
    const id = held(await call('admin', 'POST', url, undefined, 'promote-1'), 'auth-rules.promote');
    const again = await call('admin', 'POST', url, undefined, 'promote-1');
    expect(again.statusCode).toBe(202);
    expect(again.headers.location).toBe(`/v1/approvals/${id}`);
    expect(await approvals()).toBe(1);
    expect(await modes(ruleId)).toEqual({ activeVersion: null, shadowVersion: 1 });

    const read = (await call('admin2', 'GET', `/v1/approvals/${id}`)).json().result;
    expect(read).toMatchObject({
      operation: 'auth-rules.promote',
      status: 'pending',
      maker: { username: 'admin', role: 'Admin' },
      request: { method: 'POST', path: url, params: { ruleId } },
      approvers: ['Admin'],
      approvalsNeeded: 1,
      outcome: null,
    });

    const own = await approve('admin', id);
    expect(own.statusCode).toBe(403);
    expect(own.json()).toEqual(problem(403, 'Approval By Maker', "'admin' made this request and cannot approve it; a second person must.", 'APPROVAL_BY_MAKER'));
    const ops = await approve('ops', id);
    expect(ops.statusCode).toBe(403);
    expect(ops.json()).toEqual(problem(403, 'Approval Role', "The role 'Operations' may not approve auth-rules.promote; its policy names Admin.", 'APPROVAL_ROLE'));
    expect(await modes(ruleId)).toEqual({ activeVersion: null, shadowVersion: 1 });

    const approved = await approve('admin2', id);
    expect(approved.statusCode, approved.body).toBe(200);
    const rule = await ruleOf(ruleId);
    expect(rule).toMatchObject({ activeVersion: 1, shadowVersion: null });
    const { versions: _versions, ...view } = rule;
    expect(approved.json().result).toMatchObject({ status: 'executed', approvals: [{ by: 'admin2', role: 'Admin' }], outcome: { status: 200, body: { result: view, pagination: null } } });
    expect(await executions(id, 'auth-rules.promote')).toBe(1);
    const late = await approve('admin2', id);
    expect(late.statusCode).toBe(409);
    expect(late.json().businessCode).toBe('APPROVAL_NOT_PENDING');
    expect(await executions(id, 'auth-rules.promote')).toBe(1);
  });

  it('a shadow version put in place after the promotion was held is not enforced: the execution is refused', async () => {
    const ruleId = await shadowRule();
    const id = held(await call('admin', 'POST', `/v1/admin/auth-rules/${ruleId}/promote`), 'auth-rules.promote');
    const swapped = await call('admin', 'PATCH', `/v1/admin/auth-rules/${ruleId}`, { conditions: [ATM] });
    expect(swapped.json().result).toMatchObject({ activeVersion: null, shadowVersion: 2 });
    const approved = await approve('admin2', id);
    expect(approved.statusCode, approved.body).toBe(200);
    expect(approved.json().result).toMatchObject({
      status: 'executed',
      outcome: {
        status: 409,
        body: problem(409, 'Auth Rule Changed', `Rule ${ruleId} changed after this request was held for approval; nothing was enforced. Make the request again.`, 'AUTH_RULE_CHANGED'),
      },
    });
    expect(await modes(ruleId)).toEqual({ activeVersion: null, shadowVersion: 2 });
  });

  it('without a policy a promotion runs as today', async () => {
    await policy();
    const ruleId = await shadowRule();
    const res = await call('admin', 'POST', `/v1/admin/auth-rules/${ruleId}/promote`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().result).toMatchObject({ ruleId, activeVersion: 1, shadowVersion: null });
    expect(await approvals()).toBe(0);
  });

  it('what the gateway refuses alone is refused at once, not held: an unknown rule, a rule with nothing to promote', async () => {
    const unknown = '0192f1e2-7a3b-7c4d-8e5f-6a7b8c9d0e1f';
    const missing = await call('admin', 'POST', `/v1/admin/auth-rules/${unknown}/promote`);
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual(problem(404, 'Not Found', `This tenant has no auth rule '${unknown}'.`));
    await policy();
    const ruleId = await shadowRule();
    expect((await call('admin', 'POST', `/v1/admin/auth-rules/${ruleId}/promote`)).statusCode).toBe(200);
    await policy({ operation: 'auth-rules.promote', approvers: ['Admin'] });
    const nothing = await call('admin', 'POST', `/v1/admin/auth-rules/${ruleId}/promote`);
    expect(nothing.statusCode).toBe(409);
    expect(nothing.json()).toEqual(problem(409, 'No Shadow Version', `Rule ${ruleId} has no shadow version to promote.`, 'AUTH_RULE_NO_SHADOW'));
    expect(await approvals()).toBe(0);
  });

  it('an expired promotion cannot be approved and enforces nothing', async () => {
    const ruleId = await shadowRule();
    const id = held(await call('admin', 'POST', `/v1/admin/auth-rules/${ruleId}/promote`), 'auth-rules.promote');
    await t.db.query(`UPDATE approvals SET expires_at = now() - interval '1 second' WHERE id = $1`, [id]);
    const late = await approve('admin2', id);
    expect(late.statusCode).toBe(409);
    expect(late.json().businessCode).toBe('APPROVAL_EXPIRED');
    expect(await modes(ruleId)).toEqual({ activeVersion: null, shadowVersion: 1 });
    expect(await executions(id, 'auth-rules.promote')).toBe(0);
  });

  it('two checkers approving at once: the promotion executes once', async () => {
    await t.app.cardline.users.add('demo', 'admin3', 'Admin', PASSWORD);
    const ruleId = await shadowRule();
    const id = held(await call('admin', 'POST', `/v1/admin/auth-rules/${ruleId}/promote`), 'auth-rules.promote');
    const answers = await Promise.all([approve('admin2', id), approve('admin3', id)]);
    expect(answers.map((r) => r.statusCode).sort()).toEqual([200, 409]);
    expect(await executions(id, 'auth-rules.promote')).toBe(1);
    expect(await modes(ruleId)).toEqual({ activeVersion: 1, shadowVersion: null });
  });
});

describe('the same policy holds every other write that enforces a version', () => {
  it('a rule created with mode active is held (no rule until approved); created as shadow it is not', async () => {
    const body = { name: 'No ATM', cardId: 'CARD-3001', mode: 'active', conditions: [ATM] };
    const id = held(await call('admin', 'POST', '/v1/admin/auth-rules', body), 'auth-rules.create');
    expect((await call('admin', 'GET', '/v1/admin/auth-rules')).json().result).toEqual([]);
    expect((await call('admin2', 'GET', `/v1/approvals/${id}`)).json().result.request).toEqual({ method: 'POST', path: '/v1/admin/auth-rules', params: {}, body });
    const approved = (await approve('admin2', id)).json().result;
    expect(approved.status).toBe('executed');
    expect(approved.outcome.status).toBe(201);
    const ruleId = approved.outcome.body.result.ruleId as string;
    const rule = await ruleOf(ruleId);
    expect(rule).toMatchObject({ name: 'No ATM', activeVersion: 1, shadowVersion: null });
    expect(rule.versions).toMatchObject([{ version: 1, mode: 'active', createdBy: 'admin' }]);
    expect(await executions(id, 'auth-rules.create')).toBe(1);
    expect(await shadowRule()).toEqual(expect.any(String));
  });

  it('a PATCH with mode active (alone, or with a new definition) is held; one that enforces nothing new runs as today', async () => {
    const ruleId = await shadowRule();
    const url = `/v1/admin/auth-rules/${ruleId}`;
    const alone = held(await call('admin', 'PATCH', url, { mode: 'active' }), 'auth-rules.update');
    const id = held(await call('admin', 'PATCH', url, { conditions: [ATM], mode: 'active' }), 'auth-rules.update');
    expect(await modes(ruleId)).toEqual({ activeVersion: null, shadowVersion: 1 });

    const approved = (await approve('admin2', id)).json().result;
    expect(approved).toMatchObject({ status: 'executed', outcome: { status: 200, body: { result: { activeVersion: 2, shadowVersion: null } } } });
    // The other one was held before the rule changed: it enforces nothing its checker did not see.
    const stale = (await approve('admin2', alone)).json().result;
    expect(stale.status).toBe('executed');
    expect(stale.outcome).toEqual({
      status: 409,
      body: problem(409, 'Auth Rule Changed', `Rule ${ruleId} changed after this request was held for approval; nothing was enforced. Make the request again.`, 'AUTH_RULE_CHANGED'),
    });
    expect(await modes(ruleId)).toEqual({ activeVersion: 2, shadowVersion: null });

    // Enforced already with nothing shadowed, a new shadow version, a rename, stopping enforcement: none is held.
    const same = await call('admin', 'PATCH', url, { mode: 'active' });
    expect(same.statusCode, same.body).toBe(200);
    expect(same.json().result).toMatchObject({ activeVersion: 2, shadowVersion: null });
    const shadowed = await call('admin', 'PATCH', url, { name: 'No gambling or ATM', conditions: [NO_GAMBLING, ATM] });
    expect(shadowed.statusCode, shadowed.body).toBe(200);
    expect(shadowed.json().result).toMatchObject({ name: 'No gambling or ATM', activeVersion: 2, shadowVersion: 3 });
    const off = await call('admin', 'PATCH', url, { mode: 'shadow' });
    expect(off.statusCode, off.body).toBe(200);
    expect(off.json().result).toMatchObject({ activeVersion: null, shadowVersion: 3 });
    expect(await approvals()).toBe(2);
  });

  it('a PATCH refused alone is refused at once: a definition of the other kind', async () => {
    const ruleId = await shadowRule();
    const res = await call('admin', 'PATCH', `/v1/admin/auth-rules/${ruleId}`, { mode: 'active', velocity: { window: '24h', scope: 'card', limitCount: 3 } });
    expect(res.statusCode).toBe(400);
    expect(res.json().fieldErrors).toEqual([{ field: 'velocity', message: 'Invalid', objectName: 'authRulePatch' }]);
    expect(await approvals()).toBe(0);
  });

  it('the policy has no condition to name', async () => {
    const res = await call('admin', 'PATCH' as 'POST', '/v1/admin/config', { approvals: [{ operation: 'auth-rules.promote', when: { roles: ['Admin'] }, approvers: ['Admin'] }] });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(problem(400, 'Bad Request', "Tenant 'demo' has an invalid configuration: /approvals/0/when/roles: not a condition of auth-rules.promote (it has none)"));
  });
});
