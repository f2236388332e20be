// `npm run openapi`: writes the gateway's OpenAPI documents — the public listener's to schemas/openapi.json, the
// management listener's to schemas/management-openapi.json (the committed copies tests compare with what each
// listener serves) — from apps on a throwaway in-memory store.
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { buildApp } from '../app.js';
import { loadConfig } from '../config.js';
import { MasterKey } from '../crypto/master-key.js';
import { buildManagementApp } from '../management/app.js';
import { openDb } from '../store/db.js';
import { writeRouteTables } from './route-table.js';

export const OPENAPI_FILE = resolve(import.meta.dirname, '../../schemas/openapi.json');
export const MANAGEMENT_OPENAPI_FILE = resolve(import.meta.dirname, '../../schemas/management-openapi.json');

/** The committed file's exact text. */
export const openapiText = (document: unknown): string => `${JSON.stringify(document, null, 2)}\n`;

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  const config = loadConfig({ LOG_LEVEL: 'silent', CARDLINE_DELIVERY_WORKER: '0' });
  const app = await buildApp({ config, db: await openDb({ dataDir: 'memory://' }), masterKey: MasterKey.generate() });
  const management = await buildManagementApp({ services: app.cardline, config });
  writeFileSync(OPENAPI_FILE, openapiText(app.swagger()));
  writeFileSync(MANAGEMENT_OPENAPI_FILE, openapiText(management.swagger()));
  await management.close();
  await app.close();
  // The tables of routes in docs/api.md and docs/operating.md come from the same operation tables.
  const tables = writeRouteTables();
  process.stdout.write(`wrote ${OPENAPI_FILE}\nwrote ${MANAGEMENT_OPENAPI_FILE}\n${tables.map((f) => `wrote the route table of ${f}\n`).join('')}`);
}
