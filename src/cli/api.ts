// Which management API a command talks to: a running gateway's over HTTP, or the management listener's app in
// this process over the store (src/cli/in-process.ts, loaded only when needed).
import type { Command } from 'commander';
import { remoteTarget, withTarget, type CardlineAdmin, type ManagementOperationId, type RefusalMessages } from './remote.js';

/**
 * Runs `fn` with the management client this command uses: the running gateway's (`--admin-url`), or the
 * listener's own app in this process over the store (src/cli/in-process.ts). The same typed calls either way.
 * `operations` names the operations `fn` calls: the app in process registers only those (a command starts in
 * a fraction of the time all of them take to compile, decision 0104), and a call to another one fails.
 * `messages` words a refusal on the store by business code or status.
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
