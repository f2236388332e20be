// A tenant's real-time decision endpoint for the tests: an HTTP server on loopback that keeps each request (headers,
// raw body) and answers what the test scripts per path: a JSON answer, raw bytes, a hang, or an answer the test
// releases later (a late answer). Signatures are checked by the tests with the `standardwebhooks` library.
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface DecisionRequestSeen {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A reply: JSON (status 200 unless said), raw bytes with a content type, `hang` (until dropped) or `held` (until released). */
export type Reply = { json: unknown; status?: number } | { raw: string | Buffer; status?: number; contentType?: string } | 'hang' | 'held';

export interface DecisionEndpoint {
  base: string;
  seen(path: string): DecisionRequestSeen[];
  /** How `path` answers from now on. */
  reply(path: string, reply: Reply): void;
  /** Resolves when `path` has received `count` requests. */
  waitFor(path: string, count: number): Promise<DecisionRequestSeen[]>;
  /** Answers the oldest held request of `path` (scripted `held`) with `reply`. */
  release(path: string, reply: Exclude<Reply, 'hang' | 'held'>): void;
  /** Closes the connections of the requests `path` left hanging: the gateway's calls end in an error. */
  drop(path: string): void;
  close(): Promise<void>;
}

function send(res: ServerResponse, reply: Exclude<Reply, 'hang' | 'held'>): void {
  if ('json' in reply) {
    res.writeHead(reply.status ?? 200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(reply.json));
    return;
  }
  res.writeHead(reply.status ?? 200, reply.contentType ? { 'content-type': reply.contentType } : {});
  res.end(reply.raw);
}

export async function startDecisionEndpoint(): Promise<DecisionEndpoint> {
  const requests: DecisionRequestSeen[] = [];
  const replies = new Map<string, Reply>();
  const held = new Map<string, ServerResponse[]>();
  const hanging = new Map<string, ServerResponse[]>();
  const waiters = new Set<() => void>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      requests.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      for (const w of [...waiters]) w();
      const reply = replies.get(path) ?? { json: { approved: true } };
      if (reply === 'hang') {
        hanging.set(path, [...(hanging.get(path) ?? []), res]);
        return;
      }
      if (reply === 'held') {
        held.set(path, [...(held.get(path) ?? []), res]);
        return;
      }
      send(res, reply);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const seen = (path: string) => requests.filter((r) => r.path === path);
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    reply: (path, reply) => replies.set(path, reply),
    waitFor: (path, count) =>
      new Promise((resolve) => {
        const check = () => {
          if (seen(path).length < count) return;
          waiters.delete(check);
          resolve(seen(path));
        };
        waiters.add(check);
        check();
      }),
    release: (path, reply) => {
      const res = held.get(path)?.shift();
      if (!res) throw new Error(`no request of ${path} is held`);
      send(res, reply);
    },
    drop: (path) => {
      for (const res of hanging.get(path) ?? []) res.destroy();
      hanging.delete(path);
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
