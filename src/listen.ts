// Listening on a configured port, with a failure that names the listener and the variable that sets its port;
// and the same check before a start does anything it cannot take back (seeding the demo, printing its secrets).
import { createServer } from 'node:net';
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

/** Listens as `spec` says; a taken or refused address becomes a ListenError naming the listener and variable. */
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

/** Checks each listener's port before the demo seeds and prints what is shown once (a race can still take it). */
export async function checkPorts(specs: readonly ListenerSpec[]): Promise<void> {
  for (const [i, spec] of specs.entries()) {
    const before = specs.slice(0, i);
    if (spec.port !== 0 && before.some((o) => o.port === spec.port)) {
      throw listenError(Object.assign(new Error('in use'), { code: 'EADDRINUSE' }), spec, before)!;
    }
    await new Promise<void>((resolve, reject) => {
      const probe = createServer();
      probe.once('error', (err) => reject(listenError(err, spec, before) ?? err));
      probe.listen({ host: spec.host, port: spec.port }, () => probe.close(() => resolve()));
    });
  }
}
