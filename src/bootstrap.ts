// Shared start-up steps for the server and the CLI: the master key and the store.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from './config.js';
import { MasterKey } from './crypto/master-key.js';
import { openDb, type Db } from './store/db.js';

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

/** The gateway's store: the embedded one on a thread of its own, except for a short CLI command. */
export function openStore(config: Config, opts: { thread?: boolean } = {}): Promise<Db> {
  return openDb({ databaseUrl: config.databaseUrl, dataDir: join(config.dataDir, 'pglite'), thread: opts.thread ?? false });
}
