// The SDK and four eyes (issue 30): a write the tenant's policy holds comes back as a typed pending approval (its
// id from the 202's Location), cl.approvals lists, approves, rejects and cancels, and cl.awaitApproval waits for
// the decision and answers the executed request's outcome. Against a gateway listening on loopback.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Cardline, isPending, isPendingApproval } from '../../sdk/src/index.js';
import { updateTenant } from '../../src/services/tenancy/tenant-admin.js';
import { PASSWORD, createTestApp, type TestApp } from '../helpers/app.js';

describe('@cardline/sdk: approvals', () => {
  let t: TestApp;
  let baseUrl: string;
  const client = async (username: string) => {
    const cl = new Cardline({ baseUrl, tenant: 'demo', sleep: async () => undefined });
    await cl.login(username, PASSWORD);
    return cl;
  };

  beforeAll(async () => {
    t = await createTestApp();
    await t.app.cardline.users.add('demo', 'checker', 'Admin', PASSWORD);
    await updateTenant(t.app.cardline, 'demo', {
      config: { approvals: [{ operation: 'credit-limit.upgrade', when: { newLimitAbove: '100000.00' }, approvers: ['Admin'] }] },
    });
    baseUrl = await t.app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(() => t.close());

  it('a held upgrade is a pending approval; the checker approves it; awaitApproval answers its outcome', async () => {
    const maker = await client('integration');
    const checker = await client('checker');
    const held = await maker.creditLimit.upgrade({ entityId: 'ENT-1001', amount: '150000.00' });
    expect(isPending(held)).toBe(true);
    if (!isPendingApproval(held)) throw new Error(`not held for approval: ${JSON.stringify(held)}`);
    expect(held.detail).toBe(`The request needs approval (credit-limit.upgrade): it waits as approval ${held.approvalId} and is executed once approved; see GET /v1/approvals/${held.approvalId}.`);

    const waiting = await checker.approvals.list({ status: 'pending' }).toArray();
    expect(waiting.map((a) => a.approvalId)).toEqual([held.approvalId]);
    const approved = await checker.approvals.approve(held.approvalId);
    expect(isPending(approved)).toBe(false);
    const settled = await maker.awaitApproval(held);
    expect(settled).toMatchObject({ status: 'executed', outcome: { status: 200, body: { result: true, exception: null, pagination: null } } });
  });

  it("the README's four-eyes block runs as written: held, then approved by the Admin and executed", async () => {
    await updateTenant(t.app.cardline, 'demo', { config: { approvals: null } });
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const block = /```ts\n([\s\S]*?)```/.exec(readme.slice(readme.indexOf('<!-- four-eyes:')))![1]!;
    const lines = block.split('\n').filter((l) => l.trim() && !l.startsWith('import '));
    const body = lines.join('\n').replaceAll("'http://localhost:8080'", JSON.stringify(baseUrl));
    const printed: unknown[][] = [];
    const AsyncFunction = Object.getPrototypeOf(async () => undefined).constructor as new (...args: string[]) => (...a: unknown[]) => Promise<void>;
    await new AsyncFunction('Cardline', 'isPendingApproval', 'process', 'console', body)(
      Cardline,
      isPendingApproval,
      { env: { CARDLINE_DEMO_PASSWORD: PASSWORD } },
      { log: (...v: unknown[]) => printed.push(v) },
    );
    expect(printed).toEqual([[true], ['executed']]);
    expect(block).toContain('// → true');
    expect(block).toContain('// → executed');
  });

  it('reject with a reason, and cancel by the maker', async () => {
    const maker = await client('admin');
    const checker = await client('checker');
    const first = await maker.creditLimit.upgrade({ entityId: 'ENT-1002', amount: '160000.00' });
    const second = await maker.creditLimit.upgrade({ entityId: 'ENT-1002', amount: '170000.00' });
    if (!isPendingApproval(first) || !isPendingApproval(second)) throw new Error('not held for approval');
    expect((await checker.approvals.reject(first.approvalId, { reason: 'No review on file' })).result).toMatchObject({ status: 'rejected' });
    expect((await maker.approvals.cancel(second.approvalId)).result.status).toBe('cancelled');
    expect((await maker.awaitApproval(first.approvalId)).rejection?.reason).toBe('No review on file');
  });
});
