// The store commands' preamble: configuration, master key, store and migrations, the few services the
// commands that work on the store itself need (constructed directly, without the Fastify app), and closing
// the store afterwards. Tenants, users and operator keys are changed through the management operations run
// in process (src/cli/in-process.ts); the key actions no management route offers go through
// src/services/admin-actions.ts, audited with the actor `cli:<os-user>` by an audit writer of its own
// (closed before the store).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { openStore, resolveMasterKey } from '../bootstrap.js';
import { loadConfig, type Config } from '../config.js';
import type { TenantKeys } from '../crypto/keys.js';
import { KeyRing, checkMasterKey } from '../services/identity/key-ring.js';
import { MasterKey } from '../crypto/master-key.js';
import { AuditWriter } from '../audit/writer.js';
import { cliActor, type AdminActionDeps, type AdminActor } from '../services/admin-actions.js';
import { ChangeFeed } from '../services/infrastructure/changes.js';
import { TenantService } from '../services/tenancy/tenants.js';
import { StoreInUseError, type Db } from '../store/db.js';
import { migrate } from '../store/migrate.js';
import { fail } from './common.js';

export interface CliStore extends AdminActionDeps {
  config: Config;
  db: Db;
  tenants: TenantService;
  /** Only when the command asked for the master key. */
  keys: KeyRing;
  /** Tells running gateways on PostgreSQL of a change (the embedded store has none running). */
  changes: ChangeFeed;
  /** Appends the audit records (and their security events) of this command's changes. */
  audit: AuditWriter;
  /** Who the records name: `cli:<os-user>`, one request id for the whole command. */
  actor: AdminActor;
}

export interface StoreOptions {
  /** Resolve the master key (before the store is opened, so a missing key fails fast). */
  masterKey: boolean;
  /** May create an empty PGlite store (tenant create); other commands refuse a missing one. */
  create?: boolean;
}

export async function withStore<T>(opts: StoreOptions, fn: (store: CliStore) => Promise<T>): Promise<T> {
  const config = loadConfig(process.env, { logLevel: 'silent' });
  // Commands that do not need the master key still check one that is configured: a wrong key in the
  // operator's environment is named at the first command, not when a tenant answers 500.
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
  let audit: AuditWriter | undefined;
  try {
    await migrate(db);
    if (masterKey) await checkMasterKey(db, masterKey);
    // Running gateways on PostgreSQL hear of each change (a rotation, a retirement) as they would of the API's.
    const changes = new ChangeFeed(db);
    const keyRing = opts.masterKey && masterKey ? new KeyRing(db, masterKey, 0, changes) : undefined;
    audit = new AuditWriter(db);
    const store: CliStore = {
      config,
      db,
      changes,
      tenants: new TenantService(db, 0),
      audit,
      actor: cliActor(),
      get keys(): KeyRing {
        if (!keyRing) throw new Error('internal: this command did not load the master key');
        return keyRing;
      },
    };
    return await fn(store);
  } finally {
    // Every record queued is committed before the store closes.
    await audit?.close();
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
