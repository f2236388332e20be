// The CLI's key actions on a shared PostgreSQL store (no --admin-url) tell the running gateways, as the API's
// do (decision 0034): a gateway keeps a tenant's key set and client key cached until it hears of a change, so
// a rotation, a retirement (a suspected compromise) or a new client key it never hears of would go unseen
// until it restarts. Only PostgreSQL has other processes to tell (the embedded store is one process's).
import { generateKeyPair, exportJWK } from 'jose';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MasterKey } from '../../src/crypto/master-key.js';
import { createTestDb, type TestDb } from '../helpers/app.js';
import { cliInProcess } from '../helpers/cli.js';

const TENANT = 'cli-key-changes';
const masterKey = MasterKey.generate();

let db: TestDb;
let listener: pg.Client;
const heard: unknown[] = [];
const waiting: { match: (c: unknown) => boolean; resolve: () => void }[] = [];

/** Resolves once the change feed's channel has carried `change` (already or later). */
function hears(change: object): Promise<void> {
  const match = (c: unknown) => JSON.stringify(c) === JSON.stringify(change);
  if (heard.some(match)) return Promise.resolve();
  return new Promise((resolve) => waiting.push({ match, resolve }));
}

const ok = async (args: string[]) => {
  const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: db.url!, CARDLINE_MASTER_KEY: masterKey };
  delete env.CARDLINE_ADMIN_URL;
  delete env.CARDLINE_OPERATOR_KEY;
  const r = await cliInProcess(args, env);
  expect(r.code, r.stderr).toBe(0);
  return r.stdout;
};

describe.skipIf(!process.env.DATABASE_URL)('cardline keys on a PostgreSQL store', () => {
  beforeAll(async () => {
    db = await createTestDb();
    await ok(['tenant', 'create', TENANT]);
    listener = new pg.Client({ connectionString: db.url! });
    await listener.connect();
    listener.on('notification', (n) => {
      const change: unknown = JSON.parse(n.payload ?? 'null');
      heard.push(change);
      for (const w of waiting.splice(0)) if (w.match(change)) w.resolve();
      else waiting.push(w);
    });
    await listener.query('LISTEN cardline_changes');
  });
  afterAll(async () => {
    await listener?.end();
    await db?.drop();
  });

  it('rotate, retire and register-client each tell the running gateways', async () => {
    const rotated = JSON.parse(await ok(['keys', 'rotate', '--tenant', TENANT, '--use', 'sig'])) as { replaced: { kid: string }[] };
    await hears({ kind: 'keys', tenantId: TENANT });
    heard.length = 0;

    await ok(['keys', 'retire', '--tenant', TENANT, '--kid', rotated.replaced[0]!.kid]);
    await hears({ kind: 'keys', tenantId: TENANT });

    const { publicKey } = await generateKeyPair('ECDH-ES+A256KW', { crv: 'P-256' });
    await ok(['keys', 'register-client', '--tenant', TENANT, '--jwk', JSON.stringify(await exportJWK(publicKey))]);
    await hears({ kind: 'client-key', tenantId: TENANT });
  });
});
