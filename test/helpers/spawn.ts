// Runs a child process to its end, as an operator's shell would, and hands back its exit code and output.
import { spawn } from 'node:child_process';

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `command args…` in `cwd` with exactly `env`; `input` (default none) is written to its stdin. */
export function runProcess(command: string, args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv; input?: string }): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: opts.cwd, env: opts.env, stdio: 'pipe' });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    // A child that exits without reading its stdin closes the pipe first: that EPIPE is not the run's failure.
    child.stdin.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE') reject(err);
    });
    child.stdin.end(opts.input ?? '');
  });
}

/**
 * bin/cardline.js and bin/gateway.js run the compiled dist/, rebuilding it first when the sources are newer
 * (decision 0100). A test file that spawns them builds it here, once, before its children start: a child
 * does not then spend its start compiling (nor print the compiler's note on the stderr a test reads).
 */
export async function ensureBuilt(): Promise<void> {
  const { build } = await import('../../bin/build.js');
  await build({ ifStale: true });
}

/** How long ensureBuilt may take in a beforeAll: a first build on a loaded machine takes minutes. */
export const BUILD_TIMEOUT_MS = 900_000;
