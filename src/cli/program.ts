// The `cardline` command line: commands, and the one place where failures become a one-line message
// on stderr with exit code 1 (never a stack trace, unless CARDLINE_DEBUG=1).
import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { MasterKey } from '../crypto/master-key.js';
import { auditCommand } from './audit.js';
import { encryptCommand } from './encrypt.js';
import { fileCoreCommand } from './file-core.js';
import { keysCommand } from './keys.js';
import { operatorKeyCommand } from './operator-key.js';
import { tenantCommand } from './tenant.js';
import { userCommand } from './user.js';

const EXPECTED_ERRORS = new Set(['CliError', 'CardlineError', 'ConfigError', 'StartupError', 'TenantConfigError', 'ConnectorConfigError', 'MasterKeyMismatchError']);

function version(): string {
  // src/cli/program.ts in a checkout, dist/src/cli/program.js in a build: package.json is two or three up.
  for (const path of ['../../package.json', '../../../package.json']) {
    try {
      return (JSON.parse(readFileSync(new URL(path, import.meta.url), 'utf8')) as { version: string }).version;
    } catch {
      // try the next
    }
  }
  return 'unknown';
}

export function createProgram(): Command {
  const program = new Command('cardline')
    .description('Cardline administration: tenants, users, keys, and encrypting values as clients do.')
    .version(version())
    .option('--admin-url <url>', "a running gateway's management API (e.g. http://127.0.0.1:8081); also CARDLINE_ADMIN_URL")
    .showSuggestionAfterError()
    .addHelpText(
      'after',
      `
Store commands (tenant, user, operator-key, keys, audit, encrypt --store) use the store configured by
DATABASE_URL or CARDLINE_DATA_DIR, as the gateway does; see \`cardline <command> --help\`.

With --admin-url (or CARDLINE_ADMIN_URL), tenant, user and operator-key commands call a running gateway's
management API instead, with the operator key in CARDLINE_OPERATOR_KEY: the way to onboard while the
gateway runs on its embedded store.`,
    );

  program.addCommand(encryptCommand());
  program.addCommand(tenantCommand());
  program.addCommand(userCommand());
  program.addCommand(operatorKeyCommand());
  program.addCommand(keysCommand());
  program.addCommand(auditCommand());
  program.addCommand(fileCoreCommand());
  program
    .command('master-key')
    .description('Print a new random master key (32 bytes, base64url) for CARDLINE_MASTER_KEY.')
    .addHelpText(
      'after',
      `
The master key seals every tenant's private keys at rest. Keep it in your secret store: a store
whose master key is lost cannot be opened again.`,
    )
    .action(() => {
      process.stdout.write(MasterKey.generate() + '\n');
    });
  return program;
}

/** Runs the command line; resolves the exit code. Commander itself exits on usage errors and --help. */
export async function run(argv: string[]): Promise<number> {
  try {
    await createProgram().parseAsync(argv);
    return 0;
  } catch (err) {
    const e = err instanceof Error ? err : new Error(String(err));
    const message = EXPECTED_ERRORS.has(e.name) ? e.message : `unexpected failure: ${e.message}`;
    process.stderr.write(`error: ${message.replace(/\s*\n\s*/g, ' ')}\n`);
    if (process.env.CARDLINE_DEBUG === '1' && e.stack) process.stderr.write(e.stack + '\n');
    return 1;
  }
}
