// `cardline operator-key create|list|revoke`: the keys operators use on the management API. A key is printed
// once, at creation; the store keeps only its SHA-256 hash. With --admin-url the command goes through the
// management API (an operator key is then needed to make another), otherwise to the store through the same
// audited admin actions (the platform's audit trail, actor `cli:<os-user>`).
import { Command } from 'commander';
import { STORE_HELP, printJson, table } from './common.js';
import { apiPath, REMOTE_HELP, managementApi } from './remote.js';

interface OperatorKeyView {
  name: string;
  prefix: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}


export function operatorKeyCommand(): Command {
  const cmd = new Command('operator-key').description('Create, list and revoke the API keys of the management listener.');

  cmd
    .command('create')
    .description('Create an operator key; the key is printed once, on stdout.')
    .requiredOption('--name <name>', 'who or what uses it: 1-64 letters, digits, ".", "_" or "-"')
    .addHelpText('after', `\nExample:\n  export CARDLINE_OPERATOR_KEY=$(npx cardline operator-key create --name alice)\n${REMOTE_HELP}\n${STORE_HELP}`)
    .action(async (opts: { name: string }, command: Command) => {
      const api = managementApi(command);
      let key: string;
      if (api) {
        key = (await api.result<{ key: string }>('POST', '/v1/operator-keys', { name: opts.name })).key;
      } else {
        const { expected, withStore } = await import('./store.js');
        const { adminCreateOperatorKey } = await import('../services/admin-actions.js');
        key = await withStore({ masterKey: false, create: true }, async (store) => (await expected(() => adminCreateOperatorKey(store, store.actor, opts.name))).key);
      }
      process.stdout.write(`${key}\n`);
      process.stderr.write(`Operator key '${opts.name}' created. It is shown this once: keep it in your secret store.\n`);
    });

  cmd
    .command('list')
    .description('List operator keys: name, first characters, created, last used, revoked. Never a key.')
    .option('--json', 'print JSON')
    .addHelpText('after', `${REMOTE_HELP}\n${STORE_HELP}`)
    .action(async (opts: { json?: boolean }, command: Command) => {
      const api = managementApi(command);
      let keys: OperatorKeyView[];
      if (api) keys = await api.all<OperatorKeyView>('/v1/operator-keys');
      else {
        const { withStore } = await import('./store.js');
        keys = await withStore({ masterKey: false }, (store) => store.operatorKeys.list());
      }
      if (opts.json) return printJson(keys);
      table([['NAME', 'PREFIX', 'CREATED', 'LAST USED', 'REVOKED'], ...keys.map((k) => [k.name, k.prefix, k.createdAt, k.lastUsedAt ?? '-', k.revokedAt ?? '-'])]);
    });

  cmd
    .command('revoke')
    .description('Revoke an operator key by name: every gateway refuses it from then on.')
    .argument('<name>', 'the key name')
    .addHelpText('after', `${REMOTE_HELP}\n${STORE_HELP}`)
    .action(async (name: string, _opts: unknown, command: Command) => {
      const api = managementApi(command);
      if (api) await api.result('DELETE', apiPath('operator-keys', name));
      else {
        const { expected, withStore } = await import('./store.js');
        const { adminRevokeOperatorKey } = await import('../services/admin-actions.js');
        await withStore({ masterKey: false }, (store) =>
          expected(() => adminRevokeOperatorKey(store, store.actor, name), { CL_OPERATOR_KEY_NOT_FOUND: `No operator key named '${name}'.` }),
        );
      }
      process.stdout.write(`Operator key '${name}' revoked.\n`);
    });

  return cmd;
}
