// `cardline file-core export|import`: a file core's state in and out as fixtures JSON, its card numbers
// and CVVs opened (export) or sealed (import) with the tenant's connector secrets (decision 0048).
import { readFile } from 'node:fs/promises';
import { Command } from 'commander';
import { fail, integer, printJson, tenantId } from './common.js';

const KEY_HELP = `
The directory's card numbers and CVVs are sealed under a key derived from the master key for the
tenant: give the tenant id the directory belongs to, and the gateway's master key (CARDLINE_MASTER_KEY,
or <data dir>/master.key as the demo writes it). The gateway's store is not opened: these commands work
while a gateway runs (export) or while it has the directory closed (import).`;

/** The tenant's connector secrets, as the gateway derives them. */
async function secretsOf(tenant: string) {
  const { resolveMasterKey } = await import('../bootstrap.js');
  const { loadConfig } = await import('../config.js');
  const { connectorSecrets } = await import('../crypto/connector-secrets.js');
  const { MasterKey } = await import('../crypto/master-key.js');
  const config = loadConfig(process.env, { logLevel: 'silent' });
  return connectorSecrets(new MasterKey(resolveMasterKey(config, { allowGenerate: false, allowFile: true })), tenant);
}

/** The file core's refusals (damaged or foreign directory, invalid fixtures) are the operator's to fix. */
async function expected<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    return fail((err as Error).message);
  }
}

export function fileCoreCommand(): Command {
  const fileCore = new Command('file-core').description("Export or import a file core's state (fixtures JSON).");

  fileCore
    .command('export')
    .description(
      'Print the state of a directory as fixtures JSON on stdout, card numbers and CVVs in clear (keep the file as you keep card data). Works while a gateway has the directory open.',
    )
    .requiredOption('--tenant <id>', 'the tenant the directory belongs to', tenantId)
    .requiredOption('--dir <dir>', 'the file core directory')
    .addHelpText('after', KEY_HELP)
    .action(async (opts: { tenant: string; dir: string }) => {
      const secrets = await secretsOf(opts.tenant);
      const { exportFixtures } = await import('../../connectors/file/store.js');
      printJson(await expected(() => exportFixtures(opts.dir, secrets)));
    });

  fileCore
    .command('import')
    .description("Replace a directory's state with fixtures JSON (the directory must not be open elsewhere).")
    .requiredOption('--tenant <id>', 'the tenant the directory belongs to', tenantId)
    .requiredOption('--dir <dir>', 'the file core directory (created when missing)')
    .requiredOption('--from <file>', 'fixtures JSON, as export prints it')
    .option('--lock-timeout <ms>', 'wait this long for another holder of the directory', integer, 0)
    .addHelpText('after', KEY_HELP)
    .action(async (opts: { tenant: string; dir: string; from: string; lockTimeout: number }) => {
      let snapshot: unknown;
      try {
        snapshot = JSON.parse(await readFile(opts.from, 'utf8'));
      } catch (err) {
        fail(`${opts.from} is not readable JSON: ${(err as Error).message}`);
      }
      const secrets = await secretsOf(opts.tenant);
      const { importFixtures } = await import('../../connectors/file/store.js');
      await expected(() => importFixtures(opts.dir, snapshot, secrets, { lockTimeoutMs: opts.lockTimeout }));
      process.stderr.write(`imported ${opts.from} into ${opts.dir}\n`);
    });

  return fileCore;
}
