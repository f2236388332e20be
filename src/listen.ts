// Listening on a configured port, with a failure that names the listener and the variable that sets its port.
import type { FastifyInstance } from 'fastify';

/** One of the process's listeners, as an operator knows it. */
export interface ListenerSpec {
  /** What listens: `public API`, `management listener`, `mock core`. */
  name: string;
  host: string;
  port: number;
  /** How its port is set: `PORT`, `CARDLINE_ADMIN_PORT`, `--port or MOCK_CORE_PORT`. */
  portVariable: string;
  /** How its address is set: `HOST`, `CARDLINE_ADMIN_HOST`, `--host or MOCK_CORE_HOST`. */
  hostVariable: string;
}

/** A listener that could not open its port: the message is meant for the operator's terminal, one line. */
export class ListenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ListenError';
  }
}

/**
 * Listens as `spec` says. EADDRINUSE, EACCES and EADDRNOTAVAIL become a ListenError naming the listener and its
 * variable; `others` are this process's listeners already open, so that a port taken by one of them is said.
 */
export async function listenOn(app: FastifyInstance, spec: ListenerSpec, others: readonly ListenerSpec[] = []): Promise<string> {
  try {
    return await app.listen({ host: spec.host, port: spec.port });
  } catch (err) {
    throw listenError(err, spec, others) ?? err;
  }
}

/** The operator's message for a listen failure, or null when the error is not one of those. */
export function listenError(err: unknown, spec: ListenerSpec, others: readonly ListenerSpec[] = []): ListenError | null {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  const where = `${spec.host.includes(':') ? `[${spec.host}]` : spec.host}:${spec.port}`;
  const prefix = `Cannot start the ${spec.name} on ${where}`;
  if (code === 'EADDRINUSE') {
    const sibling = others.find((o) => o.port === spec.port);
    const by = sibling ? `: this process's ${sibling.name} holds it (${sibling.portVariable}=${sibling.port})` : ' by another process';
    return new ListenError(`${prefix}: the port is in use${by}. Set ${spec.portVariable} to a free port.`);
  }
  if (code === 'EACCES') {
    return new ListenError(`${prefix}: permission denied (ports below 1024 need privileges). Set ${spec.portVariable} to a port above 1023.`);
  }
  if (code === 'EADDRNOTAVAIL') {
    return new ListenError(`${prefix}: ${spec.host} is not an address of this machine. Set ${spec.hostVariable} to one that is (127.0.0.1, or 0.0.0.0 for all).`);
  }
  return null;
}
