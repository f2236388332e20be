// A call's deadline as the gateway's core caller hands it to a connector (decision 0402): its AbortSignal is made
// only when the connector reads `ctx.signal`, and this reads whether it passed without making it.
import type { ConnectorContext } from '../contract.js';

/** Where the core caller keeps a call's deadline on the connector's context. */
export const CALL_DEADLINE = Symbol.for('cardline.call-deadline');

/** Whether the call's deadline has passed, without making its AbortSignal; any other context: its signal, as given. */
export function deadlinePassed(ctx: Pick<ConnectorContext, 'signal'>): boolean {
  const deadline = (ctx as { [CALL_DEADLINE]?: { expired: boolean } })[CALL_DEADLINE];
  return deadline ? deadline.expired : ctx.signal.aborted;
}
