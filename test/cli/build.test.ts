// The freshness check of the compiled command line (bin/build.js, decision 0100), on a small project of its
// own: a build makes dist/ fresh; an edit, an added file or a tsconfig change makes it stale; a build that
// fails reports it and leaves dist/ stale, so that no start runs it silently.
import { mkdtempSync, mkdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BuildError, build, staleReason } from '../../bin/build.js';
import { BUILD_TIMEOUT_MS } from '../helpers/spawn.js';

let root: string;
const notes: string[] = [];
const quietly = { root: '', say: (line: string) => void notes.push(line) };
/** Dates the last build 10 s back, then touches `path`: an edit after the build, whatever the clock's grain. */
function editedAfterBuild(path: string, content?: string): void {
  const past = new Date(Date.now() - 10_000);
  utimesSync(join(root, 'dist/tsconfig.build.tsbuildinfo'), past, past);
  if (content !== undefined) writeFileSync(path, content);
  else utimesSync(path, new Date(), new Date());
}

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'cardline-build-'));
  quietly.root = root;
  mkdirSync(join(root, 'src'));
  // ES2022's library only: the default for the target adds the DOM's, which tripled each compile's CPU (decision 0399).
  const compilerOptions = { target: 'ES2022', lib: ['ES2022'], module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, outDir: 'dist', rootDir: '.', types: [] };
  writeFileSync(join(root, 'tsconfig.json'), JSON.stringify({ compilerOptions }));
  writeFileSync(join(root, 'tsconfig.build.json'), JSON.stringify({ extends: './tsconfig.json', compilerOptions: { incremental: true }, include: ['src'] }));
  writeFileSync(join(root, 'package.json'), JSON.stringify({ type: 'module' }));
  writeFileSync(join(root, 'src', 'answer.ts'), 'export const answer: number = 41;\n');
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('bin/build.js', () => {
  it('builds when there is no build, then finds dist/ fresh and builds nothing', { timeout: BUILD_TIMEOUT_MS }, async () => {
    expect(staleReason(root)).toBe('no build yet');
    expect(await build({ ...quietly, ifStale: true })).toBe(true);
    expect(notes.pop()).toMatch(/^cardline: compiling the TypeScript into dist\/ \(no build yet\)/);
    expect(readFileSync(join(root, 'dist/src/answer.js'), 'utf8')).toContain('answer = 41');
    expect(staleReason(root)).toBeNull();
    expect(await build({ ...quietly, ifStale: true })).toBe(false);
  });

  it('an edited source, a new file or a changed tsconfig makes it stale; the rebuild runs the new code', { timeout: BUILD_TIMEOUT_MS }, async () => {
    editedAfterBuild(join(root, 'src', 'answer.ts'), 'export const answer: number = 42;\n');
    expect(staleReason(root)).toBe('sources changed since the last build');
    expect(await build({ ...quietly, ifStale: true })).toBe(true);
    expect(readFileSync(join(root, 'dist/src/answer.js'), 'utf8')).toContain('answer = 42');
    expect(staleReason(root)).toBeNull();

    mkdirSync(join(root, 'src', 'more'));
    editedAfterBuild(join(root, 'src', 'more'));
    expect(staleReason(root)).toBe('sources changed since the last build');
    await build({ ...quietly, ifStale: true });
    editedAfterBuild(join(root, 'tsconfig.build.json'));
    expect(staleReason(root)).toBe('sources changed since the last build');
    await build({ ...quietly, ifStale: true });
    expect(staleReason(root)).toBeNull();
  });

  it('a build with type errors fails with a BuildError and leaves dist/ stale, so the next start tries again', { timeout: BUILD_TIMEOUT_MS }, async () => {
    editedAfterBuild(join(root, 'src', 'answer.ts'), "export const answer: number = 'forty-three';\n");
    const failed = await build({ ...quietly, ifStale: true }).catch((err: unknown) => err);
    expect(failed).toBeInstanceOf(BuildError);
    expect((failed as Error).message).toMatch(/^the TypeScript build failed \(tsc -b tsconfig.build.json exited [1-9]\d*; its errors are above\)\. Fix them, or run npm run build\.$/);
    expect(staleReason(root)).toBe('sources changed since the last build');
  });

  it('two starts that find dist/ stale at once build it once', { timeout: BUILD_TIMEOUT_MS }, async () => {
    writeFileSync(join(root, 'src', 'answer.ts'), 'export const answer: number = 44;\n');
    expect(staleReason(root)).toBe('sources changed since the last build');
    const built = await Promise.all([build({ ...quietly, ifStale: true }), build({ ...quietly, ifStale: true })]);
    expect(built.filter(Boolean)).toHaveLength(1);
    expect(readFileSync(join(root, 'dist/src/answer.js'), 'utf8')).toContain('answer = 44');
  });
});
