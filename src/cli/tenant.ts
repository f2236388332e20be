// `cardline tenant create|list`: onboarding a tenant (its record and first key pairs) and listing them.
import { Command } from 'commander';
import { DEFAULT_HOME_COUNTRY, DEFAULT_TENANT_CONFIG, DEFAULT_TIME_ZONE, type TenantConfig } from '../../schemas/tenant.js';
import { STORE_HELP, fail, integer, money, orderedJwk, printJson, tenantId } from './common.js';

interface CreateOptions {
  name?: string;
  connector: string;
  connectorOptions?: string;
  tokenLifetime?: number;
  maxLimit: string;
  allowDecrease?: boolean;
  allowPlaintextPassword?: boolean;
  homeCountry?: string;
  timeZone?: string;
  rateLimitTenant?: number;
  rateLimitUser?: number;
}

export function tenantCommand(): Command {
  const tenant = new Command('tenant').description('Create and list tenants.');

  tenant
    .command('create')
    .description("Create a tenant with its first encryption and signing key pairs; prints its public encryption key set.")
    .argument('<id>', 'tenant id: 1-63 lower-case letters, digits and dashes', tenantId)
    .option('--name <name>', 'display name (default: the id)')
    .option('--connector <id>', 'core-banking connector', DEFAULT_TENANT_CONFIG.connector.id)
    .option('--connector-options <json>', "the connector's options, a JSON object")
    .option('--token-lifetime <seconds>', `token lifetime, 60-86400 (default: ${DEFAULT_TENANT_CONFIG.tokenLifetimeSeconds})`, integer)
    .option('--max-limit <decimal>', 'highest credit limit the product allows', money, DEFAULT_TENANT_CONFIG.creditLimit.maximum)
    .option('--allow-decrease', 'allow credit limits to be lowered (default: refused)')
    .option('--allow-plaintext-password', 'accept a plain-text password on /api/authenticate (default: JWE only)')
    .option('--home-country <code>', `the bank's country, ISO 3166-1 alpha-2 (default: ${DEFAULT_HOME_COUNTRY})`)
    .option('--time-zone <zone>', `IANA time zone that decides what a day is (default: ${DEFAULT_TIME_ZONE})`)
    .option('--rate-limit-tenant <per-minute>', "requests per minute for all the tenant's users together (default: no limit)", integer)
    .option('--rate-limit-user <per-minute>', 'requests per minute for each user (default: no limit)', integer)
    .addHelpText(
      'after',
      `
The public key set printed on stdout is what the bank's integration team encrypts passwords and
fields to (it is also served by GET /api/keys with the TENANT header).

Example:
  cardline tenant create acme --name "Acme Bank" --max-limit 250000.00 > acme-enc-jwks.json
${STORE_HELP}`,
    )
    .action(async (id: string, opts: CreateOptions) => {
      const config = tenantConfig(opts);
      const { createTenant } = await import('../services/onboarding.js');
      const { tenantKeys, withStore } = await import('./store.js');
      await withStore({ masterKey: true, create: true }, async (store) => {
        if (await store.tenants.get(id)) fail(`Tenant '${id}' already exists.`);
        try {
          await createTenant(store, { id, name: opts.name ?? id, config });
        } catch (err) {
          if ((err as { code?: unknown }).code === '23505') fail(`Tenant '${id}' already exists.`);
          throw err;
        }
        const { enc } = await tenantKeys(store, id);
        printJson({ keys: enc.map((k) => orderedJwk(k.publicJwk)) });
        process.stderr.write(`Tenant '${id}' created.\n`);
      });
    });

  tenant
    .command('list')
    .description('List tenants: id, status, connector and name.')
    .option('--json', 'print JSON (id, name, status, config) instead of a table')
    .addHelpText('after', STORE_HELP)
    .action(async (opts: { json?: boolean }) => {
      const { withStore } = await import('./store.js');
      const tenants = await withStore({ masterKey: false }, (store) => store.tenants.list());
      if (opts.json) return printJson(tenants);
      const rows = [['ID', 'STATUS', 'CONNECTOR', 'NAME'], ...tenants.map((t) => [t.id, t.status, t.config.connector.id, t.name])];
      const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
      for (const r of rows) process.stdout.write(r.map((c, i) => (i < r.length - 1 ? c.padEnd(widths[i]!) : c)).join('  ') + '\n');
    });

  return tenant;
}

/** The tenant configuration from the options; the store validates it again (TypeBox) on create. */
function tenantConfig(opts: CreateOptions): TenantConfig {
  let options: Record<string, unknown> = {};
  if (opts.connectorOptions !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(opts.connectorOptions);
    } catch {
      fail('--connector-options must be a JSON object, e.g. \'{"fixtures":"empty"}\'.');
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) fail('--connector-options must be a JSON object.');
    options = parsed as Record<string, unknown>;
  }
  return {
    connector: { id: opts.connector, options },
    tokenLifetimeSeconds: opts.tokenLifetime ?? DEFAULT_TENANT_CONFIG.tokenLifetimeSeconds,
    creditLimit: { maximum: opts.maxLimit, allowDecrease: opts.allowDecrease === true },
    encryption: { allowPlaintextPassword: opts.allowPlaintextPassword === true },
    ...(opts.homeCountry !== undefined ? { homeCountry: opts.homeCountry } : {}),
    ...(opts.timeZone !== undefined ? { timeZone: opts.timeZone } : {}),
    ...(opts.rateLimitTenant !== undefined || opts.rateLimitUser !== undefined
      ? {
          rateLimit: {
            ...(opts.rateLimitTenant !== undefined ? { perTenantPerMinute: opts.rateLimitTenant } : {}),
            ...(opts.rateLimitUser !== undefined ? { perUserPerMinute: opts.rateLimitUser } : {}),
          },
        }
      : {}),
  };
}
