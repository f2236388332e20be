// The store commands' preamble: configuration, master key, store and migrations, the few services the
// commands that read the store itself need (constructed directly, without the Fastify app), and closing the
// store afterwards. Every change (tenants, users, operator keys, a tenant's keys) is made through the
// management operations run in process (src/cli/in-process.ts).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { openStore, resolveMasterKey } from '../bootstrap.js';
import { loadConfig, type Config } from '../config.js';
import type { TenantKeys } from '../crypto/keys.js';
import { KeyRing, checkMasterKey } from '../services/identity/key-ring.js';
import { MasterKey } from '../crypto/master-key.js';
import { TenantService } from '../services/tenancy/tenants.js';
import { StoreInUseError, type Db } from '../store/db.js';
import { migrate } from '../store/migrate.js';
import { fail } from './common.js';

export interface CliStore {
  config: Config;
  db: Db;
  tenants: TenantService;
  /** Only when the command asked for the master key. */
  keys: KeyRing;
}

export interface StoreOptions {
  /** Resolve the master key (before the store is opened, so a missing key fails fast). */
  masterKey: boolean;
  /** May create an empty PGlite store (tenant create); other commands refuse a missing one. */
  create?: boolean;
}

export async function withStore<T>(opts: StoreOptions, fn: (store: CliStore) => Promise<T>): Promise<T> {
  const config = loadConfig(process.env, { logLevel: 'silent' });
  // A configured master key is checked even when unused, so a wrong one is named at the first command.
  let masterKey: MasterKey | undefined;
  try {
    masterKey = new MasterKey(resolveMasterKey(config, { allowGenerate: false, allowFile: true }));
  } catch (err) {
    if (opts.masterKey) throw err;
  }
  if (!config.databaseUrl) {
    const dir = join(config.dataDir, 'pglite');
    if (!opts.create && !existsSync(dir)) {
      fail(`No store at ${dir}: set CARDLINE_DATA_DIR (or DATABASE_URL), or create a tenant first.`);
    }
  }
  let db: Db;
  try {
    db = await openStore(config);
  } catch (err) {
    if (err instanceof StoreInUseError) fail(err.message);
    throw err;
  }
  try {
    await migrate(db);
    if (masterKey) await checkMasterKey(db, masterKey);
    const keyRing = opts.masterKey && masterKey ? new KeyRing(db, masterKey, 0) : undefined;
    const store: CliStore = {
      config,
      db,
      tenants: new TenantService(db, 0),
      get keys(): KeyRing {
        if (!keyRing) throw new Error('internal: this command did not load the master key');
        return keyRing;
      },
    };
    return await fn(store);
  } finally {
    await db.close();
  }
}

/** The tenant, or a one-line error when it does not exist. */
export async function requireTenant(store: CliStore, tenantId: string) {
  const tenant = await store.tenants.get(tenantId);
  if (!tenant) fail(`Unknown tenant '${tenantId}'.`);
  return tenant;
}

/** The tenant's key pairs; a wrong master key is named as such rather than as a GCM failure. */
export async function tenantKeys(store: CliStore, tenantId: string): Promise<TenantKeys> {
  try {
    return await store.keys.forTenant(tenantId);
  } catch {
    return fail(
      `The master key does not open the keys of tenant '${tenantId}': is CARDLINE_MASTER_KEY the key this store was created with?`,
    );
  }
}
