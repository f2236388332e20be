// `cardline keys …`: a tenant's gateway keys (export, list, rotate, retire) and its client key for
// encrypted response fields (register-client). Rotating, retiring and registering are the management
// operations (over HTTP with --admin-url, else in process over the store); export and list read the store.
import { readFileSync } from 'node:fs';
import { Command, InvalidArgumentError, Option } from 'commander';
import type { ClientKeyBody } from '../../sdk/src/generated/types.js';
import { MAX_GRACE_SECONDS, defaultGraceSeconds, parseDuration, type KeyUse, type PublicJwk } from '../crypto/keys.js';
import { STORE_HELP, fail, orderedJwk, printJson, readStdin, tenantId } from './common.js';
import { withApi } from './api.js';
import { REMOTE_HELP } from './remote.js';

function grace(value: string): number {
  const seconds = parseDuration(value);
  if (seconds === null) {
    throw new InvalidArgumentError(`'${value}' is not a duration: a whole number with s, m, h or d (e.g. 90m, 24h), at most ${MAX_GRACE_SECONDS / 86_400}d.`);
  }
  return seconds;
}

/** `--jwk @file.json`, `--jwk -` (stdin) or the JSON itself. */
async function readJwk(arg: string): Promise<unknown> {
  let text: string;
  if (arg === '-') text = await readStdin('the client JWK');
  else if (arg.startsWith('@')) {
    try {
      text = readFileSync(arg.slice(1), 'utf8');
    } catch {
      return fail(`Cannot read the JWK file '${arg.slice(1)}'.`);
    }
  } else text = arg;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return fail('The client key is not valid JSON: give an EC P-256 public JWK, e.g. --jwk @client-key.json.');
  }
}

export function keysCommand(): Command {
  const keys = new Command('keys').description("A tenant's gateway keys, and its client key for encrypted response fields.");

  keys
    .command('export')
    .description(
      "Print the tenant's public key set as JSON: encryption keys (clients encrypt to the first, the active one), then signing keys (tokens). Retiring keys are included until their grace ends.",
    )
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

  keys
    .command('list')
    .description("Print every gateway key of the tenant, retired ones included, newest first: kid, use, status, dates, public JWK.")
    .requiredOption('--tenant <id>', 'tenant id', tenantId)
    .addHelpText('after', STORE_HELP)
    .action(async (opts: { tenant: string }) => {
      const { requireTenant, withStore } = await import('./store.js');
      const list = await withStore({ masterKey: true }, async (store) => {
        await requireTenant(store, opts.tenant);
        return (await store.keys.list(opts.tenant)).map((k) => ({ ...k, publicJwk: orderedJwk(k.publicJwk) }));
      });
      printJson(list);
    });

  keys
    .command('rotate')
    .description(
      'Create a new active key of the given use; the current active key becomes retiring: still accepted (enc: decrypts, sig: verifies tokens) and published until the grace ends, then retired.',
    )
    .requiredOption('--tenant <id>', 'tenant id', tenantId)
    .addOption(new Option('--use <use>', 'enc (request encryption) or sig (token signing)').choices(['enc', 'sig']).makeOptionMandatory())
    .option('--grace <duration>', 'how long the replaced key stays accepted: 90s, 15m, 24h, 7d; 0 retires it at once (default: 24h for enc, token lifetime + 5m for sig)', grace)
    .addHelpText('after', `${REMOTE_HELP}\n${STORE_HELP}`)
    .action(async (opts: { tenant: string; use: KeyUse; grace?: number }, command: Command) => {
      const result = await withApi(command, { operations: ['tenant.read', 'tenant-keys.rotate'] }, async (api) => {
        // The grace is printed, so the default is worked out here as the gateway would (from the token lifetime).
        const seconds = opts.grace ?? defaultGraceSeconds(opts.use, (await api.tenant.read(opts.tenant)).result.config.tokenLifetimeSeconds as number);
        const { active, replaced } = (await api.tenantKeys.rotate(opts.tenant, { use: opts.use, graceSeconds: seconds })).result;
        return { active: orderedJwk(active as PublicJwk), replaced, graceSeconds: seconds };
      });
      printJson(result);
    });

  keys
    .command('retire')
    .description("Retire a retiring key at once (e.g. a suspected compromise): it is no longer accepted or published. The active key cannot be retired; rotate first.")
    .requiredOption('--tenant <id>', 'tenant id', tenantId)
    .requiredOption('--kid <kid>', 'the key id (see keys list)')
    .addHelpText('after', `${REMOTE_HELP}\n${STORE_HELP}`)
    .action(async (opts: { tenant: string; kid: string }, command: Command) => {
      const info = await withApi(command, { operations: ['tenant-keys.retire'] }, async (api) => (await api.tenantKeys.retire(opts.tenant, opts.kid)).result);
      printJson({ ...info, publicJwk: orderedJwk(info.publicJwk as PublicJwk) });
    });

  keys
    .command('register-client')
    .description(
      "Register (or replace) the tenant's client public key: an EC P-256 JWK for ECDH-ES+A256KW. Card reads then return the PAN, CVV and expiry encrypted to it.",
    )
    .requiredOption('--tenant <id>', 'tenant id', tenantId)
    .requiredOption('--jwk <jwk>', 'the public JWK: @file.json, - for stdin, or the JSON itself')
    .addHelpText('after', `${REMOTE_HELP}\n${STORE_HELP}`)
    .action(async (opts: { tenant: string; jwk: string }, command: Command) => {
      const jwk = (await readJwk(opts.jwk)) as ClientKeyBody['jwk'];
      // A private key never leaves this machine, not even to be refused; the API's schema checks the rest.
      if (jwk && typeof jwk === 'object' && 'd' in jwk) {
        fail('The client key is not an EC P-256 public JWK for encryption: /d: a private key was given; register the public key only (drop "d") and keep the private key with the client.');
      }
      printJson(await withApi(command, { operations: ['tenant-client-key.register'] }, async (api) => (await api.tenantClientKey.register(opts.tenant, { jwk })).result));
    });

  return keys;
}
