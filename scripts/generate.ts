// `npm run generate`: every derived file, computed in one process and written where it differs (decision 0260).
// `--uncommitted` writes only what git does not hold (sdk/src/generated/), without building an app.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Db } from '../src/store/db.js';

export const ROOT = join(import.meta.dirname, '..');
export const OPENAPI_FILE = 'schemas/openapi.json';
export const MANAGEMENT_OPENAPI_FILE = 'schemas/management-openapi.json';
export const CORE_PROTOCOL_FILE = 'schemas/core-protocol.openapi.json';
const SDK_GENERATED_DIR = 'sdk/src/generated';

export interface DerivedFile {
  /** From the repository's root, with forward slashes. */
  path: string;
  text: string;
  /** false: git ignores it; it is written at install, build and typecheck time. */
  committed: boolean;
}

/** An OpenAPI document's committed text. */
export const openapiText = (document: unknown): string => `${JSON.stringify(document, null, 2)}\n`;

/** Both listeners' documents as served, from apps on `db` or on a store from the migrated template. */
async function listenerDocuments(db?: Db): Promise<DerivedFile[]> {
  const [{ buildApp }, { loadConfig }, { MasterKey }, { buildManagementApp }, { openDb }] = await Promise.all([
    import('../src/app.js'),
    import('../src/config.js'),
    import('../src/crypto/master-key.js'),
    import('../src/management/app.js'),
    import('../src/store/db.js'),
  ]);
  const dataDir = db ? undefined : mkdtempSync(join(tmpdir(), 'cardline-generate-'));
  try {
    const config = loadConfig({ LOG_LEVEL: 'silent', CARDLINE_DELIVERY_WORKER: '0' });
    const store = db ?? (await openDb({ dataDir }));
    const app = await buildApp({ config, db: store, masterKey: MasterKey.generate(), ownsDb: !db });
    try {
      const management = await buildManagementApp({ services: app.cardline, config });
      try {
        return [
          { path: OPENAPI_FILE, text: openapiText(app.swagger()), committed: true },
          { path: MANAGEMENT_OPENAPI_FILE, text: openapiText(management.swagger()), committed: true },
        ];
      } finally {
        await management.close();
      }
    } finally {
      await app.close();
    }
  } finally {
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }
}

/** docs/api.md and docs/operating.md with their route tables as the operation tables make them. */
async function routeTables(): Promise<DerivedFile[]> {
  const { ROUTE_TABLE_FILES, withRouteTable } = await import('../src/openapi/route-table.js');
  return Object.entries(ROUTE_TABLE_FILES).map(([listener, file]) => ({
    path: relative(ROOT, file).split('\\').join('/'),
    text: withRouteTable(readFileSync(file, 'utf8'), listener as keyof typeof ROUTE_TABLE_FILES),
    committed: true,
  }));
}

async function sdkFiles(): Promise<DerivedFile[]> {
  const { generate } = await import('../sdk/scripts/generate.js');
  return Object.entries(await generate()).map(([file, text]) => ({ path: `${SDK_GENERATED_DIR}/${file}`, text, committed: false }));
}

/** Every derived file as the sources make it now, or (uncommitted) only those git does not hold. */
export async function derivedFiles(opts: { db?: Db; uncommitted?: boolean } = {}): Promise<DerivedFile[]> {
  if (opts.uncommitted) return sdkFiles();
  const { coreProtocolOpenApiText } = await import('../connectors/rest/protocol-document.js');
  const { CONTRACT_SNAPSHOT, connectorContractText } = await import('./connector-contract.js');
  return [
    ...(await listenerDocuments(opts.db)),
    { path: CORE_PROTOCOL_FILE, text: coreProtocolOpenApiText(), committed: true },
    ...(await routeTables()),
    { path: CONTRACT_SNAPSHOT, text: await connectorContractText(), committed: true },
    ...(await sdkFiles()),
  ];
}

const onDisk = (root: string, path: string): string | undefined => (existsSync(join(root, path)) ? readFileSync(join(root, path), 'utf8') : undefined);

/** The paths whose file under `root` is missing or differs from what the generator makes. */
export const staleFiles = (files: readonly DerivedFile[], root = ROOT): string[] => files.filter((f) => onDisk(root, f.path) !== f.text).map((f) => f.path);

/** What a check says of stale files: which, and the one command that rewrites them. */
export const staleMessage = (paths: readonly string[]): string =>
  `${paths.join(', ')} ${paths.length === 1 ? 'is' : 'are'} stale: run \`npm run generate\``;

/** Writes the files that differ (an unchanged file keeps its time: the build's freshness check reads it); returns their paths. */
function writeDerived(files: readonly DerivedFile[], root = ROOT): string[] {
  const stale = staleFiles(files, root);
  for (const file of files.filter((f) => stale.includes(f.path))) {
    mkdirSync(dirname(join(root, file.path)), { recursive: true });
    writeFileSync(join(root, file.path), file.text);
  }
  return stale;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const uncommitted = process.argv.includes('--uncommitted');
  const files = await derivedFiles({ uncommitted });
  const written = writeDerived(files);
  for (const path of written) process.stdout.write(`wrote ${path}\n`);
  process.stdout.write(`${files.length} derived files${uncommitted ? ' (the uncommitted ones)' : ''}: ${written.length ? `${written.length} rewritten` : 'all up to date'}\n`);
}
