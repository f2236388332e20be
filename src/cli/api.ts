// Which management API a command talks to: a running gateway's over HTTP, or the management listener's app in
// this process over the store (src/cli/in-process.ts, loaded only when needed).
import type { Command } from 'commander';
import { remoteTarget, withTarget, type CardlineAdmin, type ManagementOperationId, type RefusalMessages } from './remote.js';

/**
 * Runs `fn` with this command's management client: the running gateway's (`--admin-url`) or the listener's app
 * in process over the store. `operations` lists what `fn` calls, so only those compile (decision 0104).
 */
export async function withApi<T>(
  command: Command,
  opts: { create?: boolean; messages?: RefusalMessages; operations: readonly ManagementOperationId[] },
  fn: (api: CardlineAdmin) => Promise<T>,
): Promise<T> {
  const remote = remoteTarget(command);
  if (remote) return withTarget(remote, opts.operations, fn);
  const { withManagement } = await import('./in-process.js');
  return withManagement(opts, (target) => withTarget(target, opts.operations, fn));
}
