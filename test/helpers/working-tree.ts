// What `git status` reports in the project's working tree: a walk-through run from the project directory
// must leave nothing there (issue 20, point 11).
import { ROOT } from './process.js';
import { runProcess } from './spawn.js';

/** The lines of `git status --porcelain`, untracked files one by one. */
export async function workingTree(): Promise<Set<string>> {
  const r = await runProcess('git', ['status', '--porcelain', '--untracked-files=all'], { cwd: ROOT, env: process.env });
  if (r.code !== 0) throw new Error(`git status failed: ${r.stderr}`);
  return new Set(r.stdout.split('\n').filter(Boolean));
}

/** What a run added to `git status` since `before`. */
export async function addedSince(before: Set<string>): Promise<string[]> {
  return [...(await workingTree())].filter((line) => !before.has(line));
}
