// Graceful shutdown on SIGTERM/SIGINT for a Fastify process: stop accepting, let in-flight requests
// finish, close plugins (stores, pools), exit 0; exit 1 if that takes longer than the grace period.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { stopTracing } from './telemetry/index.js';

/** Tracks each connection's requests so shutdown closes every connection carrying none (counted, for pipelining). */
export function unusedConnections(servers: readonly Server[]): () => void {
  const answering = new WeakMap<Socket, number>();
  const open = new Set<Socket>();
  for (const server of servers) {
    server.on('connection', (socket: Socket) => {
      open.add(socket);
      socket.once('close', () => open.delete(socket));
    });
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      const socket = req.socket;
      answering.set(socket, (answering.get(socket) ?? 0) + 1);
      res.once('close', () => answering.set(socket, answering.get(socket)! - 1));
    });
  }
  return () => {
    servers.forEach((server) => server.closeIdleConnections());
    for (const socket of open) if (!answering.get(socket)) socket.destroy();
  };
}

/** `apps` close in order: a listener that uses another's services (the management listener) comes first. */
export function closeOnSignals(apps: FastifyInstance | FastifyInstance[], graceMs: number): void {
  const all = Array.isArray(apps) ? apps : [apps];
  const app = all[all.length - 1]!;
  const closeUnused = unusedConnections(all.map((a) => a.server));
  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down: finishing in-flight requests');
    let closed = 0;
    const force = setTimeout(() => {
      // What was still open: the listeners not yet closed and the kinds of handle keeping the process busy.
      void Promise.all(all.map((a) => new Promise<number>((resolve) => a.server.getConnections((_err, n) => resolve(n ?? -1)))))
        .catch(() => [])
        .then((connections) => {
          app.log.error({ listenersClosed: `${closed} of ${all.length}`, connections, resources: process.getActiveResourcesInfo() }, 'graceful shutdown timed out; exiting');
          process.exit(1);
        });
    }, graceMs);
    force.unref();
    // Keep-alive connections are closed as soon as idle, or shutdown would wait for the client's timeout.
    const closeIdle = setInterval(closeUnused, 100);
    closeIdle.unref();
    all
      .reduce((previous, a) => previous.then(() => a.close()).then(() => void closed++), Promise.resolve())
      // The spans of the last requests are exported before the process ends (nothing to do when tracing is off).
      .then(() => stopTracing())
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
