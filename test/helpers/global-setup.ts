// Vitest global setup: migrates one template store per run, which every test store then starts from.
// PGlite: a dump of a migrated in-memory store in a temporary file (initdb runs once, not per store), and
// the same store as a data directory that file-backed test stores are copied from, as a new store is copied
// from the template made at install (src/store/template.ts).
// PostgreSQL (DATABASE_URL): a migrated template database that each test database is created from.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, statfsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { dumpPglite, openDb } from '../../src/store/db.js';
import { migrate } from '../../src/store/migrate.js';
import { copyTemplate, storeTemplate } from '../../src/store/template.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** File holding the migrated PGlite template (a dump of its data directory). */
    pgliteTemplate: string;
    /** The migrated PGlite template as a data directory, for `copyTemplate` (src/store/template.ts). */
    pgliteTemplateDir: string;
    /** Name of the migrated template database on DATABASE_URL's server, when the run uses PostgreSQL. */
    pgTemplate: string | null;
  }
}

/** The server's maintenance connection: runs one statement and disconnects. */
export async function adminQuery(url: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

export function databaseUrl(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

/**
 * The migrated PGlite template as a data directory and as a dump of it, in a new temporary directory. From the
 * install's store template (dist/store-template, written by `npm ci`, decision 0107) when it was made from this
 * code's migrations and PGlite release: a copy of it opened once and dumped costs about 2 s of CPU before the
 * first test can start, where initdb and every migration cost about 11 s (decision 0378). Without one (a
 * migration edited since the build), an in-memory store is migrated and dumped, and the dump unpacked into
 * the directory (unpacking costs about 0.8 s of CPU; a copy of the directory about 0.3 s, decision 0107).
 */
async function pgliteTemplate(): Promise<{ dir: string; file: string; dataDir: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'cardline-template-'));
  const file = join(dir, 'pglite-migrated.tar');
  const dataDir = join(dir, 'pglite-migrated');
  const installed = storeTemplate();
  if (installed) {
    copyTemplate(installed, dataDir);
    const { PGlite } = await import('@electric-sql/pglite');
    const pg = await PGlite.create(dataDir);
    try {
      await writeFile(file, Buffer.from(await (await pg.dumpDataDir('none')).arrayBuffer()));
    } finally {
      await pg.close();
    }
    return { dir, file, dataDir };
  }
  const db = await openDb({ dataDir: 'memory://' });
  let dump: Blob;
  try {
    await migrate(db);
    dump = await dumpPglite(db);
    await writeFile(file, Buffer.from(await dump.arrayBuffer()));
  } finally {
    await db.close();
  }
  const { PGlite } = await import('@electric-sql/pglite');
  await (await PGlite.create(dataDir, { loadDataDir: dump })).close();
  return { dir, file, dataDir };
}

/** Creates and migrates a template database on the server; every connection to it is closed afterwards. */
async function pgTemplate(url: string): Promise<string> {
  const name = `cardline_tmpl_${randomBytes(6).toString('hex')}`;
  await adminQuery(url, `CREATE DATABASE ${name}`);
  const db = await openDb({ databaseUrl: databaseUrl(url, name) });
  try {
    await migrate(db);
  } finally {
    // CREATE DATABASE … TEMPLATE refuses a template that has sessions.
    await db.close();
  }
  return name;
}

/** The memory file system the run's scratch directories go to, when TMPDIR is unset and it has room (decision 0400). */
const MEMORY_FS = '/dev/shm';
const MEMORY_FS_ROOM = 4 * 2 ** 30;

/**
 * A directory of this run on a memory file system, made TMPDIR for the rest of the run: the workers, started
 * after this, and every process they start inherit it. Copying a store template (40 MB, 1 100 files) and
 * writing stores there costs less system time than on a disk's file system. Null when TMPDIR is set or there is none.
 */
function memoryTmpdir(): string | null {
  if (process.env.TMPDIR) return null;
  try {
    sweepDeadRuns();
    const fs = statfsSync(MEMORY_FS);
    if (fs.bavail * fs.bsize < MEMORY_FS_ROOM) return null;
    const dir = (process.env.TMPDIR = mkdtempSync(join(MEMORY_FS, `cardline-test-${process.pid}-`)));
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    return dir;
  } catch {
    return null;
  }
}

/** Removes the directories of runs whose process is gone (interrupted: a signal skips the teardown), which hold RAM. */
function sweepDeadRuns(): void {
  for (const name of readdirSync(MEMORY_FS)) {
    const pid = /^cardline-test-(\d+)-/.exec(name)?.[1];
    if (pid && !alive(Number(pid))) rmSync(join(MEMORY_FS, name), { recursive: true, force: true });
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const scratch = memoryTmpdir();
  const url = process.env.DATABASE_URL;
  // The PGlite template is made on both stores: the CLI and process tests use file-backed PGlite stores.
  const [pglite, pgName] = await Promise.all([pgliteTemplate(), url ? pgTemplate(url) : Promise.resolve(null)]);
  project.provide('pgliteTemplate', pglite.file);
  project.provide('pgliteTemplateDir', pglite.dataDir);
  project.provide('pgTemplate', pgName);
  return async () => {
    await rm(pglite.dir, { recursive: true, force: true });
    if (url && pgName) await adminQuery(url, `DROP DATABASE IF EXISTS ${pgName} WITH (FORCE)`);
    if (scratch) {
      delete process.env.TMPDIR;
      await rm(scratch, { recursive: true, force: true });
    }
  };
}
