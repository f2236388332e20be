// `cardline keys …`: a tenant's gateway keys (export, list, rotate, retire) and its client key for
// encrypted response fields (register-client).
import { readFileSync } from 'node:fs';
import { Command, InvalidArgumentError, Option } from 'commander';
import { MAX_GRACE_SECONDS, parseDuration, type KeyUse } from '../crypto/keys.js';
import { STORE_HELP, fail, orderedJwk, printJson, readStdin, tenantId } from './common.js';

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

/** Lifecycle and client-key refusals are the operator's to fix: one line, no stack. */
async function expected<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof Error && (err.name === 'KeyLifecycleError' || err.name === 'ClientKeyError')) fail(err.message);
    if (err instanceof Error && err.name === 'CardlineError') fail(err.message);
    throw err;
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
    .addHelpText('after', STORE_HELP)
    .action(async (opts: { tenant: string; use: KeyUse; grace?: number }) => {
      const { defaultGraceSeconds } = await import('../crypto/keys.js');
      const { adminRotateKeys } = await import('../services/admin-actions.js');
      const { requireTenant, withStore } = await import('./store.js');
      const result = await withStore({ masterKey: true }, async (store) => {
        const tenant = await requireTenant(store, opts.tenant);
        const seconds = opts.grace ?? defaultGraceSeconds(opts.use, tenant.config.tokenLifetimeSeconds);
        const r = await expected(() => adminRotateKeys(store, store.actor, opts.tenant, opts.use, seconds));
        return { active: orderedJwk(r.active), replaced: r.replaced, graceSeconds: seconds };
      });
      printJson(result);
    });

  keys
    .command('retire')
    .description("Retire a retiring key at once (e.g. a suspected compromise): it is no longer accepted or published. The active key cannot be retired; rotate first.")
    .requiredOption('--tenant <id>', 'tenant id', tenantId)
    .requiredOption('--kid <kid>', 'the key id (see keys list)')
    .addHelpText('after', STORE_HELP)
    .action(async (opts: { tenant: string; kid: string }) => {
      const { adminRetireKey } = await import('../services/admin-actions.js');
      const { requireTenant, withStore } = await import('./store.js');
      const info = await withStore({ masterKey: true }, async (store) => {
        await requireTenant(store, opts.tenant);
        return expected(() => adminRetireKey(store, store.actor, opts.tenant, opts.kid));
      });
      printJson({ ...info, publicJwk: orderedJwk(info.publicJwk) });
    });

  keys
    .command('register-client')
    .description(
      "Register (or replace) the tenant's client public key: an EC P-256 JWK for ECDH-ES+A256KW. Card reads then return the PAN, CVV and expiry encrypted to it.",
    )
    .requiredOption('--tenant <id>', 'tenant id', tenantId)
    .requiredOption('--jwk <jwk>', 'the public JWK: @file.json, - for stdin, or the JSON itself')
    .addHelpText('after', STORE_HELP)
    .action(async (opts: { tenant: string; jwk: string }) => {
      const jwk = await readJwk(opts.jwk);
      const { ClientKeyStore } = await import('../services/identity/client-keys.js');
      const { adminRegisterClientKey } = await import('../services/admin-actions.js');
      const { requireTenant, withStore } = await import('./store.js');
      const registered = await withStore({ masterKey: false }, async (store) => {
        await requireTenant(store, opts.tenant);
        return expected(() => adminRegisterClientKey(store, new ClientKeyStore(store.db, 0, store.changes), store.actor, opts.tenant, jwk));
      });
      printJson(registered);
    });

  return keys;
}
