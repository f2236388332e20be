// The Node.js release Cardline needs (package.json's engines), checked by `npm start`, `npm run demo` and
// `npx cardline` before anything else is loaded: an older Node would fail later with an error that names a
// missing function or module, not the version.
import process from 'node:process';

/** package.json's `engines.node` (`>=20.19`); test/unit/node-version.test.ts keeps the two equal. */
export const REQUIRED_NODE = '20.19.0';

/** A version's numbers: `v20.11.1` or `20.11.1` → [20, 11, 1]. */
const parts = (version) => version.replace(/^v/, '').split(/[.-]/, 3).map((n) => Number.parseInt(n, 10) || 0);

/** Why this Node cannot run Cardline (the required and the running version), or null when it can. */
export function nodeVersionProblem(running = process.versions.node, required = REQUIRED_NODE) {
  const have = parts(running);
  const need = parts(required);
  for (let i = 0; i < 3; i++) {
    if ((have[i] ?? 0) > (need[i] ?? 0)) return null;
    if ((have[i] ?? 0) < (need[i] ?? 0)) {
      const wanted = required.replace(/\.0$/, '');
      return `Cardline needs Node.js ${wanted} or later (package.json "engines"); this is Node.js ${running.replace(/^v/, '')} (${process.execPath}). Install Node.js ${wanted} or a later release and run the command again.`;
    }
  }
  return null;
}

/** Ends the process with exit code 1 and the reason on stderr when this Node is too old. */
export function requireNode() {
  const problem = nodeVersionProblem();
  if (problem === null) return;
  process.stderr.write(`error: ${problem}\n`);
  process.exit(1);
}
