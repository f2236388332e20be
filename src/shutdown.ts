// Graceful shutdown on SIGTERM/SIGINT for a Fastify process: stop accepting, let in-flight requests
// finish, close plugins (stores, pools), exit 0; exit 1 if that takes longer than the grace period.
import type { FastifyInstance } from 'fastify';

export function closeOnSignals(app: FastifyInstance, graceMs: number): void {
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
    const closeIdle = setInterval(() => app.server.closeIdleConnections(), 100);
    closeIdle.unref();
    app.close().then(
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
