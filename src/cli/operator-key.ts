// `cardline operator-key create|list|revoke`: the keys operators use on the management API. A key is printed
// once, at creation; the store keeps only its SHA-256 hash. With --admin-url the command goes through the
// management API (an operator key is then needed to make another), otherwise to the store through the same
// management operations run in process (src/cli/in-process.ts; the platform's audit trail, actor `cli:<os-user>`).
import { Command } from 'commander';
import { PAGE_MAX } from '../../schemas/page.js';
import { STORE_HELP, printJson, table } from './common.js';
import { withApi } from './api.js';
import { REMOTE_HELP } from './remote.js';

export function operatorKeyCommand(): Command {
  const cmd = new Command('operator-key').description('Create, list and revoke the API keys of the management listener.');

  cmd
    .command('create')
    .description('Create an operator key; the key is printed once, on stdout.')
    .requiredOption('--name <name>', 'who or what uses it: 1-64 letters, digits, ".", "_" or "-"')
    .addHelpText('after', `\nExample:\n  export CARDLINE_OPERATOR_KEY=$(npx cardline operator-key create --name alice)\n${REMOTE_HELP}\n${STORE_HELP}`)
    .action(async (opts: { name: string }, command: Command) => {
      const { key } = await withApi(command, { create: true, operations: ['operator-key.create'] }, async (api) => (await api.operatorKey.create({ name: opts.name })).result);
      process.stdout.write(`${key}\n`);
      process.stderr.write(`Operator key '${opts.name}' created. It is shown this once: keep it in your secret store.\n`);
    });

  cmd
    .command('list')
    .description('List operator keys: name, first characters, created, last used, revoked. Never a key.')
    .option('--json', 'print JSON')
    .addHelpText('after', `${REMOTE_HELP}\n${STORE_HELP}`)
    .action(async (opts: { json?: boolean }, command: Command) => {
      const keys = await withApi(command, { operations: ['operator-key.list'] }, (api) => api.operatorKey.list({ limit: PAGE_MAX }).toArray());
      if (opts.json) return printJson(keys);
      table([['NAME', 'PREFIX', 'CREATED', 'LAST USED', 'REVOKED'], ...keys.map((k) => [k.name, k.prefix, k.createdAt, k.lastUsedAt ?? '-', k.revokedAt ?? '-'])]);
    });

  cmd
    .command('revoke')
    .description('Revoke an operator key by name: every gateway refuses it from then on.')
    .argument('<name>', 'the key name')
    .addHelpText('after', `${REMOTE_HELP}\n${STORE_HELP}`)
    .action(async (name: string, _opts: unknown, command: Command) => {
      await withApi(command, { messages: { 404: `No operator key named '${name}'.` }, operations: ['operator-key.revoke'] }, (api) =>
        api.operatorKey.revoke(name),
      );
      process.stdout.write(`Operator key '${name}' revoked.\n`);
    });

  return cmd;
}
