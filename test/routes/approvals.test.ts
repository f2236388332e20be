// Four eyes (issue 30): a credit-limit upgrade above the tenant's threshold is not executed but held (202 in the
// envelope, Location of its approval); a second person approves it and it executes once, through the pipeline;
// rejection, cancellation and expiry execute nothing; the races (parallel checkers, approve after cancel or
// expiry) execute nothing twice. Runs on PGlite, and on PostgreSQL when DATABASE_URL is set.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { demoFixtures } from '../../connectors/mock/fixtures.js';
import type { MockCore } from '../../connectors/mock/index.js';
import type { ApprovalPolicy } from '../../schemas/approvals.js';

import { updateTenant } from '../../src/services/tenancy/tenant-admin.js';
import { FETCH_LIMIT_URL } from '../../src/operations/credit-line.js';
import { LIMIT_URL, PASSWORD, PROBLEM_BASE, createTestApp, type TestApp } from '../helpers/app.js';
import { problem } from '../helpers/problems.js';

let t: TestApp;
const tokens = new Map<string, string>();

/** A token of any user of the tenant (the demo ones and those this test adds). */
async function tokenOf(username: string, tenant = 'demo'): Promise<string> {
  const cached = tokens.get(`${tenant}/${username}`);
  if (cached) return cached;
  const res = await t.inject({ method: 'POST', url: '/api/authenticate', headers: { TENANT: tenant }, payload: { username, password: await t.encrypt(PASSWORD, tenant) } });
  expect(res.statusCode, res.body).toBe(200);
  const token = res.json().id_token as string;
  tokens.set(`${tenant}/${username}`, token);
  return token;
}

const CHECKERS = ['admin2', 'admin3', 'admin4', 'admin5'];

beforeAll(async () => {
  t = await createTestApp();
  for (const u of CHECKERS) await t.app.cardline.users.add('demo', u, 'Admin', PASSWORD);
});
afterAll(() => t.close());

async function core(): Promise<MockCore> {
  return (await t.app.cardline.connectors.forTenant((await t.app.cardline.tenants.get('demo'))!)) as unknown as MockCore;
}

async function policy(...policies: Partial<ApprovalPolicy>[]): Promise<void> {
  await updateTenant(t.app.cardline, 'demo', { config: { approvals: policies } });
}

beforeEach(async () => {
  Object.assign((await core()).state, demoFixtures());
  await t.db.query('DELETE FROM approvals');
  await policy({ operation: 'credit-limit.upgrade', when: { newLimitAbove: '100000.00' }, approvers: ['Admin'], approvals: 1 });
});

const upgrade = async (user: string, amount: string, key?: string, entityId = 'ENT-1001') =>
  t.inject({
    method: 'POST',
    url: LIMIT_URL,
    headers: { TENANT: 'demo', authorization: `Bearer ${await tokenOf(user)}`, ...(key ? { 'idempotency-key': key } : {}) },
    payload: { entityId, amount },
  });
const limitOf = async (entityId = 'ENT-1001') =>
  (await t.inject({ method: 'POST', url: FETCH_LIMIT_URL, headers: { TENANT: 'demo', authorization: `Bearer ${await tokenOf('viewer')}` }, payload: { entityId } })).json().result
    .creditLimit as string;
const call = async (user: string, method: 'GET' | 'POST', url: string, payload?: object, tenant = 'demo'): Promise<LightMyRequestResponse> =>
  t.inject({ method, url, headers: { 'X-TENANT-ID': tenant, authorization: `Bearer ${await tokenOf(user, tenant)}` }, ...(payload ? { payload } : {}) });
const approve = (user: string, id: string) => call(user, 'POST', `/v1/approvals/${id}/approve`);

/** The approval id a 202 names in its Location. */
function heldId(res: LightMyRequestResponse): string {
  expect(res.statusCode, res.body).toBe(202);
  const location = String(res.headers.location);
  expect(location).toMatch(/^\/v1\/approvals\/[0-9a-f-]{36}$/);
  return location.slice('/v1/approvals/'.length);
}

/** How many times the held request was executed: its audit records (in the maker's name, naming the approval). */
const executions = async (id: string) =>
  (await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM audit_log WHERE action = 'credit-limit.upgrade' AND target->>'approvalId' = $1 AND outcome <> 'pending'`, [id])).rows[0]!.n;
const eventsOf = async (id: string) =>
  (await t.db.query<{ type: string }>(`SELECT type FROM outbox WHERE tenant_id = 'demo' AND (aggregate_id = $1 OR request_id IN (SELECT request_id FROM audit_log WHERE target->>'approvalId' = $1)) ORDER BY audit_seq, id`, [id])).rows.map((r) => r.type);

describe('a limit above the threshold waits for a second person', () => {
  it('below the threshold the upgrade runs as today', async () => {
    const res = await upgrade('integration', '90000.00');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ result: true, exception: null, pagination: null });
    expect(await limitOf()).toBe('90000.00');
  });

  it('above it: 202 in the envelope naming the approval, with its Location; the limit stays as it was until approved', async () => {
    const res = await upgrade('integration', '150000.00');
    const id = heldId(res);
    expect(res.json()).toEqual({
      result: null,
      exception: {
        errorCode: 'ERR_202',
        shortMessage: 'Accepted',
        detailMessage: `The request needs approval (credit-limit.upgrade): it waits as approval ${id} and is executed once approved; see GET /v1/approvals/${id}.`,
      },
      pagination: null,
    });
    expect(await limitOf()).toBe('50000.00');

    // The checker sees exactly what will execute.
    const read = await call('admin', 'GET', `/v1/approvals/${id}`);
    expect(read.statusCode).toBe(200);
    expect(read.json().result).toMatchObject({
      approvalId: id,
      operation: 'credit-limit.upgrade',
      status: 'pending',
      maker: { username: 'integration', role: 'API Integration' },
      request: { method: 'POST', path: LIMIT_URL, params: {}, body: { entityId: 'ENT-1001', amount: '150000.00' } },
      approvers: ['Admin'],
      approvalsNeeded: 1,
      approvals: [],
      rejection: null,
      outcome: null,
    });

    const approved = await approve('admin', id);
    expect(approved.statusCode, approved.body).toBe(200);
    expect(approved.json().result).toMatchObject({
      status: 'executed',
      approvals: [{ by: 'admin', role: 'Admin' }],
      outcome: { status: 200, body: { result: true, exception: null, pagination: null } },
    });
    expect(await limitOf()).toBe('150000.00');
    expect(await executions(id)).toBe(1);

    // The executed request's record is in the maker's name and names its checker.
    const record = (
      await t.db.query<{ actor: string; role: string; outcome: string; target: Record<string, string> }>(
        `SELECT actor, role, outcome, target FROM audit_log WHERE action = 'credit-limit.upgrade' AND target->>'approvalId' = $1 AND outcome = 'succeeded'`,
        [id],
      )
    ).rows[0]!;
    expect(record).toEqual({ actor: 'integration', role: 'API Integration', outcome: 'succeeded', target: { entityId: 'ENT-1001', approvalId: id, checkers: 'admin' } });
    expect(await eventsOf(id)).toEqual(['approval.requested', 'credit-limit.upgraded', 'approval.executed', 'approval.approved']);
  });

  it('the same Idempotency-Key answers the same 202 and holds one request', async () => {
    const first = await upgrade('integration', '150000.00', 'four-eyes-retry');
    const id = heldId(first);
    const again = await upgrade('integration', '150000.00', 'four-eyes-retry');
    expect(again.statusCode).toBe(202);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.headers.location).toBe(`/v1/approvals/${id}`);
    expect(again.body).toBe(first.body);
    const list = await call('admin', 'GET', '/v1/approvals?status=pending');
    expect(list.json().result.map((a: { approvalId: string }) => a.approvalId)).toEqual([id]);
  });

  it('an increase above an amount or a percentage of the current limit (read from the core) is held; a smaller one runs', async () => {
    await policy({ operation: 'credit-limit.upgrade', when: { increaseAbove: '40000.00', increasePercentAbove: 50 }, approvers: ['Admin'] });
    // 50000 → 74000: +24000, 48 %.
    expect((await upgrade('integration', '74000.00')).statusCode).toBe(200);
    // 74000 → 112000: +38000, 51.4 %.
    heldId(await upgrade('integration', '112000.00'));
    // A limit above the product maximum is refused now, not after an approval.
    const above = await upgrade('integration', '5000000.00');
    expect(above.statusCode).toBe(400);
    expect(await limitOf()).toBe('74000.00');
  });
});

describe('who may decide', () => {
  let id: string;
  beforeEach(async () => {
    id = heldId(await upgrade('admin', '150000.00'));
  });

  it('the maker cannot approve or reject their own request', async () => {
    const own = await approve('admin', id);
    expect(own.statusCode).toBe(403);
    expect(own.json()).toEqual(problem(403, 'Approval By Maker', "'admin' made this request and cannot approve it; a second person must.", 'APPROVAL_BY_MAKER'));
    const rejectOwn = await call('admin', 'POST', `/v1/approvals/${id}/reject`, { reason: 'changed my mind' });
    expect(rejectOwn.statusCode).toBe(403);
    expect(rejectOwn.json().businessCode).toBe('APPROVAL_BY_MAKER');
    expect(await executions(id)).toBe(0);
  });

  it('a checker whose role the policy does not name is refused', async () => {
    const res = await approve('integration', id);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual(problem(403, 'Approval Role', "The role 'API Integration' may not approve credit-limit.upgrade; its policy names Admin.", 'APPROVAL_ROLE'));
    expect(await executions(id)).toBe(0);
  });

  it("another tenant's user does not find the approval", async () => {
    const res = await call('admin', 'POST', `/v1/approvals/${id}/approve`, undefined, 'demo-b');
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual(problem(404, 'Not Found', `This tenant has no approval '${id}'.`));
    expect((await call('admin', 'GET', `/v1/approvals/${id}`, undefined, 'demo-b')).statusCode).toBe(404);
    expect(await executions(id)).toBe(0);
  });

  it('the same token is the maker, whichever user it is presented as', async () => {
    const held = (await t.app.cardline.approvals.get('demo', id))!;
    await expect(t.app.cardline.approvals.approve('demo', id, { by: 'admin2', role: 'Admin', token: held.maker.token })).rejects.toMatchObject({
      init: { businessCode: 'APPROVAL_BY_MAKER' },
    });
  });

  it('only the maker cancels; a cancelled request cannot be approved', async () => {
    const other = await call('admin2', 'POST', `/v1/approvals/${id}/cancel`);
    expect(other.statusCode).toBe(403);
    expect(other.json()).toEqual(problem(403, 'Not The Maker', "Only 'admin', who made this request, may cancel it.", 'APPROVAL_NOT_MAKER'));
    const cancelled = await call('admin', 'POST', `/v1/approvals/${id}/cancel`);
    expect(cancelled.statusCode).toBe(200);
    expect(cancelled.json().result.status).toBe('cancelled');
    const late = await approve('admin2', id);
    expect(late.statusCode).toBe(409);
    expect(late.json()).toEqual(problem(409, 'Approval Not Pending', `Approval ${id} was cancelled by its maker; nothing more can be decided on it.`, 'APPROVAL_NOT_PENDING'));
    expect(await executions(id)).toBe(0);
    expect(await limitOf()).toBe('50000.00');
  });

  it('a rejected request executes nothing, and its reason is kept', async () => {
    const rejected = await call('admin2', 'POST', `/v1/approvals/${id}/reject`, { reason: 'No credit review on file' });
    expect(rejected.statusCode).toBe(200);
    expect(rejected.json().result).toMatchObject({ status: 'rejected', rejection: { by: 'admin2', reason: 'No credit review on file' } });
    expect((await approve('admin3', id)).json().businessCode).toBe('APPROVAL_NOT_PENDING');
    expect(await executions(id)).toBe(0);
    expect(await eventsOf(id)).toEqual(['approval.requested', 'approval.rejected']);
  });

  it('an expired request cannot be approved, executes nothing, and approval.expired is sent once', async () => {
    await t.db.query(`UPDATE approvals SET expires_at = now() - interval '1 second' WHERE id = $1`, [id]);
    const late = await approve('admin2', id);
    expect(late.statusCode).toBe(409);
    expect(late.json().businessCode).toBe('APPROVAL_EXPIRED');
    expect((await call('admin2', 'GET', `/v1/approvals?status=expired`)).json().result.map((a: { approvalId: string }) => a.approvalId)).toEqual([id]);
    expect(await t.app.cardline.approvals.expireDue()).toBe(1);
    expect(await t.app.cardline.approvals.expireDue()).toBe(0);
    expect(await executions(id)).toBe(0);
    expect(await eventsOf(id)).toEqual(['approval.requested', 'approval.expired']);
  });
});

describe('races: nothing executes twice', () => {
  it('four checkers approving at once where one is needed: one executes it, the others are told it is no longer pending', async () => {
    const id = heldId(await upgrade('admin', '150000.00'));
    const answers = await Promise.all(CHECKERS.map((u) => approve(u, id)));
    const statuses = answers.map((r) => r.statusCode).sort();
    expect(statuses).toEqual([200, 409, 409, 409]);
    for (const r of answers.filter((a) => a.statusCode === 409)) expect(r.json().businessCode).toBe('APPROVAL_NOT_PENDING');
    expect(await executions(id)).toBe(1);
    expect(await limitOf()).toBe('150000.00');
  });

  it('two needed, four at once: two approvals count, one of them executes, the others are refused', async () => {
    await policy({ operation: 'credit-limit.upgrade', when: { newLimitAbove: '100000.00' }, approvers: ['Admin'], approvals: 2 });
    const id = heldId(await upgrade('admin', '150000.00'));
    const answers = await Promise.all(CHECKERS.map((u) => approve(u, id)));
    expect(answers.map((r) => r.statusCode).sort()).toEqual([200, 200, 409, 409]);
    const results = answers.filter((r) => r.statusCode === 200).map((r) => r.json().result.status as string).sort();
    expect(results).toEqual(['executed', 'pending']);
    expect(await executions(id)).toBe(1);
    const final = (await call('admin', 'GET', `/v1/approvals/${id}`)).json().result;
    expect(final.approvals).toHaveLength(2);
    expect(final.outcome).toEqual({ status: 200, body: { result: true, exception: null, pagination: null } });
  });

  it('a checker approving twice where two are needed: the second is refused and counts nothing; in parallel too', async () => {
    await policy({ operation: 'credit-limit.upgrade', when: { newLimitAbove: '100000.00' }, approvers: ['Admin'], approvals: 2 });
    const id = heldId(await upgrade('admin', '150000.00'));
    expect((await approve('admin2', id)).json().result.status).toBe('pending');
    const again = await approve('admin2', id);
    expect(again.statusCode).toBe(409);
    expect(again.json()).toEqual(problem(409, 'Approval Already Given', "'admin2' approved this request already; the next approval must come from another person.", 'APPROVAL_ALREADY_GIVEN'));
    const twice = await Promise.all([approve('admin3', id), approve('admin3', id)]);
    expect(twice.map((r) => r.statusCode).sort()).toEqual([200, 409]);
    expect(await executions(id)).toBe(1);
    expect((await call('admin', 'GET', `/v1/approvals/${id}`)).json().result.approvals.map((g: { by: string }) => g.by)).toEqual(['admin2', 'admin3']);
  });

  it('cancel and approve at once: one of them wins, and the request executes at most once', async () => {
    const id = heldId(await upgrade('admin', '150000.00'));
    const [cancel, approval] = await Promise.all([call('admin', 'POST', `/v1/approvals/${id}/cancel`), approve('admin2', id)]);
    expect([cancel.statusCode, approval.statusCode].sort()).toEqual([200, 409]);
    expect(await executions(id)).toBe(approval.statusCode === 200 ? 1 : 0);
  });
});

describe('the other operations a policy may hold', () => {
  const held202 = (res: LightMyRequestResponse, operation: string) => {
    const id = heldId(res);
    expect(res.json()).toEqual({
      type: `${PROBLEM_BASE}/problem-with-message`,
      title: 'Accepted',
      status: 202,
      message: 'error.http.202',
      detail: `The request needs approval (${operation}): it waits as approval ${id} and is executed once approved; see GET /v1/approvals/${id}.`,
    });
    return id;
  };
  const send = async (user: string, method: 'POST' | 'PATCH', url: string, payload: object) =>
    t.inject({ method, url, headers: { 'X-TENANT-ID': 'demo', authorization: `Bearer ${await tokenOf(user)}` }, payload });

  it('a new Admin waits for a second Admin, its password sealed at rest and never shown; a new Read-Only user does not', async () => {
    await policy({ operation: 'user.create', when: { roles: ['Admin'] }, approvers: ['Admin'] });
    const plain = await send('admin', 'POST', '/v1/admin/users', { username: 'reader1', role: 'Read-Only', password: await t.encrypt('reader-Passw0rd-1') });
    expect(plain.statusCode).toBe(201);
    const password = 'eve-Passw0rd-1';
    const id = held202(await send('admin', 'POST', '/v1/admin/users', { username: 'eve', role: 'Admin', password: await t.encrypt(password) }), 'user.create');
    const stored = (await t.db.query<{ request: unknown }>('SELECT request FROM approvals WHERE id = $1', [id])).rows[0]!.request;
    const text = JSON.stringify(stored);
    expect(text).not.toContain(password);
    expect(text).not.toContain('eyJ');
    expect((await call('admin2', 'GET', `/v1/approvals/${id}`)).json().result.request.body).toEqual({ username: 'eve', role: 'Admin', password: '[encrypted]' });
    expect(await t.app.cardline.users.view('demo', 'eve')).toBeNull();

    const approved = await approve('admin2', id);
    expect(approved.statusCode, approved.body).toBe(200);
    expect(approved.json().result.outcome).toMatchObject({ status: 201, body: { result: { username: 'eve', role: 'Admin' } } });
    // The password the maker sent, opened only to execute: eve logs in with it.
    const login = await t.inject({ method: 'POST', url: '/api/authenticate', headers: { TENANT: 'demo' }, payload: { username: 'eve', password: await t.encrypt(password) } });
    expect(login.statusCode).toBe(200);
  });

  it('a promotion to Admin waits; another role change does not', async () => {
    await policy({ operation: 'user.update', when: { roles: ['Admin'] }, approvers: ['Admin'], approvals: 2 });
    await t.app.cardline.users.add('demo', 'bob', 'Read-Only', PASSWORD);
    expect((await send('admin', 'PATCH', '/v1/admin/users/bob', { role: 'Operations' })).statusCode).toBe(200);
    const id = held202(await send('admin', 'PATCH', '/v1/admin/users/bob', { role: 'Admin' }), 'user.update');
    expect((await approve('admin2', id)).json().result.status).toBe('pending');
    expect((await t.app.cardline.users.view('demo', 'bob'))?.role).toBe('Operations');
    expect((await approve('admin3', id)).json().result).toMatchObject({ status: 'executed', outcome: { status: 200, body: { result: { username: 'bob', role: 'Admin' } } } });
    expect((await t.app.cardline.users.view('demo', 'bob'))?.role).toBe('Admin');
  });

  it('a key rotation waits; approved, it rotates once and keys.rotated names the new key', async () => {
    await policy({ operation: 'keys.rotate', approvers: ['Admin'] });
    const before = (await t.app.cardline.keys.list('demo')).filter((k) => k.use === 'sig' && k.status === 'active').map((k) => k.kid);
    const id = held202(await send('admin', 'POST', '/v1/admin/keys/rotate', { use: 'sig' }), 'keys.rotate');
    expect((await t.app.cardline.keys.list('demo')).filter((k) => k.use === 'sig' && k.status === 'active').map((k) => k.kid)).toEqual(before);
    const approved = await approve('admin2', id);
    expect(approved.json().result.outcome.status).toBe(200);
    expect(await eventsOf(id)).toEqual(['approval.requested', 'keys.rotated', 'approval.executed', 'approval.approved']);
  });

  it('with a policy on tenant.config-update, removing the policies is itself held until a second Admin approves', async () => {
    await policy({ operation: 'tenant.config-update', approvers: ['Admin'] }, { operation: 'keys.rotate', approvers: ['Admin'] });
    const id = held202(await send('admin', 'PATCH', '/v1/admin/config', { approvals: null }), 'tenant.config-update');
    expect((await t.app.cardline.tenants.get('demo'))!.config.approvals).toHaveLength(2);
    expect((await approve('admin', id)).json().businessCode).toBe('APPROVAL_BY_MAKER');
    const approved = await approve('admin2', id);
    expect(approved.json().result.outcome.status).toBe(200);
    expect((await t.app.cardline.tenants.get('demo'))!.config.approvals).toBeUndefined();
  });
});

describe('policies', () => {
  it('a policy naming an operation that cannot wait for approval is refused with the reason; the configuration is unchanged', async () => {
    const res = await call('admin', 'PATCH' as 'POST', '/v1/admin/config', { approvals: [{ operation: 'card.fly', approvers: ['Admin'] }] });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(
      problem(
        400,
        'Bad Request',
        "Tenant 'demo' has an invalid configuration: /approvals/0/operation: 'card.fly' is not an operation that can wait for approval (credit-limit.upgrade, user.create, user.update, keys.rotate, tenant.config-update, auth-rules.promote)",
      ),
    );
    const config = await call('admin', 'GET', '/v1/admin/config');
    expect(config.json().result.approvals).toEqual([
      { operation: 'credit-limit.upgrade', when: { newLimitAbove: '100000.00' }, approvers: ['Admin'], approvals: 1, expiresAfterSeconds: 86400 },
    ]);
  });

  it('a condition of another operation is refused', async () => {
    const res = await call('admin', 'PATCH' as 'POST', '/v1/admin/config', { approvals: [{ operation: 'keys.rotate', when: { roles: ['Admin'] }, approvers: ['Admin'] }] });
    expect(res.statusCode).toBe(400);
    expect(res.json().detail).toBe("Tenant 'demo' has an invalid configuration: /approvals/0/when/roles: not a condition of keys.rotate (it has none)");
  });

  it('the list filters by status, operation and maker, and pages by cursor', async () => {
    const ids = [];
    for (const amount of ['150000.00', '160000.00', '170000.00']) ids.push(heldId(await upgrade('admin', amount)));
    ids.push(heldId(await upgrade('integration', '180000.00')));
    const page1 = (await call('viewer', 'GET', '/v1/approvals?maker=admin&operation=credit-limit.upgrade&limit=2')).json();
    expect(page1.result.map((a: { approvalId: string }) => a.approvalId)).toEqual(ids.slice(0, 2));
    const page2 = (await call('viewer', 'GET', `/v1/approvals?maker=admin&limit=2&cursor=${page1.pagination.nextCursor}`)).json();
    expect(page2.result.map((a: { approvalId: string }) => a.approvalId)).toEqual([ids[2]]);
    expect(page2.pagination.nextCursor).toBeNull();
    expect((await call('viewer', 'GET', '/v1/approvals?status=executed')).json().result).toEqual([]);
    const bad = await call('viewer', 'GET', '/v1/approvals?cursor=nope');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().fieldErrors).toEqual([{ field: 'cursor', message: 'Invalid', objectName: 'approvalListRequest' }]);
  });
});

