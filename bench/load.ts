// The load generator of the pinned arm (bench/pinned.ts) in a process of its own, so that it can be pinned to a
// core apart from the servers it loads (`taskset -c <core>`). Reads one JSON job a line on stdin
//   {"port":N,"seconds":S,"connections":C,"tokens":[{"tenant":"…","token":"…"}]}
// and answers each with one JSON line on stdout: {"rps","p50","p99","non2xx","errors","total"}. Exits when stdin ends.
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';
import { loadFigures, type LoadFigures } from './env.js';

const LIMIT_URL = '/credit-line-management/business-entity-manager/upgradeLimit';
const BODY = JSON.stringify({ entityId: 'ENT-1001', amount: '60000.00' });

interface Job {
  port: number;
  seconds: number;
  connections: number;
  tokens: { tenant: string; token: string }[];
}

async function run(job: Job): Promise<LoadFigures> {
  let i = 0;
  const result = await autocannon({
    url: `http://127.0.0.1:${job.port}`,
    connections: job.connections,
    duration: job.seconds,
    timeout: 10,
    requests: [
      {
        method: 'POST',
        path: LIMIT_URL,
        body: BODY,
        setupRequest: (req) => {
          const t = job.tokens[i++ % job.tokens.length]!;
          req.headers = { 'content-type': 'application/json', TENANT: t.tenant, authorization: `Bearer ${t.token}` };
          return req;
        },
      },
    ],
  });
  return loadFigures(result);
}

const lines = createInterface({ input: process.stdin });
// One job at a time, in order: the pinned arm waits for each answer before it sends the next.
let queue = Promise.resolve();
lines.on('line', (line) => {
  queue = queue.then(async () => {
    try {
      process.stdout.write(`${JSON.stringify(await run(JSON.parse(line) as Job))}\n`);
    } catch (err) {
      process.stdout.write(`${JSON.stringify({ error: (err as Error).message })}\n`);
    }
  });
});
lines.on('close', () => void queue.then(() => process.exit(0)));
