// Graceful shutdown on SIGTERM/SIGINT for a Fastify process: stop accepting, let in-flight requests
// finish, close plugins (stores, pools), exit 0; exit 1 if that takes longer than the grace period.
import type { FastifyInstance } from 'fastify';

/** `apps` close in order: a listener that uses another's services (the management listener) comes first. */
export function closeOnSignals(apps: FastifyInstance | FastifyInstance[], graceMs: number): void {
  const all = Array.isArray(apps) ? apps : [apps];
  const app = all[all.length - 1]!;
  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down: finishing in-flight requests');
    const force = setTimeout(() => {
      app.log.error('graceful shutdown timed out; exiting');
      process.exit(1);
    }, graceMs);
    force.unref();
    // A keep-alive connection outlives its last response: close each one as soon as it is idle, or
    // shutdown would wait for the client's keep-alive timeout (in-flight requests still finish).
    const closeIdle = setInterval(() => all.forEach((a) => a.server.closeIdleConnections()), 100);
    closeIdle.unref();
    all
      .reduce((previous, a) => previous.then(() => a.close()), Promise.resolve())
      .then(
      () => process.exit(0),
      (err: unknown) => {
        app.log.error({ err }, 'error during shutdown');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}
