// A webhook receiver for the tests: an HTTP server on loopback that keeps every request it gets (headers,
// raw body, time) and answers what the test scripts, per path. Signatures are checked with the
// `standardwebhooks` library — a real client, not the gateway's own code.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/** What the receiver answers: a status and headers, or `hang` (no answer until the connection closes). */
type Answer = { status: number; headers?: Record<string, string> } | 'hang';

export interface Receiver {
  base: string;
  received: Received[];
  /** The requests that reached `path`. */
  at(path: string): Received[];
  /** Sets how `path` answers: each request takes the next answer of the list, the last one repeats. */
  answer(path: string, ...answers: Answer[]): void;
  /** Resolves when `path` has received `count` requests (or rejects after `ms`). */
  waitFor(path: string, count: number, ms?: number): Promise<Received[]>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  const scripts = new Map<string, Answer[]>();
  const waiters = new Set<() => void>();
  const hanging = new Set<() => void>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      received.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
      for (const w of waiters) w();
      const script = scripts.get(path) ?? [];
      const answer: Answer = script.length > 1 ? script.shift()! : (script[0] ?? { status: 204 });
      if (answer === 'hang') {
        hanging.add(() => res.destroy());
        return;
      }
      res.writeHead(answer.status, answer.headers ?? {});
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const at = (path: string) => received.filter((r) => r.path === path);
  return {
    base: `http://127.0.0.1:${port}`,
    received,
    at,
    answer: (path, ...answers) => scripts.set(path, answers),
    waitFor: (path, count, ms = 60_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (at(path).length >= count) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve(at(path));
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`${path}: ${at(path).length} of ${count} webhooks within ${ms} ms`));
        }, ms);
        waiters.add(check);
        check();
      }),
    close: async () => {
      for (const h of hanging) h();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Verifies a received webhook with the standardwebhooks library; returns the parsed body or throws. */
export function verifyWebhook(secret: string, r: Received): { type: string; timestamp: string; data: Record<string, unknown> } {
  const headers = {
    'webhook-id': String(r.headers['webhook-id']),
    'webhook-timestamp': String(r.headers['webhook-timestamp']),
    'webhook-signature': String(r.headers['webhook-signature']),
  };
  return new Webhook(secret).verify(r.body, headers) as { type: string; timestamp: string; data: Record<string, unknown> };
}
