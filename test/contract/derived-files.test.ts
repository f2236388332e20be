// Every file derived from the operation tables, the core protocol and the connector contract is what
// `npm run generate` writes now (decision 0260): one check that names each stale file and the one command that
// rewrites them all. The documents and the contract's snapshot are committed; the SDK's generated code is not.
import { execFile } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, derivedFiles, staleFiles, staleMessage, type DerivedFile } from '../../scripts/generate.js';
import { createTestDb } from '../helpers/app.js';

let files: DerivedFile[];
const scratch = mkdtempSync(join(tmpdir(), 'cardline-derived-'));
beforeAll(async () => {
  const store = await createTestDb();
  try {
    files = await derivedFiles({ db: store.db });
  } finally {
    await store.drop();
  }
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const git = async (...args: string[]) => (await promisify(execFile)('git', args, { cwd: ROOT })).stdout;

describe('the derived files', () => {
  it('none is stale', () => {
    const stale = staleFiles(files);
    expect(stale, staleMessage(stale)).toEqual([]);
  });

  it('a stale or missing file is named, and only it', () => {
    for (const file of files) {
      mkdirSync(dirname(join(scratch, file.path)), { recursive: true });
      writeFileSync(join(scratch, file.path), file.text);
    }
    expect(staleFiles(files, scratch)).toEqual([]);
    writeFileSync(join(scratch, 'schemas/openapi.json'), files[0]!.text.replace('"3.1.0"', '"3.1.1"'));
    rmSync(join(scratch, 'sdk/src/generated/types.ts'));
    const stale = staleFiles(files, scratch);
    expect(stale).toEqual(['schemas/openapi.json', 'sdk/src/generated/types.ts']);
    expect(staleMessage(stale)).toBe('schemas/openapi.json, sdk/src/generated/types.ts are stale: run `npm run generate`');
  });

  it('are the three OpenAPI documents, the two route tables, the contract snapshot (committed) and the SDK code (not)', async () => {
    const committed = files.filter((f) => f.committed).map((f) => f.path);
    expect(committed).toEqual([
      'schemas/openapi.json',
      'schemas/management-openapi.json',
      'schemas/core-protocol.openapi.json',
      'docs/api.md',
      'docs/operating.md',
      'test/connectors/__snapshots__/contract.json',
    ]);
    const generated = files.filter((f) => !f.committed).map((f) => f.path);
    expect(generated).toEqual(['operations.ts', 'management.ts', 'types.ts', 'events.ts'].map((f) => `sdk/src/generated/${f}`));
    expect((await git('ls-files', '--', ...committed)).trim().split('\n')).toEqual([...committed].sort());
    // check-ignore answers with the paths git ignores (and exits 1 when it ignores none).
    expect((await git('check-ignore', '--', ...generated)).trim().split('\n')).toEqual(generated);
  });
});
