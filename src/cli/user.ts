// `cardline user …`: a tenant's API users. A password never travels as an argument, and leaves as a JWE to the
// tenant's key, over HTTP or in process.
import { Command, Option } from 'commander';
import { ROLES, type Role } from '../../schemas/common.js';
import { PAGE_MAX } from '../../schemas/page.js';
import { STORE_HELP, checkUsername, fail, printJson, readStdin, table, tenantId } from './common.js';
import { withApi } from './api.js';
import { REMOTE_HELP, type CardlineAdmin, type ManagementOperationId } from './remote.js';

interface AddOptions {
  tenant: string;
  username: string;
  role: Role;
  passwordStdin?: boolean;
}

/** Adds the user (`tenant-user.create`) or resets it (update, set-password, unlock); passwords leave as JWEs. */
async function addUser(api: CardlineAdmin, opts: AddOptions, password: string): Promise<void> {
  const tenantId = opts.tenant;
  const users = await api.tenantUser.list(tenantId, { limit: PAGE_MAX }).toArray();
  if (!users.some((u) => u.username === opts.username)) {
    await api.tenantUser.create(tenantId, { username: opts.username, role: opts.role, password });
    return;
  }
  await api.tenantUser.update(tenantId, opts.username, { role: opts.role, disabled: false });
  await api.tenantUser.setPassword(tenantId, opts.username, { password });
  await api.tenantUser.unlock(tenantId, opts.username);
}

export function userCommand(): Command {
  const user = new Command('user').description("Manage a tenant's API users.");

  user
    .command('add')
    .description('Add a user to a tenant, or reset an existing one (new role and password, re-enabled, unlocked).')
    .requiredOption('--tenant <id>', 'tenant id', tenantId)
    .requiredOption('--username <username>', 'the login name (1-128 characters)')
    .addOption(new Option('--role <role>', 'the role (quote "API Integration")').choices(ROLES).makeOptionMandatory())
    .option('--password-stdin', 'read the password from stdin (otherwise from CARDLINE_USER_PASSWORD)')
    .addHelpText(
      'after',
      `
The password (at least 8 characters) is read from stdin with --password-stdin, otherwise from the
environment variable CARDLINE_USER_PASSWORD; never from an argument, which other users could read
in the process list.

Example:
  printf '%s' "$PASSWORD" | cardline user add --tenant acme --username alice --role "API Integration" --password-stdin
${REMOTE_HELP}
${STORE_HELP}`,
    )
    .action(async (opts: AddOptions, command: Command) => {
      checkUsername(opts.username);
      const password = opts.passwordStdin ? await readStdin('the password') : process.env.CARDLINE_USER_PASSWORD;
      if (!password) fail('No password: pipe it in with --password-stdin, or set CARDLINE_USER_PASSWORD.');
      // Checked before anything changes: resetting an existing user takes more than one call.
      const problem = (await import('../services/identity/users.js')).passwordProblem(password);
      if (problem) fail(problem);
      await withApi(command, { operations: ['tenant-user.list', 'tenant-user.create', 'tenant.keys', 'tenant-user.update', 'tenant-user.set-password', 'tenant-user.unlock'] }, (api) => addUser(api, opts, password));
      process.stdout.write(`User '${opts.username}' (${opts.role}) saved on tenant '${opts.tenant}'.\n`);
    });

  user
    .command('list')
    .description("List a tenant's users: username, role, disabled, locked, last login. Never a password hash.")
    .requiredOption('--tenant <id>', 'tenant id', tenantId)
    .option('--json', 'print JSON')
    .addHelpText('after', `${REMOTE_HELP}\n${STORE_HELP}`)
    .action(async (opts: { tenant: string; json?: boolean }, command: Command) => {
      const users = await withApi(command, { operations: ['tenant-user.list'] }, (api) => api.tenantUser.list(opts.tenant, { limit: PAGE_MAX }).toArray());
      if (opts.json) return printJson(users);
      table([
        ['USERNAME', 'ROLE', 'DISABLED', 'LOCKED', 'LAST LOGIN'],
        ...users.map((u) => [u.username, u.role, u.disabled ? 'yes' : 'no', u.locked ? 'yes' : 'no', u.lastLoginAt ?? '-']),
      ]);
    });

  // One command per change of a user's state, each one management operation; the table says which.
  type UserParams = { tenantId: string; username: string };
  const changes: { verb: string; what: string; done: string; operation: ManagementOperationId; call: (api: CardlineAdmin, user: UserParams) => Promise<unknown> }[] = [
    {
      verb: 'remove',
      what: "Remove a user: its tokens stop working at once. The tenant's last enabled Admin cannot be removed.",
      done: 'removed',
      operation: 'tenant-user.remove',
      call: (api, u) => api.tenantUser.remove(u.tenantId, u.username),
    },
    {
      verb: 'unlock',
      what: 'Lift a lockout (ten failed logins) before it expires.',
      done: 'unlocked',
      operation: 'tenant-user.unlock',
      call: (api, u) => api.tenantUser.unlock(u.tenantId, u.username),
    },
    {
      verb: 'disable',
      what: "Disable a user: its tokens stop working at once; the tenant's channels hear user.disabled. The tenant's last enabled Admin cannot be disabled.",
      done: 'disabled',
      operation: 'tenant-user.update',
      call: (api, u) => api.tenantUser.update(u.tenantId, u.username, { disabled: true }),
    },
    {
      verb: 'enable',
      what: 'Enable a disabled user again.',
      done: 'enabled',
      operation: 'tenant-user.update',
      call: (api, u) => api.tenantUser.update(u.tenantId, u.username, { disabled: false }),
    },
  ];
  for (const { verb, what, done, operation, call } of changes) {
    user
      .command(verb)
      .description(what)
      .requiredOption('--tenant <id>', 'tenant id', tenantId)
      .requiredOption('--username <username>', 'the login name')
      .addHelpText('after', `${REMOTE_HELP}\n${STORE_HELP}`)
      .action(async (opts: { tenant: string; username: string }, command: Command) => {
        await withApi(command, { operations: [operation] }, (api) => call(api, { tenantId: opts.tenant, username: opts.username }));
        process.stdout.write(`User '${opts.username}' ${done} on tenant '${opts.tenant}'.\n`);
      });
  }

  user
    .command('reset-password')
    .description("Set a user's password: its tokens are revoked and any lockout lifted.")
    .requiredOption('--tenant <id>', 'tenant id', tenantId)
    .requiredOption('--username <username>', 'the login name')
    .option('--password-stdin', 'read the password from stdin (otherwise from CARDLINE_USER_PASSWORD)')
    .addHelpText('after', `\nThe password is read as for \`user add\`, never from an argument.\n${REMOTE_HELP}\n${STORE_HELP}`)
    .action(async (opts: { tenant: string; username: string; passwordStdin?: boolean }, command: Command) => {
      const password = opts.passwordStdin ? await readStdin('the password') : process.env.CARDLINE_USER_PASSWORD;
      if (!password) fail('No password: pipe it in with --password-stdin, or set CARDLINE_USER_PASSWORD.');
      const problem = (await import('../services/identity/users.js')).passwordProblem(password);
      if (problem) fail(problem);
      await withApi(command, { operations: ['tenant.keys', 'tenant-user.set-password'] }, (api) => api.tenantUser.setPassword(opts.tenant, opts.username, { password }));
      process.stdout.write(`Password of '${opts.username}' set on tenant '${opts.tenant}'; its tokens are revoked.\n`);
    });

  return user;
}
