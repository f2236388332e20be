// What `git status` reports in the project's working tree: a walk-through run from the project directory
// must leave nothing there (issue 20, point 11).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { ROOT } from './process.js';

/** The lines of `git status --porcelain`, untracked files one by one (git reads no stdin: none is opened). */
export async function workingTree(): Promise<Set<string>> {
  const { stdout } = await promisify(execFile)('git', ['status', '--porcelain', '--untracked-files=all'], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 });
  return new Set(stdout.split('\n').filter(Boolean));
}

/** What a run added to `git status` since `before`. */
export async function addedSince(before: Set<string>): Promise<string[]> {
  return [...(await workingTree())].filter((line) => !before.has(line));
}
