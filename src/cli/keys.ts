// `cardline keys export`: a tenant's public key set, for onboarding the bank's integration team.
import { Command } from 'commander';
import { STORE_HELP, orderedJwk, printJson, tenantId } from './common.js';

export function keysCommand(): Command {
  const keys = new Command('keys').description("A tenant's gateway keys.");

  keys
    .command('export')
    .description("Print the tenant's public key set as JSON: encryption keys (clients encrypt to them), then signing keys (tokens).")
    .requiredOption('--tenant <id>', 'tenant id', tenantId)
    .addHelpText('after', STORE_HELP)
    .action(async (opts: { tenant: string }) => {
      const { requireTenant, tenantKeys, withStore } = await import('./store.js');
      const set = await withStore({ masterKey: true }, async (store) => {
        await requireTenant(store, opts.tenant);
        const { enc, sig } = await tenantKeys(store, opts.tenant);
        return { keys: [...enc, ...sig].map((k) => orderedJwk(k.publicJwk)) };
      });
      printJson(set);
    });

  return keys;
}
