// `cardline approvals list|show|approve|reject` against a running gateway's management API (--admin-url,
// CARDLINE_OPERATOR_KEY): what is held and what executes, the operator's decisions (only where the policy names
// Operator), the refusals as one line with the API's words and exit code 1, and bad arguments refused before
// anything is sent.
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { demoFixtures } from '../../connectors/mock/fixtures.js';
import type { MockCore } from '../../connectors/mock/index.js';
import type { ApprovalPolicy } from '../../schemas/approvals.js';
import { FETCH_LIMIT_URL } from '../../src/operations/credit-line.js';
import { updateTenant } from '../../src/services/tenancy/tenant-admin.js';
import { LIMIT_URL, createTestApp, type TestApp } from '../helpers/app.js';
import { cliInProcess, operatorShell } from '../helpers/cli.js';
import { BUILD_TIMEOUT_MS, ensureBuilt, runProcess } from '../helpers/spawn.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

let t: TestApp;
let m: FastifyInstance;
let url: string;
let operator: string;

/** An operator's shell: the admin URL and key, nothing that selects a store. */
const shell = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => operatorShell(url, operator, extra);
const cli = (args: string[], extra: NodeJS.ProcessEnv = {}) => cliInProcess(args, shell(extra));
/** The real command, in a process of its own: commander's own refusals (a bad argument) exit the process. */
const cliProcess = (args: string[]) => runProcess(process.execPath, [join(ROOT, 'bin', 'cardline.js'), ...args], { cwd: ROOT, env: shell() });

beforeAll(ensureBuilt, BUILD_TIMEOUT_MS);
beforeAll(async () => {
  t = await createTestApp();
  m = await t.management();
  url = await m.listen({ host: '127.0.0.1', port: 0 });
  operator = await t.operatorKey('ops-frank');
});
afterAll(() => t?.close());

const core = async () => (await t.app.cardline.connectors.forTenant((await t.app.cardline.tenants.get('demo'))!)) as unknown as MockCore;
const policy = (...policies: Partial<ApprovalPolicy>[]) => updateTenant(t.app.cardline, 'demo', { config: { approvals: policies } });

beforeEach(async () => {
  Object.assign((await core()).state, demoFixtures());
  await t.db.query('DELETE FROM approvals');
  await policy({ operation: 'credit-limit.upgrade', when: { newLimitAbove: '100000.00' }, approvers: ['Admin', 'Operator'] });
});

async function held(amount: string): Promise<string> {
  const res = await t.inject({ method: 'POST', url: LIMIT_URL, headers: { TENANT: 'demo', authorization: `Bearer ${await t.token('API Integration')}` }, payload: { entityId: 'ENT-1001', amount } });
  expect(res.statusCode, res.body).toBe(202);
  return String(res.headers.location).slice('/v1/approvals/'.length);
}
const limit = async () =>
  (await t.inject({ method: 'POST', url: FETCH_LIMIT_URL, headers: { TENANT: 'demo', authorization: `Bearer ${await t.token('Read-Only')}` }, payload: { entityId: 'ENT-1001' } })).json().result
    .creditLimit as string;

describe('cardline --admin-url approvals', () => {
  it('list shows what waits, filtered; show prints exactly what will execute', async () => {
    const a = await held('150000.00');
    const b = await held('160000.00');
    await t.app.cardline.approvals.cancel('demo', b, 'integration');
    const listed = await cli(['approvals', 'list', '--tenant', 'demo', '--status', 'pending']);
    expect(listed.code, listed.stderr).toBe(0);
    const lines = listed.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^ID +OPERATION +STATUS +MAKER +APPROVALS +EXPIRES +REQUEST$/);
    expect(lines[1]).toMatch(new RegExp(`^${a}  credit-limit\\.upgrade  pending  integration  0/1 +\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z  POST ${LIMIT_URL} \\{.+\\}$`));
    // What executes, as stored: the body's fields in the store's order.
    expect(JSON.parse(lines[1]!.slice(lines[1]!.indexOf('{')))).toEqual({ entityId: 'ENT-1001', amount: '150000.00' });
    const all = JSON.parse((await cli(['approvals', 'list', '--tenant', 'demo', '--json'])).stdout) as { approvalId: string; status: string }[];
    expect(all.map((x) => [x.approvalId, x.status])).toEqual([
      [a, 'pending'],
      [b, 'cancelled'],
    ]);
    expect((await cli(['approvals', 'list', '--tenant', 'demo', '--maker', 'admin'])).stdout).toBe("No approval of tenant 'demo' made by admin.\n");

    const shown = await cli(['approvals', 'show', '--tenant', 'demo', a]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({
      approvalId: a,
      status: 'pending',
      maker: { username: 'integration', role: 'API Integration' },
      request: { method: 'POST', path: LIMIT_URL, body: { entityId: 'ENT-1001', amount: '150000.00' } },
      approvers: ['Admin', 'Operator'],
    });
  });

  it('approve executes the held request and says what it answered; the same again is refused with the API\'s words', async () => {
    const id = await held('150000.00');
    const approved = await cli(['approvals', 'approve', '--tenant', 'demo', id]);
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stdout).toBe(`Approval ${id} approved (1 of 1 approval) and executed: credit-limit.upgrade answered 200.\n`);
    expect(await limit()).toBe('150000.00');
    const again = await cli(['approvals', 'approve', '--tenant', 'demo', id]);
    expect(again.code).toBe(1);
    expect(again.stdout).toBe('');
    expect(again.stderr).toBe(
      `error: The management API refused: 409 Approval Not Pending [APPROVAL_NOT_PENDING]: Approval ${id} was executed; nothing more can be decided on it.\n`,
    );
    const recorded = await t.db.query<{ actor: string; action: string; status: number }>(
      "SELECT actor, action, status FROM audit_log WHERE tenant_id = 'demo' AND role = 'Operator' AND target->>'approvalId' = $1 ORDER BY seq",
      [id],
    );
    expect(recorded.rows).toEqual([
      { actor: 'ops-frank', action: 'approvals.approve', status: 200 },
      { actor: 'ops-frank', action: 'approvals.approve', status: 409 },
    ]);
  });

  it('approve where two are needed says it waits; --json prints the approval', async () => {
    await policy({ operation: 'credit-limit.upgrade', when: { newLimitAbove: '100000.00' }, approvers: ['Operator'], approvals: 2 });
    const id = await held('150000.00');
    expect((await cli(['approvals', 'approve', '--tenant', 'demo', id])).stdout).toBe(`Approval ${id} approved (1 of 2 approvals); it waits for another approver.\n`);
    const second = await t.operatorKey('ops-gina');
    const done = await cli(['approvals', 'approve', '--tenant', 'demo', id, '--json'], { CARDLINE_OPERATOR_KEY: second });
    expect(JSON.parse(done.stdout)).toMatchObject({ status: 'executed', approvals: [{ by: 'operator:ops-frank' }, { by: 'operator:ops-gina' }], outcome: { status: 200 } });
  });

  it('an approved request that is refused when it runs is spent all the same, and the line says what it answered', async () => {
    const id = await held('150000.00');
    // The product's maximum lowered below the held limit before anyone approves it.
    await updateTenant(t.app.cardline, 'demo', { config: { creditLimit: { maximum: '120000.00' } } });
    try {
      const approved = await cli(['approvals', 'approve', '--tenant', 'demo', id]);
      expect(approved.code, approved.stderr).toBe(0);
      expect(approved.stdout).toBe(`Approval ${id} approved (1 of 1 approval) and executed: credit-limit.upgrade answered 400 (refused; the approval is spent).\n`);
      expect(await limit()).toBe('50000.00');
    } finally {
      await updateTenant(t.app.cardline, 'demo', { config: { creditLimit: { maximum: '1000000.00' } } });
    }
  });

  it('reject needs a reason and executes nothing; where the policy does not name Operator it is refused', async () => {
    const id = await held('150000.00');
    const blank = await cli(['approvals', 'reject', '--tenant', 'demo', id, '--reason', '  ']);
    expect(blank.stderr).toBe('error: --reason must be 1-500 characters, not blank.\n');
    const rejected = await cli(['approvals', 'reject', '--tenant', 'demo', id, '--reason', 'No credit review on file']);
    expect(rejected.code, rejected.stderr).toBe(0);
    expect(rejected.stdout).toBe(`Approval ${id} rejected: nothing was executed.\n`);
    expect(await limit()).toBe('50000.00');

    await policy({ operation: 'credit-limit.upgrade', when: { newLimitAbove: '100000.00' }, approvers: ['Admin'] });
    const other = await held('160000.00');
    const refused = await cli(['approvals', 'approve', '--tenant', 'demo', other]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(
      "error: The management API refused: 403 Approval Role [APPROVAL_ROLE]: The role 'Operator' may not approve credit-limit.upgrade; its policy names Admin.\n",
    );
    expect(await limit()).toBe('50000.00');
  });

  it('refuses bad arguments before anything is sent: one line, exit code 1', async () => {
    const cases: [string[], string][] = [
      [['approvals', 'show', '--tenant', 'demo', 'nope'], "error: command-argument value 'nope' is invalid for argument 'approvalId'. 'nope' is not an approval id: the UUID the held request's 202 names (Location: /v1/approvals/<id>); see `approvals list`.\n"],
      [['approvals', 'list', '--tenant', 'demo', '--status', 'waiting'], "error: option '--status <status>' argument 'waiting' is invalid. Allowed choices are pending, executing, executed, rejected, cancelled, expired.\n"],
      [['approvals', 'list', '--tenant', 'Demo!'], "error: option '--tenant <id>' argument 'Demo!' is invalid. 'Demo!' is not a tenant id: 1-63 lower-case letters, digits and dashes, starting with a letter or digit.\n"],
      [['approvals', 'reject', '--tenant', 'demo', '0190b3c4-5d6e-7f80-9a1b-2c3d4e5f6a7b'], "error: required option '--reason <text>' not specified\n"],
    ];
    const answered = [];
    for (const [args] of cases) {
      const r = await cliProcess(args);
      answered.push([args, r.stderr]);
      expect([r.code, r.stdout]).toEqual([1, '']);
    }
    expect(answered).toEqual(cases);
    expect((await t.db.query('SELECT 1 FROM approvals')).rows).toEqual([]);
  });

  it('names a bad filter, an unknown approval or tenant in one line', async () => {
    const cases: [string[], string][] = [
      [['approvals', 'list', '--tenant', 'demo', '--operation', 'DROP TABLE'], "error: --operation must be an operation id such as credit-limit.upgrade, not 'DROP TABLE'.\n"],
      [['approvals', 'list', '--tenant', 'demo', '--maker', ' admin'], 'error: --maker must be 1-128 characters, without control characters or surrounding spaces.\n'],
      [
        ['approvals', 'approve', '--tenant', 'demo', '0190b3c4-5d6e-7f80-9a1b-2c3d4e5f6a7b'],
        "error: The management API refused: 404 Not Found: This tenant has no approval '0190b3c4-5d6e-7f80-9a1b-2c3d4e5f6a7b'.\n",
      ],
      [['approvals', 'list', '--tenant', 'nobank'], "error: The management API refused: 404 Not Found: There is no tenant 'nobank'.\n"],
    ];
    const answered = [];
    for (const [args] of cases) {
      const r = await cli(args);
      answered.push([args, r.stderr]);
      expect(r.code).toBe(1);
    }
    expect(answered).toEqual(cases);
  });

  it('without an operator key it says how to get one', async () => {
    const r = await cli(['approvals', 'list', '--tenant', 'demo'], { CARDLINE_OPERATOR_KEY: undefined });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      'error: Set CARDLINE_OPERATOR_KEY to an operator key to use the management API: the one the demo printed, or one an operator with a key creates for you: ' +
        `\`CARDLINE_OPERATOR_KEY=<their key> npx cardline --admin-url ${url} operator-key create --name <name>\`.\n`,
    );
  });
});
