// `cardline user add|list|remove|unlock|disable|enable|reset-password`: a tenant's API users. The password
// never travels as an argument; to the management API it travels as a JWE to the tenant's encryption key, as
// at login. On the store, every change is an audited admin action (src/services/admin-actions.ts).
import { Command, Option } from 'commander';
import type { JWK } from 'jose';
import { ROLES, type Role } from '../../schemas/common.js';
import { encryptCompact } from '../crypto/jwe.js';
import type { UserView } from '../services/users.js';
import type { CliStore } from './store.js';
import { STORE_HELP, fail, printJson, readStdin, table, tenantId } from './common.js';
import { apiPath, REMOTE_HELP, managementApi, type ManagementApi } from './remote.js';

interface AddOptions {
  tenant: string;
  username: string;
  role: Role;
  passwordStdin?: boolean;
}


const checkUsername = (username: string) => {
  if (username.length < 1 || username.length > 128 || username.trim() !== username || /\p{Cc}/u.test(username)) {
    fail('--username must be 1-128 characters, without control characters or surrounding spaces.');
  }
};

/** The password as the management API takes it: a compact JWE to the tenant's first encryption key. */
async function passwordJwe(api: ManagementApi, tenant: string, password: string): Promise<string> {
  const { keys } = await api.call<{ keys: JWK[] }>('GET', apiPath('tenants', tenant, 'keys'));
  if (!keys[0]) fail(`Tenant '${tenant}' has no encryption key.`);
  return encryptCompact(password, keys[0]);
}

/** Adds the user, or resets it when it exists (role, password, enabled, unlocked), through the management API. */
async function addRemote(api: ManagementApi, opts: AddOptions, password: string): Promise<void> {
  const base = apiPath('tenants', opts.tenant, 'users');
  const users = await api.result<UserView[]>('GET', base);
  if (!users.some((u) => u.username === opts.username)) {
    await api.result('POST', base, { username: opts.username, role: opts.role, password: await passwordJwe(api, opts.tenant, password) });
    return;
  }
  const user = apiPath('tenants', opts.tenant, 'users', opts.username);
  await api.result('PATCH', user, { role: opts.role, disabled: false });
  await api.result('PUT', `${user}/password`, { password: await passwordJwe(api, opts.tenant, password) });
  await api.result('POST', `${user}/unlock`);
}

/** The store's refusal of an unknown tenant, worded as the other store commands word it. */
const unknownTenant = (tenant: string) => ({ CL_TENANT_NOT_FOUND: `Unknown tenant '${tenant}'.` });

/**
 * The same on the store, through the same audited admin actions as the management API: a new user is a
 * `user.create` (its tenant's channels hear `user.created`); an existing one is reset by `user.update`,
 * `user.password-reset` and `user.unlock`, as the three calls addRemote makes.
 */
async function addOnStore(store: CliStore, opts: AddOptions, password: string): Promise<void> {
  const { adminCreateUser, adminSetUserPassword, adminUnlockUser, adminUpdateUser } = await import('../services/admin-actions.js');
  const { expected } = await import('./store.js');
  const { tenant, username, role } = opts;
  await expected(async () => {
    if (!(await store.users.view(tenant, username))) {
      await adminCreateUser(store, store.actor, tenant, { username, role, password });
      return;
    }
    await adminUpdateUser(store, store.actor, tenant, username, { role, disabled: false });
    await adminSetUserPassword(store, store.actor, tenant, username, password);
    await adminUnlockUser(store, store.actor, tenant, username);
  }, unknownTenant(tenant));
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
      const problem = (await import('../services/users.js')).passwordProblem(password);
      if (problem) fail(problem);
      const api = managementApi(command);
      if (api) await addRemote(api, opts, password);
      else {
        const { withStore } = await import('./store.js');
        await withStore({ masterKey: false }, (store) => addOnStore(store, opts, password));
      }
      process.stdout.write(`User '${opts.username}' (${opts.role}) saved on tenant '${opts.tenant}'.\n`);
    });

  user
    .command('list')
    .description("List a tenant's users: username, role, disabled, locked, last login. Never a password hash.")
    .requiredOption('--tenant <id>', 'tenant id', tenantId)
    .option('--json', 'print JSON')
    .addHelpText('after', `${REMOTE_HELP}\n${STORE_HELP}`)
    .action(async (opts: { tenant: string; json?: boolean }, command: Command) => {
      const api = managementApi(command);
      let users: UserView[];
      if (api) users = await api.all<UserView>(apiPath('tenants', opts.tenant, 'users'));
      else {
        const { requireTenant, withStore } = await import('./store.js');
        users = await withStore({ masterKey: false }, async (store) => {
          await requireTenant(store, opts.tenant);
          return store.users.list(opts.tenant);
        });
      }
      if (opts.json) return printJson(users);
      table([
        ['USERNAME', 'ROLE', 'DISABLED', 'LOCKED', 'LAST LOGIN'],
        ...users.map((u) => [u.username, u.role, u.disabled ? 'yes' : 'no', u.locked ? 'yes' : 'no', u.lastLoginAt ?? '-']),
      ]);
    });

  for (const [verb, what, done] of [
    ['remove', "Remove a user: its tokens stop working at once. The tenant's last enabled Admin cannot be removed.", 'removed'],
    ['unlock', 'Lift a lockout (ten failed logins) before it expires.', 'unlocked'],
  ] as const) {
    user
      .command(verb)
      .description(what)
      .requiredOption('--tenant <id>', 'tenant id', tenantId)
      .requiredOption('--username <username>', 'the login name')
      .addHelpText('after', `${REMOTE_HELP}\n${STORE_HELP}`)
      .action(async (opts: { tenant: string; username: string }, command: Command) => {
        const api = managementApi(command);
        if (api) {
          const path = apiPath('tenants', opts.tenant, 'users', opts.username);
          await api.result(verb === 'remove' ? 'DELETE' : 'POST', verb === 'remove' ? path : `${path}/unlock`);
        } else {
          const { adminRemoveUser, adminUnlockUser } = await import('../services/admin-actions.js');
          const { expected, withStore } = await import('./store.js');
          await withStore({ masterKey: false }, (store) =>
            expected(async () => {
              if (verb === 'remove') await adminRemoveUser(store, store.actor, opts.tenant, opts.username);
              else await adminUnlockUser(store, store.actor, opts.tenant, opts.username);
            }, unknownTenant(opts.tenant)),
          );
        }
        process.stdout.write(`User '${opts.username}' ${done} on tenant '${opts.tenant}'.\n`);
      });
  }

  for (const [verb, disabled, what] of [
    ['disable', true, "Disable a user: its tokens stop working at once; the tenant's channels hear user.disabled. The tenant's last enabled Admin cannot be disabled."],
    ['enable', false, 'Enable a disabled user again.'],
  ] as const) {
    user
      .command(verb)
      .description(what)
      .requiredOption('--tenant <id>', 'tenant id', tenantId)
      .requiredOption('--username <username>', 'the login name')
      .addHelpText('after', `${REMOTE_HELP}\n${STORE_HELP}`)
      .action(async (opts: { tenant: string; username: string }, command: Command) => {
        const api = managementApi(command);
        if (api) await api.result('PATCH', apiPath('tenants', opts.tenant, 'users', opts.username), { disabled });
        else {
          const { adminUpdateUser } = await import('../services/admin-actions.js');
          const { expected, withStore } = await import('./store.js');
          await withStore({ masterKey: false }, (store) =>
            expected(() => adminUpdateUser(store, store.actor, opts.tenant, opts.username, { disabled }), unknownTenant(opts.tenant)),
          );
        }
        process.stdout.write(`User '${opts.username}' ${verb}d on tenant '${opts.tenant}'.\n`);
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
      const problem = (await import('../services/users.js')).passwordProblem(password);
      if (problem) fail(problem);
      const api = managementApi(command);
      if (api) {
        const path = `${apiPath('tenants', opts.tenant, 'users', opts.username)}/password`;
        await api.result('PUT', path, { password: await passwordJwe(api, opts.tenant, password) });
      } else {
        const { adminSetUserPassword } = await import('../services/admin-actions.js');
        const { expected, withStore } = await import('./store.js');
        await withStore({ masterKey: false }, (store) =>
          expected(() => adminSetUserPassword(store, store.actor, opts.tenant, opts.username, password), unknownTenant(opts.tenant)),
        );
      }
      process.stdout.write(`Password of '${opts.username}' set on tenant '${opts.tenant}'; its tokens are revoked.\n`);
    });

  return user;
}
