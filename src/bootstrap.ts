// Shared start-up steps for the server and the CLI: the master key and the store.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from './config.js';
import { MasterKey } from './crypto/master-key.js';
import { StoreError, openDb, type Db } from './store/db.js';

export class StartupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StartupError';
  }
}

/**
 * CARDLINE_MASTER_KEY wins; the demo keeps a generated key in its data dir (0600), which the production
 * server refuses: a key stored beside the data it protects protects nothing.
 */
export function resolveMasterKey(
  config: Config,
  { allowGenerate, allowFile = allowGenerate }: { allowGenerate: boolean; allowFile?: boolean },
): string {
  if (config.masterKey) return config.masterKey;
  const file = join(config.dataDir, 'master.key');
  if (allowFile && existsSync(file)) return readFileSync(file, 'utf8').trim();
  if (!allowGenerate) {
    throw new StartupError(
      'CARDLINE_MASTER_KEY is not set. Generate one with `npx cardline master-key` and keep it in your secret store.',
    );
  }
  mkdirSync(config.dataDir, { recursive: true });
  const key = MasterKey.generate();
  writeFileSync(file, key + '\n', { mode: 0o600 });
  return key;
}

/**
 * The gateway's store. The gateway runs the embedded store on a thread of its own (config.storeThread); a CLI
 * command, over in a moment, keeps it in process. A PostgreSQL database that does not exist is named, with the
 * way to create it, rather than left to the first statement's bare SQLSTATE.
 */
export async function openStore(config: Config, opts: { thread?: boolean } = {}): Promise<Db> {
  const db = await openDb({ databaseUrl: config.databaseUrl, dataDir: join(config.dataDir, 'pglite'), thread: opts.thread ?? false });
  if (!config.databaseUrl) return db;
  try {
    await db.query('SELECT 1');
  } catch (err) {
    if (err instanceof StoreError && err.code === INVALID_CATALOG_NAME) {
      await db.close().catch(() => undefined);
      throw new StartupError(missingDatabase(config.databaseUrl));
    }
    // Anything else (the server down, a refused password) is for the start's own steps to report as before.
  }
  return db;
}

/** PostgreSQL's SQLSTATE for a database that does not exist. */
const INVALID_CATALOG_NAME = '3D000';

function missingDatabase(databaseUrl: string): string {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.slice(1)) || decodeURIComponent(url.username) || 'postgres';
  const host = url.hostname || 'localhost';
  const port = url.port || '5432';
  const user = decodeURIComponent(url.username) || 'postgres';
  return (
    `PostgreSQL at ${host}:${port} has no database '${name}' (SQLSTATE 3D000, named by DATABASE_URL). ` +
    `Create it: \`createdb -h ${host} -p ${port} -U ${user} ${name}\` (or CREATE DATABASE "${name}"; in psql), ` +
    `or point DATABASE_URL at a database that exists.`
  );
}
