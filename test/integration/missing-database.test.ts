// A DATABASE_URL naming a database that does not exist: the start (and a CLI command on the store) names the
// database and how to create it, instead of a bare SQLSTATE 3D000. Skipped without DATABASE_URL (a server).
import { describe, expect, it } from 'vitest';
import { StartupError, openStore } from '../../src/bootstrap.js';
import { loadConfig } from '../../src/config.js';
import { MasterKey } from '../../src/crypto/master-key.js';
import { cliInProcess } from '../helpers/cli.js';

const PG = process.env.DATABASE_URL;

describe.skipIf(!PG)('a PostgreSQL database that does not exist', () => {
  const url = new URL(PG ?? 'postgres://localhost/x');
  url.pathname = '/cardline_no_such_database';
  const host = url.hostname;
  const port = url.port || '5432';
  const user = decodeURIComponent(url.username) || 'postgres';
  const message =
    `PostgreSQL at ${host}:${port} has no database 'cardline_no_such_database' (SQLSTATE 3D000, named by DATABASE_URL). ` +
    `Create it: \`createdb -h ${host} -p ${port} -U ${user} cardline_no_such_database\` (or CREATE DATABASE "cardline_no_such_database"; in psql), ` +
    'or point DATABASE_URL at a database that exists.';

  it('is named with the fix when the store opens', async () => {
    const opening = openStore(loadConfig({ DATABASE_URL: url.toString(), LOG_LEVEL: 'silent' }));
    await expect(opening).rejects.toThrow(StartupError);
    await expect(opening).rejects.toThrow(message);
  });

  it('is named by a CLI command on the store', async () => {
    const r = await cliInProcess(['tenant', 'list'], { ...process.env, DATABASE_URL: url.toString(), CARDLINE_MASTER_KEY: MasterKey.generate(), CARDLINE_ADMIN_URL: '', CARDLINE_OPERATOR_KEY: '' });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`error: ${message}\n`);
  });
});
