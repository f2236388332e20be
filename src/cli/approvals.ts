// `cardline approvals list|show|approve|reject`: a tenant's requests held by its approval policy, and the
// operator's decision on them (decision 0321). The operator decides only where the policy names `Operator`;
// the approval that completes the count executes the request, and its answer is printed.
import { Command, InvalidArgumentError, Option } from 'commander';
import { APPROVAL_STATUSES, type ApprovalStatus } from '../../schemas/approvals.js';
import { PAGE_MAX } from '../../schemas/page.js';
import type { ApprovalView } from '../../sdk/src/generated/types.js';
import { STORE_HELP, checkUsername, fail, printJson, table, tenantId } from './common.js';
import { withApi } from './api.js';
import { REMOTE_HELP } from './remote.js';

const APPROVAL_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function approvalId(value: string): string {
  if (!APPROVAL_ID.test(value)) throw new InvalidArgumentError(`'${value}' is not an approval id: the UUID the held request's 202 names (Location: /v1/approvals/<id>); see \`approvals list\`.`);
  return value;
}

/** What a decided approval comes to, in one line: executed (and what the request answered), or still waiting. */
function decided(a: ApprovalView): string {
  const given = `${a.approvals.length} of ${a.approvalsNeeded} approval${a.approvalsNeeded === 1 ? '' : 's'}`;
  if (a.status === 'pending') return `Approval ${a.approvalId} approved (${given}); it waits for another approver.`;
  if (a.status === 'executed' && a.outcome) {
    const ok = a.outcome.status >= 200 && a.outcome.status < 300;
    return `Approval ${a.approvalId} approved (${given}) and executed: ${a.operation} answered ${a.outcome.status}${ok ? '' : ' (refused; the approval is spent)'}.`;
  }
  return `Approval ${a.approvalId} is ${a.status}.`;
}

const summary = (a: ApprovalView): string => {
  const body = a.request.body && typeof a.request.body === 'object' ? JSON.stringify(a.request.body) : '';
  return `${a.request.method} ${a.request.path}${body ? ` ${body}` : ''}`;
};

const TENANT_HELP = 'tenant id';

export function approvalsCommand(): Command {
  const cmd = new Command('approvals').description("A tenant's requests held for a second person: list, show, approve, reject.");

  cmd
    .command('list')
    .description("List a tenant's approvals, oldest first: id, operation, status, maker, approvals given, expiry, what executes.")
    .requiredOption('--tenant <id>', TENANT_HELP, tenantId)
    .addOption(new Option('--status <status>', 'only those in this status').choices(APPROVAL_STATUSES))
    .option('--operation <id>', 'only those of this operation (credit-limit.upgrade, user.create, …)')
    .option('--maker <username>', 'only those this user made')
    .option('--json', 'print JSON')
    .addHelpText('after', `\nExample:\n  cardline --admin-url http://127.0.0.1:8081 approvals list --tenant demo --status pending\n${REMOTE_HELP}\n${STORE_HELP}`)
    .action(async (opts: { tenant: string; status?: ApprovalStatus; operation?: string; maker?: string; json?: boolean }, command: Command) => {
      if (opts.maker !== undefined) checkUsername(opts.maker, '--maker');
      if (opts.operation !== undefined && !/^[a-z][a-z0-9.-]{0,63}$/.test(opts.operation)) fail(`--operation must be an operation id such as credit-limit.upgrade, not '${opts.operation}'.`);
      const query = { limit: PAGE_MAX, ...(opts.status ? { status: opts.status } : {}), ...(opts.operation ? { operation: opts.operation } : {}), ...(opts.maker ? { maker: opts.maker } : {}) };
      const approvals = await withApi(command, { operations: ['tenant-approval.list'] }, (api) => api.tenantApproval.list(opts.tenant, query).toArray());
      if (opts.json) return printJson(approvals);
      if (!approvals.length) {
        process.stdout.write(`No approval of tenant '${opts.tenant}'${opts.status ? ` is ${opts.status}` : ''}${opts.operation ? ` for ${opts.operation}` : ''}${opts.maker ? ` made by ${opts.maker}` : ''}.\n`);
        return;
      }
      table([
        ['ID', 'OPERATION', 'STATUS', 'MAKER', 'APPROVALS', 'EXPIRES', 'REQUEST'],
        ...approvals.map((a) => [a.approvalId, a.operation, a.status, a.maker.username, `${a.approvals.length}/${a.approvalsNeeded}`, a.expiresAt, summary(a)]),
      ]);
    });

  cmd
    .command('show')
    .description('Print one approval as JSON: exactly the request it executes (secret fields as "[encrypted]"), its maker, approvers, decisions and outcome.')
    .requiredOption('--tenant <id>', TENANT_HELP, tenantId)
    .argument('<approvalId>', 'the approval id', approvalId)
    .addHelpText('after', `${REMOTE_HELP}\n${STORE_HELP}`)
    .action(async (id: string, opts: { tenant: string }, command: Command) => {
      printJson(await withApi(command, { operations: ['tenant-approval.read'] }, async (api) => (await api.tenantApproval.read(opts.tenant, id)).result));
    });

  cmd
    .command('approve')
    .description('Approve a held request as the operator (the policy must name Operator); the approval that completes the count executes it.')
    .requiredOption('--tenant <id>', TENANT_HELP, tenantId)
    .argument('<approvalId>', 'the approval id', approvalId)
    .option('--json', 'print the approval as JSON (its outcome: what the executed request answered)')
    .addHelpText(
      'after',
      `
The request executes from where the command runs: with --admin-url, on the running gateway. Without it, from
this process through the tenant's connector (the demo's mock core lives in the gateway's memory: use --admin-url).
${REMOTE_HELP}
${STORE_HELP}`,
    )
    .action(async (id: string, opts: { tenant: string; json?: boolean }, command: Command) => {
      const result = await withApi(command, { operations: ['tenant-approval.approve'] }, async (api) => {
        const answer = await api.tenantApproval.approve(opts.tenant, id);
        // The approve route calls the core, so its type admits a core's 202; the executed request's answer is in `outcome`.
        if (!('result' in answer)) return fail(`Approval ${id}: the gateway answered 202; read it again with \`approvals show\`.`);
        return answer.result;
      });
      if (opts.json) return printJson(result);
      process.stdout.write(`${decided(result)}\n`);
    });

  cmd
    .command('reject')
    .description('Reject a held request as the operator, with a reason (the policy must name Operator); nothing is executed.')
    .requiredOption('--tenant <id>', TENANT_HELP, tenantId)
    .argument('<approvalId>', 'the approval id', approvalId)
    .requiredOption('--reason <text>', 'why, for the maker and the trail (1-500 characters)')
    .addHelpText('after', `${REMOTE_HELP}\n${STORE_HELP}`)
    .action(async (id: string, opts: { tenant: string; reason: string }, command: Command) => {
      if (opts.reason.trim().length === 0 || opts.reason.length > 500) fail('--reason must be 1-500 characters, not blank.');
      const result = await withApi(command, { operations: ['tenant-approval.reject'] }, async (api) => (await api.tenantApproval.reject(opts.tenant, id, { reason: opts.reason })).result);
      process.stdout.write(`Approval ${result.approvalId} rejected: nothing was executed.\n`);
    });

  return cmd;
}
