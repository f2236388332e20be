// `cardline tenant create|update|show|list|disable|enable`: a tenant's record, configuration and first key
// pairs. Every configuration field has a flag, and `--config file.json` gives any of them (the PIN section,
// say) as JSON; flags win over the file. With --admin-url the commands call a running gateway's management
// API; otherwise they work on the store, through the same management operations run in process (src/cli/in-process.ts).
import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import jsonMergePatch from 'json-merge-patch';
import { DEFAULT_HOME_COUNTRY, DEFAULT_TENANT_CONFIG, DEFAULT_TIME_ZONE, type TenantConfig } from '../../schemas/tenant.js';
import type { PublicJwk } from '../crypto/keys.js';
import { PAGE_MAX } from '../../schemas/page.js';
import type { TenantCreateBody, TenantPatchBody } from '../../sdk/src/generated/types.js';
import { STORE_HELP, checkUsername, fail, integer, money, orderedJwk, printJson, readStdin, table, tenantId } from './common.js';
import { connectorsLabel } from '../services/connectors/routing.js';
import { withApi } from './api.js';
import { REMOTE_HELP } from './remote.js';

interface ConfigOptions {
  name?: string;
  config?: string;
  connector?: string;
  connectorModule?: string;
  connectorOptions?: string;
  tokenLifetime?: number;
  maxLimit?: string;
  allowDecrease?: boolean;
  allowPlaintextPassword?: boolean;
  requireEncryptedBody?: string[];
  sandbox?: boolean;
  homeCountry?: string;
  timeZone?: string;
  rateLimitTenant?: number;
  rateLimitUser?: number;
}


const collect = (value: string, previous: string[] = []) => [...previous, value];

/** The configuration flags, shared by create and update. */
function configOptions(cmd: Command, forUpdate: boolean): Command {
  const dflt = (text: string) => (forUpdate ? '' : ` (default: ${text})`);
  return cmd
    .option('--name <name>', `display name${dflt('the id')}`)
    .option('--config <file>', forUpdate ? 'a JSON merge patch of the configuration, from a file' : 'the configuration, or part of it, as JSON in a file')
    .option('--connector <id>', `core-banking connector: mock, rest, file, or an external module's id${dflt(DEFAULT_TENANT_CONFIG.connector.id)}`)
    .option('--connector-module <module>', "an external connector's module: a path or a package name whose default export is its definition")
    .option('--connector-options <json>', `the connector's options, a JSON object${forUpdate ? ' (merged into the current ones; null removes one)' : ''}`)
    .option('--token-lifetime <seconds>', `token lifetime, 60-86400${dflt(String(DEFAULT_TENANT_CONFIG.tokenLifetimeSeconds))}`, integer)
    .option('--max-limit <decimal>', `highest credit limit the product allows${dflt(DEFAULT_TENANT_CONFIG.creditLimit.maximum)}`, money)
    .option('--allow-decrease', 'allow credit limits to be lowered')
    .option('--no-allow-decrease', 'refuse lowering a credit limit (the default)')
    .option('--allow-plaintext-password', 'accept a plain-text password on /api/authenticate')
    .option('--no-allow-plaintext-password', 'accept only a JWE password (the default)')
    .option('--require-encrypted-body <route>', 'a route whose body must arrive encrypted, e.g. "PUT /v1/cards/upgrade/physical", "/v1/cards/*" or "*" (repeat the flag for several)', collect)
    .option('--sandbox', 'open the /v1/sandbox/ simulation routes (demos, integration testing)')
    .option('--no-sandbox', 'close the sandbox routes (the default)')
    .option('--home-country <code>', `the bank's country, ISO 3166-1 alpha-2${dflt(DEFAULT_HOME_COUNTRY)}`)
    .option('--time-zone <zone>', `IANA time zone that decides what a day is${dflt(DEFAULT_TIME_ZONE)}`)
    .option('--rate-limit-tenant <per-minute>', "requests per minute for all the tenant's users together (default: no limit)", integer)
    .option('--rate-limit-user <per-minute>', 'requests per minute for each user (default: no limit)', integer);
}

/** The parser's reason and position as line and column, never the excerpt (a file may hold credentials). */
function jsonSyntaxError(text: string, err: unknown): string {
  const reason = String((err as Error).message).replace(/, ".*" is not valid JSON$/s, '').replace(/ \(line \d+ column \d+\)$/, '');
  const at = /at position (\d+)$/.exec(reason);
  if (!at) return reason;
  const before = text.slice(0, Number(at[1]));
  return `${reason} (line ${before.split('\n').length}, column ${Number(at[1]) - before.lastIndexOf('\n')})`;
}

function jsonObject(text: string, what: string, example?: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    fail(example === undefined ? `${what} is not valid JSON: ${jsonSyntaxError(text, err)}.` : `${what} must be a JSON object, e.g. '${example}'.`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) fail(`${what} must be a JSON object.`);
  return parsed as Record<string, unknown>;
}

function configFile(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    return fail(`Cannot read --config ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}.`);
  }
  return jsonObject(text, `--config ${path}`);
}

/** The configuration the flags give (only the fields given), as a merge patch. */
function flagsPatch(opts: ConfigOptions): Record<string, unknown> {
  const patch: Record<string, Record<string, unknown> | unknown> = {};
  const section = (name: string) => (patch[name] ??= {}) as Record<string, unknown>;
  if (opts.connector !== undefined) section('connector').id = opts.connector;
  if (opts.connectorModule !== undefined) section('connector').module = opts.connectorModule;
  if (opts.connectorOptions !== undefined) section('connector').options = jsonObject(opts.connectorOptions, '--connector-options', '{"fixtures":"empty"}');
  if (opts.tokenLifetime !== undefined) patch.tokenLifetimeSeconds = opts.tokenLifetime;
  if (opts.maxLimit !== undefined) section('creditLimit').maximum = opts.maxLimit;
  if (opts.allowDecrease !== undefined) section('creditLimit').allowDecrease = opts.allowDecrease;
  if (opts.allowPlaintextPassword !== undefined) section('encryption').allowPlaintextPassword = opts.allowPlaintextPassword;
  if (opts.requireEncryptedBody !== undefined) section('encryption').requireEncryptedBody = opts.requireEncryptedBody;
  if (opts.sandbox !== undefined) patch.sandbox = opts.sandbox;
  if (opts.homeCountry !== undefined) patch.homeCountry = opts.homeCountry;
  if (opts.timeZone !== undefined) patch.timeZone = opts.timeZone;
  if (opts.rateLimitTenant !== undefined) section('rateLimit').perTenantPerMinute = opts.rateLimitTenant;
  if (opts.rateLimitUser !== undefined) section('rateLimit').perUserPerMinute = opts.rateLimitUser;
  return patch;
}

/** A new tenant's configuration: the file, then the flags, then the defaults of what neither gave. */
export function createConfig(opts: ConfigOptions): Record<string, unknown> {
  const given = jsonMergePatch.apply(opts.config ? configFile(opts.config) : {}, flagsPatch(opts)) as Record<string, unknown>;
  const connector = { id: DEFAULT_TENANT_CONFIG.connector.id, options: {}, ...(given.connector as object | undefined) };
  return {
    ...given,
    // A configuration naming several connectors has no single one.
    ...(given.connectors ? {} : { connector }),
    tokenLifetimeSeconds: given.tokenLifetimeSeconds ?? DEFAULT_TENANT_CONFIG.tokenLifetimeSeconds,
    creditLimit: { ...DEFAULT_TENANT_CONFIG.creditLimit, ...(given.creditLimit as object | undefined) },
    encryption: { ...DEFAULT_TENANT_CONFIG.encryption, ...(given.encryption as object | undefined) },
  };
}

interface AdminOptions {
  admin?: string;
  passwordStdin?: boolean;
}

/** The first Admin `--admin` names, its password read and checked before anything is sent. */
async function firstAdmin(opts: AdminOptions): Promise<{ username: string; password: string } | undefined> {
  if (opts.admin === undefined) {
    if (opts.passwordStdin) fail('--password-stdin reads the password of the Admin --admin names: give --admin too.');
    return undefined;
  }
  checkUsername(opts.admin, '--admin');
  const password = opts.passwordStdin ? await readStdin("the Admin's password") : process.env.CARDLINE_USER_PASSWORD;
  if (!password) fail("No password for --admin: pipe it in with --password-stdin, or set CARDLINE_USER_PASSWORD.");
  const problem = (await import('../services/identity/users.js')).passwordProblem(password); // with the hasher: loaded here only
  if (problem) fail(problem);
  return { username: opts.admin, password };
}

/** An update's merge patch: the file's patch, then the flags. */
export function updatePatch(opts: ConfigOptions): Record<string, unknown> {
  return jsonMergePatch.apply(opts.config ? configFile(opts.config) : {}, flagsPatch(opts)) as Record<string, unknown>;
}

export function tenantCommand(): Command {
  const tenant = new Command('tenant').description('Create, change, show, list, disable and enable tenants.');

  configOptions(
    tenant
      .command('create')
      .description("Create a tenant with its first encryption and signing key pairs; prints its public encryption key set.")
      .argument('<id>', 'tenant id: 1-63 lower-case letters, digits and dashes', tenantId),
    false,
  )
    .option('--admin <username>', "create the tenant's first Admin with it, both or neither (password from --password-stdin or CARDLINE_USER_PASSWORD)")
    .option('--password-stdin', "with --admin: read the Admin's password from stdin")
    .addHelpText(
      'after',
      `
The public key set printed on stdout is what the bank's integration team encrypts passwords and
fields to (it is also served by GET /api/keys with the TENANT header).

With --admin the tenant and its first Admin are created by one operation: a password refused (at
least 8 characters) leaves no tenant behind. The password travels encrypted to the gateway's
onboarding key, never as an argument.

Examples:
  cardline tenant create acme --name "Acme Bank" --max-limit 250000.00 > acme-enc-jwks.json
  printf '%s' "$PASSWORD" | cardline tenant create acme --home-country GB --time-zone Europe/London \\
    --max-limit 250000.00 --admin root --password-stdin > acme-enc-jwks.json
  cardline --admin-url http://127.0.0.1:8081 tenant create acme --connector rest \\
    --connector-options '{"baseUrl":"http://127.0.0.1:4010/banks/acme","auth":{"type":"bearer","token":"..."}}'
  cardline tenant create acme --config acme.json --sandbox
${REMOTE_HELP}
${STORE_HELP}`,
    )
    .action(async (id: string, opts: ConfigOptions & AdminOptions, command: Command) => {
      const config = createConfig(opts);
      const name = opts.name ?? id;
      const admin = await firstAdmin(opts);
      const operations = admin ? (['tenant.create', 'tenant.onboarding-keys'] as const) : (['tenant.create'] as const);
      const keys = await withApi(command, { create: true, messages: { TENANT_EXISTS: `Tenant '${id}' already exists.` }, operations }, async (api) =>
        (await api.tenant.create({ id, name, config: config as TenantCreateBody['config'], ...(admin ? { admin } : {}) })).result.encryptionKeys.keys as PublicJwk[],
      );
      printJson({ keys: keys.map(orderedJwk) });
      process.stderr.write(admin ? `Tenant '${id}' created with its first Admin '${admin.username}'.\n` : `Tenant '${id}' created.\n`);
    });

  configOptions(
    tenant
      .command('update')
      .description('Change a tenant: the flags and --config file are a JSON merge patch of its configuration; prints the tenant.')
      .argument('<id>', 'tenant id', tenantId),
    true,
  )
    .addHelpText(
      'after',
      `
Only what is given changes. The result is validated as at creation (an external module that does not
load, or options that do not match its connector's schema, are refused with the reason). A connector
secret shown as "***" keeps its value; a new value replaces it.

Examples:
  cardline tenant update acme --max-limit 500000.00 --rate-limit-user 600
  cardline tenant update acme --connector rest --connector-options '{"fixtures":null,"baseUrl":"https://core.acme.example"}'
  cardline tenant update acme --config acme-pin.json
${REMOTE_HELP}
${STORE_HELP}`,
    )
    .action(async (id: string, opts: ConfigOptions, command: Command) => {
      const patch = updatePatch(opts);
      const body = { ...(opts.name !== undefined ? { name: opts.name } : {}), ...(Object.keys(patch).length ? { config: patch } : {}) };
      if (!Object.keys(body).length) fail('Nothing to change: give --name, --config or a configuration flag (see --help).');
      printJson(await withApi(command, { operations: ['tenant.update'] }, async (api) => (await api.tenant.update(id, body as TenantPatchBody)).result));
    });

  tenant
    .command('show')
    .description('Print a tenant: status, version and configuration (secrets as "***").')
    .argument('<id>', 'tenant id', tenantId)
    .addHelpText('after', `${REMOTE_HELP}\n${STORE_HELP}`)
    .action(async (id: string, _opts: unknown, command: Command) => {
      printJson(await withApi(command, { operations: ['tenant.read'] }, async (api) => (await api.tenant.read(id)).result));
    });

  tenant
    .command('list')
    .description('List tenants: id, status, connector and name.')
    .option('--search <text>', 'only the tenants whose id or name holds this text, in any case')
    .option('--json', 'print JSON (id, name, status, version, config with secrets as "***") instead of a table')
    .addHelpText('after', `${REMOTE_HELP}\n${STORE_HELP}`)
    .action(async (opts: { json?: boolean; search?: string }, command: Command) => {
      const query = { limit: PAGE_MAX, ...(opts.search === undefined ? {} : { q: opts.search }) };
      const tenants = await withApi(command, { operations: ['tenant.list'] }, (api) => api.tenant.list(query).toArray());
      if (opts.json) return printJson(tenants);
      table([['ID', 'STATUS', 'CONNECTOR', 'NAME'], ...tenants.map((t) => [t.id, t.status, connectorsLabel(t.config as TenantConfig), t.name])]);
    });

  for (const [verb, status, what] of [
    ['disable', 'disabled', 'Disable a tenant: its requests answer as for an unknown tenant, on every gateway within 2 s; nothing is deleted.'],
    ['enable', 'active', 'Enable a disabled tenant again.'],
  ] as const) {
    tenant
      .command(verb)
      .description(what)
      .argument('<id>', 'tenant id', tenantId)
      .addHelpText('after', `${REMOTE_HELP}\n${STORE_HELP}`)
      .action(async (id: string, _opts: unknown, command: Command) => {
        await withApi(command, { operations: [`tenant.${verb}`] }, (api) => api.tenant[verb](id));
        process.stdout.write(`Tenant '${id}' ${status === 'active' ? 'enabled' : 'disabled'}.\n`);
      });
  }

  return tenant;
}


