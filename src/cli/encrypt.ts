// `cardline encrypt`: a compact JWE of a value (a password or any field) to a tenant's gateway key,
// exactly as a client must send it (ECDH-ES+A256KW / A256GCM, iat and a one-time jti in the header).
import { Command, Option } from 'commander';
import type { JWK } from 'jose';
import { DEFAULT_KEY_ALGS, encryptCompact } from '../crypto/jwe.js';
import { CliError, STORE_HELP, fail, readStdin, tenantId } from './common.js';

interface EncryptOptions {
  tenant: string;
  gateway?: string;
  store?: boolean;
}

export function encryptCommand(): Command {
  return new Command('encrypt')
    .description("Encrypt a value (a password or any field) to a tenant's gateway key; prints the compact JWE.")
    .argument('<value>', "the value, or '-' to read it from stdin (keeps secrets out of shell history)")
    .requiredOption('--tenant <id>', 'the tenant whose gateway key to encrypt to', tenantId)
    .addOption(new Option('--gateway <url>', 'take the key from a running gateway: GET <url>/api/keys').conflicts('store'))
    .addOption(new Option('--store', 'take the key from the store (see below)').conflicts('gateway'))
    .addHelpText(
      'after',
      `
The JWE is accepted once (its jti) and within 5 minutes of its creation (its iat).

Examples:
  printf '%s' "$PASSWORD" | cardline encrypt - --tenant acme --gateway https://gateway.example
  cardline encrypt - --tenant acme --store < password.txt
${STORE_HELP}`,
    )
    .action(async (value: string, opts: EncryptOptions) => {
      if (!opts.gateway && !opts.store) fail('Say where the key comes from: --gateway <url> or --store.');
      const plaintext = value === '-' ? await readStdin('the value') : value;
      if (plaintext === '') fail('Nothing to encrypt: the value is empty.');
      const key = opts.gateway ? await keyFromGateway(opts.gateway, opts.tenant) : await keyFromStore(opts.tenant);
      process.stdout.write((await encryptCompact(plaintext, key)) + '\n');
    });
}

/** The tenant's active encryption key from a running gateway (GET <gateway>/api/keys), as clients fetch it. */
export async function keyFromGateway(gateway: string, tenant: string): Promise<JWK> {
  let url: URL;
  try {
    url = new URL(gateway.replace(/\/+$/, '') + '/api/keys');
  } catch {
    return fail(`--gateway: '${gateway}' is not a URL.`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') fail(`--gateway: '${gateway}' is not an http(s) URL.`);
  let res: Response;
  try {
    res = await fetch(url, { headers: { TENANT: tenant, accept: 'application/json' }, signal: AbortSignal.timeout(15_000) });
  } catch (err) {
    const cause = (err as { cause?: { message?: string } }).cause?.message ?? (err as Error).message;
    return fail(`Could not reach the gateway at ${url.origin}: ${cause}`);
  }
  const text = await res.text();
  if (!res.ok) {
    let detail = '';
    try {
      const body = JSON.parse(text) as { message?: unknown; detail?: unknown; title?: unknown };
      detail = [body.title, body.detail ?? body.message].filter((v) => typeof v === 'string').join(': ');
    } catch {
      // not JSON: the status says enough
    }
    fail(`The gateway answered ${res.status} to GET ${url.pathname} for tenant '${tenant}'${detail ? ` (${detail})` : ''}.`);
  }
  let keys: unknown;
  try {
    keys = (JSON.parse(text) as { keys?: unknown }).keys;
  } catch {
    return fail(`The gateway's answer to GET ${url.pathname} is not JSON.`);
  }
  if (!Array.isArray(keys)) fail(`The gateway's answer to GET ${url.pathname} is not a key set.`);
  return pickKey(keys as JWK[], tenant);
}

async function keyFromStore(tenant: string): Promise<JWK> {
  const { requireTenant, tenantKeys, withStore } = await import('./store.js');
  return withStore({ masterKey: true }, async (store) => {
    await requireTenant(store, tenant);
    const { enc } = await tenantKeys(store, tenant);
    return pickKey(
      enc.map((k) => k.publicJwk as JWK),
      tenant,
    );
  });
}

/** The first (active, newest) encryption key, refusing anything outside the allow-list. */
function pickKey(keys: JWK[], tenant: string): JWK {
  const key = keys.find((k) => k.use === undefined || k.use === 'enc');
  if (!key) throw new CliError(`Tenant '${tenant}' has no encryption key.`);
  if (key.alg !== undefined && !DEFAULT_KEY_ALGS.includes(key.alg)) {
    fail(`Tenant '${tenant}' key ${key.kid ?? ''} uses ${key.alg}; expected one of ${DEFAULT_KEY_ALGS.join(', ')}.`);
  }
  return key;
}
