// The `cardline` command line: commands, and the one place where failures become a one-line message
// on stderr with exit code 1 (never a stack trace, unless CARDLINE_DEBUG=1).
import { readFileSync } from 'node:fs';
import { Command, Help } from 'commander';

/** The commands, each loaded only when named, so `cardline --help` loads commander alone (test/cli/lazy.test.ts). */
export const COMMANDS: readonly { name: string; term: string; summary: string; load: () => Promise<Command> }[] = [
  {
    name: 'encrypt',
    term: 'encrypt [options] <value>',
    summary: "Encrypt a value (a password or any field) to a tenant's gateway key; prints the compact JWE.",
    load: async () => (await import('./encrypt.js')).encryptCommand(),
  },
  {
    name: 'login',
    term: 'login [options]',
    summary: "Log a tenant's user in through the public API (the password sent as a JWE); prints the token.",
    load: async () => (await import('./login.js')).loginCommand(),
  },
  { name: 'tenant', term: 'tenant', summary: 'Create, change, show, list, disable and enable tenants.', load: async () => (await import('./tenant.js')).tenantCommand() },
  { name: 'user', term: 'user', summary: "Manage a tenant's API users.", load: async () => (await import('./user.js')).userCommand() },
  {
    name: 'operator-key',
    term: 'operator-key',
    summary: 'Create, list and revoke the API keys of the management listener.',
    load: async () => (await import('./operator-key.js')).operatorKeyCommand(),
  },
  {
    name: 'keys',
    term: 'keys',
    summary: "A tenant's gateway keys, and its client key for encrypted response fields.",
    load: async () => (await import('./keys.js')).keysCommand(),
  },
  {
    name: 'approvals',
    term: 'approvals',
    summary: "A tenant's requests held for a second person: list, show, approve, reject.",
    load: async () => (await import('./approvals.js')).approvalsCommand(),
  },
  { name: 'audit', term: 'audit', summary: "Check a tenant's tamper-evident audit trail.", load: async () => (await import('./audit.js')).auditCommand() },
  { name: 'file-core', term: 'file-core', summary: "Export or import a file core's state (fixtures JSON).", load: async () => (await import('./file-core.js')).fileCoreCommand() },
];

/** The command the arguments name (`help <command>` names its operand), after the global options. */
function namedCommand(argv: string[]): string | undefined {
  const args = argv.slice(2);
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--admin-url') i++;
    else if (!a.startsWith('-')) return a === 'help' ? args[i + 1] : a;
  }
  return undefined;
}

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

/** The program for these arguments: only the named command is loaded, the rest listed by term and summary. */
export async function createProgram(argv: string[], opts: { all?: boolean } = {}): Promise<Command> {
  const named = namedCommand(argv);
  const program = new Command('cardline')
    .description('Cardline administration: tenants, users, keys, and encrypting values as clients do.')
    .version(version())
    .option('--admin-url <url>', "a running gateway's management API (e.g. http://127.0.0.1:8081); also CARDLINE_ADMIN_URL")
    .showSuggestionAfterError()
    .addHelpText(
      'after',
      `
Store commands (tenant, user, operator-key, keys, approvals, audit, encrypt --store) use the store configured by
DATABASE_URL or CARDLINE_DATA_DIR, as the gateway does; see \`cardline <command> --help\`.

With --admin-url (or CARDLINE_ADMIN_URL), tenant, user, operator-key and approvals commands, and keys rotate,
retire and register-client, call a running gateway's management API instead, with the operator key in
CARDLINE_OPERATOR_KEY: the way to onboard while the gateway runs on its embedded store.`,
    );

  for (const c of COMMANDS) {
    if (opts.all || c.name === named) program.addCommand(await c.load());
    else program.command(c.name).summary(c.summary);
  }
  const terms = new Map(COMMANDS.map((c) => [c.name, c.term]));
  program.configureHelp({ subcommandTerm: (cmd) => terms.get(cmd.name()) ?? new Help().subcommandTerm(cmd) });
  program
    .command('master-key')
    .description('Print a new random master key (32 bytes, base64url) for CARDLINE_MASTER_KEY.')
    .addHelpText(
      'after',
      `
The master key seals every tenant's private keys at rest. Keep it in your secret store: a store
whose master key is lost cannot be opened again.`,
    )
    .action(async () => {
      const { MasterKey } = await import('../crypto/master-key.js');
      process.stdout.write(MasterKey.generate() + '\n');
    });
  return program;
}

/** Runs the command line; resolves the exit code. Commander itself exits on usage errors and --help. */
export async function run(argv: string[]): Promise<number> {
  try {
    await (await createProgram(argv)).parseAsync(argv);
    return 0;
  } catch (err) {
    const e = err instanceof Error ? err : new Error(String(err));
    const message = EXPECTED_ERRORS.has(e.name) ? e.message : `unexpected failure: ${e.message}`;
    process.stderr.write(`error: ${message.replace(/\s*\n\s*/g, ' ')}\n`);
    if (process.env.CARDLINE_DEBUG === '1' && e.stack) process.stderr.write(e.stack + '\n');
    return 1;
  }
}
