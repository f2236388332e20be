// `npm run openapi`: writes the gateway's OpenAPI document to schemas/openapi.json (the committed copy a
// test compares with what the app serves), from an app on a throwaway in-memory store.
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { buildApp } from '../app.js';
import { loadConfig } from '../config.js';
import { MasterKey } from '../crypto/master-key.js';
import { openDb } from '../store/db.js';

export const OPENAPI_FILE = resolve(import.meta.dirname, '../../schemas/openapi.json');

/** The committed file's exact text. */
export const openapiText = (document: unknown): string => `${JSON.stringify(document, null, 2)}\n`;

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  const app = await buildApp({
    config: loadConfig({ LOG_LEVEL: 'silent', CARDLINE_DELIVERY_WORKER: '0' }),
    db: await openDb({ dataDir: 'memory://' }),
    masterKey: MasterKey.generate(),
  });
  writeFileSync(OPENAPI_FILE, openapiText(app.swagger()));
  await app.close();
  process.stdout.write(`wrote ${OPENAPI_FILE}\n`);
}
