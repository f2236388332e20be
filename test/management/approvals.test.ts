// Four eyes on the management listener: the operator sets and reads a tenant's approval policies (its PATCH is
// never held), lists, reads, approves and rejects the tenant's held requests under the same rules as a checker
// of the bank (never the maker, a role the policy names: `Operator`), each decision recorded in the tenant's
// trail with the operator's key name. Every bad input a 4xx with its exact body, nothing executed. Runs on
// PGlite, and on PostgreSQL when DATABASE_URL is set.
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { demoFixtures } from '../../connectors/mock/fixtures.js';
import type { MockCore } from '../../connectors/mock/index.js';
import type { ApprovalPolicy } from '../../schemas/approvals.js';
import { FETCH_LIMIT_URL } from '../../src/operations/credit-line.js';
import { updateTenant } from '../../src/services/tenancy/tenant-admin.js';
import { LIMIT_URL, PASSWORD, createTestApp, type TestApp } from '../helpers/app.js';
import { problem, validationProblem as invalid } from '../helpers/problems.js';

let t: TestApp;
let m: FastifyInstance;
let dana: string;
let erin: string;

beforeAll(async () => {
  t = await createTestApp();
  m = await t.management();
  dana = await t.operatorKey('ops-dana');
  erin = await t.operatorKey('ops-erin');
  await t.app.cardline.users.add('demo', 'admin2', 'Admin', PASSWORD);
});
afterAll(() => t.close());

const core = async () => (await t.app.cardline.connectors.forTenant((await t.app.cardline.tenants.get('demo'))!)) as unknown as MockCore;
const policy = (...policies: Partial<ApprovalPolicy>[]) => updateTenant(t.app.cardline, 'demo', { config: { approvals: policies } });

beforeEach(async () => {
  Object.assign((await core()).state, demoFixtures());
  await t.db.query('DELETE FROM approvals');
  await policy({ operation: 'credit-limit.upgrade', when: { newLimitAbove: '100000.00' }, approvers: ['Admin', 'Operator'] });
});

const op = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: unknown, key = dana, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> =>
  m.inject({ method, url, headers: { authorization: `Bearer ${key}`, ...headers }, ...(payload === undefined ? {} : { payload: payload as object }) });

const asUser = async (username: string) => {
  const res = await t.inject({ method: 'POST', url: '/api/authenticate', headers: { TENANT: 'demo' }, payload: { username, password: await t.encrypt(PASSWORD) } });
  return res.json().id_token as string;
};

/** The API Integration user raises ENT-1001's limit; above the threshold it is held: its approval id. */
async function held(amount = '150000.00'): Promise<string> {
  const res = await t.inject({ method: 'POST', url: LIMIT_URL, headers: { TENANT: 'demo', authorization: `Bearer ${await t.token('API Integration')}` }, payload: { entityId: 'ENT-1001', amount } });
  expect(res.statusCode, res.body).toBe(202);
  return String(res.headers.location).slice('/v1/approvals/'.length);
}

const limit = async () =>
  (await t.inject({ method: 'POST', url: FETCH_LIMIT_URL, headers: { TENANT: 'demo', authorization: `Bearer ${await t.token('Read-Only')}` }, payload: { entityId: 'ENT-1001' } })).json().result
    .creditLimit as string;

/** How many times the held request ran: the records in its maker's name that name the approval. */
const executions = async (id: string) =>
  (await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM audit_log WHERE action = 'credit-limit.upgrade' AND target->>'approvalId' = $1 AND outcome <> 'pending'`, [id])).rows[0]!.n;

describe("the operator and a tenant's approval policies", () => {
  it('sets them by PATCH /v1/tenants/{id} and reads them back as stored, the defaults filled in', async () => {
    const set = await op('PATCH', '/v1/tenants/demo', {
      config: { approvals: [{ operation: 'user.create', when: { roles: ['Admin'] }, approvers: ['Operator'], approvals: 2, expiresAfterSeconds: 3600 }, { operation: 'keys.rotate', approvers: ['Admin'] }] },
    });
    expect(set.statusCode, set.body).toBe(200);
    const read = await op('GET', '/v1/tenants/demo');
    expect(read.json().result.config.approvals).toEqual([
      { operation: 'user.create', when: { roles: ['Admin'] }, approvers: ['Operator'], approvals: 2, expiresAfterSeconds: 3600 },
      { operation: 'keys.rotate', approvers: ['Admin'], approvals: 1, expiresAfterSeconds: 86400 },
    ]);
    const changed = await t.db.query<{ actor: string; role: string; status: number }>(
      "SELECT actor, role, status FROM audit_log WHERE tenant_id = 'demo' AND action = 'tenant.update' ORDER BY seq DESC LIMIT 1",
    );
    expect(changed.rows).toEqual([{ actor: 'ops-dana', role: 'Operator', status: 200 }]);
  });

  it('is not held by a policy on tenant.config-update: the operator is outside the bank\'s four eyes', async () => {
    await policy({ operation: 'tenant.config-update', approvers: ['Admin'] });
    const res = await op('PATCH', '/v1/tenants/demo', { config: { approvals: null } });
    expect(res.statusCode, res.body).toBe(200);
    expect((await t.app.cardline.tenants.get('demo'))!.config.approvals).toBeUndefined();
    expect((await t.db.query('SELECT 1 FROM approvals')).rows).toEqual([]);
  });

  it('refuses a policy naming an unknown operation, or a role that approves nothing, and changes nothing', async () => {
    const before = (await op('GET', '/v1/tenants/demo')).json().result.config.approvals;
    const unknown = await op('PATCH', '/v1/tenants/demo', { config: { approvals: [{ operation: 'card.fly', approvers: ['Operator'] }] } });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json()).toEqual(
      problem(
        400,
        'Bad Request',
        "Tenant 'demo' has an invalid configuration: /approvals/0/operation: 'card.fly' is not an operation that can wait for approval (credit-limit.upgrade, user.create, user.update, keys.rotate, tenant.config-update, auth-rules.promote)",
      ),
    );
    const role = await op('PATCH', '/v1/tenants/demo', { config: { approvals: [{ operation: 'keys.rotate', approvers: ['operator'] }] } });
    expect(role.statusCode).toBe(400);
    expect(role.json()).toEqual(
      problem(400, 'Bad Request', "Tenant 'demo' has an invalid configuration: /approvals/0/approvers/0: must be one of Admin, Operations, API Integration, Read-Only, Operator"),
    );
    expect((await op('GET', '/v1/tenants/demo')).json().result.config.approvals).toEqual(before);
  });
});

describe("a tenant's approvals, listed and read by the operator", () => {
  it('lists them with filters and a cursor, oldest first, and reads exactly what will execute', async () => {
    const ids = [await held('150000.00'), await held('160000.00'), await held('170000.00')];
    const page1 = await op('GET', '/v1/tenants/demo/approvals?status=pending&operation=credit-limit.upgrade&maker=integration&limit=2');
    expect(page1.statusCode, page1.body).toBe(200);
    expect(page1.json().result.map((a: { approvalId: string }) => a.approvalId)).toEqual(ids.slice(0, 2));
    const page2 = (await op('GET', `/v1/tenants/demo/approvals?status=pending&limit=2&cursor=${page1.json().pagination.nextCursor}`)).json();
    expect(page2.result.map((a: { approvalId: string }) => a.approvalId)).toEqual([ids[2]]);
    expect(page2.pagination).toEqual({ nextCursor: null });
    expect((await op('GET', '/v1/tenants/demo/approvals?maker=admin')).json().result).toEqual([]);
    expect((await op('GET', '/v1/tenants/demo-b/approvals')).json().result).toEqual([]);

    const read = await op('GET', `/v1/tenants/demo/approvals/${ids[0]}`);
    expect(read.statusCode).toBe(200);
    expect(read.json().result).toMatchObject({
      approvalId: ids[0],
      operation: 'credit-limit.upgrade',
      status: 'pending',
      maker: { username: 'integration', role: 'API Integration' },
      request: { method: 'POST', path: LIMIT_URL, params: {}, body: { entityId: 'ENT-1001', amount: '150000.00' } },
      approvers: ['Admin', 'Operator'],
      approvalsNeeded: 1,
      approvals: [],
      outcome: null,
    });
    // Page views are not recorded (decision 0292).
    expect((await t.db.query("SELECT 1 FROM audit_log WHERE role = 'Operator' AND action LIKE 'approvals.%'")).rows).toEqual([]);
  });

  it('answers a bad query, a bad id, another tenant\'s approval and an unknown tenant with a 4xx, exactly', async () => {
    const id = await held();
    const cases: [string, number, unknown][] = [
      ['/v1/tenants/demo/approvals?status=waiting', 400, invalid('approvalListRequest', ['status', 'Invalid'])],
      ['/v1/tenants/demo/approvals?cursor=nope', 400, invalid('approvalListRequest', ['cursor', 'Invalid'])],
      ['/v1/tenants/demo/approvals?limit=0', 400, invalid('approvalListRequest', ['limit', 'Min'])],
      ['/v1/tenants/demo/approvals?who=me', 400, invalid('approvalListRequest', ['who', 'UnknownProperty'])],
      ['/v1/tenants/demo/approvals/not-an-id', 400, invalid('approvalRequest', ['approvalId', 'Pattern'])],
      [`/v1/tenants/demo-b/approvals/${id}`, 404, problem(404, 'Not Found', `This tenant has no approval '${id}'.`)],
      [`/v1/tenants/nobank/approvals/${id}`, 404, problem(404, 'Not Found', "There is no tenant 'nobank'.")],
    ];
    for (const [url, status, body] of cases) {
      const res = await op('GET', url);
      expect({ url, status: res.statusCode, body: res.json() }).toEqual({ url, status, body });
    }
    const unauthenticated = await m.inject({ method: 'GET', url: '/v1/tenants/demo/approvals' });
    expect(unauthenticated.statusCode).toBe(401);
    // A tenant's token is not an operator key.
    const token = await m.inject({ method: 'GET', url: '/v1/tenants/demo/approvals', headers: { authorization: `Bearer ${await t.token('Admin')}` } });
    expect(token.statusCode).toBe(401);
  });
});

describe('the operator as a checker', () => {
  it('approves where the policy names Operator: the request executes once in its maker\'s name, the operator recorded as its checker in the tenant\'s trail', async () => {
    const id = await held();
    expect(await limit()).toBe('50000.00');
    const res = await op('POST', `/v1/tenants/demo/approvals/${id}/approve`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().result).toMatchObject({
      status: 'executed',
      approvals: [{ by: 'operator:ops-dana', role: 'Operator' }],
      outcome: { status: 200, body: { result: true, exception: null, pagination: null } },
    });
    expect(await limit()).toBe('150000.00');
    expect(await executions(id)).toBe(1);
    // The decision: the tenant's trail, the operator as actor; the execution: the maker's, naming the checker.
    const records = await t.db.query<{ actor: string; role: string; action: string; target: Record<string, string>; outcome: string }>(
      "SELECT actor, role, action, target, outcome FROM audit_log WHERE tenant_id = 'demo' AND target->>'approvalId' = $1 AND outcome <> 'pending' ORDER BY seq",
      [id],
    );
    expect(records.rows).toEqual([
      { actor: 'integration', role: 'API Integration', action: 'credit-limit.upgrade', target: { entityId: 'ENT-1001', approvalId: id, checkers: 'operator:ops-dana' }, outcome: 'succeeded' },
      { actor: 'ops-dana', role: 'Operator', action: 'approvals.approve', target: { tenantId: 'demo', approvalId: id }, outcome: 'succeeded' },
    ]);
    expect((await t.db.query("SELECT 1 FROM audit_log WHERE tenant_id = '_platform' AND target->>'approvalId' = $1", [id])).rows).toEqual([]);
    const events = await t.db.query<{ type: string; payload: Record<string, unknown> }>(
      "SELECT type, payload FROM outbox WHERE tenant_id = 'demo' AND type = 'approval.approved' AND payload->>'approvalId' = $1",
      [id],
    );
    expect(events.rows.map((e) => e.payload)).toEqual([{ approvalId: id, operation: 'credit-limit.upgrade', by: 'operator:ops-dana', approvals: 1, approvalsNeeded: 1 }]);
  });

  it('is refused where the policy does not name Operator, and nothing executes', async () => {
    await policy({ operation: 'credit-limit.upgrade', when: { newLimitAbove: '100000.00' }, approvers: ['Admin'] });
    const id = await held();
    const res = await op('POST', `/v1/tenants/demo/approvals/${id}/approve`);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual(problem(403, 'Approval Role', "The role 'Operator' may not approve credit-limit.upgrade; its policy names Admin.", 'APPROVAL_ROLE'));
    const reject = await op('POST', `/v1/tenants/demo/approvals/${id}/reject`, { reason: 'no' });
    expect(reject.statusCode).toBe(403);
    expect(reject.json()).toEqual(problem(403, 'Approval Role', "The role 'Operator' may not reject credit-limit.upgrade; its policy names Admin.", 'APPROVAL_ROLE'));
    expect(await executions(id)).toBe(0);
    expect(await limit()).toBe('50000.00');
    const refused = await t.db.query<{ actor: string; action: string; outcome: string; status: number }>(
      "SELECT actor, action, outcome, status FROM audit_log WHERE tenant_id = 'demo' AND role = 'Operator' AND target->>'approvalId' = $1 ORDER BY seq",
      [id],
    );
    expect(refused.rows).toEqual([
      { actor: 'ops-dana', action: 'approvals.approve', outcome: 'refused', status: 403 },
      { actor: 'ops-dana', action: 'approvals.reject', outcome: 'refused', status: 403 },
    ]);
  });

  it('counts once where two are needed: a bank Admin and the operator execute it; the same operator twice is refused', async () => {
    await policy({ operation: 'credit-limit.upgrade', when: { newLimitAbove: '100000.00' }, approvers: ['Admin', 'Operator'], approvals: 2 });
    const id = await held();
    expect((await op('POST', `/v1/tenants/demo/approvals/${id}/approve`)).json().result.status).toBe('pending');
    const again = await op('POST', `/v1/tenants/demo/approvals/${id}/approve`);
    expect(again.statusCode).toBe(409);
    expect(again.json()).toEqual(
      problem(409, 'Approval Already Given', "'operator:ops-dana' approved this request already; the next approval must come from another person.", 'APPROVAL_ALREADY_GIVEN'),
    );
    expect(await limit()).toBe('50000.00');
    const admin = await t.inject({ method: 'POST', url: `/v1/approvals/${id}/approve`, headers: { 'X-TENANT-ID': 'demo', authorization: `Bearer ${await asUser('admin2')}` } });
    expect(admin.json().result).toMatchObject({ status: 'executed', approvals: [{ by: 'operator:ops-dana' }, { by: 'admin2' }] });
    expect(await executions(id)).toBe(1);
    expect(await limit()).toBe('150000.00');
  });

  it('two operators where two are needed: each key is a person; approving at once, it executes once', async () => {
    await policy({ operation: 'credit-limit.upgrade', when: { newLimitAbove: '100000.00' }, approvers: ['Operator'], approvals: 2 });
    const id = await held();
    const answers = await Promise.all([dana, erin].map((key) => op('POST', `/v1/tenants/demo/approvals/${id}/approve`, undefined, key)));
    expect(answers.map((r) => r.statusCode)).toEqual([200, 200]);
    expect(answers.map((r) => r.json().result.status as string).sort()).toEqual(['executed', 'pending']);
    expect(await executions(id)).toBe(1);
  });

  it('the operator and a bank Admin approving at once where one is needed: one executes it, the other gets 409', async () => {
    const id = await held();
    const token = await asUser('admin2');
    const [byOperator, byAdmin] = await Promise.all([
      op('POST', `/v1/tenants/demo/approvals/${id}/approve`),
      t.inject({ method: 'POST', url: `/v1/approvals/${id}/approve`, headers: { 'X-TENANT-ID': 'demo', authorization: `Bearer ${token}` } }),
    ]);
    expect([byOperator.statusCode, byAdmin.statusCode].sort()).toEqual([200, 409]);
    expect([byOperator, byAdmin].find((r) => r.statusCode === 409)!.json().businessCode).toBe('APPROVAL_NOT_PENDING');
    expect(await executions(id)).toBe(1);
    expect(await limit()).toBe('150000.00');
  });

  it('the same Idempotency-Key replays the approval and executes nothing again', async () => {
    const id = await held();
    const first = await op('POST', `/v1/tenants/demo/approvals/${id}/approve`, undefined, dana, { 'idempotency-key': 'approve-once' });
    const again = await op('POST', `/v1/tenants/demo/approvals/${id}/approve`, undefined, dana, { 'idempotency-key': 'approve-once' });
    expect(again.statusCode).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toBe(first.body);
    expect(await executions(id)).toBe(1);
  });

  it('rejects with a reason: nothing executes, and a later approval is refused', async () => {
    const id = await held();
    const res = await op('POST', `/v1/tenants/demo/approvals/${id}/reject`, { reason: 'No credit review on file' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().result).toMatchObject({ status: 'rejected', rejection: { by: 'operator:ops-dana', reason: 'No credit review on file' }, outcome: null });
    const late = await op('POST', `/v1/tenants/demo/approvals/${id}/approve`, undefined, erin);
    expect(late.statusCode).toBe(409);
    expect(late.json()).toEqual(problem(409, 'Approval Not Pending', `Approval ${id} was rejected; nothing more can be decided on it.`, 'APPROVAL_NOT_PENDING'));
    expect(await executions(id)).toBe(0);
    expect(await limit()).toBe('50000.00');
    const recorded = await t.db.query<{ actor: string; action: string; status: number }>(
      "SELECT actor, action, status FROM audit_log WHERE tenant_id = 'demo' AND role = 'Operator' AND target->>'approvalId' = $1 ORDER BY seq",
      [id],
    );
    expect(recorded.rows).toEqual([
      { actor: 'ops-dana', action: 'approvals.reject', status: 200 },
      { actor: 'ops-erin', action: 'approvals.approve', status: 409 },
    ]);
  });

  it('answers an expired request 409 APPROVAL_EXPIRED, executing nothing', async () => {
    const id = await held();
    await t.db.query("UPDATE approvals SET expires_at = now() - interval '1 second' WHERE id = $1", [id]);
    const res = await op('POST', `/v1/tenants/demo/approvals/${id}/approve`);
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual(problem(409, 'Approval Expired', expect.stringMatching(new RegExp(`^Approval ${id} expired at .+; nothing was executed\\.$`)) as unknown as string, 'APPROVAL_EXPIRED'));
    expect(await executions(id)).toBe(0);
  });

  it('refuses bad decisions with a 4xx, exactly, and changes nothing', async () => {
    const id = await held();
    const cases: [string, unknown, number, unknown][] = [
      [`/v1/tenants/demo/approvals/${id}/reject`, undefined, 400, invalid('approvalRejection', ['body', 'TypeMismatch'])],
      [`/v1/tenants/demo/approvals/${id}/reject`, {}, 400, invalid('approvalRejection', ['reason', 'NotNull'])],
      [`/v1/tenants/demo/approvals/${id}/reject`, { reason: '' }, 400, invalid('approvalRejection', ['reason', 'NotBlank'])],
      [`/v1/tenants/demo/approvals/${id}/reject`, { reason: 'x'.repeat(501) }, 400, invalid('approvalRejection', ['reason', 'Size'])],
      [`/v1/tenants/demo/approvals/${id}/reject`, { reason: 'no', extra: 1 }, 400, invalid('approvalRejection', ['extra', 'UnknownProperty'])],
      [`/v1/tenants/demo/approvals/${id}/approve`, { force: true }, 400, invalid('approvalDecision', ['force', 'UnknownProperty'])],
      ['/v1/tenants/demo/approvals/not-an-id/approve', undefined, 400, invalid('approvalDecision', ['approvalId', 'Pattern'])],
      [`/v1/tenants/demo-b/approvals/${id}/approve`, undefined, 404, problem(404, 'Not Found', `This tenant has no approval '${id}'.`)],
      [`/v1/tenants/demo-b/approvals/${id}/reject`, { reason: 'not yours' }, 404, problem(404, 'Not Found', `This tenant has no approval '${id}'.`)],
      [`/v1/tenants/nobank/approvals/${id}/approve`, undefined, 404, problem(404, 'Not Found', "There is no tenant 'nobank'.")],
    ];
    const answered = [];
    for (const [url, payload] of cases) {
      const res = await op('POST', url, payload);
      answered.push([url, payload, res.statusCode, res.json()]);
    }
    expect(answered).toEqual(cases);
    expect((await op('GET', `/v1/tenants/demo/approvals/${id}`)).json().result).toMatchObject({ status: 'pending', approvals: [], rejection: null });
    expect(await executions(id)).toBe(0);
  });
});
