// Which management API a command talks to: a running gateway's over HTTP (src/cli/remote.ts) or the management
// listener's app in this process (src/cli/in-process.ts, loaded only when needed).
import type { Command } from 'commander';
import { managementApi, type ManagementApi, type ManagementOperationId } from './remote.js';

/**
 * Runs `fn` with the management API this command uses: the running gateway's (`--admin-url`), or the
 * listener's own app in this process over the store (src/cli/in-process.ts). The same typed calls either way.
 * `operations` names the operations `fn` calls: the app in process registers only those (a command starts in
 * a fraction of the time all of them take to compile, decision 0104), and a call to another one fails.
 */
export async function withApi<T>(
  command: Command,
  opts: { create?: boolean; messages?: Record<string, string>; operations: readonly ManagementOperationId[] },
  fn: (api: ManagementApi) => Promise<T>,
): Promise<T> {
  const api = managementApi(command);
  if (api) return fn(api.only(opts.operations));
  const { withManagement } = await import('./in-process.js');
  return withManagement(opts, (inProcess) => fn(inProcess.only(opts.operations)));
}
