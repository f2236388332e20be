// The `cardline` command line run in this process (fast: no child process, no tsx start), with the given
// environment; its exit code and what it wrote.
import { vi } from 'vitest';
import { run } from '../../src/cli/program.js';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Serialised: a run replaces process.stdout/stderr writes and the environment while it lasts. */
let queue: Promise<unknown> = Promise.resolve();

export function cliInProcess(args: string[], env: NodeJS.ProcessEnv): Promise<CliRun> {
  const next = queue.then(() => runOnce(args, env));
  queue = next.catch(() => undefined);
  return next;
}

async function runOnce(args: string[], env: NodeJS.ProcessEnv): Promise<CliRun> {
  const saved = { ...process.env };
  const out: string[] = [];
  const err: string[] = [];
  const stdout = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => (out.push(String(chunk)), true));
  const stderr = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => (err.push(String(chunk)), true));
  // The real environment object is changed in place, never replaced: a replaced process.env is a plain
  // object that native code (SoftHSM2 reading SOFTHSM2_CONF, in a later test file of this worker) never sees.
  const replaceEnv = (next: NodeJS.ProcessEnv) => {
    for (const k of Object.keys(process.env)) if (!(k in next)) delete process.env[k];
    Object.assign(process.env, next);
  };
  replaceEnv(env);
  try {
    const code = await run(['node', 'cardline', ...args]);
    return { code, stdout: out.join(''), stderr: err.join('') };
  } finally {
    replaceEnv(saved);
    stdout.mockRestore();
    stderr.mockRestore();
  }
}

/**
 * An operator's shell against a running gateway: the management listener's URL and an operator key, nothing
 * that selects a store (no DATABASE_URL); `extra` adds variables, and removes those it gives as undefined.
 */
export function operatorShell(adminUrl: string, operatorKey: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, CARDLINE_ADMIN_URL: adminUrl, CARDLINE_OPERATOR_KEY: operatorKey, ...extra };
  delete env.DATABASE_URL;
  for (const [k, v] of Object.entries(extra)) if (v === undefined) delete env[k];
  return env;
}
