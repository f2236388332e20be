// `cardline user add`: an API user of a tenant. The password never travels as an argument.
import { Command, Option } from 'commander';
import { ROLES, type Role } from '../../schemas/common.js';
import { STORE_HELP, fail, readStdin, tenantId } from './common.js';

interface AddOptions {
  tenant: string;
  username: string;
  role: Role;
  passwordStdin?: boolean;
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
${STORE_HELP}`,
    )
    .action(async (opts: AddOptions) => {
      const username = opts.username;
      if (username.length < 1 || username.length > 128 || username.trim() !== username || /\p{Cc}/u.test(username)) {
        fail('--username must be 1-128 characters, without control characters or surrounding spaces.');
      }
      const password = opts.passwordStdin ? await readStdin('the password') : process.env.CARDLINE_USER_PASSWORD;
      if (!password) fail('No password: pipe it in with --password-stdin, or set CARDLINE_USER_PASSWORD.');
      const { requireTenant, withStore } = await import('./store.js');
      await withStore({ masterKey: false }, async (store) => {
        await requireTenant(store, opts.tenant);
        try {
          await store.users.add(opts.tenant, username, opts.role, password);
        } catch (err) {
          // The service's own rule checks (role, password length) are user errors with readable messages.
          fail((err as Error).message);
        }
      });
      process.stdout.write(`User '${username}' (${opts.role}) saved on tenant '${opts.tenant}'.\n`);
    });

  return user;
}
